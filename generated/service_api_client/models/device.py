from __future__ import annotations

import datetime
from collections.abc import KeysView, Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.coordinates import Coordinates


T = TypeVar("T", bound="Device")


@_attrs_define
class Device:
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
    # The date strings as sent, beside the values parsed from them: to_dict() writes
    # a string back while its attribute still holds the value parsed from it.
    _sent: dict[str, tuple[object, str]] = _attrs_field(init=False, factory=dict, repr=False, eq=False)

    def to_dict(self) -> dict[str, Any]:
        device_id = self.device_id

        measurement_time: None | str | Unset
        if isinstance(self.measurement_time, Unset):
            measurement_time = UNSET
        elif isinstance(self.measurement_time, datetime.datetime):
            measurement_time = self.measurement_time.isoformat()
        else:
            measurement_time = self.measurement_time
        sent_measurement_time = self._sent.get("measurementTime")
        if sent_measurement_time is not None and sent_measurement_time[0] is self.measurement_time:
            measurement_time = sent_measurement_time[1]

        coordinates: dict[str, Any] | None | Unset
        if isinstance(self.coordinates, Unset):
            coordinates = UNSET
        elif isinstance(self.coordinates, Coordinates):
            coordinates = self.coordinates.to_dict()
        else:
            coordinates = self.coordinates

        temperature: float | None | Unset
        if isinstance(self.temperature, Unset):
            temperature = UNSET
        else:
            temperature = self.temperature

        humidity: float | None | Unset
        if isinstance(self.humidity, Unset):
            humidity = UNSET
        else:
            humidity = self.humidity

        battery: float | None | Unset
        if isinstance(self.battery, Unset):
            battery = UNSET
        else:
            battery = self.battery

        location_method: None | str | Unset
        if isinstance(self.location_method, Unset):
            location_method = UNSET
        else:
            location_method = self.location_method

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({})
        if device_id is not UNSET:
            field_dict["deviceId"] = device_id
        if measurement_time is not UNSET:
            field_dict["measurementTime"] = measurement_time
        if coordinates is not UNSET:
            field_dict["coordinates"] = coordinates
        if temperature is not UNSET:
            field_dict["temperature"] = temperature
        if humidity is not UNSET:
            field_dict["humidity"] = humidity
        if battery is not UNSET:
            field_dict["battery"] = battery
        if location_method is not UNSET:
            field_dict["locationMethod"] = location_method

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        if type(src_dict) is not dict and not isinstance(src_dict, Mapping):
            raise TypeError(f"{cls.__name__}.from_dict: expected a JSON object, got {type(src_dict).__name__}")
        sent: dict[str, tuple[object, str]] = {}

        d = dict(src_dict)
        _device_id = d.pop("deviceId", UNSET)
        device_id: str | Unset
        if isinstance(_device_id, str):
            device_id = _device_id
        else:
            device_id = UNSET
            if _device_id is not UNSET:
                d["deviceId"] = _device_id

        _measurement_time = d.pop("measurementTime", UNSET)
        measurement_time: datetime.datetime | None | Unset
        if isinstance(_measurement_time, str):
            try:
                measurement_time = datetime.datetime.fromisoformat(_measurement_time)
            except ValueError:
                measurement_time = UNSET
                d["measurementTime"] = _measurement_time
            else:
                sent["measurementTime"] = (measurement_time, _measurement_time)

        elif _measurement_time is None:
            measurement_time = _measurement_time
        else:
            measurement_time = UNSET
            if _measurement_time is not UNSET:
                d["measurementTime"] = _measurement_time

        _coordinates = d.pop("coordinates", UNSET)
        coordinates: Coordinates | None | Unset
        if isinstance(_coordinates, dict):
            coordinates = Coordinates.from_dict(_coordinates)

        elif _coordinates is None:
            coordinates = _coordinates
        else:
            coordinates = UNSET
            if _coordinates is not UNSET:
                d["coordinates"] = _coordinates

        _temperature = d.pop("temperature", UNSET)
        temperature: float | None | Unset
        if (type(_temperature) is float or type(_temperature) is int) or (_temperature is None):
            temperature = _temperature
        else:
            temperature = UNSET
            if _temperature is not UNSET:
                d["temperature"] = _temperature

        _humidity = d.pop("humidity", UNSET)
        humidity: float | None | Unset
        if (type(_humidity) is float or type(_humidity) is int) or (_humidity is None):
            humidity = _humidity
        else:
            humidity = UNSET
            if _humidity is not UNSET:
                d["humidity"] = _humidity

        _battery = d.pop("battery", UNSET)
        battery: float | None | Unset
        if (type(_battery) is float or type(_battery) is int) or (_battery is None):
            battery = _battery
        else:
            battery = UNSET
            if _battery is not UNSET:
                d["battery"] = _battery

        _location_method = d.pop("locationMethod", UNSET)
        location_method: None | str | Unset
        if (isinstance(_location_method, str)) or (_location_method is None):
            location_method = _location_method
        else:
            location_method = UNSET
            if _location_method is not UNSET:
                d["locationMethod"] = _location_method

        device = cls(
            device_id=device_id,
            measurement_time=measurement_time,
            coordinates=coordinates,
            temperature=temperature,
            humidity=humidity,
            battery=battery,
            location_method=location_method,
        )
        device._sent = sent

        device.additional_properties = d
        return device

    def __repr__(self) -> str:
        """The record as it came: its fields by their JSON names, as sent (unset ones left
        out)."""
        fields = self.to_dict()
        return f"{type(self).__name__}({fields!r})"

    def __getitem__(self, key: str) -> Any:
        """A field by its JSON name, declared or not: ``record["deviceId"]``.

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
    "deviceId": "device_id",
    "measurementTime": "measurement_time",
    "coordinates": "coordinates",
    "temperature": "temperature",
    "humidity": "humidity",
    "battery": "battery",
    "locationMethod": "location_method",
}
"""The attribute of each declared field, by its JSON name (``record["..."]``)."""


# Imported last, so that models referring to each other import in either order.
from ..models.coordinates import Coordinates  # noqa: E402
