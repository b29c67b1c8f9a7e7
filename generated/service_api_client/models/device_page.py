from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

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


# Imported last, so that models referring to each other import in either order.
from ..models.device import Device  # noqa: E402
