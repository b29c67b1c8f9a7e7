from __future__ import annotations

from typing import Any

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from .. import records as _records
from ..types import UNSET, Unset


@_attrs_define(repr=False)
class Address(_records.Record):
    """A postal address. Values of an unexpected type, and unknown fields, are kept as sent.

    Attributes:
        street (None | str | Unset):
        sublocality (None | str | Unset):
        locality (None | str | Unset):
        state (None | str | Unset):
        country (None | str | Unset):
        postal_code (None | str | Unset): A string, since postal codes have letters and leading zeros; a number sent
            here is kept as sent.
    """

    street: None | str | Unset = UNSET
    sublocality: None | str | Unset = UNSET
    locality: None | str | Unset = UNSET
    state: None | str | Unset = UNSET
    country: None | str | Unset = UNSET
    postal_code: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)
    _order: tuple[str, ...] = _attrs_field(init=False, default=(), eq=False)
    _sent: dict[str, tuple[Any, Any]] | None = _attrs_field(init=False, default=None, eq=False)


Address._declare(
    _records.Field("street", "street", _records.union(_records.STRING, _records.NULL)),
    _records.Field("sublocality", "sublocality", _records.union(_records.STRING, _records.NULL)),
    _records.Field("locality", "locality", _records.union(_records.STRING, _records.NULL)),
    _records.Field("state", "state", _records.union(_records.STRING, _records.NULL)),
    _records.Field("country", "country", _records.union(_records.STRING, _records.NULL)),
    _records.Field("postalCode", "postal_code", _records.union(_records.STRING, _records.NULL)),
)
