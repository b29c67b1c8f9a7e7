from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

T = TypeVar("T", bound="Address")


@_attrs_define
class Address:
    """A postal address.

    Attributes:
        street (str | Unset):
        sublocality (str | Unset):
        locality (str | Unset):
        state (str | Unset):
        country (str | Unset):
        postal_code (str | Unset):
    """

    street: str | Unset = UNSET
    sublocality: str | Unset = UNSET
    locality: str | Unset = UNSET
    state: str | Unset = UNSET
    country: str | Unset = UNSET
    postal_code: str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        street = self.street

        sublocality = self.sublocality

        locality = self.locality

        state = self.state

        country = self.country

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
        d = dict(src_dict)
        street = d.pop("street", UNSET)

        sublocality = d.pop("sublocality", UNSET)

        locality = d.pop("locality", UNSET)

        state = d.pop("state", UNSET)

        country = d.pop("country", UNSET)

        postal_code = d.pop("postalCode", UNSET)

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
