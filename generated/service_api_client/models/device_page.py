from __future__ import annotations

from typing import TYPE_CHECKING, Any

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from .. import records as _records
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.device import Device


@_attrs_define(repr=False)
class DevicePage(_records.Record):
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
    _order: tuple[str, ...] = _attrs_field(init=False, default=(), eq=False)
    _sent: dict[str, tuple[Any, Any]] | None = _attrs_field(init=False, default=None, eq=False)


# Imported last, so that models referring to each other import in either order.
from ..models.device import Device  # noqa: E402

DevicePage._declare(
    _records.Field("totalRecords", "total_records", _records.INTEGER, required=True),
    _records.Field("pageNumber", "page_number", _records.INTEGER, required=True),
    _records.Field("pageSize", "page_size", _records.INTEGER, required=True),
    _records.Field("data", "data", _records.list_of(_records.model(Device)), required=True),
    _records.Field("next", "next_", _records.union(_records.STRING, _records.NULL)),
    _records.Field("previous", "previous", _records.union(_records.STRING, _records.NULL)),
    strict=True,
)
