from __future__ import annotations

from typing import Any

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from .. import records as _records
from ..types import UNSET, Unset


@_attrs_define(repr=False)
class Coordinates(_records.Record):
    """A position. Values of an unexpected type, and unknown fields, are kept as sent.

    Attributes:
        latitude (float | None | Unset): Latitude in decimal degrees, -90 to 90 (not checked by the client).
        longitude (float | None | Unset): Longitude in decimal degrees, -180 to 180 (not checked by the client).
    """

    latitude: float | None | Unset = UNSET
    longitude: float | None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)
    _order: tuple[str, ...] = _attrs_field(init=False, default=(), eq=False)
    _sent: dict[str, tuple[Any, Any]] | None = _attrs_field(init=False, default=None, eq=False)


Coordinates._declare(
    _records.Field("latitude", "latitude", _records.union(_records.NUMBER, _records.NULL)),
    _records.Field("longitude", "longitude", _records.union(_records.NUMBER, _records.NULL)),
)
