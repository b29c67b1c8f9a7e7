"""A grammar of what users add to openapi.yaml, as hypothesis strategies.

``additions()`` draws a fragment in the layout of ``growth.yaml`` (``tags``, ``paths``,
``components.schemas``) that ``spec_copy.merged_spec`` merges into the project's spec:
flat and nested resources, every verb, plain-array and single-object answers,
path/query/header parameters of every scalar type, enums, date-times, inline nested
objects, Python keywords and builtins as field names, records with no, one or two
``...Id`` fields, with and without links from create to the item operations.

And the schemas public descriptions use (tests/spec/corpus): allOf chains, oneOf with a
discriminator and its mapping, anyOf with null, recursion through a property, an array,
a map and an anyOf, maps with and without properties, arrays of arrays, enums of odd
values (0 and -1, booleans, ``""``, digits, symbols, ``null``, Python keywords) and field
names that are no identifier (``+1`` beside ``-1``, ``@odata.type``, ``$ref``).

Example::

    from hypothesis import given
    @given(additions())
    def test_grows(fragment): ...
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from hypothesis import strategies as st

__all__ = ["Drawn", "additions"]

# Nouns no spec of the project uses, each a plural with an obvious singular.
NOUNS = (
    "parcels",
    "hubs",
    "crates",
    "pallets",
    "drivers",
    "zones",
    "lanes",
    "docks",
    "seals",
    "tariffs",
)
# Field names a generator must rename: keywords, builtins, names of the models' methods.
AWKWARD = (
    "class",
    "from",
    "type",
    "import",
    "return",
    "list",
    "dict",
    "format",
    "global",
)
PLAIN = ("label", "weight", "note", "level", "count", "code", "active", "origin")
# Field names of public descriptions that are no Python identifier: ``+1`` and ``-1``
# give one Python name, made distinct by the generator's rule.
ODD = ("+1", "-1", "@odata.type", "$ref", "x-kubernetes-int-or-string", "2fa")
# Enums of any JSON values, each with a type that holds them all.
ODD_ENUMS: tuple[dict[str, Any], ...] = (
    {"type": "integer", "enum": [0, -1, 1]},
    {"type": "boolean", "enum": [True]},
    {"type": "string", "enum": ["", "1024x1024", "in-progress", "+1", "a.b"]},
    {"type": ["string", "null"], "enum": ["None", "class", "import", None]},
)
# Kinds of field whose schema is a component of its own (see Drawn.extra).
COMPOSED = ("all_of", "one_of", "tree", "map", "grid", "odd_enum", "nullable_ref")
SCALARS: dict[str, dict[str, Any]] = {
    "string": {"type": "string"},
    "integer": {"type": "integer", "minimum": 0, "maximum": 1000},
    "number": {"type": "number", "minimum": 0, "maximum": 100},
    "boolean": {"type": "boolean"},
    "date-time": {"type": "string", "format": "date-time"},
    "date": {"type": "string", "format": "date"},
    "uuid": {"type": "string", "format": "uuid"},
    "enum": {"type": "string", "enum": ["Low", "Mid", "High"]},
}
ERRORS = {
    "400": "BadRequest",
    "401": "Unauthorized",
    "403": "Forbidden",
    "429": "TooManyRequests",
    "5XX": "ServerError",
}
PAGING = [
    {"$ref": "#/components/parameters/pageNumber"},
    {"$ref": "#/components/parameters/pageSize"},
]


def _errors(not_found: bool) -> dict[str, Any]:
    statuses = dict(ERRORS, **({"404": "NotFound"} if not_found else {}))
    return {
        status: {"$ref": f"#/components/responses/{name}"}
        for status, name in sorted(statuses.items())
    }


def _json(schema: dict[str, Any], description: str = "The answer.") -> dict[str, Any]:
    return {
        "description": description,
        "content": {"application/json": {"schema": schema}},
    }


def _ref(name: str) -> dict[str, str]:
    return {"$ref": f"#/components/schemas/{name}"}


def _camel(*words: str) -> str:
    return words[0] + "".join(w[:1].upper() + w[1:] for w in words[1:])


def _pascal(*words: str) -> str:
    return "".join(w[:1].upper() + w[1:] for w in words)


@dataclass
class Drawn:
    """One resource drawn: its names, fields and operations.

    Example::

        Drawn("parcels", parent=None, verbs={"list", "get"})
    """

    plural: str
    parent: str | None = None
    fields: dict[str, dict[str, Any]] = field(default_factory=dict)
    verbs: set[str] = field(default_factory=set)
    filters: list[dict[str, Any]] = field(default_factory=list)
    header: dict[str, Any] | None = None
    links: bool = False
    array_answer: bool = False
    action: bool = False
    extra: dict[str, dict[str, Any]] = field(default_factory=dict)
    """Component schemas the record's fields refer to (composition, recursion)."""

    @property
    def singular(self) -> str:
        return self.plural[:-1]

    @property
    def model(self) -> str:
        return _pascal(self.singular)

    @property
    def id_name(self) -> str:
        return _camel(self.singular, "id")

    @property
    def collection(self) -> str:
        if self.parent is None:
            return f"/{self.plural}"
        parent_id = _camel(self.parent[:-1], "id")
        return f"/{self.parent}/{{{parent_id}}}/{self.plural}"

    @property
    def tag(self) -> str:
        return self.parent or self.plural

    def parent_parameters(self) -> list[dict[str, Any]]:
        if self.parent is None:
            return []
        name = _camel(self.parent[:-1], "id")
        return [
            {"name": name, "in": "path", "required": True, "schema": {"type": "string"}}
        ]

    def operation(self, verb: str) -> str:
        names = {
            "list": _camel("list", *self._words(plural=True)),
            "create": _camel("create", *self._words()),
            "get": _camel("get", *self._words()),
            "replace": _camel("replace", *self._words()),
            "update": _camel("update", *self._words()),
            "delete": _camel("delete", *self._words()),
            "array": _camel("every", *self._words(plural=True)),
            "action": _camel("archive", *self._words()),
        }
        return names[verb]

    def _words(self, *, plural: bool = False) -> list[str]:
        own = self.plural if plural else self.singular
        return [self.parent[:-1], own] if self.parent else [own]

    def paths(self) -> dict[str, Any]:
        """The path items of the resource."""
        collection: dict[str, Any] = {}
        item: dict[str, Any] = {}
        found: dict[str, Any] = {}
        if "list" in self.verbs:
            collection["get"] = self._list()
        if "create" in self.verbs:
            collection["post"] = self._create()
        body = {
            "required": True,
            "content": {"application/json": {"schema": _ref(self.model)}},
        }
        for verb, method in (("get", "get"), ("replace", "put"), ("update", "patch")):
            if verb in self.verbs:
                item[method] = {
                    "operationId": self.operation(verb),
                    "tags": [self.tag],
                    "responses": {"200": _json(_ref(self.model)), **_errors(True)},
                    **({"requestBody": body} if method != "get" else {}),
                }
        if "delete" in self.verbs:
            item["delete"] = {
                "operationId": self.operation("delete"),
                "tags": [self.tag],
                "responses": {"204": {"description": "Deleted."}, **_errors(True)},
            }
        if collection:
            found[self.collection] = collection
        item_path = f"{self.collection}/{{{self.id_name}}}"
        if item:
            item_id = {"name": self.id_name, "in": "path", "required": True}
            item["parameters"] = [
                *self.parent_parameters(),
                {**item_id, "schema": {"type": "string"}},
            ]
            found[item_path] = item
        if self.array_answer:
            found[f"{self.collection}-all"] = {"get": self._array()}
        if self.action and item:
            found[f"{item_path}/archive"] = {"post": self._action()}
        return found

    def _list(self) -> dict[str, Any]:
        page = _pascal(self.singular, "page")
        parameters = [*self.parent_parameters(), *PAGING, *self.filters]
        if self.header is not None:
            parameters.append(self.header)
        return {
            "operationId": self.operation("list"),
            "tags": [self.tag],
            "parameters": parameters,
            "responses": {
                "200": _json(_ref(page), "One page."),
                **_errors(self.parent is not None),
            },
        }

    def _create(self) -> dict[str, Any]:
        links = {}
        if self.links:
            for verb in ("get", "replace", "update", "delete"):
                if verb in self.verbs:
                    source = f"$response.body#/{self.id_name}"
                    links[self.operation(verb)] = {
                        "operationId": self.operation(verb),
                        "parameters": {self.id_name: source},
                    }
        created = _json(_ref(self.model), "Created.")
        if links:
            created["links"] = links
        return {
            "operationId": self.operation("create"),
            "tags": [self.tag],
            "parameters": self.parent_parameters(),
            "requestBody": {
                "required": True,
                "content": {"application/json": {"schema": _ref(self.model)}},
            },
            "responses": {"201": created, **_errors(self.parent is not None)},
        }

    def _array(self) -> dict[str, Any]:
        return {
            "operationId": self.operation("array"),
            "tags": [self.tag],
            "parameters": self.parent_parameters(),
            "responses": {
                "200": _json({"type": "array", "items": _ref(self.model)}),
                **_errors(self.parent is not None),
            },
        }

    def _action(self) -> dict[str, Any]:
        receipt = {
            "type": "object",
            "properties": {
                "archivedAt": {"type": "string", "format": "date-time"},
                "done": {"type": "boolean"},
            },
        }
        return {
            "operationId": self.operation("action"),
            "tags": [self.tag],
            "parameters": [
                *self.parent_parameters(),
                {
                    "name": self.id_name,
                    "in": "path",
                    "required": True,
                    "schema": {"type": "string"},
                },
            ],
            "responses": {"200": _json(receipt), **_errors(True)},
        }

    def schemas(self) -> dict[str, Any]:
        record = {
            "type": "object",
            "additionalProperties": True,
            "properties": self.fields,
        }
        page = {
            "type": "object",
            "required": ["totalRecords", "pageNumber", "pageSize", "data"],
            "properties": {
                "totalRecords": {"type": "integer", "minimum": 0},
                "pageNumber": {"type": "integer", "minimum": 1},
                "pageSize": {"type": "integer", "minimum": 1, "maximum": 50},
                "data": {"type": "array", "maxItems": 50, "items": _ref(self.model)},
                "next": {"type": ["string", "null"]},
                "previous": {"type": ["string", "null"]},
            },
        }
        found: dict[str, Any] = {self.model: record, **self.extra}
        if "list" in self.verbs:
            found[_pascal(self.singular, "page")] = page
        return found


def _composed(
    kind: str, model: str, extra: dict[str, dict[str, Any]]
) -> dict[str, Any]:
    """The schema of a field of ``kind`` (one of COMPOSED), adding the components it
    refers to, named after ``model``, to ``extra``."""
    base, part = f"{model}Base", f"{model}Part"
    if kind == "all_of":
        extra[base] = {"type": "object", "properties": {"label": {"type": "string"}}}
        extra[part] = {
            "allOf": [
                _ref(base),
                {"type": "object", "properties": {"count": {"type": "integer"}}},
            ]
        }
        return _ref(part)
    if kind == "one_of":
        for name, value in ((f"{model}Card", "card"), (f"{model}Wire", "wire")):
            extra[name] = {
                "type": "object",
                "required": ["kind"],
                "properties": {"kind": {"type": "string", "enum": [value]}},
            }
        return {
            "oneOf": [_ref(f"{model}Card"), _ref(f"{model}Wire")],
            "discriminator": {
                "propertyName": "kind",
                "mapping": {
                    "card": f"#/components/schemas/{model}Card",
                    "wire": f"#/components/schemas/{model}Wire",
                },
            },
        }
    if kind == "tree":
        node = f"{model}Node"
        extra[node] = {
            "type": "object",
            "properties": {
                "name": {"type": "string"},
                "children": {"type": "array", "items": _ref(node)},
                "byName": {"type": "object", "additionalProperties": _ref(node)},
                "parent": {"anyOf": [_ref(node), {"type": "null"}]},
            },
        }
        return _ref(node)
    if kind == "map":
        return {
            "type": "object",
            "properties": {"total": {"type": "integer"}},
            "additionalProperties": {"type": "string"},
        }
    if kind == "grid":
        return {
            "type": "array",
            "items": {"type": "array", "items": {"type": "number"}},
        }
    if kind == "nullable_ref":
        extra[base] = {"type": "object", "properties": {"label": {"type": "string"}}}
        return {"anyOf": [_ref(base), {"type": "null"}]}
    raise ValueError(kind)


@st.composite
def _field(
    draw: st.DrawFn, name: str, model: str = "", extra: dict[str, Any] | None = None
) -> dict[str, Any]:
    kinds = [*SCALARS, "nested", "strings"]
    if extra is not None:
        kinds += COMPOSED
    kind = draw(st.sampled_from(kinds))
    if kind == "odd_enum":
        return dict(draw(st.sampled_from(ODD_ENUMS)))
    if kind in COMPOSED and extra is not None:
        # A component's name holds letters and digits only (``+1`` -> ``1``).
        return _composed(kind, model + _pascal(re.sub(r"\W", "", name)), extra)
    if kind == "nested":
        inner = draw(
            st.lists(st.sampled_from(PLAIN), min_size=1, max_size=3, unique=True)
        )
        properties = {
            n: dict(SCALARS[draw(st.sampled_from(list(SCALARS)))]) for n in inner
        }
        return {"type": "object", "properties": properties}
    if kind == "strings":
        return {"type": "array", "items": {"type": "string"}}
    schema = dict(SCALARS[kind])
    if draw(st.booleans()) and "enum" not in schema:
        schema["type"] = [schema["type"], "null"]
    return schema


@st.composite
def _resource(draw: st.DrawFn, plural: str, parent: str | None) -> Drawn:
    drawn = Drawn(plural, parent)
    item_verbs = draw(st.sets(st.sampled_from(["get", "replace", "update", "delete"])))
    drawn.verbs = item_verbs | draw(st.sets(st.sampled_from(["list", "create"])))
    if not drawn.verbs:
        drawn.verbs = {"list"}
    # With an item path the record carries its identifier; a listed record may carry
    # none, one or two ...Id fields.
    ids = 1 if item_verbs else draw(st.integers(0, 2))
    if ids >= 1:
        drawn.fields[drawn.id_name] = {"type": "string"}
    if ids == 2:
        drawn.fields["ownerId"] = {"type": "string"}
    names = draw(
        st.lists(
            st.sampled_from(AWKWARD + PLAIN + ODD), min_size=1, max_size=5, unique=True
        )
    )
    for name in names:
        drawn.fields[name] = draw(_field(name, drawn.model, drawn.extra))
    if "list" in drawn.verbs:
        drawn.filters = draw(_filters(drawn.fields))
        if draw(st.booleans()):
            required = draw(st.booleans())
            kind = draw(st.sampled_from(["string", "integer", "enum"]))
            drawn.header = {
                "name": "x-request-source",
                "in": "header",
                "required": required,
                "schema": dict(SCALARS[kind]),
            }
    drawn.links = draw(st.booleans())
    drawn.array_answer = draw(st.booleans())
    drawn.action = draw(st.booleans())
    return drawn


@st.composite
def _filters(
    draw: st.DrawFn, fields: dict[str, dict[str, Any]]
) -> list[dict[str, Any]]:
    """Query parameters of a list: equality on a field, ranges on an integer or a
    date-time, and one tied to no field."""
    found: list[dict[str, Any]] = []
    for name, schema in fields.items():
        types = schema.get("type")
        types = types if isinstance(types, list) else [types]
        plain_scalar = types[0] is not None and None not in schema.get("enum", [])
        if (
            not draw(st.booleans())
            or not plain_scalar
            or not name.isidentifier()
            or "object" in types
            or "array" in types
        ):
            continue
        if "integer" in types:
            found.append(_query(_camel("min", name), {"type": "integer"}))
        elif schema.get("format") == "date-time":
            found.append(
                _query(f"{name}After", {"type": "string", "format": "date-time"})
            )
        else:
            plain = {k: v for k, v in schema.items() if k != "type"}
            first = next(t for t in types if t != "null")
            found.append(_query(name, {**plain, "type": first}))
    if draw(st.booleans()):
        found.append(_query("sortOrder", {"type": "string", "enum": ["asc", "desc"]}))
    return found


def _query(name: str, schema: dict[str, Any]) -> dict[str, Any]:
    return {"name": name, "in": "query", "required": False, "schema": schema}


@st.composite
def additions(draw: st.DrawFn, max_resources: int = 3) -> dict[str, Any]:
    """A fragment of 1 to ``max_resources`` resources, the second and later ones nested
    under an earlier flat one or under ``shipments`` by chance."""
    count = draw(st.integers(1, max_resources))
    nouns = draw(
        st.lists(st.sampled_from(NOUNS), min_size=count, max_size=count, unique=True)
    )
    drawn: list[Drawn] = []
    for index, noun in enumerate(nouns):
        flat = [d.plural for d in drawn if d.parent is None]
        parents = [None, "shipments", *flat] if index else [None]
        drawn.append(draw(_resource(noun, draw(st.sampled_from(parents)))))
    fragment: dict[str, Any] = {"tags": [], "paths": {}, "components": {"schemas": {}}}
    for resource in drawn:
        if (
            resource.tag != "shipments"
            and {"name": resource.tag} not in fragment["tags"]
        ):
            fragment["tags"].append({"name": resource.tag})
        fragment["paths"].update(resource.paths())
        fragment["components"]["schemas"].update(resource.schemas())
    return fragment
