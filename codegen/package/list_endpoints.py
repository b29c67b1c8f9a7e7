"""The entries of ``service_api_client.api.LIST_ENDPOINTS``, the registry of the API's
list endpoints that the command line and the dlt source read.

Written by hand and copied as it is into the generated package by codegen/generate.py;
the registry itself is generated from the spec (``api/__init__.py``).

Example::

    from service_api_client.api import LIST_ENDPOINTS

    for name, endpoint in LIST_ENDPOINTS.items():
        print(name, endpoint.item_model.__name__, endpoint.id_field, endpoint.page_size)
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any, Literal

__all__ = ["ListEndpoint", "ListParameter"]


@dataclass(frozen=True)
class ListParameter:
    """A parameter of a list endpoint, but its page ones (``pageNumber``, ``pageSize``).

    Attributes:
        name: as the API spells it (``shipmentId``, ``createdAfter``).
        python_name: the endpoint function's keyword (``shipment_id``).
        location: ``path``, ``query``, ``header`` or ``cookie``.
        required: whether every call must give it (a path parameter always is).
        kind: what a value must be: ``string``, ``integer``, ``number``, ``boolean``,
            ``date-time``, ``date``, ``uuid``, ``array`` or ``object``.
        choices: the values of its enum, or ``()``.

    Example::

        parameter = LIST_ENDPOINTS["shipment-events"].parameters[0]
        parameter.name, parameter.location  # ("shipmentId", "path")
    """

    name: str
    python_name: str
    location: Literal["path", "query", "header", "cookie"]
    required: bool = False
    kind: Literal[
        "string",
        "integer",
        "number",
        "boolean",
        "date-time",
        "date",
        "uuid",
        "array",
        "object",
    ] = "string"
    choices: tuple[Any, ...] = ()


@dataclass(frozen=True)
class ListEndpoint:
    """A list endpoint of the API, as the generator found it in the spec.

    Attributes:
        name: its resource's name, the words of its path but the parameters
            (``/shipments`` -> ``"shipments"``, ``/shipments/{shipmentId}/events`` ->
            ``"shipment-events"``).
        module: the generated endpoint module (``list_shipments``).
        page_model: the model of one page (``ShipmentPage``).
        item_model: the model of one record (``Shipment``); for a list whose records
            are a ``oneOf``/``anyOf`` of models, their common base ``Record``.
        id_field: the record's identifier as the API spells it (``"shipmentId"``): the
            parameter of its item path (``/shipments/{shipmentId}``), else its one
            top-level ``...Id`` field; ``None`` when neither is found.
        parameters: its parameters but the page ones, path ones first (a parent's id,
            then the filters).
        page_size: the records per page to ask for when none is named: the spec's
            ``pageSize`` default, else its maximum; ``None`` when it states neither.
        max_page_size: the most records per page the service serves, as the spec's
            ``pageSize`` maximum says; ``None`` when it states none.
        parent: the endpoint of the records this one's live under
            (``"shipments"`` for ``"shipment-events"``), where that one is listed;
            else ``None``.
        parent_fields: for each path parameter, the field of a record of ``parent``
            that gives its value (``{"shipmentId": "shipmentId"}``).
        item_models: every model a record may be: ``(Shipment,)``, or each variant of
            a union in the spec's order (``(FileMini, FolderMini, WebLink)``).

    Example::

        endpoint = LIST_ENDPOINTS["shipments"]
        endpoint.id_field   # "shipmentId"
    """

    name: str
    module: ModuleType = field(repr=False)
    page_model: type[Any] = field(repr=False)
    item_model: type[Any] = field(repr=False)
    id_field: str | None
    # Told by the module (the same operation), so an entry is known without them.
    page_size: int | None = field(default=None, repr=False, compare=False)
    max_page_size: int | None = field(default=None, repr=False, compare=False)
    parent: str | None = field(default=None, repr=False, compare=False)
    parent_fields: Mapping[str, str] = field(
        default_factory=dict, repr=False, compare=False
    )
    parameters: tuple[ListParameter, ...] = field(default=(), repr=False, compare=False)
    item_models: tuple[type[Any], ...] = field(default=(), repr=False, compare=False)

    @property
    def largest_page(self) -> int | None:
        """The page size that needs the fewest requests: the maximum, else the
        default (``None``: the spec states neither)."""
        return self.max_page_size if self.max_page_size is not None else self.page_size
