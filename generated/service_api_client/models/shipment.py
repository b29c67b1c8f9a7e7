from __future__ import annotations

from collections.abc import KeysView, Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.shipment_leg import ShipmentLeg


T = TypeVar("T", bound="Shipment")


@_attrs_define
class Shipment:
    """A shipment. Every field is optional; a value of another type than the one
    guessed here, and any field not named here, is kept as sent
    (`shipment["field"]`), and `to_dict()` gives back the object as it came.

        Attributes:
            shipment_id (str | Unset): Identifier of the shipment. Typed `str` (never null): an identifier is
                a name, and public material writes it as a string. Not `required`, so
                that a record without one still builds (the attribute is then UNSET);
                one of another type (a number) is kept as sent in `shipment["shipmentId"]`.
            devices (list[str] | None | Unset): Identifiers of the tracking devices travelling with the shipment.
            shipment_legs (list[ShipmentLeg] | None | Unset): The legs of the journey, in order.
    """

    shipment_id: str | Unset = UNSET
    devices: list[str] | None | Unset = UNSET
    shipment_legs: list[ShipmentLeg] | None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        shipment_id = self.shipment_id

        devices: list[str] | None | Unset
        if isinstance(self.devices, Unset):
            devices = UNSET
        elif isinstance(self.devices, list):
            devices = self.devices

        else:
            devices = self.devices

        shipment_legs: list[dict[str, Any]] | None | Unset
        if isinstance(self.shipment_legs, Unset):
            shipment_legs = UNSET
        elif isinstance(self.shipment_legs, list):
            shipment_legs = []
            for shipment_legs_type_0_item_data in self.shipment_legs:
                shipment_legs_type_0_item = shipment_legs_type_0_item_data.to_dict()
                shipment_legs.append(shipment_legs_type_0_item)

        else:
            shipment_legs = self.shipment_legs

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({})
        if shipment_id is not UNSET:
            field_dict["shipmentId"] = shipment_id
        if devices is not UNSET:
            field_dict["devices"] = devices
        if shipment_legs is not UNSET:
            field_dict["shipmentLegs"] = shipment_legs

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        if type(src_dict) is not dict and not isinstance(src_dict, Mapping):
            raise TypeError(f"{cls.__name__}.from_dict: expected a JSON object, got {type(src_dict).__name__}")

        d = dict(src_dict)
        _shipment_id = d.pop("shipmentId", UNSET)
        shipment_id: str | Unset
        if isinstance(_shipment_id, str):
            shipment_id = _shipment_id
        else:
            shipment_id = UNSET
            if _shipment_id is not UNSET:
                d["shipmentId"] = _shipment_id

        _devices = d.pop("devices", UNSET)
        devices: list[str] | None | Unset
        if isinstance(_devices, list):
            devices = UNSET
            for _item in _devices:
                if not (isinstance(_item, str)):
                    d["devices"] = _devices
                    break
            else:
                devices = list(_devices)

        elif _devices is None:
            devices = _devices
        else:
            devices = UNSET
            if _devices is not UNSET:
                d["devices"] = _devices

        _shipment_legs = d.pop("shipmentLegs", UNSET)
        shipment_legs: list[ShipmentLeg] | None | Unset
        if isinstance(_shipment_legs, list):
            shipment_legs = UNSET
            _items = []
            for _item in _shipment_legs:
                if not isinstance(_item, dict):
                    d["shipmentLegs"] = _shipment_legs
                    break
                _items.append(ShipmentLeg.from_dict(_item))
            else:
                shipment_legs = _items

        elif _shipment_legs is None:
            shipment_legs = _shipment_legs
        else:
            shipment_legs = UNSET
            if _shipment_legs is not UNSET:
                d["shipmentLegs"] = _shipment_legs

        shipment = cls(
            shipment_id=shipment_id,
            devices=devices,
            shipment_legs=shipment_legs,
        )

        shipment.additional_properties = d
        return shipment

    def __repr__(self) -> str:
        """The record as it came: its fields by their JSON names, as sent (unset ones left
        out)."""
        fields = self.to_dict()
        return f"{type(self).__name__}({fields!r})"

    def __getitem__(self, key: str) -> Any:
        """A field by its JSON name, declared or not: ``record["shipmentId"]``.

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
    "shipmentId": "shipment_id",
    "devices": "devices",
    "shipmentLegs": "shipment_legs",
}
"""The attribute of each declared field, by its JSON name (``record["..."]``)."""


# Imported last, so that models referring to each other import in either order.
from ..models.shipment_leg import ShipmentLeg  # noqa: E402
