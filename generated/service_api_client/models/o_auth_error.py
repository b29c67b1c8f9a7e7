from __future__ import annotations

from collections.abc import KeysView, Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

T = TypeVar("T", bound="OAuthError")


@_attrs_define
class OAuthError:
    """An error of the token endpoint in the form of RFC 6749 section 5.2.

    Attributes:
        error (str): An RFC 6749 error code such as invalid_request, invalid_client or
            unsupported_grant_type.
        error_description (str | Unset): Human-readable detail.
    """

    error: str
    error_description: str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        error = self.error

        error_description = self.error_description

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "error": error,
            }
        )
        if error_description is not UNSET:
            field_dict["error_description"] = error_description

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        if type(src_dict) is not dict and not isinstance(src_dict, Mapping):
            raise TypeError(f"{cls.__name__}.from_dict: expected a JSON object, got {type(src_dict).__name__}")

        d = dict(src_dict)
        error = d.pop("error")

        _error_description = d.pop("error_description", UNSET)
        error_description: str | Unset
        if isinstance(_error_description, str):
            error_description = _error_description
        else:
            error_description = UNSET
            if _error_description is not UNSET:
                d["error_description"] = _error_description

        o_auth_error = cls(
            error=error,
            error_description=error_description,
        )

        o_auth_error.additional_properties = d
        return o_auth_error

    def __repr__(self) -> str:
        """The record as it came: its fields by their JSON names, as sent (unset ones left
        out)."""
        fields = self.to_dict()
        return f"{type(self).__name__}({fields!r})"

    def __getitem__(self, key: str) -> Any:
        """A field by its JSON name, declared or not: ``record["error"]``.

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
    "error": "error",
    "error_description": "error_description",
}
"""The attribute of each declared field, by its JSON name (``record["..."]``)."""
