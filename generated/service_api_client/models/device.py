from __future__ import annotations

import datetime
from typing import TYPE_CHECKING, Any

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from .. import records as _records
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.coordinates import Coordinates


@_attrs_define(repr=False)
class Device(_records.Record):
    """A tracking device and its latest reading. Every field is optional; a value
    of another type than the one guessed here, and any field not named here,
    is kept as sent (`device["field"]`).

        Attributes:
            device_id (str | Unset): Identifier of the device. Typed `str` (never null), not `required`: see
                Shipment.shipmentId.
            measurement_time (datetime.datetime | None | Unset): When the latest reading was taken. Parsed with
                `datetime.fromisoformat`;
                the string as sent is what `to_dict()` writes back, and one that does
                not parse is kept as sent in `device["measurementTime"]`.
            coordinates (Coordinates | None | Unset): Where the latest reading was taken.
            temperature (float | None | Unset): Temperature, presumably in degrees Celsius.
            humidity (float | None | Unset): Relative humidity, presumably in percent.
            battery (float | None | Unset): Battery level, presumably in percent.
            location_method (None | str | Unset): How the position was found, such as GPS or cell towers.
    """

    device_id: str | Unset = UNSET
    measurement_time: datetime.datetime | None | Unset = UNSET
    coordinates: Coordinates | None | Unset = UNSET
    temperature: float | None | Unset = UNSET
    humidity: float | None | Unset = UNSET
    battery: float | None | Unset = UNSET
    location_method: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)
    _order: tuple[str, ...] = _attrs_field(init=False, default=(), eq=False)
    _sent: dict[str, tuple[Any, Any]] | None = _attrs_field(init=False, default=None, eq=False)


# Imported last, so that models referring to each other import in either order.
from ..models.coordinates import Coordinates  # noqa: E402

Device._declare(
    _records.Field("deviceId", "device_id", _records.STRING),
    _records.Field("measurementTime", "measurement_time", _records.union(_records.DATE_TIME, _records.NULL)),
    _records.Field("coordinates", "coordinates", _records.union(_records.model(Coordinates), _records.NULL)),
    _records.Field("temperature", "temperature", _records.union(_records.NUMBER, _records.NULL)),
    _records.Field("humidity", "humidity", _records.union(_records.NUMBER, _records.NULL)),
    _records.Field("battery", "battery", _records.union(_records.NUMBER, _records.NULL)),
    _records.Field("locationMethod", "location_method", _records.union(_records.STRING, _records.NULL)),
)
