"""How the model is read from the document: the rules of :mod:`service_api_spec`."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any

from ._document import SpecDocument, escape
from ._model import (
    Answer,
    Body,
    Filter,
    Kind,
    Operation,
    Parameter,
    Resource,
    Spec,
    Tag,
)
from ._names import python_identifier, singular, snake_case
from ._schemas import Schemas

__all__ = [
    "CLIENT_ATTRIBUTES",
    "PAGE_PARAMETERS",
    "is_json",
    "read_spec",
]

METHODS = ("get", "put", "post", "delete", "patch", "head", "options", "trace")
PAGE_PARAMETERS = ("pageNumber", "pageSize")
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
# The attributes of the generated client and of service_api.Client: a tag of one of
# these names would hide it, so its operations are under ``<name>_api``.
CLIENT_ATTRIBUTES = frozenset(
    [
        "aio",
        "auth_header_name",
        "get_async_httpx_client",
        "get_httpx_client",
        "prefix",
        "raise_on_unexpected_status",
        "set_async_httpx_client",
        "set_httpx_client",
        "token",
        "with_cookies",
        "with_headers",
        "with_timeout",
        "account_id",
        "aclose",
        "close",
        "retry_policy",
        "with_account",
        "with_options",
    ]
)
_PARAMETER = re.compile(r"\{([^{}/]+)\}")
# Filters by name: minX / maxX, and xAfter / xBefore (of x, xAt, xDate or xTime).
_RANGE = re.compile(r"(min|max)([A-Z0-9].*)")
_MOMENT = re.compile(r"(.+)(After|Before)")
_COMPARE = {
    "min": "ge",
    "max": "le",
    "After": "gt",
    "Before": "lt",
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
        self.schemes: Mapping[str, Any] = (
            self.doc.get("#/components/securitySchemes") or {}
        )

    def schema(self, pointer: str | None) -> tuple[Mapping[str, Any], str]:
        """The schema at ``pointer`` (its first option but null where it is a choice,
        its ``allOf`` parts' properties merged in) and its own pointer."""
        node = self.doc.get(pointer) if pointer else None
        if not isinstance(node, Mapping) or pointer is None:
            return {}, str(pointer)
        pointer = self.doc.at(pointer)[1]
        for key in ("anyOf", "oneOf"):
            for index, option in enumerate(node.get(key) or ()):
                if self.doc.resolve(option)[0] != {"type": "null"}:
                    return self.schema(f"{pointer}/{key}/{index}")
        if "allOf" in node:
            properties = dict(node.get("properties") or {})
            for index, _ in enumerate(node["allOf"]):
                part = self.schema(f"{pointer}/allOf/{index}")[0]
                properties.update(part.get("properties") or {})
            node = {**node, "properties": properties}
        return node, pointer

    def kind(self, pointer: str | None) -> str:
        """What a value of the schema at ``pointer`` is (see :class:`Parameter`)."""
        schema = self.schema(pointer)[0]
        declared = schema.get("type", [])
        types = [declared] if isinstance(declared, str) else list(declared)
        types = [t for t in types if t != "null"]
        if not types:
            return "object" if "properties" in schema else "string"
        if types[0] == "string" and schema.get("format") in (
            "date-time",
            "date",
            "uuid",
        ):
            return str(schema["format"])
        return str(types[0])

    def shape(self, media: str | None, pointer: str | None) -> str:
        if media is None:
            return "empty"
        if not is_json(media):
            return "text"
        kind = self.kind(pointer) if pointer else "scalar"
        paged = kind == "object" and set(self.fields(pointer)) >= set(PAGE_FIELDS)
        if paged and self.kind(f"{self.schema(pointer)[1]}/properties/data") == "array":
            return "page"
        return kind if kind in ("object", "array") else "scalar"

    def fields(self, pointer: str | None) -> tuple[str, ...]:
        return tuple(
            str(name) for name in self.schema(pointer)[0].get("properties") or {}
        )

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
                location = str(node.get("in"))
                schema = f"{where}/schema" if "schema" in node else None
                if "content" in node:
                    schema = self.content(node, where)[1]
                found[(name, location)] = Parameter(
                    name=name,
                    location=location,
                    required=bool(node.get("required")) or location == "path",
                    kind=self.kind(schema),
                    choices=tuple(self.schema(schema)[0].get("enum") or ()),
                    pointer=schema,
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
            return "create" if self.method == "POST" and self.is_json_body else "other"
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
        self, resource: Resource | None
    ) -> tuple[tuple[Filter, ...], tuple[str, ...]]:
        """The list's query parameters tied to a field of ``resource`` (see the package
        docstring), and those tied to none."""
        tied: list[Filter] = []
        loose: list[str] = []
        if resource is None:
            return (), ()
        for parameter in self.parameters:
            name = parameter.name
            if parameter.location != "query" or name in PAGE_PARAMETERS:
                continue
            candidates = [(name, "eq")]
            hint = self.hints.get(name)
            if isinstance(hint, Mapping):
                candidates = [(str(hint.get("field")), str(hint.get("compare", "eq")))]
            elif found := _RANGE.fullmatch(name):
                stem = found.group(2)[:1].lower() + found.group(2)[1:]
                candidates.append((stem, _COMPARE[found.group(1)]))
            elif found := _MOMENT.fullmatch(name):
                ends = ("", "At", "Date", "Time")
                candidates += [
                    (found.group(1) + e, _COMPARE[found.group(2)]) for e in ends
                ]
            tie = next((c for c in candidates if c[0] in resource.fields), None)
            if tie is not None and tie[1] in ("eq", *_COMPARE.values()):
                tied.append(Filter(name, *tie))
            else:
                loose.append(name)
        return tuple(tied), tuple(loose)


def _record(reader: _Reader, drafts: list[_Draft]) -> str | None:
    """Where one record of a collection is described: the list's items, else the record
    a get answers, else a create's or a replace's body."""
    candidates = []
    for draft in drafts:
        answer = draft.success
        if draft.is_page() and answer and answer.pointer:
            page = reader.schema(answer.pointer)[1]
            candidates.append((0, f"{page}/properties/data/items"))
        elif draft.item and draft.method == "GET" and answer and answer.pointer:
            candidates.append((1, answer.pointer))
        elif draft.is_json_body and draft.body and draft.method in ("POST", "PUT"):
            candidates.append((2, str(draft.body.pointer)))
    for _, pointer in sorted(candidates):
        if reader.kind(pointer) == "object":
            return reader.schema(pointer)[1]
    return None


def _resources(reader: _Reader, drafts: list[_Draft]) -> dict[str, Resource]:
    """Every collection that is listed, or has an item path, as a resource."""
    by_collection: dict[str, list[_Draft]] = {}
    for draft in drafts:
        by_collection.setdefault(draft.collection, []).append(draft)
    names: dict[str, str] = {}
    for collection, members in by_collection.items():
        if any(d.item or d.is_page() for d in members):
            words = [snake_case(s) for s in collection.split("/") if "{" not in s]
            words = [singular(w) for w in words[:-1] if w] + words[-1:]
            name = "-".join(words).replace("_", "-") or "root"
            names[collection] = name if name not in names.values() else f"{name}-2"
    found: dict[str, Resource] = {}
    for collection, name in names.items():
        members = by_collection[collection]
        pointer = _record(reader, members)
        fields = reader.fields(pointer)
        item = next((d.item for d in members if d.item), None)
        parents = tuple(_PARAMETER.findall(collection))
        ids = [
            f for f in fields if (f == "id" or f.endswith("Id")) and f not in parents
        ]
        id_field = item if item in fields else None
        if id_field is None and len(ids) == 1:
            id_field = ids[0]
        parent = names.get(_split(collection.rsplit("/", 1)[0])[0]) if parents else None
        found[name] = Resource(
            name=name,
            collection=collection,
            item_parameter=item,
            pointer=pointer,
            fields=fields,
            id_field=id_field,
            id_kind=reader.kind(f"{pointer}/properties/{escape(id_field or '')}"),
            parent=parent,
            parent_parameters=parents,
        )
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
        module = python_identifier(draft.tag, prefix="tag")
        attribute = f"{module}_api" if module in CLIENT_ATTRIBUTES else module
        tags.setdefault(draft.tag, Tag(module, attribute))
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
        filters, unapplied = draft.filters(resource if kind == "list" else None)
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
            )
        )
    return Spec(document, tuple(operations), resources, tags, Schemas(document))
