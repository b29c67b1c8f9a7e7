from __future__ import annotations

from typing import Any

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from .. import records as _records
from ..models.token_response_token_type import TokenResponseTokenType


@_attrs_define(repr=False)
class TokenResponse(_records.Record):
    """A bearer token and how long it lives.

    Attributes:
        access_token (str): The bearer token. Confidential. Sent back as a header value, so printable ASCII without
            spaces.
        token_type (TokenResponseTokenType): Always Bearer.
        expires_in (str): Seconds until the token expires, as a string holding an integer from 1 to 604800
            (a week) without leading zeros; currently "3600".
    """

    access_token: str
    token_type: TokenResponseTokenType
    expires_in: str
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)
    _order: tuple[str, ...] = _attrs_field(init=False, default=(), eq=False)
    _sent: dict[str, tuple[Any, Any]] | None = _attrs_field(init=False, default=None, eq=False)


TokenResponse._declare(
    _records.Field("access_token", "access_token", _records.STRING, required=True),
    _records.Field("token_type", "token_type", _records.enum("Bearer"), required=True),
    _records.Field("expires_in", "expires_in", _records.STRING, required=True),
)
