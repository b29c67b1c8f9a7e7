"""The typed model of the spec: what every reader of openapi.yaml needs, read once.

How each fact is found is in :mod:`service_api_spec._reading`; here is only what it is.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

import attrs

from ._document import SpecDocument
from ._schemas import Schemas

__all__ = [
    "Answer",
    "Body",
    "Filter",
    "Kind",
    "Operation",
    "Parameter",
    "Resource",
    "Spec",
    "Tag",
]

Kind = Literal["token", "list", "get", "create", "replace", "update", "delete", "other"]
"""What an operation does, from its method, its path and its answer (the module
docstring of :mod:`service_api_spec` has the rules)."""


@attrs.frozen
class Parameter:
    """A parameter of an operation: in the path, the query, a header or a cookie.

    ``kind`` is what a value must be: ``string``, ``integer``, ``number``, ``boolean``,
    ``date-time``, ``date``, ``uuid``, ``array`` or ``object``; ``choices`` the members of
    its enum, if it has one.

    Example::

        Parameter("pageSize", "query", False, "integer", (), "#/components/...")
    """

    name: str
    location: str
    required: bool
    kind: str
    choices: tuple[Any, ...]
    pointer: str | None
    """The JSON pointer of its schema (None: it declares none)."""


@attrs.frozen
class Filter:
    """A query parameter of a list that selects records by one of their fields:
    ``compare`` is how the field's value stands to the parameter's: ``eq``, ``gt``,
    ``ge``, ``lt`` or ``le`` (``ge``: the field is at least the value).

    Example::

        Filter("minRating", "rating", "ge")
    """

    parameter: str
    field: str
    compare: str


@attrs.frozen
class Answer:
    """One answer an operation declares, by its status key (``"200"``, ``"4XX"``,
    ``"default"``): the media type to send it with (JSON first), its schema and shape:
    what its body is, ``page`` (the page envelope), ``array``, ``object``, ``scalar``
    (another JSON value), ``text``, or ``empty`` (none).

    Example::

        spec.operation("getShipment").success  # Answer("200", "application/json", ...)
    """

    status: str
    media: str | None
    pointer: str | None
    shape: str
    headers: tuple[str, ...] = ()

    @property
    def code(self) -> int:
        """The status to answer with: ``200`` for ``"2XX"`` (and ``"default"``)."""
        if self.status.isdigit():
            return int(self.status)
        if self.status[:1].isdigit():
            return int(self.status[0]) * 100
        return 200


@attrs.frozen
class Body:
    """An operation's request body: its media type, its schema, whether it is required."""

    media: str
    pointer: str | None
    required: bool


@attrs.frozen
class Resource:
    """Records of one kind, under one collection path (``/shipments``,
    ``/shipments/{shipmentId}/events``), read, listed or written by operations.

    Example::

        spec.resources["shipment-events"].parent  # "shipments"
    """

    name: str
    """Its name for people and tools: the collection's words (``shipment-events``)."""
    collection: str
    item_parameter: str | None
    """The path parameter naming one record (``shipmentId`` of ``/shipments/{shipmentId}``)."""
    pointer: str | None
    """The JSON pointer of one record's schema."""
    fields: tuple[str, ...]
    id_field: str | None
    """The field that identifies a record: the item path's parameter where the record has
    it, else its one ``...Id`` field (the parents' left out); None when neither is found."""
    id_kind: str
    parent: str | None
    parent_parameters: tuple[str, ...]
    """The path parameters of the collection: ``shipmentId`` of
    ``/shipments/{shipmentId}/events``."""


@attrs.frozen
class Operation:
    """One operation of the spec, classified.

    ``door`` is its method under ``client.<tag>`` (``list``, ``get``, ``list_events``,
    ``cancel_shipment``); None for the token request, which the client makes itself.

    Example::

        op = spec.operation("getShipment")
        op.kind, op.door, op.resource  # ("get", "get", "shipments")
    """

    operation_id: str
    python_name: str
    method: str
    path: str
    pointer: str
    tag: str
    kind: Kind
    door: str | None
    resource: str | None
    bearer: bool
    account_header: str | None
    parameters: tuple[Parameter, ...]
    body: Body | None
    answers: Mapping[str, Answer]
    success: Answer | None
    filters: tuple[Filter, ...] = ()
    unapplied: tuple[str, ...] = ()
    """Query parameters of a list tied to no field: the mock cannot apply them."""

    def parameter(self, name: str) -> Parameter | None:
        """The parameter called ``name``, or None."""
        return next((p for p in self.parameters if p.name == name), None)


@attrs.frozen
class Tag:
    """A tag of operations (``Spec.tags`` by name): ``client.<attribute>`` and the
    generated ``api.<module>``.

    Example::

        spec.tags["shipments"]  # Tag(module="shipments", attribute="shipments")
    """

    module: str
    attribute: str


@attrs.frozen
class Spec:
    """The whole spec, read once: operations, resources, tags and the document.

    Example::

        spec = load_spec("openapi.yaml")
        [op.door for op in spec.operations if op.kind == "list"]
    """

    document: SpecDocument = attrs.field(repr=False)
    operations: tuple[Operation, ...]
    resources: Mapping[str, Resource]
    tags: Mapping[str, Tag]
    schemas: Schemas = attrs.field(repr=False, eq=False)
    """Its schemas as JSON Schema (``schemas.json_schema``) and as views
    (``schemas.view``)."""

    def operation(self, operation_id: str) -> Operation:
        """The operation of this ``operationId``; KeyError if none has it."""
        for operation in self.operations:
            if operation.operation_id == operation_id:
                return operation
        raise KeyError(operation_id)

    @property
    def lists(self) -> tuple[Operation, ...]:
        """The list operations: paged, one resource each."""
        return tuple(op for op in self.operations if op.kind == "list")
