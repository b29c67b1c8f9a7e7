"""The spec's schemas, two ways: as JSON Schema a validator takes, and as a typed view.

OpenAPI 3.0 writes schemas in its own dialect (``nullable: true``, ``exclusiveMinimum:
true`` beside ``minimum``); 3.1 writes JSON Schema 2020-12, and documents mix the two.
:meth:`Schemas.json_schema` gives any schema of the spec as one self-contained 2020-12
schema (every ``$ref`` under ``$defs``, so recursion works) for
``jsonschema.Draft202012Validator``; :meth:`Schemas.view` gives the same schema resolved
into a :class:`SchemaView` for code that walks it (data generation, generated code,
checks). Both read the 3.0 keywords in either dialect.

A *direction* says which side of the wire a value is on: ``reading`` (an answer the
service sends: ``writeOnly`` properties are not in it) or ``writing`` (a body the client
sends: ``readOnly`` properties are not in it). Either is left out of ``properties`` and
``required``.

Example::

    schemas = spec.schemas
    validator = Draft202012Validator(schemas.json_schema(op.success.pointer, "reading"))
    view = schemas.view("#/components/schemas/Shipment")
    view.properties["shipmentId"].types  # ("string",)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal

import attrs

from ._document import SpecDocument, escape, steps, unescape

__all__ = [
    "DIALECT",
    "Direction",
    "Discriminator",
    "SchemaView",
    "Schemas",
]

Direction = Literal["reading", "writing"]
"""Which way a value goes: ``reading`` an answer, ``writing`` a request body."""

DIALECT = "https://json-schema.org/draft/2020-12/schema"

# The keywords whose value is one schema, a map of names to schemas, a list of schemas.
_ONE = (
    "items",
    "additionalProperties",
    "not",
    "contains",
    "propertyNames",
    "if",
    "then",
    "else",
    "unevaluatedProperties",
    "unevaluatedItems",
    "additionalItems",
    "contentSchema",
)
_MAP = ("properties", "patternProperties", "dependentSchemas")
_LIST = ("allOf", "anyOf", "oneOf", "prefixItems")
# Kept out of the JSON Schema: references are followed by document pointer, so a
# schema's own $defs are reached through them, and its $id would move the base.
# The bounds are written again by _bounds, nullable by _nullable, $ref first.
_BOUNDS = (("minimum", "exclusiveMinimum"), ("maximum", "exclusiveMaximum"))
_DROPPED = {
    "$defs",
    "definitions",
    "$id",
    "$schema",
    "nullable",
    "$ref",
    *(key for pair in _BOUNDS for key in pair),
}
# What a view does not read itself but keeps, in 2020-12 form, as ``constraints``.
_CONSTRAINTS = (
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "minLength",
    "maxLength",
    "pattern",
    "minItems",
    "maxItems",
    "uniqueItems",
    "minProperties",
    "maxProperties",
)
_HIDDEN: Mapping[Direction, str] = {"reading": "writeOnly", "writing": "readOnly"}
# Keywords beside which nullable must wrap the schema in anyOf, not add "null" to its type.
_COMPOSED = {"$ref", "allOf", "anyOf", "oneOf", "not", "const", "if"}
_NULL = {"type": "null"}
# What may stand beside a $ref that is only a reference (3.0 ignores the rest).
_BARE = {"$ref", "description", "title", "summary"}


def _bounds(node: Mapping[str, Any]) -> dict[str, Any]:
    """``minimum``/``maximum`` and their exclusive forms, in 2020-12 (numbers, not the
    booleans of OpenAPI 3.0)."""
    found: dict[str, Any] = {}
    for bound, exclusive in _BOUNDS:
        flag = node.get(exclusive)
        if isinstance(flag, bool):
            if bound in node:
                found[exclusive if flag else bound] = node[bound]
            continue
        for key in (bound, exclusive):
            if key in node:
                found[key] = node[key]
    return found


def _nullable(schema: dict[str, Any]) -> dict[str, Any]:
    """``schema`` that also takes null."""
    declared = schema.get("type")
    if isinstance(declared, (str, list)) and not _COMPOSED & set(schema):
        types = [declared] if isinstance(declared, str) else list(declared)
        schema["type"] = types if "null" in types else [*types, "null"]
        if "enum" in schema and None not in schema["enum"]:
            schema["enum"] = [*schema["enum"], None]
        return schema
    return {"anyOf": [schema, dict(_NULL)]}


class _Converter:
    """One JSON Schema in the making: the root and the ``$defs`` its references need."""

    def __init__(self, schemas: Schemas, direction: Direction) -> None:
        self.schemas = schemas
        self.doc = schemas.document
        self.direction = direction
        self.names: dict[str, str] = {}
        self.defs: dict[str, Any] = {}
        self.pending: list[str] = []

    def run(self, pointer: str) -> dict[str, Any]:
        node, where = self.schemas.locate(pointer)
        root = self.convert(node, where)
        if isinstance(root, bool):
            root = {} if root else {"not": {}}
        while self.pending:
            target = self.pending.pop()
            self.defs[self.names[target]] = self.convert(self.doc.at(target)[0], target)
        result = {"$schema": DIALECT, **root}
        if self.defs:
            result["$defs"] = dict(sorted(self.defs.items()))
        return result

    def ref(self, target: str) -> dict[str, Any]:
        """A reference to ``target``'s schema under ``$defs``, converting it once."""
        pointer = self.doc.at(target)[1]
        name = self.names.get(pointer)
        if name is None:
            keys = steps(pointer)
            name = keys[-1] if keys[:2] == ["components", "schemas"] else ".".join(keys)
            while name in self.names.values():
                name = f"{name}_"
            self.names[pointer] = name
            self.pending.append(pointer)
        return {"$ref": f"#/$defs/{escape(name)}"}

    def convert(
        self,
        node: Any,
        where: str,
        hidden: frozenset[str] = frozenset(),
        inlined: frozenset[str] = frozenset(),
    ) -> Any:
        """``node`` (found at ``where``) in 2020-12: ``hidden`` names more properties to
        leave out (those an ``allOf`` sibling marks), ``inlined`` the parts on the way."""
        if not isinstance(node, Mapping):
            return node if isinstance(node, bool) else {}
        hidden = hidden | self.schemas.hidden(node, self.direction)
        out: dict[str, Any] = {}
        if isinstance(node.get("$ref"), str):
            out.update(self.ref(node["$ref"]))
        for key, value in node.items():
            step = f"{where}/{escape(str(key))}"
            if key in _DROPPED:
                continue
            if key == "items" and isinstance(value, list):
                out["prefixItems"] = [
                    self.convert(v, f"{step}/{i}") for i, v in enumerate(value)
                ]
            elif key in _ONE:
                out[key] = self.convert(value, step)
            elif key in _MAP and isinstance(value, Mapping):
                out[key] = {
                    name: self.convert(v, f"{step}/{escape(str(name))}")
                    for name, v in value.items()
                    if not (key == "properties" and name in hidden)
                }
            elif key == "allOf" and isinstance(value, list) and hidden:
                out[key] = [
                    self.part(v, f"{step}/{i}", hidden, inlined)
                    for i, v in enumerate(value)
                ]
            elif key in _LIST and isinstance(value, list):
                out[key] = [self.convert(v, f"{step}/{i}") for i, v in enumerate(value)]
            elif key == "required" and isinstance(value, list):
                out[key] = [name for name in value if name not in hidden]
            else:
                out[key] = value
        out.update(_bounds(node))
        return _nullable(out) if node.get("nullable") is True else out

    def part(
        self, node: Any, where: str, hidden: frozenset[str], inlined: frozenset[str]
    ) -> Any:
        """One ``allOf`` part, written in place (not by reference) so that the names its
        siblings hide leave its ``required`` too."""
        target, pointer = self.doc.resolve(node, where)
        if pointer in inlined or not isinstance(target, Mapping):
            return self.convert(node, where)
        return self.convert(target, pointer, hidden, inlined | {pointer})


@attrs.frozen
class Discriminator:
    """The property whose value names which ``oneOf``/``anyOf`` variant a value is, and
    the variant (its schema's pointer) for each value: the spec's ``mapping``, then each
    variant that is a ``$ref`` to ``#/components/schemas/<value>``.

    Example::

        Discriminator("petType", {"cat": "#/components/schemas/Cat"})
    """

    property: str
    mapping: Mapping[str, str]


class SchemaView:
    """One schema of the spec, resolved: its ``$ref`` followed, its ``allOf`` parts merged,
    the 3.0 and 3.1 ways of saying null read as one. The schemas it holds (properties,
    items, variants) are views too, made when first asked for, so that a recursive schema
    is walked only as deep as its reader goes; ``Schemas.view`` gives one view a pointer.

    Example::

        view = spec.schemas.view("#/components/schemas/Shipment")
        for name, field in view.properties.items():
            print(name, field.types, field.nullable, name in view.required)
    """

    def __init__(self, schemas: Schemas, node: Any, pointer: str) -> None:
        self.schemas = schemas
        self.pointer = pointer
        """Where the schema is written (a bare ``$ref``'s target)."""
        self.node: Mapping[str, Any] | bool = (
            node if isinstance(node, (Mapping, bool)) else {}
        )
        """The schema as written (True where the spec writes ``true`` or none)."""
        self._parts: tuple[SchemaView, ...] | None = None
        self._properties: dict[str, SchemaView] | None = None

    def __repr__(self) -> str:
        return f"SchemaView({self.pointer!r})"

    @property
    def _own(self) -> Mapping[str, Any]:
        return self.node if isinstance(self.node, Mapping) else {}

    def _child(self, *keys: str | int) -> SchemaView:
        return self.schemas.view(
            "/".join([self.pointer, *(escape(str(k)) for k in keys)])
        )

    @property
    def parts(self) -> tuple[SchemaView, ...]:
        """Its ``allOf`` parts, with every part's own parts after it (the schema a
        ``$ref`` with sibling keywords points to comes first)."""
        if self._parts is None:
            self._parts = ()
            found: list[SchemaView] = []
            seen = {self.pointer}
            todo = [self]
            while todo:
                for part in todo.pop(0)._direct():
                    if part.pointer not in seen:
                        seen.add(part.pointer)
                        found.append(part)
                        todo.append(part)
            self._parts = tuple(found)
        return self._parts

    def _direct(self) -> list[SchemaView]:
        """Its own parts: where a ``$ref`` with siblings points, then its ``allOf``."""
        found = [self._child("allOf", i) for i, _ in enumerate(self._list("allOf"))]
        if isinstance(self._own.get("$ref"), str):
            found.insert(0, self.schemas.view(self._own["$ref"]))
        return found

    @property
    def chain(self) -> tuple[SchemaView, ...]:
        """Itself, then its parts: where a keyword is looked for, first found first."""
        return (self, *self.parts)

    def _list(self, key: str) -> Sequence[Any]:
        value = self._own.get(key)
        return value if isinstance(value, list) else ()

    def _merged(self, key: str) -> Any:
        """``key`` of itself, else of its first part that says it."""
        for view in self.chain:
            if key in view._own:
                return view._own[key]
        return None

    @property
    def declared_types(self) -> tuple[str, ...]:
        """Every JSON type it names, null included, its parts' narrowing its own."""
        found: set[str] | None = None
        order: list[str] = []
        for view in self.chain:
            declared = view._own.get("type")
            if declared is None:
                continue
            types = [declared] if isinstance(declared, str) else list(declared)
            if view._own.get("nullable") is True:
                types.append("null")
            order += [t for t in types if t not in order]
            found = set(types) if found is None else found & set(types)
        return tuple(t for t in order if found is not None and t in found)

    @property
    def types(self) -> tuple[str, ...]:
        """The JSON types a value may be but null (``("string",)``); empty: any, or as
        its variants say."""
        return tuple(t for t in self.declared_types if t != "null")

    @property
    def nullable(self) -> bool:
        """Whether null is a value: ``type: [..., "null"]``, 3.0's ``nullable: true``
        (in either dialect), a null variant or a null in its enum."""
        if "null" in self.declared_types or any(
            v._own.get("nullable") is True for v in self.chain
        ):
            return True
        enum = self.enum
        if enum is not None and None in enum:
            return True
        return any(v.is_null for v in self.all_variants)

    @property
    def is_null(self) -> bool:
        """Whether null is its only value (``type: "null"``)."""
        return self.declared_types == ("null",)

    @property
    def format(self) -> str | None:
        """Its ``format`` (``date-time``, ``int64``, ...), or None."""
        found = self._merged("format")
        return str(found) if found is not None else None

    @property
    def enum(self) -> tuple[Any, ...] | None:
        """The values it allows where it lists them (``enum``, or ``const`` as one), any
        JSON values; None where it lists none."""
        if (enum := self._merged("enum")) is not None and isinstance(enum, list):
            return tuple(enum)
        for view in self.chain:
            if "const" in view._own:
                return (view._own["const"],)
        return None

    @property
    def properties(self) -> Mapping[str, SchemaView]:
        """Its properties by their names in JSON (``+1``, ``@odata.type``, ``$ref``): its
        parts' (theirs first, in order), then its own."""
        if self._properties is None:
            self._properties = {}  # what a loop of allOf sees of it: nothing
            found: dict[str, SchemaView] = {}
            for part in self._direct():
                found.update(part.properties)
            for name in self._own.get("properties") or {}:
                found[str(name)] = self._child("properties", str(name))
            self._properties = found
        return self._properties

    @property
    def required(self) -> tuple[str, ...]:
        """The properties a value must have, its parts' with its own."""
        found: list[str] = []
        for view in self.chain:
            found += [str(n) for n in view._list("required") if str(n) not in found]
        return tuple(found)

    def visible(self, direction: Direction) -> Mapping[str, SchemaView]:
        """Its properties but those ``direction`` leaves out (``writeOnly`` when reading,
        ``readOnly`` when writing)."""
        flag = "write_only" if direction == "reading" else "read_only"
        return {n: v for n, v in self.properties.items() if not getattr(v, flag)}

    @property
    def additional(self) -> bool | SchemaView:
        """What other properties may be: True (any), False (none), or a schema (a map's
        values)."""
        for view in self.chain:
            value = view._own.get("additionalProperties")
            if isinstance(value, bool):
                return value
            if isinstance(value, Mapping):
                return view._child("additionalProperties")
        return True

    @property
    def items(self) -> SchemaView | None:
        """The schema of an array's items, or None."""
        for view in self.chain:
            if isinstance(view._own.get("items"), (Mapping, bool)):
                return view._child("items")
        return None

    @property
    def variant_keyword(self) -> Literal["oneOf", "anyOf"] | None:
        """Whether its variants are exclusive (``oneOf``) or not (``anyOf``)."""
        for view in self.chain:
            if view._list("oneOf"):
                return "oneOf"
            if view._list("anyOf"):
                return "anyOf"
        return None

    @property
    def all_variants(self) -> tuple[SchemaView, ...]:
        """Its ``oneOf`` or ``anyOf`` schemas, a null one included."""
        keyword = self.variant_keyword
        for view in self.chain:
            if keyword is not None and view._list(keyword):
                return tuple(
                    view._child(keyword, i) for i, _ in enumerate(view._list(keyword))
                )
        return ()

    @property
    def variants(self) -> tuple[SchemaView, ...]:
        """Its ``oneOf`` or ``anyOf`` schemas but ``{"type": "null"}``."""
        return tuple(v for v in self.all_variants if not v.is_null)

    @property
    def discriminator(self) -> Discriminator | None:
        """Its discriminator (its own or a part's), or None."""
        found = self._merged("discriminator")
        if not isinstance(found, Mapping) or "propertyName" not in found:
            return None
        mapping: dict[str, str] = {}
        for value, target in (found.get("mapping") or {}).items():
            target = str(target)
            mapping[str(value)] = (
                target if target.startswith("#") else f"#/components/schemas/{target}"
            )
        for variant in self.variants:
            keys = steps(variant.pointer)
            named = keys[:2] == ["components", "schemas"] and len(keys) == 3
            if named and variant.pointer not in mapping.values():
                mapping.setdefault(keys[2], variant.pointer)
        return Discriminator(str(found["propertyName"]), mapping)

    @property
    def read_only(self) -> bool:
        """Whether only the service writes it (left out of a body the client sends)."""
        return any(v._own.get("readOnly") is True for v in self.chain)

    @property
    def write_only(self) -> bool:
        """Whether only the client writes it (left out of an answer)."""
        return any(v._own.get("writeOnly") is True for v in self.chain)

    @property
    def default(self) -> Any:
        """Its ``default``, or None."""
        return self._merged("default")

    @property
    def constraints(self) -> Mapping[str, Any]:
        """Its bounds, lengths, pattern and sizes in 2020-12 form (``exclusiveMinimum``
        a number), its own over its parts'."""
        found: dict[str, Any] = {}
        for view in (*self.parts, self):
            kept = {k: v for k, v in view._own.items() if k in _CONSTRAINTS}
            found.update({k: v for k, v in kept.items() if "imum" not in k})
            found.update(_bounds(view._own))
        return found


class Schemas:
    """The schemas of one document: JSON Schema for validators, views for walkers.

    Example::

        schemas = Schemas(document)
        schemas.json_schema("#/components/schemas/Shipment", "reading")
    """

    def __init__(self, document: SpecDocument) -> None:
        self.document = document
        self._views: dict[str, SchemaView] = {}

    def view(self, pointer: str) -> SchemaView:
        """The view of the schema at ``pointer`` (one object for one place, so a
        recursive schema's views are the same objects again)."""
        found = self._views.get(pointer)
        if found is None:
            node, where = self.locate(pointer)
            found = self._views.setdefault(where, SchemaView(self, node, where))
            self._views[pointer] = found
        return found

    def locate(self, pointer: str) -> tuple[Any, str]:
        """The schema at ``pointer`` and where it is written: a bare ``$ref`` (beside
        at most a title or a description) is followed, a ``$ref`` with other keywords
        beside it (``nullable``, ``readOnly``) is kept as written."""
        head, _, last = pointer.rpartition("/")
        if not head:
            return self.document.at(pointer)
        parent, where = self.document.at(head)
        key: Any = unescape(last)
        if isinstance(parent, list) and key.isdigit() and int(key) < len(parent):
            key = int(key)
        elif not isinstance(parent, Mapping) or key not in parent:
            raise self.document.error(where, f"{pointer} points nowhere")
        node, where = parent[key], f"{where}/{last}"
        if isinstance(node, Mapping) and set(node) <= _BARE and "$ref" in node:
            return self.document.resolve(node, where)
        return node, where

    def json_schema(self, pointer: str, direction: Direction) -> dict[str, Any]:
        """The schema at ``pointer`` as one self-contained JSON Schema 2020-12: each
        schema it references under ``$defs`` (so recursion works), 3.0's ``nullable``
        and boolean ``exclusiveMinimum``/``exclusiveMaximum`` in 2020-12 form,
        ``discriminator`` kept as an annotation, the properties ``direction`` leaves out
        gone from ``properties`` and ``required``. Raises :class:`SpecError` where a
        ``$ref`` points nowhere.

        Example::

            schema = spec.schemas.json_schema(op.success.pointer, "reading")
            jsonschema.Draft202012Validator(schema).validate(answer)
        """
        return _Converter(self, direction).run(pointer)

    def hidden(self, node: Mapping[str, Any], direction: Direction) -> frozenset[str]:
        """The properties of ``node`` and of its ``allOf`` parts that ``direction``
        leaves out."""
        found: set[str] = set()
        flag = _HIDDEN[direction]
        todo, seen = [node], set()
        while todo:
            current = todo.pop()
            for name, prop in (current.get("properties") or {}).items():
                if self._flagged(prop, flag):
                    found.add(str(name))
            for part in current.get("allOf") or ():
                target, where = self.document.resolve(part)
                if isinstance(target, Mapping) and where not in seen:
                    seen.add(where)
                    todo.append(target)
        return frozenset(found)

    def _flagged(self, node: Any, flag: str) -> bool:
        """Whether the property schema ``node`` says ``flag``: itself, where its
        ``$ref`` points, or one of its ``allOf`` parts."""
        if not isinstance(node, Mapping):
            return False
        target = self.document.resolve(node)[0]
        options = [node, target, *(node.get("allOf") or ())]
        if isinstance(target, Mapping):
            options += target.get("allOf") or ()
        resolved = [self.document.resolve(o)[0] for o in options]
        return any(isinstance(o, Mapping) and o.get(flag) is True for o in resolved)
