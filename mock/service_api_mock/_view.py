"""The spec's schemas as plain JSON Schema (draft 2020-12), as one direction sees them.

OpenAPI schemas are JSON Schema with differences that a JSON Schema validator does not
know: 3.0's ``nullable`` (also met inside 3.1 documents), 3.0's boolean
``exclusiveMinimum`` / ``exclusiveMaximum``, ``readOnly`` properties that are required
only in answers and ``writeOnly`` ones that answers never carry, and ``$ref`` to any node
of the document. :func:`json_schema_view` turns every schema reachable from a pointer
into its JSON Schema form, each referenced schema once under ``$defs`` (so recursive
schemas stay finite).

The one place the mock converts: the spec model may later offer the same conversion,
and this function is what would be swapped for it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from service_api_spec import SpecDocument

__all__ = ["Direction", "SchemaView", "json_schema_view"]

Direction = Literal["reading", "writing"]
"""Which way a value goes: ``reading`` an answer (``writeOnly`` properties never sent,
``readOnly`` ones required where declared), ``writing`` a request (``readOnly``
properties no longer required)."""

# Keywords whose value is a schema, a list of schemas, or a map of names to schemas:
# everything else is a value (an enum, an example...) and is copied as it is.
_ONE = (
    "additionalProperties",
    "not",
    "if",
    "then",
    "else",
    "contains",
    "propertyNames",
    "unevaluatedProperties",
    "unevaluatedItems",
    "additionalItems",
)
_LISTS = ("allOf", "anyOf", "oneOf", "prefixItems")
_MAPS = ("properties", "patternProperties", "dependentSchemas", "$defs", "definitions")
# Keywords that would change how references resolve, or which dialect applies.
_DROPPED = ("$id", "$schema", "$anchor", "$dynamicAnchor", "nullable")
# The direction a property is hidden from, by the flag that hides it.
_HIDDEN: Mapping[Direction, str] = {"reading": "writeOnly", "writing": "readOnly"}


class SchemaView:
    """The JSON Schema form of a document's schemas for one :data:`Direction`: each
    schema under ``defs`` by a short name, found by its pointer with :meth:`ref`.

    Example::

        view = json_schema_view(document, "reading")
        schema = {"$ref": view.ref("#/components/schemas/Pet"), "$defs": view.defs}
    """

    def __init__(self, document: SpecDocument, direction: Direction) -> None:
        self.document = document
        self.direction = direction
        self.defs: dict[str, Any] = {}
        self._names: dict[str, str] = {}
        self.pointers: dict[str, str] = {}
        """The pointer each name of ``defs`` was made from."""

    def ref(self, pointer: str) -> str:
        """The reference (``#/$defs/s3``) of the schema at ``pointer``, converted with
        every schema it refers to on first use.

        Raises :class:`service_api_spec.SpecError` for a ``$ref`` that points nowhere.
        """
        name = self._names.get(pointer)
        if name is None:
            name = f"s{len(self._names)}"
            self._names[pointer] = name
            self.pointers[name] = pointer
            self.defs[name] = True  # a schema that refers to itself meets this first
            self.defs[name] = self.schema(self.document.at(pointer)[0])
        return f"#/$defs/{name}"

    def target(self, ref: str) -> Any:
        """The converted schema a reference of this view (``#/$defs/s3``) names."""
        return self.defs[ref.rpartition("/")[2]]

    def schema(self, node: Any) -> Any:
        """The schema ``node`` as JSON Schema."""
        if isinstance(node, bool):
            return node
        if not isinstance(node, Mapping):
            return True  # not a schema: nothing to hold a value to
        out: dict[str, Any] = {}
        for key, value in node.items():
            if key == "items" and isinstance(value, list):
                # Draft 4's tuple of items (3.0 allows no such thing, but it is met).
                out["prefixItems"] = [self.schema(v) for v in value]
            elif key not in _DROPPED:
                out[key] = self.child(key, value)
        self.bounds(node, out)
        self.hide(node, out)
        if node.get("nullable") is True:
            return _nullable(out)
        return out

    def child(self, key: str, value: Any) -> Any:
        """The value of the keyword ``key`` of a schema, as JSON Schema."""
        if key == "$ref" and isinstance(value, str):
            return self.ref(value)
        if key in _ONE or key == "items":
            return self.schema(value)
        if key in _LISTS and isinstance(value, list):
            return [self.schema(v) for v in value]
        if key in _MAPS and isinstance(value, Mapping):
            return {name: self.schema(sub) for name, sub in value.items()}
        if key == "discriminator" and isinstance(value, Mapping):
            return self.discriminator(value)
        return value

    def discriminator(self, value: Mapping[str, Any]) -> dict[str, Any]:
        """A discriminator whose ``mapping`` names the view's references."""
        out = dict(value)
        mapping = value.get("mapping")
        if isinstance(mapping, Mapping):
            # A bare name in a mapping is a schema of the components.
            out["mapping"] = {
                key: self.ref(
                    str(target)
                    if str(target).startswith("#")
                    else f"#/components/schemas/{target}"
                )
                for key, target in mapping.items()
            }
        return out

    @staticmethod
    def bounds(node: Mapping[str, Any], out: dict[str, Any]) -> None:
        """3.0's boolean ``exclusiveMinimum: true`` beside ``minimum`` as 2020-12's
        ``exclusiveMinimum: <the minimum>`` (and the same for the maximum)."""
        for flag, limit in (
            ("exclusiveMinimum", "minimum"),
            ("exclusiveMaximum", "maximum"),
        ):
            if not isinstance(node.get(flag), bool):
                continue
            del out[flag]
            if node[flag] and limit in node:
                out[flag] = out.pop(limit)

    def hide(self, node: Mapping[str, Any], out: dict[str, Any]) -> None:
        """Properties this direction never sees: not required, and in answers not
        allowed (a ``writeOnly`` password is never answered)."""
        properties = node.get("properties")
        if not isinstance(properties, Mapping):
            return
        flag = _HIDDEN[self.direction]
        hidden = {name for name, sub in properties.items() if self.flagged(sub, flag)}
        if not hidden:
            return
        if isinstance(out.get("required"), list):
            out["required"] = [r for r in out["required"] if r not in hidden]
        if self.direction == "reading":
            out["properties"] = {
                name: False if name in hidden else sub
                for name, sub in out["properties"].items()
            }

    def flagged(self, node: Any, flag: str) -> bool:
        """Whether the schema ``node`` (or what its ``$ref`` points to) sets ``flag``."""
        if not isinstance(node, Mapping):
            return False
        if node.get(flag) is True:
            return True
        ref = node.get("$ref")
        if not isinstance(ref, str):
            return False
        target = self.document.get(ref)
        return isinstance(target, Mapping) and target.get(flag) is True


def _nullable(out: dict[str, Any]) -> Any:
    """``out`` that also takes null (3.0's ``nullable: true``)."""
    declared = out.get("type")
    composed = {"$ref", "allOf", "anyOf", "oneOf"} & set(out)
    if declared is None and not composed and "enum" not in out:
        return out  # no type: null is already taken
    if declared is None or composed:
        return {"anyOf": [out, {"type": "null"}]}
    types = [declared] if isinstance(declared, str) else list(declared)
    out["type"] = [*types, "null"] if "null" not in types else types
    if isinstance(out.get("enum"), list) and None not in out["enum"]:
        out["enum"] = [*out["enum"], None]
    return out


def json_schema_view(document: SpecDocument, direction: Direction) -> SchemaView:
    """The JSON Schema form of ``document``'s schemas as ``direction`` sees them,
    converted as pointers are asked for (:meth:`SchemaView.ref`).

    Example::

        view = json_schema_view(spec.document, "writing")
        view.ref("#/components/schemas/NewPet")  # "#/$defs/s0"
    """
    return SchemaView(document, direction)
