from __future__ import annotations

from typing import Any

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from .. import records as _records
from ..types import UNSET, Unset


@_attrs_define(repr=False)
class ProblemDetails(_records.Record):
    """An RFC 9457 problem details object.

    Attributes:
        type_ (str | Unset):
        title (str | Unset):
        status (int | Unset):
        detail (str | Unset):
        instance (str | Unset):
    """

    type_: str | Unset = UNSET
    title: str | Unset = UNSET
    status: int | Unset = UNSET
    detail: str | Unset = UNSET
    instance: str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)
    _order: tuple[str, ...] = _attrs_field(init=False, default=(), eq=False)
    _sent: dict[str, tuple[Any, Any]] | None = _attrs_field(init=False, default=None, eq=False)


ProblemDetails._declare(
    _records.Field("type", "type_", _records.STRING),
    _records.Field("title", "title", _records.STRING),
    _records.Field("status", "status", _records.INTEGER),
    _records.Field("detail", "detail", _records.STRING),
    _records.Field("instance", "instance", _records.STRING),
)
