from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from .. import types
from ..models.token_request_grant_type import TokenRequestGrantType, check_token_request_grant_type

T = TypeVar("T", bound="TokenRequest")


@_attrs_define
class TokenRequest:
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

    def to_dict(self) -> dict[str, Any]:
        client_id = self.client_id

        client_secret = self.client_secret

        grant_type: str = self.grant_type

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "client_id": client_id,
                "client_secret": client_secret,
                "grant_type": grant_type,
            }
        )

        return field_dict

    def to_multipart(self) -> types.RequestFiles:
        files: types.RequestFiles = []

        files.append(("client_id", (None, str(self.client_id).encode(), "text/plain")))

        files.append(("client_secret", (None, str(self.client_secret).encode(), "text/plain")))

        files.append(("grant_type", (None, str(self.grant_type).encode(), "text/plain")))

        for prop_name, prop in self.additional_properties.items():
            files.append((prop_name, (None, str(prop).encode(), "text/plain")))

        return files

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        if type(src_dict) is not dict and not isinstance(src_dict, Mapping):
            raise TypeError(f"{cls.__name__}.from_dict: expected a JSON object, got {type(src_dict).__name__}")
        d = dict(src_dict)
        client_id = d.pop("client_id")

        client_secret = d.pop("client_secret")

        grant_type = check_token_request_grant_type(d.pop("grant_type"))

        token_request = cls(
            client_id=client_id,
            client_secret=client_secret,
            grant_type=grant_type,
        )

        token_request.additional_properties = d
        return token_request

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
