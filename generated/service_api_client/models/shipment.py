from __future__ import annotations

from typing import TYPE_CHECKING, Any

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from .. import records as _records
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.shipment_leg import ShipmentLeg


@_attrs_define(repr=False)
class Shipment(_records.Record):
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
    _order: tuple[str, ...] = _attrs_field(init=False, default=(), eq=False)
    _sent: dict[str, tuple[Any, Any]] | None = _attrs_field(init=False, default=None, eq=False)


# Imported last, so that models referring to each other import in either order.
from ..models.shipment_leg import ShipmentLeg  # noqa: E402

Shipment._declare(
    _records.Field("shipmentId", "shipment_id", _records.STRING),
    _records.Field("devices", "devices", _records.union(_records.list_of(_records.STRING), _records.NULL)),
    _records.Field(
        "shipmentLegs", "shipment_legs", _records.union(_records.list_of(_records.model(ShipmentLeg)), _records.NULL)
    ),
)
