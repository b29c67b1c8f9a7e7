from __future__ import annotations

from collections.abc import KeysView, Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from .. import types
from ..models.token_request_grant_type import TokenRequestGrantType, check_token_request_grant_type
from ..types import UNSET

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

    def __repr__(self) -> str:
        """The record as it came: its fields by their JSON names, as sent (unset ones left
        out, and its secret fields)."""
        fields = self.to_dict()
        fields.pop("client_secret", None)
        return f"{type(self).__name__}({fields!r})"

    def __getitem__(self, key: str) -> Any:
        """A field by its JSON name, declared or not: ``record["client_id"]``.

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
    "client_id": "client_id",
    "client_secret": "client_secret",
    "grant_type": "grant_type",
}
"""The attribute of each declared field, by its JSON name (``record["..."]``)."""
