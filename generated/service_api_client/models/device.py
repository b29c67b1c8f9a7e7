from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

T = TypeVar("T", bound="Device")


@_attrs_define
class Device:
    """A tracking device and its latest reading. Fields the service sends beyond these are kept.

    Attributes:
        device_id (str | Unset): Identifier of the device.
        measurement_time (datetime.datetime | Unset): When the latest reading was taken.
        coordinates (Coordinates | Unset): A position in decimal degrees.
        temperature (float | Unset): Temperature in degrees Celsius.
        humidity (float | Unset): Relative humidity in percent.
        battery (float | Unset): Battery level in percent.
        location_method (str | Unset): How the position was found, such as GPS or cell towers.
    """

    device_id: str | Unset = UNSET
    measurement_time: datetime.datetime | Unset = UNSET
    coordinates: Coordinates | Unset = UNSET
    temperature: float | Unset = UNSET
    humidity: float | Unset = UNSET
    battery: float | Unset = UNSET
    location_method: str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        device_id = self.device_id

        measurement_time: str | Unset = UNSET
        if not isinstance(self.measurement_time, Unset):
            measurement_time = self.measurement_time.isoformat()

        coordinates: dict[str, Any] | Unset = UNSET
        if not isinstance(self.coordinates, Unset):
            coordinates = self.coordinates.to_dict()

        temperature = self.temperature

        humidity = self.humidity

        battery = self.battery

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
        d = dict(src_dict)
        device_id = d.pop("deviceId", UNSET)

        _measurement_time = d.pop("measurementTime", UNSET)
        measurement_time: datetime.datetime | Unset
        if isinstance(_measurement_time, Unset):
            measurement_time = UNSET
        else:
            measurement_time = datetime.datetime.fromisoformat(_measurement_time)

        _coordinates = d.pop("coordinates", UNSET)
        coordinates: Coordinates | Unset
        if isinstance(_coordinates, Unset):
            coordinates = UNSET
        else:
            coordinates = Coordinates.from_dict(_coordinates)

        temperature = d.pop("temperature", UNSET)

        humidity = d.pop("humidity", UNSET)

        battery = d.pop("battery", UNSET)

        location_method = d.pop("locationMethod", UNSET)

        device = cls(
            device_id=device_id,
            measurement_time=measurement_time,
            coordinates=coordinates,
            temperature=temperature,
            humidity=humidity,
            battery=battery,
            location_method=location_method,
        )

        device.additional_properties = d
        return device

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
from ..models.coordinates import Coordinates  # noqa: E402
