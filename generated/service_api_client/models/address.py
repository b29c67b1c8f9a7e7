from __future__ import annotations

from collections.abc import KeysView, Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

T = TypeVar("T", bound="Address")


@_attrs_define
class Address:
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

    def to_dict(self) -> dict[str, Any]:
        street: None | str | Unset
        if isinstance(self.street, Unset):
            street = UNSET
        else:
            street = self.street

        sublocality: None | str | Unset
        if isinstance(self.sublocality, Unset):
            sublocality = UNSET
        else:
            sublocality = self.sublocality

        locality: None | str | Unset
        if isinstance(self.locality, Unset):
            locality = UNSET
        else:
            locality = self.locality

        state: None | str | Unset
        if isinstance(self.state, Unset):
            state = UNSET
        else:
            state = self.state

        country: None | str | Unset
        if isinstance(self.country, Unset):
            country = UNSET
        else:
            country = self.country

        postal_code: None | str | Unset
        if isinstance(self.postal_code, Unset):
            postal_code = UNSET
        else:
            postal_code = self.postal_code

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({})
        if street is not UNSET:
            field_dict["street"] = street
        if sublocality is not UNSET:
            field_dict["sublocality"] = sublocality
        if locality is not UNSET:
            field_dict["locality"] = locality
        if state is not UNSET:
            field_dict["state"] = state
        if country is not UNSET:
            field_dict["country"] = country
        if postal_code is not UNSET:
            field_dict["postalCode"] = postal_code

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        if type(src_dict) is not dict and not isinstance(src_dict, Mapping):
            raise TypeError(f"{cls.__name__}.from_dict: expected a JSON object, got {type(src_dict).__name__}")

        d = dict(src_dict)
        _street = d.pop("street", UNSET)
        street: None | str | Unset
        if (isinstance(_street, str)) or (_street is None):
            street = _street
        else:
            street = UNSET
            if _street is not UNSET:
                d["street"] = _street

        _sublocality = d.pop("sublocality", UNSET)
        sublocality: None | str | Unset
        if (isinstance(_sublocality, str)) or (_sublocality is None):
            sublocality = _sublocality
        else:
            sublocality = UNSET
            if _sublocality is not UNSET:
                d["sublocality"] = _sublocality

        _locality = d.pop("locality", UNSET)
        locality: None | str | Unset
        if (isinstance(_locality, str)) or (_locality is None):
            locality = _locality
        else:
            locality = UNSET
            if _locality is not UNSET:
                d["locality"] = _locality

        _state = d.pop("state", UNSET)
        state: None | str | Unset
        if (isinstance(_state, str)) or (_state is None):
            state = _state
        else:
            state = UNSET
            if _state is not UNSET:
                d["state"] = _state

        _country = d.pop("country", UNSET)
        country: None | str | Unset
        if (isinstance(_country, str)) or (_country is None):
            country = _country
        else:
            country = UNSET
            if _country is not UNSET:
                d["country"] = _country

        _postal_code = d.pop("postalCode", UNSET)
        postal_code: None | str | Unset
        if (isinstance(_postal_code, str)) or (_postal_code is None):
            postal_code = _postal_code
        else:
            postal_code = UNSET
            if _postal_code is not UNSET:
                d["postalCode"] = _postal_code

        address = cls(
            street=street,
            sublocality=sublocality,
            locality=locality,
            state=state,
            country=country,
            postal_code=postal_code,
        )

        address.additional_properties = d
        return address

    def __repr__(self) -> str:
        """The record as it came: its fields by their JSON names, as sent (unset ones left
        out)."""
        fields = self.to_dict()
        return f"{type(self).__name__}({fields!r})"

    def __getitem__(self, key: str) -> Any:
        """A field by its JSON name, declared or not: ``record["street"]``.

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
    "street": "street",
    "sublocality": "sublocality",
    "locality": "locality",
    "state": "state",
    "country": "country",
    "postalCode": "postal_code",
}
"""The attribute of each declared field, by its JSON name (``record["..."]``)."""
