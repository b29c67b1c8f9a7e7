from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

T = TypeVar("T", bound="ShipmentLeg")


@_attrs_define
class ShipmentLeg:
    """One leg of a shipment's journey.

    Attributes:
        mode (str | Unset): Transport mode; Road, Air, Ocean or Rail in public documentation.
        from_address (Address | Unset): A postal address.
        to_address (Address | Unset): A postal address.
        from_coordinates (Coordinates | Unset): A position in decimal degrees.
        to_coordinates (Coordinates | Unset): A position in decimal degrees.
        ship_from_date (datetime.datetime | Unset): When the leg starts.
    """

    mode: str | Unset = UNSET
    from_address: Address | Unset = UNSET
    to_address: Address | Unset = UNSET
    from_coordinates: Coordinates | Unset = UNSET
    to_coordinates: Coordinates | Unset = UNSET
    ship_from_date: datetime.datetime | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        mode = self.mode

        from_address: dict[str, Any] | Unset = UNSET
        if not isinstance(self.from_address, Unset):
            from_address = self.from_address.to_dict()

        to_address: dict[str, Any] | Unset = UNSET
        if not isinstance(self.to_address, Unset):
            to_address = self.to_address.to_dict()

        from_coordinates: dict[str, Any] | Unset = UNSET
        if not isinstance(self.from_coordinates, Unset):
            from_coordinates = self.from_coordinates.to_dict()

        to_coordinates: dict[str, Any] | Unset = UNSET
        if not isinstance(self.to_coordinates, Unset):
            to_coordinates = self.to_coordinates.to_dict()

        ship_from_date: str | Unset = UNSET
        if not isinstance(self.ship_from_date, Unset):
            ship_from_date = self.ship_from_date.isoformat()

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
        d = dict(src_dict)
        mode = d.pop("mode", UNSET)

        _from_address = d.pop("fromAddress", UNSET)
        from_address: Address | Unset
        if isinstance(_from_address, Unset):
            from_address = UNSET
        else:
            from_address = Address.from_dict(_from_address)

        _to_address = d.pop("toAddress", UNSET)
        to_address: Address | Unset
        if isinstance(_to_address, Unset):
            to_address = UNSET
        else:
            to_address = Address.from_dict(_to_address)

        _from_coordinates = d.pop("fromCoordinates", UNSET)
        from_coordinates: Coordinates | Unset
        if isinstance(_from_coordinates, Unset):
            from_coordinates = UNSET
        else:
            from_coordinates = Coordinates.from_dict(_from_coordinates)

        _to_coordinates = d.pop("toCoordinates", UNSET)
        to_coordinates: Coordinates | Unset
        if isinstance(_to_coordinates, Unset):
            to_coordinates = UNSET
        else:
            to_coordinates = Coordinates.from_dict(_to_coordinates)

        _ship_from_date = d.pop("shipFromDate", UNSET)
        ship_from_date: datetime.datetime | Unset
        if isinstance(_ship_from_date, Unset):
            ship_from_date = UNSET
        else:
            ship_from_date = datetime.datetime.fromisoformat(_ship_from_date)

        shipment_leg = cls(
            mode=mode,
            from_address=from_address,
            to_address=to_address,
            from_coordinates=from_coordinates,
            to_coordinates=to_coordinates,
            ship_from_date=ship_from_date,
        )

        shipment_leg.additional_properties = d
        return shipment_leg

    @property
    def additional_keys(self) -> list[str]:
        return list(self.additional_properties.keys())

    def __getitem__(self, key: str) -> Any:
        return self.additional_properties[key]

    def __setitem__(self, key: str, value: Any) -> None:
        self.additional_properties[key] = value

    def __delitem__(self, key: str) -> None:
        del self.additional_properties[key]

    def __contains__(self, key: str) -> bool:
        return key in self.additional_properties


# Imported last, so that models referring to each other import in either order.
from ..models.address import Address  # noqa: E402
from ..models.coordinates import Coordinates  # noqa: E402
