from __future__ import annotations

from typing import Any

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from .. import records as _records
from ..types import UNSET, Unset


@_attrs_define(repr=False)
class OAuthError(_records.Record):
    """An error of the token endpoint in the form of RFC 6749 section 5.2.

    Attributes:
        error (str): An RFC 6749 error code such as invalid_request, invalid_client or
            unsupported_grant_type.
        error_description (str | Unset): Human-readable detail.
    """

    error: str
    error_description: str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)
    _order: tuple[str, ...] = _attrs_field(init=False, default=(), eq=False)
    _sent: dict[str, tuple[Any, Any]] | None = _attrs_field(init=False, default=None, eq=False)


OAuthError._declare(
    _records.Field("error", "error", _records.STRING, required=True),
    _records.Field("error_description", "error_description", _records.STRING),
)
