from __future__ import annotations

import datetime
from typing import TYPE_CHECKING, Any

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from .. import records as _records
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.address import Address
    from ..models.coordinates import Coordinates


@_attrs_define(repr=False)
class ShipmentLeg(_records.Record):
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
    _order: tuple[str, ...] = _attrs_field(init=False, default=(), eq=False)
    _sent: dict[str, tuple[Any, Any]] | None = _attrs_field(init=False, default=None, eq=False)


# Imported last, so that models referring to each other import in either order.
from ..models.address import Address  # noqa: E402
from ..models.coordinates import Coordinates  # noqa: E402

ShipmentLeg._declare(
    _records.Field("mode", "mode", _records.union(_records.STRING, _records.NULL)),
    _records.Field("fromAddress", "from_address", _records.union(_records.model(Address), _records.NULL)),
    _records.Field("toAddress", "to_address", _records.union(_records.model(Address), _records.NULL)),
    _records.Field("fromCoordinates", "from_coordinates", _records.union(_records.model(Coordinates), _records.NULL)),
    _records.Field("toCoordinates", "to_coordinates", _records.union(_records.model(Coordinates), _records.NULL)),
    _records.Field("shipFromDate", "ship_from_date", _records.union(_records.DATE_TIME, _records.NULL)),
)
