from __future__ import annotations

from typing import Any

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from .. import records as _records
from .. import types
from ..models.token_request_grant_type import TokenRequestGrantType


@_attrs_define(repr=False)
class TokenRequest(_records.Record):
    """Form fields of `POST /authenticate`.

    Attributes:
        client_id (str): The client ID of the integration.
        client_secret (str): The client secret of the integration. Confidential.
        grant_type (TokenRequestGrantType): Always client_credentials.
    """

    client_id: str
    client_secret: str
    grant_type: TokenRequestGrantType
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)
    _order: tuple[str, ...] = _attrs_field(init=False, default=(), eq=False)
    _sent: dict[str, tuple[Any, Any]] | None = _attrs_field(init=False, default=None, eq=False)

    def to_multipart(self) -> types.RequestFiles:
        files: types.RequestFiles = []

        files.append(("client_id", (None, str(self.client_id).encode(), "text/plain")))

        files.append(("client_secret", (None, str(self.client_secret).encode(), "text/plain")))

        files.append(("grant_type", (None, str(self.grant_type).encode(), "text/plain")))

        for prop_name, prop in self.additional_properties.items():
            files.append((prop_name, (None, str(prop).encode(), "text/plain")))

        return files


TokenRequest._declare(
    _records.Field("client_id", "client_id", _records.STRING, required=True),
    _records.Field("client_secret", "client_secret", _records.STRING, required=True, secret=True),
    _records.Field("grant_type", "grant_type", _records.enum("client_credentials"), required=True),
)
