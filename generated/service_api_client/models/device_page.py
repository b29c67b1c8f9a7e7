from __future__ import annotations

from collections.abc import KeysView, Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.device import Device


T = TypeVar("T", bound="DevicePage")


@_attrs_define
class DevicePage:
    """One page of devices in the pagination envelope.

    Attributes:
        total_records (int): Count of records of the whole result set, not of the page.
        page_number (int): The page offset returned, counted from 1; the pageNumber asked for.
        page_size (int): Number of results per page; a larger pageSize asked for is answered with 50.
        data (list[Device]): The devices of the page.
        next_ (None | str | Unset): URL of the next page, with the pageSize and pageNumber query parameters.
            Present only when a next page exists.
        previous (None | str | Unset): URL of the previous page, with the pageSize and pageNumber query parameters.
            Present only when a previous page exists.
    """

    total_records: int
    page_number: int
    page_size: int
    data: list[Device]
    next_: None | str | Unset = UNSET
    previous: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        total_records = self.total_records

        page_number = self.page_number

        page_size = self.page_size

        data = []
        for data_item_data in self.data:
            data_item = data_item_data.to_dict()
            data.append(data_item)

        next_: None | str | Unset
        if isinstance(self.next_, Unset):
            next_ = UNSET
        else:
            next_ = self.next_

        previous: None | str | Unset
        if isinstance(self.previous, Unset):
            previous = UNSET
        else:
            previous = self.previous

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "totalRecords": total_records,
                "pageNumber": page_number,
                "pageSize": page_size,
                "data": data,
            }
        )
        if next_ is not UNSET:
            field_dict["next"] = next_
        if previous is not UNSET:
            field_dict["previous"] = previous

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        if type(src_dict) is not dict and not isinstance(src_dict, Mapping):
            raise TypeError(f"{cls.__name__}.from_dict: expected a JSON object, got {type(src_dict).__name__}")

        d = dict(src_dict)
        total_records = d.pop("totalRecords")

        page_number = d.pop("pageNumber")

        page_size = d.pop("pageSize")

        data = []
        _data = d.pop("data")
        for data_item_data in _data:
            data_item = Device.from_dict(data_item_data)

            data.append(data_item)

        _next_ = d.pop("next", UNSET)
        next_: None | str | Unset
        if (isinstance(_next_, str)) or (_next_ is None):
            next_ = _next_
        else:
            next_ = UNSET
            if _next_ is not UNSET:
                d["next"] = _next_

        _previous = d.pop("previous", UNSET)
        previous: None | str | Unset
        if (isinstance(_previous, str)) or (_previous is None):
            previous = _previous
        else:
            previous = UNSET
            if _previous is not UNSET:
                d["previous"] = _previous

        device_page = cls(
            total_records=total_records,
            page_number=page_number,
            page_size=page_size,
            data=data,
            next_=next_,
            previous=previous,
        )

        device_page.additional_properties = d
        return device_page

    def __repr__(self) -> str:
        """The record as it came: its fields by their JSON names, as sent (unset ones left
        out)."""
        fields = self.to_dict()
        return f"{type(self).__name__}({fields!r})"

    def __getitem__(self, key: str) -> Any:
        """A field by its JSON name, declared or not: ``record["totalRecords"]``.

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
    "totalRecords": "total_records",
    "pageNumber": "page_number",
    "pageSize": "page_size",
    "data": "data",
    "next": "next_",
    "previous": "previous",
}
"""The attribute of each declared field, by its JSON name (``record["..."]``)."""


# Imported last, so that models referring to each other import in either order.
from ..models.device import Device  # noqa: E402
