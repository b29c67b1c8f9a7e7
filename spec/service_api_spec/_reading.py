"""How the model is read from the document: the rules of :mod:`service_api_spec`."""

from __future__ import annotations

import math
import re
from collections.abc import Iterator, Mapping
from typing import Any

import attrs

from ._document import SpecDocument, escape
from ._model import (
    Answer,
    Body,
    Compare,
    Filter,
    Kind,
    Location,
    Operation,
    PageSize,
    Parameter,
    ParameterKind,
    Resource,
    Route,
    Shape,
    Spec,
    Tag,
)
from ._names import python_identifier, singular, snake_case
from ._schemas import Schemas, SchemaView

__all__ = [
    "PAGE_PARAMETERS",
    "is_json",
    "read_spec",
]

METHODS = ("get", "put", "post", "delete", "patch", "head", "options", "trace")
PAGE_PARAMETERS = ("pageNumber", "pageSize")
PAGE_SIZE = ("pageSize", "query")
PAGE_FIELDS = ("totalRecords", "pageNumber", "pageSize", "data")
# The media types of a body or an answer, most wanted first (then any other).
PREFERRED = ("multipart/form-data", "application/x-www-form-urlencoded", "text/plain")
ITEM_KINDS: Mapping[str, Kind] = {
    "GET": "get",
    "PUT": "replace",
    "PATCH": "update",
    "DELETE": "delete",
}
VERBS = ("create", *ITEM_KINDS.values())
TOKEN_FIELDS = {"client_id", "client_secret"}
LOCATIONS: tuple[Location, ...] = ("path", "query", "header", "cookie")
# The kinds a parameter's schema type names as it is; a string's format may name more.
TYPES: tuple[ParameterKind, ...] = (
    "string",
    "integer",
    "number",
    "boolean",
    "array",
    "object",
)
FORMATS: tuple[ParameterKind, ...] = ("date-time", "date", "uuid")
_PARAMETER = re.compile(r"\{([^{}/]+)\}")
# Filters by name: minX / maxX, xAfter / xBefore (of x, xAt, xDate or xTime), and
# X> / X< (X at least / at most the value: the query's "=" completes them).
_RANGE = re.compile(r"(min|max)([A-Z0-9].*)")
_MOMENT = re.compile(r"(.+)(After|Before)")
_SIGN = re.compile(r"(.+)([<>])")
_COMPARE: Mapping[str, Compare] = {
    "min": "ge",
    "max": "le",
    "After": "gt",
    "Before": "lt",
    ">": "ge",
    "<": "le",
}
# The words of a filter tied by its format that say how it compares (else equal).
_WORDS: Mapping[str, Compare] = {
    "after": "gt",
    "since": "ge",
    "from": "ge",
    "before": "lt",
    "until": "le",
}


def is_json(media: str) -> bool:
    """Whether ``media`` is JSON: ``application/json`` or a ``+json`` type.

    Example::

        is_json("application/problem+json")  # True
    """
    base = media.split(";")[0].strip().lower()
    return base == "application/json" or base.endswith("+json")


class _Reader:
    """Reads schemas, parameters and answers out of the document."""

    def __init__(self, document: SpecDocument) -> None:
        self.doc = document
        self.schemas = Schemas(document)
        self.schemes: Mapping[str, Any] = (
            self.doc.get("#/components/securitySchemes") or {}
        )

    def view(self, pointer: str | None) -> SchemaView | None:
        """The view of the schema at ``pointer``: where it is a choice (``oneOf``,
        ``anyOf``) of its own, its first option but null (None: no schema)."""
        if pointer is None:
            return None
        view = self.schemas.view(pointer)
        seen = {view.pointer}
        while not view.types and not view.properties and view.variants:
            view = view.variants[0]
            if view.pointer in seen:
                break
            seen.add(view.pointer)
        return view

    def kind(self, pointer: str | None) -> ParameterKind:
        """What a value of the schema at ``pointer`` is (see :class:`Parameter`)."""
        view = self.view(pointer)
        if view is None or not view.types:
            return "object" if view is not None and view.properties else "string"
        first = view.types[0]
        if first == "string" and view.format in FORMATS:
            return next(f for f in FORMATS if f == view.format)
        return next((t for t in TYPES if t == first), "string")

    def shape(self, media: str | None, pointer: str | None) -> Shape:
        if media is None:
            return "empty"
        if not is_json(media):
            return "text"
        kind = self.kind(pointer) if pointer else "scalar"
        if kind == "object" and self.page_items(pointer) is not None:
            return "page"
        return (
            "object" if kind == "object" else "array" if kind == "array" else "scalar"
        )

    def page_items(self, pointer: str | None) -> str | None:
        """Where one record of a page envelope at ``pointer`` is described (the items
        of its ``data``), or None where it is no page envelope."""
        view = self.view(pointer)
        if view is None or not set(view.properties) >= set(PAGE_FIELDS):
            return None
        data = self.view(view.properties["data"].pointer)
        if data is None or data.items is None or "array" not in data.types:
            return None
        return data.items.pointer

    def records(self, pointer: str | None) -> tuple[SchemaView, ...]:
        """What a record at ``pointer`` may be: each variant of a union (``oneOf``,
        ``anyOf``, typed ``object`` or not) where it has no properties of its own, else
        itself."""
        if pointer is None:
            return ()
        union = self.schemas.view(pointer)
        if union.properties or union.types not in ((), ("object",)):
            return (union,)
        found = [self.view(v.pointer) for v in union.variants]
        return tuple(v for v in found if v is not None) or (union,)

    def members(self, pointer: str | None) -> dict[str, SchemaView]:
        """The properties of a record at ``pointer``: of every variant of a union, the
        first variant's where two have one name."""
        found: dict[str, SchemaView] = {}
        for view in self.records(pointer):
            for name, field in view.properties.items():
                found.setdefault(name, field)
        return found

    def fields(self, pointer: str | None) -> tuple[str, ...]:
        return tuple(self.members(pointer))

    def content(
        self, owner: Mapping[str, Any], where: str
    ) -> tuple[str | None, str | None]:
        """The media type to use of ``owner``'s ``content`` and its schema's pointer."""
        content = owner.get("content") or {}
        ranked = [m for m in content if is_json(m)] + [
            m for m in PREFERRED if m in content
        ]
        media = next(iter(ranked or content), None)
        if media is None:
            return None, None
        if "schema" not in (content[media] or {}):
            return str(media), None
        return str(media), f"{where}/content/{escape(str(media))}/schema"

    def parameters(
        self, path: str, pointer: str
    ) -> tuple[list[Parameter], dict[str, Any]]:
        """The path item's parameters and the operation's (the latter winning), path ones
        first; and the ``x-filter`` of each query parameter that has one."""
        found: dict[tuple[str, str], Parameter] = {}
        hints: dict[str, Any] = {}
        for owner in (f"#/paths/{escape(path)}", pointer):
            for index, _ in enumerate(self.doc.get(f"{owner}/parameters") or ()):
                node, where = self.doc.at(f"{owner}/parameters/{index}")
                name = str(node.get("name"))
                # Another "in" is no parameter (openapi-spec-validator refuses it).
                location = next((p for p in LOCATIONS if p == node.get("in")), None)
                if location is None:
                    continue
                schema = f"{where}/schema" if "schema" in node else None
                if "content" in node:
                    schema = self.content(node, where)[1]
                view = self.view(schema)
                found[(name, location)] = Parameter(
                    name=name,
                    location=location,
                    required=bool(node.get("required")) or location == "path",
                    kind=self.kind(schema),
                    choices=(view.enum or ()) if view is not None else (),
                    pointer=schema,
                    exploded=_exploded(node, location),
                    style=_style(node, location),
                )
                if "x-filter" in node:
                    hints[name] = node["x-filter"]
        ordered = sorted(found.values(), key=lambda p: p.location != "path")
        return ordered, hints

    def security(self, operation: Mapping[str, Any]) -> tuple[bool, str | None]:
        """Whether the operation sends a bearer token, and its account header if any."""
        names = (operation.get("security", self.doc.document.get("security")) or [{}])[
            0
        ] or {}
        schemes = [self.doc.resolve(self.schemes.get(name) or {})[0] for name in names]
        bearer = any(
            s.get("type") in ("oauth2", "openIdConnect")
            or str(s.get("scheme")).lower() == "bearer"
            for s in schemes
        )
        headers = [
            str(s.get("name")).lower()
            for s in schemes
            if s.get("type") == "apiKey" and s.get("in") == "header"
        ]
        return bearer, next(iter(headers), None)

    def answers(self, pointer: str) -> dict[str, Answer]:
        found: dict[str, Answer] = {}
        for status in self.doc.get(f"{pointer}/responses") or {}:
            node, where = self.doc.at(f"{pointer}/responses/{escape(str(status))}")
            media, schema = self.content(node, where)
            headers = tuple(str(h).lower() for h in node.get("headers") or {})
            shape = self.shape(media, schema)
            found[str(status)] = Answer(str(status), media, schema, shape, headers)
        return found

    def body(self, pointer: str) -> Body | None:
        if self.doc.get(f"{pointer}/requestBody") is None:
            return None
        node, where = self.doc.at(f"{pointer}/requestBody")
        media, schema = self.content(node, where)
        return Body(media, schema, bool(node.get("required"))) if media else None


def _split(path: str) -> tuple[str, str | None]:
    """The collection path and the item parameter of ``path``: ``/things/{thingId}`` is
    the item ``thingId`` of ``/things``; a path not ending in a parameter is itself the
    collection."""
    head, _, last = path.rstrip("/").rpartition("/")
    found = _PARAMETER.fullmatch(last)
    if found is None:
        return path.rstrip("/") or "/", None
    return head or "/", found.group(1)


class _Draft:
    """An operation as read, before the resources it shares with others are known."""

    def __init__(self, reader: _Reader, path: str, method: str) -> None:
        self.pointer = f"#/paths/{escape(path)}/{method}"
        node = reader.doc.get(self.pointer)
        self.path = path
        self.method = method.upper()
        bare = path.replace("{", "").replace("}", "").replace("/", "_").strip("_")
        # Without an operationId, the generator's own name for it.
        self.python_name = python_identifier(
            node.get("operationId") or f"{method}_{bare}"
        )
        self.operation_id = str(node.get("operationId") or self.python_name)
        self.tag = str((node.get("tags") or ["default"])[0])
        self.bearer, self.account_header = reader.security(node)
        self.parameters, self.hints = reader.parameters(path, self.pointer)
        self.body = reader.body(self.pointer)
        self.answers = reader.answers(self.pointer)
        numbered = sorted(s for s in self.answers if s.isdigit() and s.startswith("2"))
        found = [self.answers[s] for s in (*numbered, "2XX") if s in self.answers]
        self.success = found[0] if found else None
        self.collection, self.item = _split(path)
        self.is_json_body = self.body is not None and is_json(self.body.media)
        self.page_size = self.sizes(reader)

    def sizes(self, reader: _Reader) -> PageSize | None:
        """The page sizes the spec states: the ``pageSize`` query parameter's
        ``default`` and ``maximum``; where the parameter states no maximum, the page
        answer's (its ``pageSize`` field's ``maximum``, else its ``data``'s
        ``maxItems``: the most a page holds, whatever is asked)."""
        found = [p for p in self.parameters if (p.name, p.location) == PAGE_SIZE]
        view = reader.view(found[0].pointer) if found else None
        if view is None:
            return None
        maximum = _largest(view)
        page = reader.view(self.success.pointer if self.success else None)
        if maximum is None and page is not None:
            answered = page.properties.get("pageSize")
            data = page.properties.get("data")
            maximum = _largest(answered) if answered else None
            if maximum is None and data is not None:
                maximum = _whole(data.constraints.get("maxItems"))
        default = _whole(view.default)
        return PageSize(default if default is not None else maximum, maximum)

    def is_page(self) -> bool:
        queries = {p.name for p in self.parameters if p.location == "query"}
        if self.method != "GET" or self.item or not queries >= set(PAGE_PARAMETERS):
            return False
        return self.success is not None and self.success.shape == "page"

    def kind(self, reader: _Reader, resource: Resource | None) -> Kind:
        form = set(reader.fields(self.body.pointer)) if self.body else set()
        if not self.bearer and self.method == "POST" and form >= TOKEN_FIELDS:
            return "token"
        if resource is None or resource.pointer is None:
            return "other"
        if self.is_page():
            return "list"
        if self.item is None:
            return "create" if self.method == "POST" else "other"
        kind = ITEM_KINDS.get(self.method, "other")
        if kind == "get" and (self.success is None or self.success.shape != "object"):
            return "other"
        if kind in ("replace", "update") and not self.is_json_body:
            return "other"
        return kind

    def door(self, kind: Kind, tag: Tag) -> str | None:
        """Its method under ``client.<tag>`` before clashes are settled."""
        name = self.python_name
        if kind == "token":
            return None
        if kind == "list" and name == f"list_{tag.module}":
            return "list"
        if kind == "list" and not name.startswith("list_"):
            return f"list_{name}"
        if kind in VERBS and name == f"{kind}_{singular(tag.module)}":
            return kind
        return name

    def filters(
        self, reader: _Reader, resource: Resource | None
    ) -> tuple[tuple[Filter, ...], tuple[str, ...]]:
        """The list's query parameters tied to a field of ``resource`` (see the package
        docstring), and those tied to none."""
        tied: list[Filter] = []
        loose: list[str] = []
        if resource is None:
            return (), ()
        # The fields of each formatted kind (date-time, date, uuid): a parameter of
        # that kind is tied to the only one.
        kinds: dict[str, list[str]] = {}
        for field, view in reader.members(resource.pointer).items():
            kinds.setdefault(reader.kind(view.pointer), []).append(field)
        for parameter in self.parameters:
            name = parameter.name
            if parameter.location != "query" or name in PAGE_PARAMETERS:
                continue
            tie = _tie(name, self.hints.get(name), resource.fields)
            only = kinds.get(parameter.kind, [])
            if tie is None and parameter.kind in FORMATS and len(only) == 1:
                words = snake_case(name).split("_")
                said = [_WORDS[w] for w in words if w in _WORDS]
                tie = (only[0], said[0] if said else "eq")
            if tie is not None:
                tied.append(Filter(name, *tie))
            else:
                loose.append(name)
        return tuple(tied), tuple(loose)


def _tie(name: str, hint: Any, fields: tuple[str, ...]) -> tuple[str, Compare] | None:
    """The field and comparison a filter's ``x-filter`` or name gives, among
    ``fields``."""
    candidates: list[tuple[str, Any]] = [(name, "eq")]
    if isinstance(hint, Mapping):
        candidates = [(str(hint.get("field")), hint.get("compare", "eq"))]
    elif found := _RANGE.fullmatch(name):
        stem = found.group(2)[:1].lower() + found.group(2)[1:]
        candidates.append((stem, _COMPARE[found.group(1)]))
    elif found := _MOMENT.fullmatch(name):
        ends = ("", "At", "Date", "Time")
        candidates += [(found.group(1) + e, _COMPARE[found.group(2)]) for e in ends]
    elif found := _SIGN.fullmatch(name):
        candidates.append((found.group(1), _COMPARE[found.group(2)]))
    for field, compare in candidates:
        known = next((c for c in ("eq", *_COMPARE.values()) if c == compare), None)
        if field in fields and known is not None:
            return field, known
    return None


def _largest(view: SchemaView) -> int | None:
    """The largest whole number ``view`` allows (its ``maximum``, or one below its
    ``exclusiveMaximum``), or None."""
    bounds = view.constraints
    maximum = _whole(bounds.get("maximum"))
    exclusive = _whole(bounds.get("exclusiveMaximum"))
    if maximum is None and exclusive is not None:
        return exclusive - 1
    return maximum


def _whole(value: Any) -> int | None:
    """``value`` where it is a whole number (``20``, ``20.0``), else None."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    if not math.isfinite(value) or value != int(value):
        return None
    return int(value)


def _record(reader: _Reader, drafts: list[_Draft]) -> str | None:
    """Where one record of a collection is described: the list's items, else the record
    a get answers, else the record a create answers, else a create's or a replace's
    body."""
    candidates = []
    for draft in drafts:
        answer = draft.success
        pointer = answer.pointer if answer else None
        if draft.is_page() and pointer:
            candidates.append((0, reader.page_items(pointer)))
        elif draft.item and draft.method == "GET" and pointer:
            candidates.append((1, pointer))
        elif not draft.item and draft.method == "POST" and pointer:
            candidates.append((2, pointer))
        if draft.is_json_body and draft.body and draft.method in ("POST", "PUT"):
            candidates.append((3, draft.body.pointer))
    for _, pointer in sorted(candidates, key=lambda c: c[0]):
        # A union's own place, not its first variant's (see _Reader.records).
        if pointer is not None and reader.kind(pointer) == "object":
            return reader.schemas.view(pointer).pointer
    return None


def _is_collection(collection: str, members: list[_Draft]) -> bool:
    """Whether ``collection`` holds records: it is listed, or has an item path, or is
    posted to under a plural noun (``/payments``, not ``/things/{id}/cancel``)."""
    if any(d.item or d.is_page() for d in members):
        return True
    last = collection.rstrip("/").rpartition("/")[2]
    words = snake_case(last).split("_")
    # "status" and "analysis" end in s but are no plurals.
    noun = words[-1]
    plural = singular(noun) != noun and not noun.endswith(("us", "is"))
    plural = plural and bool(last) and "{" not in last
    return plural and any(d.method == "POST" for d in members)


def _style(node: Mapping[str, Any], location: str) -> str:
    """OpenAPI's ``style`` of a parameter: as written, else its location's default."""
    return str(
        node.get("style", "form" if location in ("query", "cookie") else "simple")
    )


def _exploded(node: Mapping[str, Any], location: str) -> bool:
    """OpenAPI's ``explode`` of a parameter: as written, else true for the ``form``
    style (the default of the query and a cookie) and ``deepObject`` (defined only
    exploded), false for any other."""
    return bool(node.get("explode", _style(node, location) in ("form", "deepObject")))


def _own_id(collection: str) -> str:
    """The identifier a record of ``collection`` would be named by: ``routeId`` of
    ``/routes``, ``carrierServiceId`` of ``/carrier-services``."""
    words = snake_case(collection.rstrip("/").rpartition("/")[2]).split("_")
    words[-1] = singular(words[-1])
    return words[0] + "".join(w.capitalize() for w in words[1:]) + "Id"


def _identifier(
    collection: str, item: str | None, fields: tuple[str, ...], parents: tuple[str, ...]
) -> str | None:
    """The field that identifies a record (the rules of :class:`Resource`)."""
    folded = {f.lower(): f for f in fields}
    own = _own_id(collection)
    if item is not None:
        if item.lower() in folded:
            return item if item in fields else folded[item.lower()]
        if item.lower() == own.lower() and "id" in fields:
            return "id"
    ids = [f for f in fields if (f == "id" or f.endswith("Id")) and f not in parents]
    if len(ids) == 1:
        return ids[0]
    mine = [f for f in ids if f.lower() == own.lower()]
    if mine:
        return mine[0]
    return "id" if "id" in ids else None


def _resources(reader: _Reader, drafts: list[_Draft]) -> dict[str, Resource]:
    """Every collection that holds records (see :func:`_is_collection`) as a resource."""
    by_collection: dict[str, list[_Draft]] = {}
    for draft in drafts:
        by_collection.setdefault(draft.collection, []).append(draft)
    names: dict[str, str] = {}
    for collection, members in by_collection.items():
        if _is_collection(collection, members):
            words = [snake_case(s) for s in collection.split("/") if "{" not in s]
            words = [singular(w) for w in words[:-1] if w] + words[-1:]
            name = "-".join(words).replace("_", "-") or "root"
            names[collection] = name if name not in names.values() else f"{name}-2"
    found: dict[str, Resource] = {}
    for collection, name in names.items():
        members = by_collection[collection]
        pointer = _record(reader, members)
        fields = reader.members(pointer)
        item = next((d.item for d in members if d.item), None)
        parents = tuple(_PARAMETER.findall(collection))
        # A union's records are identified by the field each variant's is, if one.
        found_ids = {
            _identifier(collection, item, tuple(v.properties), parents)
            for v in reader.records(pointer)
        }
        id_field = found_ids.pop() if len(found_ids) == 1 else None
        id_view = fields.get(id_field or "")
        found[name] = Resource(
            name=name,
            collection=collection,
            item_parameter=item,
            pointer=pointer,
            fields=tuple(fields),
            id_field=id_field,
            id_kind=reader.kind(id_view.pointer if id_view else None),
            parent=None,
            parent_parameters=parents,
        )
    return _with_parents(found)


def _with_parents(found: dict[str, Resource]) -> dict[str, Resource]:
    """``found`` with each sub-resource's parent: the resource whose item path the
    collection lies under (``/shipments`` of ``/shipments/{shipmentId}/events``), and
    the field of the parent's records that gives each path parameter."""
    by_collection = {r.collection: r for r in found.values()}
    for name, resource in found.items():
        if not resource.parent_parameters:
            continue
        head = resource.collection.rstrip("/").rsplit("/", 1)[0]
        parent = by_collection.get(_split(head)[0])
        if parent is None:
            continue
        # The parameters the parent inherits are columns of its rows by their names;
        # the last is the parent's own identifier.
        *inherited, own = resource.parent_parameters
        fields = {}
        if len(inherited) == len(parent.parent_parameters):
            fields = dict(zip(inherited, parent.parent_parameters, strict=True))
        if _split(head)[1] == own and parent.id_field is not None:
            fields[own] = parent.id_field
        found[name] = attrs.evolve(resource, parent=parent.name, parent_fields=fields)
    return found


def _drafts(reader: _Reader) -> Iterator[_Draft]:
    for path in reader.doc.get("#/paths") or {}:
        item = reader.doc.get(f"#/paths/{escape(str(path))}") or {}
        for method in METHODS:
            if isinstance(item.get(method), Mapping):
                yield _Draft(reader, str(path), method)


def read_spec(document: SpecDocument) -> Spec:
    """The model of ``document``. Raises :class:`SpecError` only where the document
    cannot be an OpenAPI document (a ``$ref`` that points nowhere); anything else is read
    as the nearest shape: an operation of no known shape is ``other``, a tag that would
    hide a client attribute gets ``_api`` after its name.

    Example::

        read_spec(read_document(Path("openapi.yaml"))).lists
    """
    reader = _Reader(document)
    drafts = list(_drafts(reader))
    resources = _resources(reader, drafts)
    by_collection = {r.collection: r for r in resources.values()}
    tags: dict[str, Tag] = {}
    for draft in drafts:
        tags.setdefault(draft.tag, Tag(python_identifier(draft.tag, prefix="tag")))
    doors: dict[str, set[str]] = {tag: set() for tag in tags}
    operations = []
    for draft in drafts:
        resource = by_collection.get(draft.collection)
        kind = draft.kind(reader, resource)
        door = draft.door(kind, tags[draft.tag])
        taken = doors[draft.tag]
        if door in taken:
            door = draft.python_name
        while door is not None and door in taken:
            door = f"{door}_{draft.method.lower()}"
        if door is not None:
            taken.add(door)
        filters, unapplied = draft.filters(reader, resource if kind == "list" else None)
        operations.append(
            Operation(
                operation_id=draft.operation_id,
                python_name=draft.python_name,
                method=draft.method,
                path=draft.path,
                pointer=draft.pointer,
                tag=draft.tag,
                kind=kind,
                door=door,
                resource=resource.name if resource and kind != "other" else None,
                bearer=draft.bearer,
                account_header=draft.account_header,
                parameters=tuple(draft.parameters),
                body=draft.body,
                answers=draft.answers,
                success=draft.success,
                filters=filters,
                unapplied=unapplied,
                page_size=draft.page_size if kind == "list" else None,
            )
        )
    return Spec(
        document,
        tuple(operations),
        resources,
        tags,
        reader.schemas,
        _routes(operations),
    )


def _routes(operations: list[Operation]) -> tuple[Route, ...]:
    """The routes of the paths of ``operations``: the most literal first (segment by
    segment, ``/things/search`` before ``/things/{thingId}``)."""
    by_path: dict[str, dict[str, Operation]] = {}
    for op in operations:
        by_path.setdefault(op.path, {})[op.method] = op
    routes = []
    for path in sorted(by_path, key=lambda p: (["{" in s for s in p.split("/")], p)):
        # Literal text and parameter names in turn: /a/{x}/b is "/a/", "x", "/b".
        parts = _PARAMETER.split(path)
        pattern = "".join(
            "([^/]+)" if index % 2 else re.escape(part)
            for index, part in enumerate(parts)
        )
        routes.append(
            Route(path, re.compile(pattern), tuple(parts[1::2]), by_path[path])
        )
    return tuple(routes)
