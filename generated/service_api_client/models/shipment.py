from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

T = TypeVar("T", bound="Shipment")


@_attrs_define
class Shipment:
    """A shipment. Fields the service sends beyond these are kept.

    Attributes:
        shipment_id (str | Unset): Identifier of the shipment.
        devices (list[str] | Unset): Identifiers of the tracking devices travelling with the shipment.
        shipment_legs (list[ShipmentLeg] | Unset): The legs of the journey, in order.
    """

    shipment_id: str | Unset = UNSET
    devices: list[str] | Unset = UNSET
    shipment_legs: list[ShipmentLeg] | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        shipment_id = self.shipment_id

        devices: list[str] | Unset = UNSET
        if not isinstance(self.devices, Unset):
            devices = self.devices

        shipment_legs: list[dict[str, Any]] | Unset = UNSET
        if not isinstance(self.shipment_legs, Unset):
            shipment_legs = []
            for shipment_legs_item_data in self.shipment_legs:
                shipment_legs_item = shipment_legs_item_data.to_dict()
                shipment_legs.append(shipment_legs_item)

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
        d = dict(src_dict)
        shipment_id = d.pop("shipmentId", UNSET)

        devices = cast(list[str], d.pop("devices", UNSET))

        _shipment_legs = d.pop("shipmentLegs", UNSET)
        shipment_legs: list[ShipmentLeg] | Unset = UNSET
        if _shipment_legs is not UNSET:
            shipment_legs = []
            for shipment_legs_item_data in _shipment_legs:
                shipment_legs_item = ShipmentLeg.from_dict(shipment_legs_item_data)

                shipment_legs.append(shipment_legs_item)

        shipment = cls(
            shipment_id=shipment_id,
            devices=devices,
            shipment_legs=shipment_legs,
        )

        shipment.additional_properties = d
        return shipment

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
from ..models.shipment_leg import ShipmentLeg  # noqa: E402
