"""The typed model of the spec: what every reader of openapi.yaml needs, read once.

How each fact is found is in :mod:`service_api_spec._reading`; here is only what it is.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any, Literal
from urllib.parse import unquote

import attrs

from ._document import SpecDocument
from ._schemas import Schemas

__all__ = [
    "Answer",
    "Body",
    "Compare",
    "Filter",
    "Kind",
    "Location",
    "Operation",
    "PageSize",
    "Parameter",
    "ParameterKind",
    "Resource",
    "Route",
    "Shape",
    "Spec",
    "Tag",
]

Kind = Literal["token", "list", "get", "create", "replace", "update", "delete", "other"]
"""What an operation does, from its method, its path and its answer (the module
docstring of :mod:`service_api_spec` has the rules)."""

Location = Literal["path", "query", "header", "cookie"]
"""Where a parameter is sent."""

ParameterKind = Literal[
    "string",
    "integer",
    "number",
    "boolean",
    "date-time",
    "date",
    "uuid",
    "array",
    "object",
]
"""What a parameter's value must be: its schema's type, or the format of a string."""

Shape = Literal["page", "array", "object", "scalar", "text", "empty"]
"""What an answer's body is: ``page`` (the page envelope), ``array``, ``object``,
``scalar`` (another JSON value), ``text`` (not JSON), ``empty`` (none)."""

Compare = Literal["eq", "gt", "ge", "lt", "le"]
"""How a record's field stands to a filter's value (``ge``: at least the value)."""


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
    location: Location
    required: bool
    kind: ParameterKind
    choices: tuple[Any, ...]
    pointer: str | None
    """The JSON pointer of its schema (None: it declares none)."""
    exploded: bool = True
    """Whether an array goes as one parameter per item (``ids=1&ids=2``), as OpenAPI's
    ``explode`` says (true by default in the query and a cookie), rather than as one
    text of items split by commas (``ids=1,2``, the only way of a path or a header)."""
    style: str = "form"
    """OpenAPI's ``style`` as it applies: as written, else ``form`` in the query and a
    cookie, ``simple`` in a path and a header. An exploded ``form`` object is its
    properties as parameters of their own (``?lat=1&long=2``), a ``deepObject`` one
    ``point[lat]=1``; a ``spaceDelimited`` or ``pipeDelimited`` array is split there."""


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
    compare: Compare


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
    shape: Shape
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
class PageSize:
    """The page sizes a list takes, as its ``pageSize`` parameter's schema states them.

    ``default`` is what to ask for when the caller names no size: the schema's
    ``default``, else its ``maximum`` (None: it states neither); ``maximum`` the largest
    the service serves (None: it states none).

    Example::

        spec.operation("listShipments").page_size  # PageSize(default=50, maximum=50)
    """

    default: int | None
    maximum: int | None

    @property
    def largest(self) -> int | None:
        """The size that needs the fewest requests: the maximum, else the default."""
        return self.maximum if self.maximum is not None else self.default


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
    it, else its one ``...Id`` field (the parents' left out); of a union, the one every
    variant has by these rules; None when none is found (the package docstring has the
    whole rule)."""
    id_kind: ParameterKind
    """What its identifier's value is (``string`` where none is known)."""
    parent: str | None
    """The resource whose records this one's live under (``shipments`` of
    ``/shipments/{shipmentId}/events``), or None."""
    parent_parameters: tuple[str, ...]
    """The path parameters of the collection: ``shipmentId`` of
    ``/shipments/{shipmentId}/events``."""
    parent_fields: Mapping[str, str] = attrs.field(factory=dict)
    """For each path parameter of the collection, the field of a record of the parent's
    list that gives its value: the parent's identifier for the parent's own item
    parameter, the same name for those the parent inherits (as the parent's rows carry
    them). ``{"shipmentId": "shipmentId"}``; a parameter of no known field is left out."""


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
    page_size: PageSize | None = None
    """A list's page sizes (None for any other operation)."""

    def parameter(self, name: str) -> Parameter | None:
        """The parameter called ``name``, or None."""
        return next((p for p in self.parameters if p.name == name), None)

    def answer(self, status: int) -> Answer | None:
        """The answer it declares for ``status``: its own (``"404"``), else its range's
        (``"4XX"``), else ``"default"``; None if it declares none of them.

        Example::

            spec.operation("listShipments").answer(503).status  # "5XX"
        """
        for key in (str(status), f"{status // 100}XX", f"{status // 100}xx", "default"):
            if key in self.answers:
                return self.answers[key]
        return None

    @property
    def successes(self) -> tuple[Answer, ...]:
        """Every 2xx answer it declares, by status (``"2XX"`` last)."""
        return tuple(
            self.answers[key]
            for key in sorted(self.answers, key=lambda k: (not k.isdigit(), k))
            if key[:1] == "2"
        )


@attrs.frozen
class Tag:
    """A tag of operations (``Spec.tags`` by name): the generated ``api.<module>``. The
    client's attribute for it is the generator's to choose (it knows the client's
    other attributes): ``service_api_client.api.TAG_ATTRIBUTES``.

    Example::

        spec.tags["shipments"]  # Tag(module="shipments")
    """

    module: str


@attrs.frozen
class Route:
    """The operations of one path template (``/shipments/{shipmentId}``) by method, and
    the pattern that finds its path parameters in a path as sent.

    Example::

        route.methods["GET"].operation_id  # "getShipment"
    """

    path: str
    pattern: re.Pattern[str] = attrs.field(repr=False)
    names: tuple[str, ...]
    """The path parameters, in the order of the pattern's groups."""
    methods: Mapping[str, Operation] = attrs.field(repr=False)


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

    routes: tuple[Route, ...] = attrs.field(repr=False, eq=False, default=())
    """Its paths, literal ones first (``/things/search`` before ``/things/{id}``)."""

    @property
    def lists(self) -> tuple[Operation, ...]:
        """The list operations: paged, one resource each."""
        return tuple(op for op in self.operations if op.kind == "list")

    def match(self, path: str) -> tuple[Route, dict[str, str]] | None:
        """The route ``path`` (below the server's base, percent-encoded as sent) fits,
        and its path parameters decoded (an encoded ``/`` stays inside one); None
        where no path of the spec fits.

        Example::

            route, values = spec.match("/shipments/abc")  # {"shipmentId": "abc"}
        """
        return next(self._matches(path), None)

    def _matches(self, path: str) -> Iterator[tuple[Route, dict[str, str]]]:
        for route in self.routes:
            found = route.pattern.fullmatch(path)
            if found is not None:
                values = [unquote(value) for value in found.groups()]
                yield route, dict(zip(route.names, values, strict=True))

    def route(self, method: str, path: str) -> tuple[Operation, dict[str, str]] | None:
        """The operation a request of ``method`` to ``path`` calls, and its path
        parameters (see :meth:`match`); None where none of the spec fits.

        Example::

            op, values = spec.route("GET", "/shipments/abc")  # getShipment
        """
        for route, values in self._matches(path):
            if method.upper() in route.methods:
                return route.methods[method.upper()], values
        return None
