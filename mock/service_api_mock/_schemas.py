"""The spec's JSON Schemas as the mock uses them: validators, and values built to fit.

The ground floor of the mock: it reads the spec model (:mod:`service_api_spec`) and no
other module of the mock, and every other module of the mock may read it.
"""

from __future__ import annotations

import copy
import random
import re
import uuid
from collections.abc import Callable, Mapping
from datetime import UTC, datetime, timedelta
from typing import Any

from jsonschema import Draft202012Validator  # type: ignore[import-untyped]  # no stubs kept
from jsonschema.protocols import Validator  # type: ignore[import-untyped]
from referencing import Registry, Resource
from referencing.exceptions import Unresolvable
from referencing.jsonschema import DRAFT202012

from service_api_spec import SpecDocument

__all__ = ["EPOCH", "Schemas", "iso"]

EPOCH = datetime(2026, 1, 5, 8, 0, 0, tzinfo=UTC)
"""The origin of every built date: fixed, so the data is the same on every day."""

_URI = "urn:service-api-mock:spec"
# A schema that refers to itself is built this deep, then its optional parts are left out.
_MAX_DEPTH = 8


def iso(moment: datetime) -> str:
    """``moment`` as the service writes a date-time: ``2026-01-05T08:00:00Z``.

    Example::

        iso(EPOCH)  # "2026-01-05T08:00:00Z"
    """
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


class Schemas:
    """The schemas of one spec document, by JSON pointer: a validator for each (made on
    first use), and values built to fit them.

    Example::

        schemas = Schemas(spec.document)
        schemas.error("#/components/schemas/Shipment", {"shipmentId": 1})  # "shipmentId: ..."
        schemas.build("#/components/schemas/Shipment", random.Random(0))
    """

    def __init__(self, document: SpecDocument) -> None:
        self.document = document
        resource = Resource.from_contents(
            dict(document.document), default_specification=DRAFT202012
        )
        self._registry: Registry[Any] = Registry().with_resource(_URI, resource)
        self._validators: dict[str, Validator] = {}

    def validator(self, pointer: str) -> Validator:
        """The validator of the schema at ``pointer`` (formats checked)."""
        found = self._validators.get(pointer)
        if found is None:
            found = Draft202012Validator(
                {"$ref": f"{_URI}{pointer}"},
                registry=self._registry,
                format_checker=Draft202012Validator.FORMAT_CHECKER,
            )
            self._validators[pointer] = found
        return found

    def error(self, pointer: str, value: object) -> str | None:
        """Why ``value`` does not fit the schema at ``pointer``, where first if not at the
        top (``data/0/name: 3 is not of type 'string'``); None if it fits.

        Raises :class:`service_api_spec.SpecError` for a ``$ref`` of the schema that
        points nowhere. A ``pattern`` that Python's ``re`` cannot read (an ECMA-262
        one such as ``\\p{L}``) is not checked.
        """
        try:
            found = next(iter(self.validator(pointer).iter_errors(value)), None)
        except Unresolvable as exc:
            raise self.document.error(
                pointer, f"a $ref points nowhere: {exc}"
            ) from None
        except re.error:
            return None  # a pattern Python cannot read (\p{L}...) is left unchecked
        if found is None:
            return None
        where = "/".join(str(step) for step in found.absolute_path)
        return f"{where}: {found.message[:200]}" if where else found.message[:200]

    def build(self, pointer: str, rng: random.Random, name: str = "value") -> Any:
        """A value for the schema at ``pointer``, drawn from ``rng`` (the same draws give
        the same value); ``name`` starts the strings it makes up.

        Best effort: a string with a ``pattern`` and no ``examples`` may not match it,
        which :meth:`error` then says.
        """
        return _Builder(self.document, rng).value({"$ref": pointer}, name, 0)


class _Builder:
    """Builds a value that fits a JSON Schema: its ``const``, an example or enum member if
    it has some, the first choice but null of ``anyOf`` / ``oneOf``, every property of an
    object, a value within the bounds."""

    def __init__(self, document: SpecDocument, rng: random.Random) -> None:
        self.document = document
        self.rng = rng

    def value(self, schema: Any, name: str, depth: int) -> Any:
        schema = self.document.resolve(schema)[0]
        if not isinstance(schema, Mapping):
            return None  # true, false or {}: anything, so null
        if "const" in schema:
            return copy.deepcopy(schema["const"])
        for key in ("examples", "enum"):
            if schema.get(key):
                return copy.deepcopy(self.rng.choice(schema[key]))
        if "example" in schema:
            return copy.deepcopy(schema["example"])
        if {"allOf", "anyOf", "oneOf"} & set(schema):
            return self.choice(schema, name, depth)
        declared = schema.get("type", [])
        if isinstance(declared, str):
            declared = [declared]
        types = [t for t in declared if t != "null"]
        kind = "object" if "properties" in schema else "string"
        if types:
            kind = types[0]
        elif "null" in declared:
            return None
        return self.typed(kind, schema, name, depth)

    def choice(self, schema: Mapping[str, Any], name: str, depth: int) -> Any:
        """A value of every part of an ``allOf`` merged, or of the first choice but null
        of an ``anyOf`` or a ``oneOf``."""
        if "allOf" in schema:
            merged: dict[str, Any] = {}
            for part in schema["allOf"]:
                found = self.value(part, name, depth + 1)
                if isinstance(found, dict):
                    merged.update(found)
            return merged
        options = [
            self.document.resolve(o)[0]
            for o in schema.get("anyOf", schema.get("oneOf"))
        ]
        useful = [o for o in options if o != {"type": "null"}]
        return self.value((useful or options)[0], name, depth + 1)

    def typed(self, kind: str, schema: Mapping[str, Any], name: str, depth: int) -> Any:
        if kind == "object":
            return self.object(schema, depth)
        if kind == "array":
            low = int(schema.get("minItems", 0 if depth > 2 else 1))
            high = max(low, min(int(schema.get("maxItems", 3)), 3))
            count = low if depth > 2 else self.rng.randint(low, high)
            return [
                self.value(schema.get("items"), name, depth + 1) for _ in range(count)
            ]
        if kind in ("integer", "number"):
            return self.number(kind, schema)
        if kind == "boolean":
            return self.rng.random() < 0.5
        if kind == "string":
            return self.string(schema, name)
        return None

    def object(self, schema: Mapping[str, Any], depth: int) -> dict[str, Any]:
        properties: Mapping[str, Any] = schema.get("properties") or {}
        required = schema.get("required") or ()
        return {
            key: self.value(sub, key, depth + 1)
            for key, sub in properties.items()
            if depth < _MAX_DEPTH or key in required
        }

    def number(self, kind: str, schema: Mapping[str, Any]) -> int | float:
        low = schema.get("minimum", schema.get("exclusiveMinimum", -1) + 1)
        high = schema.get("maximum", schema.get("exclusiveMaximum", low + 1001) - 1)
        if kind == "integer":
            return self.rng.randint(int(low), int(high))
        if high - low <= 0.02:
            return low  # type: ignore[no-any-return]
        return round(self.rng.uniform(low, high), 2)

    def string(self, schema: Mapping[str, Any], name: str) -> str:
        rng = self.rng
        moment = EPOCH + timedelta(minutes=rng.randrange(0, 60 * 24 * 90))
        by_format: dict[str, Callable[[], str]] = {
            "date-time": lambda: iso(moment),
            "date": lambda: moment.date().isoformat(),
            "uri": lambda: f"https://example.com/{name}/{rng.randrange(1000)}",
            "email": lambda: f"{name.lower()}{rng.randrange(1000)}@example.com",
            "uuid": lambda: str(uuid.UUID(int=rng.getrandbits(128), version=4)),
        }
        if schema.get("format") in by_format:
            return by_format[schema["format"]]()
        text = f"{name}-{rng.randrange(1000, 10000)}"
        text = text.ljust(int(schema.get("minLength", 0)), "x")
        return text[: int(schema.get("maxLength", len(text)))]
