from __future__ import annotations

import datetime
from collections.abc import KeysView, Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.address import Address
    from ..models.coordinates import Coordinates


T = TypeVar("T", bound="ShipmentLeg")


@_attrs_define
class ShipmentLeg:
    """One leg of a shipment's journey. Values of an unexpected type, and unknown fields, are kept as sent.

    Attributes:
        mode (None | str | Unset): Transport mode; Road, Air, Ocean or Rail in public documentation. A
            string, not an enum: a fifth mode from the service must not be a
            mismatch.
        from_address (Address | None | Unset): Where the leg starts.
        to_address (Address | None | Unset): Where the leg ends.
        from_coordinates (Coordinates | None | Unset): Position where the leg starts.
        to_coordinates (Coordinates | None | Unset): Position where the leg ends.
        ship_from_date (datetime.datetime | None | Unset): When the leg starts. Parsed with `datetime.fromisoformat`;
            the string
            as sent is what `to_dict()` writes back (so "Z" stays "Z"), and one
            that does not parse is kept as sent in `leg["shipFromDate"]`.
    """

    mode: None | str | Unset = UNSET
    from_address: Address | None | Unset = UNSET
    to_address: Address | None | Unset = UNSET
    from_coordinates: Coordinates | None | Unset = UNSET
    to_coordinates: Coordinates | None | Unset = UNSET
    ship_from_date: datetime.datetime | None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)
    # The date strings as sent, beside the values parsed from them: to_dict() writes
    # a string back while its attribute still holds the value parsed from it.
    _sent: dict[str, tuple[object, str]] = _attrs_field(init=False, factory=dict, repr=False, eq=False)

    def to_dict(self) -> dict[str, Any]:
        mode: None | str | Unset
        if isinstance(self.mode, Unset):
            mode = UNSET
        else:
            mode = self.mode

        from_address: dict[str, Any] | None | Unset
        if isinstance(self.from_address, Unset):
            from_address = UNSET
        elif isinstance(self.from_address, Address):
            from_address = self.from_address.to_dict()
        else:
            from_address = self.from_address

        to_address: dict[str, Any] | None | Unset
        if isinstance(self.to_address, Unset):
            to_address = UNSET
        elif isinstance(self.to_address, Address):
            to_address = self.to_address.to_dict()
        else:
            to_address = self.to_address

        from_coordinates: dict[str, Any] | None | Unset
        if isinstance(self.from_coordinates, Unset):
            from_coordinates = UNSET
        elif isinstance(self.from_coordinates, Coordinates):
            from_coordinates = self.from_coordinates.to_dict()
        else:
            from_coordinates = self.from_coordinates

        to_coordinates: dict[str, Any] | None | Unset
        if isinstance(self.to_coordinates, Unset):
            to_coordinates = UNSET
        elif isinstance(self.to_coordinates, Coordinates):
            to_coordinates = self.to_coordinates.to_dict()
        else:
            to_coordinates = self.to_coordinates

        ship_from_date: None | str | Unset
        if isinstance(self.ship_from_date, Unset):
            ship_from_date = UNSET
        elif isinstance(self.ship_from_date, datetime.datetime):
            ship_from_date = self.ship_from_date.isoformat()
        else:
            ship_from_date = self.ship_from_date
        sent_ship_from_date = self._sent.get("shipFromDate")
        if sent_ship_from_date is not None and sent_ship_from_date[0] is self.ship_from_date:
            ship_from_date = sent_ship_from_date[1]

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({})
        if mode is not UNSET:
            field_dict["mode"] = mode
        if from_address is not UNSET:
            field_dict["fromAddress"] = from_address
        if to_address is not UNSET:
            field_dict["toAddress"] = to_address
        if from_coordinates is not UNSET:
            field_dict["fromCoordinates"] = from_coordinates
        if to_coordinates is not UNSET:
            field_dict["toCoordinates"] = to_coordinates
        if ship_from_date is not UNSET:
            field_dict["shipFromDate"] = ship_from_date

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        if type(src_dict) is not dict and not isinstance(src_dict, Mapping):
            raise TypeError(f"{cls.__name__}.from_dict: expected a JSON object, got {type(src_dict).__name__}")
        sent: dict[str, tuple[object, str]] = {}

        d = dict(src_dict)
        _mode = d.pop("mode", UNSET)
        mode: None | str | Unset
        if (isinstance(_mode, str)) or (_mode is None):
            mode = _mode
        else:
            mode = UNSET
            if _mode is not UNSET:
                d["mode"] = _mode

        _from_address = d.pop("fromAddress", UNSET)
        from_address: Address | None | Unset
        if isinstance(_from_address, dict):
            from_address = Address.from_dict(_from_address)

        elif _from_address is None:
            from_address = _from_address
        else:
            from_address = UNSET
            if _from_address is not UNSET:
                d["fromAddress"] = _from_address

        _to_address = d.pop("toAddress", UNSET)
        to_address: Address | None | Unset
        if isinstance(_to_address, dict):
            to_address = Address.from_dict(_to_address)

        elif _to_address is None:
            to_address = _to_address
        else:
            to_address = UNSET
            if _to_address is not UNSET:
                d["toAddress"] = _to_address

        _from_coordinates = d.pop("fromCoordinates", UNSET)
        from_coordinates: Coordinates | None | Unset
        if isinstance(_from_coordinates, dict):
            from_coordinates = Coordinates.from_dict(_from_coordinates)

        elif _from_coordinates is None:
            from_coordinates = _from_coordinates
        else:
            from_coordinates = UNSET
            if _from_coordinates is not UNSET:
                d["fromCoordinates"] = _from_coordinates

        _to_coordinates = d.pop("toCoordinates", UNSET)
        to_coordinates: Coordinates | None | Unset
        if isinstance(_to_coordinates, dict):
            to_coordinates = Coordinates.from_dict(_to_coordinates)

        elif _to_coordinates is None:
            to_coordinates = _to_coordinates
        else:
            to_coordinates = UNSET
            if _to_coordinates is not UNSET:
                d["toCoordinates"] = _to_coordinates

        _ship_from_date = d.pop("shipFromDate", UNSET)
        ship_from_date: datetime.datetime | None | Unset
        if isinstance(_ship_from_date, str):
            try:
                ship_from_date = datetime.datetime.fromisoformat(_ship_from_date)
            except ValueError:
                ship_from_date = UNSET
                d["shipFromDate"] = _ship_from_date
            else:
                sent["shipFromDate"] = (ship_from_date, _ship_from_date)

        elif _ship_from_date is None:
            ship_from_date = _ship_from_date
        else:
            ship_from_date = UNSET
            if _ship_from_date is not UNSET:
                d["shipFromDate"] = _ship_from_date

        shipment_leg = cls(
            mode=mode,
            from_address=from_address,
            to_address=to_address,
            from_coordinates=from_coordinates,
            to_coordinates=to_coordinates,
            ship_from_date=ship_from_date,
        )
        shipment_leg._sent = sent

        shipment_leg.additional_properties = d
        return shipment_leg

    def __repr__(self) -> str:
        """The record as it came: its fields by their JSON names, as sent (unset ones left
        out)."""
        fields = self.to_dict()
        return f"{type(self).__name__}({fields!r})"

    def __getitem__(self, key: str) -> Any:
        """A field by its JSON name, declared or not: ``record["mode"]``.

        A declared field gives its attribute's value, and is absent (KeyError) while UNSET,
        unless the value sent did not fit its type and is kept as sent; any other field
        gives its value as sent.
        """
        name = _ATTRIBUTES.get(key)
        if name is not None and (value := getattr(self, name)) is not UNSET:
            return value
        return self.additional_properties[key]

    def get(self, key: str, default: Any = None) -> Any:
        """A field by its JSON name, or ``default`` when it is absent: ``record.get("status")``."""
        try:
            return self[key]
        except KeyError:
            return default

    def __contains__(self, key: object) -> bool:
        """Whether the record has the field of this JSON name: ``"status" in record``."""
        if not isinstance(key, str):
            return False
        name = _ATTRIBUTES.get(key)
        if name is not None and getattr(self, name) is not UNSET:
            return True
        return key in self.additional_properties

    def keys(self) -> KeysView[str]:
        """The JSON names of the fields the record has, declared ones first: ``dict(record)``
        then maps each to what ``record[name]`` gives."""
        names = [key for key, name in _ATTRIBUTES.items() if getattr(self, name) is not UNSET]
        return dict.fromkeys([*names, *self.additional_properties]).keys()

    def __setitem__(self, key: str, value: Any) -> None:
        """Set a field that is not declared; a declared one is set by its attribute."""
        if key in _ATTRIBUTES:
            raise TypeError(f"{key!r} is a declared field: set record.{_ATTRIBUTES[key]}")
        self.additional_properties[key] = value

    def __delitem__(self, key: str) -> None:
        """Remove a field that is not declared (or a declared one's value kept as sent)."""
        del self.additional_properties[key]


_ATTRIBUTES: dict[str, str] = {
    "mode": "mode",
    "fromAddress": "from_address",
    "toAddress": "to_address",
    "fromCoordinates": "from_coordinates",
    "toCoordinates": "to_coordinates",
    "shipFromDate": "ship_from_date",
}
"""The attribute of each declared field, by its JSON name (``record["..."]``)."""


# Imported last, so that models referring to each other import in either order.
from ..models.address import Address  # noqa: E402
from ..models.coordinates import Coordinates  # noqa: E402
