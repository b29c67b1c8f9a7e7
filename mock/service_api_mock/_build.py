"""Values built to fit a self-contained JSON Schema 2020-12 (the form the spec model's
``Schemas.json_schema`` gives the spec's schemas, references under ``$defs``), drawn
from a random generator: the same draws give the same value.

The builder flattens ``$ref`` and ``allOf`` into one set of constraints, picks one
branch of an ``anyOf`` / ``oneOf`` (the discriminator's property set to the branch's
mapping key), and builds a value of the first type the constraints allow: strings of
their format or ``pattern`` (with :mod:`rstr`) and length, numbers within their bounds
and ``multipleOf``, arrays and maps of their sizes, objects with their properties.
Past a depth it builds the least it may: no optional property, the fewest items, the
branch that ends soonest (null where allowed), so recursive schemas stay finite.
"""

from __future__ import annotations

import base64
import copy
import json
import math
import random
import re
import uuid
from collections.abc import Callable, Mapping
from datetime import UTC, datetime, timedelta
from typing import Any

import rstr
from jsonschema import Draft202012Validator  # type: ignore[import-untyped]  # no stubs kept

from service_api_spec import steps

__all__ = ["EPOCH", "Unbuildable", "ValueBuilder", "iso"]

EPOCH = datetime(2026, 1, 5, 8, 0, 0, tzinfo=UTC)
"""The origin of every built date: fixed, so the data is the same on every day."""

# Deeper than this, a value is built as small as its schema allows.
_SMALL_FROM = 6
# Arrays and maps deeper than this get their fewest members: data stays small.
_FEW_FROM = 2
# Deeper than this, a schema cannot be built at all (it has no end).
_NO_END = 40
_INT_RANGES = {"int32": (-(2**31), 2**31 - 1), "int64": (-(2**63), 2**63 - 1)}
_OBJECT_WORDS = ("properties", "additionalProperties", "required", "minProperties")
_ARRAY_WORDS = ("items", "prefixItems", "minItems", "maxItems", "contains")
_NUMBER_WORDS = ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum")
_STRING_WORDS = ("minLength", "maxLength", "pattern", "format")
_LOWER = ("minimum", "exclusiveMinimum", "minLength", "minItems", "minProperties")
_UPPER = ("maximum", "exclusiveMaximum", "maxLength", "maxItems", "maxProperties")


class Unbuildable(ValueError):
    """No value fits the schema (``false``, or a recursion with no end)."""


def iso(moment: datetime) -> str:
    """``moment`` as the service writes a date-time: ``2026-01-05T08:00:00Z``.

    Example::

        iso(EPOCH)  # "2026-01-05T08:00:00Z"
    """
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def _key(value: object) -> str:
    # JSON equality: 0 and false differ, which Python's == does not see.
    return json.dumps(value, sort_keys=True)


def _types(schema: Mapping[str, Any]) -> list[str] | None:
    declared = schema.get("type")
    if declared is None:
        return None
    return [declared] if isinstance(declared, str) else list(declared)


def _merge(into: dict[str, Any], part: Mapping[str, Any]) -> None:
    """Add the constraints of ``part`` to ``into``: both must hold. A composition met
    twice is kept in ``allOf`` for a later round."""
    for key, value in part.items():
        if key not in into:
            into[key] = value
            continue
        have = into[key]
        if key == "properties":
            into[key] = {**have}
            for name, sub in value.items():
                into[key][name] = {"allOf": [have[name], sub]} if name in have else sub
        elif key == "required":
            into[key] = list(dict.fromkeys([*have, *value]))
        elif key == "type":
            into[key] = _common_types(_types(into) or [], _types(part) or [])
        elif key == "enum":
            wanted = {_key(v) for v in value}
            into[key] = [v for v in have if _key(v) in wanted]
        elif key in _LOWER or key in _UPPER:
            into[key] = (max if key in _LOWER else min)(have, value)
        elif key in ("items", "additionalProperties", "propertyNames", "contains"):
            into[key] = {"allOf": [have, value]}
        elif key in ("anyOf", "oneOf"):
            into.setdefault("allOf", []).append({key: value})
        # A second pattern, a "not": not built for, the value is checked afterwards.
        elif key == "multipleOf" and isinstance(have, int) and isinstance(value, int):
            into[key] = math.lcm(have, value)


def _common_types(first: list[str], second: list[str]) -> list[str]:
    both = [t for t in first if t in second]
    # An integer is a number: the stricter of the two holds.
    if "integer" in first and "number" in second and "integer" not in both:
        both.append("integer")
    if "number" in first and "integer" in second and "integer" not in both:
        both.append("integer")
    return both


class ValueBuilder:
    """Builds values to fit the self-contained JSON Schema ``root`` (its references
    inside it), drawing from ``rng``; ``name`` (a property's, an operation's) starts
    the strings it makes up.

    Example::

        root = spec.schemas.json_schema("#/components/schemas/Pet", "reading")
        ValueBuilder(root, random.Random(0)).value(root, "pet", 0)
    """

    def __init__(
        self,
        root: Mapping[str, Any],
        rng: random.Random,
        fits: dict[str, bool] | None = None,
    ) -> None:
        self.root = root
        self.rng = rng
        self._ends: dict[str, float] = {}
        self._fits = fits if fits is not None else {}
        """Whether an example fits its schema, by both as JSON: shared by builders of
        one spec so each example is checked once."""

    def target(self, ref: str) -> Any:
        """The schema the reference ``ref`` (``#/$defs/Pet``) names inside the root."""
        node: Any = self.root
        for step in steps(ref):
            node = node[step] if isinstance(node, Mapping) else True
        return node

    def value(self, schema: Any, name: str, depth: int) -> Any:
        """A value for ``schema`` at ``depth`` (how deep inside the value built)."""
        if depth > _NO_END:
            raise Unbuildable("a schema that refers to itself with no end")
        flat = self.flatten(schema)
        for key in ("oneOf", "anyOf"):
            if key in flat:
                branch = self.branch(flat, flat.pop(key), depth)
                flat.pop("discriminator", None)
                return self.value({"allOf": [flat, branch]}, name, depth + 1)
        if "allOf" in flat:
            return self.value(flat, name, depth + 1)
        if "const" in flat:
            return copy.deepcopy(flat["const"])
        if isinstance(flat.get("enum"), list):
            return self.member(flat)
        examples = self.examples(flat)
        if examples:
            return copy.deepcopy(self.rng.choice(examples))
        return self.typed(flat, name, depth)

    def typed(self, flat: dict[str, Any], name: str, depth: int) -> Any:
        """A value of the type ``flat`` allows (no choice, const, enum or example left)."""
        kind = self.kind(flat, depth)
        if kind == "object":
            return self.object(flat, depth)
        if kind == "array":
            return self.array(flat, name, depth)
        if kind in ("integer", "number"):
            return self.number(kind, flat)
        if kind == "boolean":
            return self.rng.random() < 0.5
        if kind == "null":
            return None
        return self.string(flat, name)

    def flatten(self, schema: Any) -> dict[str, Any]:
        """The constraints of ``schema``, its ``$ref`` and its ``allOf`` parts together."""
        flat: dict[str, Any] = {}
        parts = [schema]
        while parts:
            part = parts.pop(0)
            if part is False:
                raise Unbuildable("a schema that takes nothing (false)")
            if not isinstance(part, Mapping):
                continue
            if isinstance(part.get("$ref"), str):
                parts.append(self.target(part["$ref"]))
            if isinstance(part.get("allOf"), list):
                parts.extend(part["allOf"])
            _merge(flat, {k: v for k, v in part.items() if k not in ("$ref", "allOf")})
        return flat

    def branch(self, flat: Mapping[str, Any], choices: list[Any], depth: int) -> Any:
        """One of ``choices``: any that can end, past the depth the one that ends
        soonest; with its discriminator's value where ``flat`` has one."""
        ends = [self.end(choice, frozenset()) for choice in choices]
        finite = [i for i, e in enumerate(ends) if e != math.inf] or list(
            range(len(choices))
        )
        index = self.rng.choice(finite)
        if depth >= _SMALL_FROM:
            index = min(finite, key=lambda i: ends[i])
        chosen = choices[index]
        discriminator = flat.get("discriminator")
        if (
            not isinstance(discriminator, Mapping)
            or "propertyName" not in discriminator
        ):
            return chosen
        ref = chosen.get("$ref") if isinstance(chosen, Mapping) else None
        if not isinstance(ref, str):
            return chosen
        mapping = discriminator.get("mapping") or {}
        keys = [key for key, target in mapping.items() if _last(target) == _last(ref)]
        # Without a mapping entry, the schema's own name is the value (OpenAPI's rule).
        key = keys[0] if keys else _last(ref)
        tag = {"properties": {discriminator["propertyName"]: {"const": key}}}
        return {"allOf": [chosen, tag]}

    def end(self, schema: Any, seen: frozenset[str]) -> float:
        """How many levels the smallest value of ``schema`` needs; infinite for one
        that refers to itself with no way out (a required property, a non-empty array)."""
        if not isinstance(schema, Mapping):
            return 0 if schema is not False else math.inf
        ref = schema.get("$ref")
        if isinstance(ref, str):
            if ref in seen:
                return math.inf
            if not seen and ref in self._ends:
                return self._ends[ref]
            found = self.end(self.target(ref), seen | {ref})
            if not seen:
                self._ends[ref] = found
            return found
        if "null" in (_types(schema) or ()) or "const" in schema or "enum" in schema:
            return 0
        levels = [0.0]
        for key in ("anyOf", "oneOf"):
            if isinstance(schema.get(key), list):
                levels.append(min(self.end(s, seen) for s in schema[key]))
        for part in schema.get("allOf", ()):
            levels.append(self.end(part, seen))
        properties = schema.get("properties") or {}
        for name in schema.get("required", ()):
            levels.append(1 + self.end(properties.get(name, True), seen))
        if schema.get("minItems", 0) > 0:
            levels.append(1 + self.end(schema.get("items", True), seen))
        return max(levels)

    def examples(self, flat: Mapping[str, Any]) -> list[Any]:
        """The schema's ``examples`` (and 3.0's ``example``) that fit it: what the API's
        authors wrote is likelier than anything drawn, where it is right."""
        given = flat.get("examples")
        found = list(given) if isinstance(given, list) else []
        if "example" in flat:
            found.append(flat["example"])
        if not found:
            return []
        schema = {k: v for k, v in flat.items() if k not in ("examples", "example")}
        schema["$defs"] = self.root.get("$defs", {})
        text = _key(schema)
        fitting = []
        for example in found:
            key = f"{text}\n{_key(example)}"
            if key not in self._fits:
                validator = Draft202012Validator(
                    schema, format_checker=Draft202012Validator.FORMAT_CHECKER
                )
                try:
                    self._fits[key] = bool(validator.is_valid(example))
                except re.error:  # a pattern Python cannot read
                    self._fits[key] = False
            if self._fits[key]:
                fitting.append(example)
        return fitting

    def member(self, flat: Mapping[str, Any]) -> Any:
        """A member of the enum, of a type the schema allows where one is."""
        members = flat["enum"]
        if not members:
            raise Unbuildable("an enum with no member every part allows")
        types = _types(flat)
        fitting = [m for m in members if types is None or _type_of(m) in types]
        if types is not None and "number" in types:
            fitting += [m for m in members if _type_of(m) == "integer"]
        return copy.deepcopy(self.rng.choice(fitting or members))

    def kind(self, flat: Mapping[str, Any], depth: int) -> str:
        """The type of the value to build: the first the schema allows, null only
        where it allows nothing else (or, past the depth, to end sooner)."""
        types = _types(flat)
        if types is None:
            for words, kind in (
                (_OBJECT_WORDS, "object"),
                (_ARRAY_WORDS, "array"),
                ((*_NUMBER_WORDS, "multipleOf"), "number"),
            ):
                if any(word in flat for word in words):
                    return kind
            return "string"
        if not types:
            raise Unbuildable("parts that allow no type in common")
        if "null" in types and (len(types) == 1 or depth >= _SMALL_FROM):
            return "null"
        rest = [t for t in types if t != "null"]
        if "object" in rest and any(word in flat for word in _OBJECT_WORDS):
            return "object"
        return rest[0]

    def object(self, flat: Mapping[str, Any], depth: int) -> dict[str, Any]:
        properties: Mapping[str, Any] = flat.get("properties") or {}
        required = [r for r in flat.get("required", ()) if isinstance(r, str)]
        small = depth >= _SMALL_FROM
        names = [*required, *(n for n in properties if n not in required and not small)]
        out: dict[str, Any] = {}
        extra = flat.get("additionalProperties", True)
        for name in names:
            schema = properties.get(name, extra)
            if schema is False:
                if name in required:
                    raise Unbuildable(f"the required property {name!r} is not allowed")
                continue
            out[name] = self.value(schema, name, depth + 1)
        # A map (additionalProperties of a schema): a few entries, more if it wants more.
        wanted = int(flat.get("minProperties", 0))
        is_map = isinstance(extra, Mapping) and extra != {}
        if is_map and depth < _FEW_FROM and not properties:
            wanted = max(wanted, self.rng.randint(1, 2))
        number = 0
        while len(out) < wanted and extra is not False and number < wanted + 20:
            number += 1
            key = self.key(flat, number)
            if key not in out and key not in properties:
                out[key] = self.value(extra, key, depth + 1)
        high = flat.get("maxProperties")
        if isinstance(high, int) and len(out) > high:
            kept = [n for n in out if n in required][:high]
            kept += [n for n in out if n not in kept][: high - len(kept)]
            out = {n: out[n] for n in out if n in kept}
        return out

    def key(self, flat: Mapping[str, Any], number: int) -> str:
        """The name of a map's entry ``number``, as ``propertyNames`` wants it."""
        names = flat.get("propertyNames")
        if isinstance(names, Mapping) and (names.get("pattern") or names.get("enum")):
            return str(self.value(names, "key", _SMALL_FROM))
        return f"key{number}"

    def array(self, flat: Mapping[str, Any], name: str, depth: int) -> list[Any]:
        low = int(flat.get("minItems", 0))
        high = flat.get("maxItems")
        prefix = flat.get("prefixItems") or []
        items = flat.get("items", True)
        count = low
        if depth < _FEW_FROM:
            count = self.rng.randint(max(low, 1), max(low, 3))
        if isinstance(high, int):
            count = min(count, high)
        if items is False:
            count = min(count, len(prefix))
        out: list[Any] = []
        seen: set[str] = set()
        for index in range(count):
            schema = prefix[index] if index < len(prefix) else items
            for _ in range(5 if flat.get("uniqueItems") else 1):
                item = self.value(schema, name, depth + 1)
                if _key(item) not in seen:
                    break
            if flat.get("uniqueItems") and _key(item) in seen and len(out) >= low:
                continue
            seen.add(_key(item))
            out.append(item)
        return out

    def number(self, kind: str, flat: Mapping[str, Any]) -> int | float:
        low = flat.get("minimum", -math.inf)
        high = flat.get("maximum", math.inf)
        above = flat.get("exclusiveMinimum")
        below = flat.get("exclusiveMaximum")
        step = flat.get("multipleOf")
        if kind == "integer" or isinstance(step, int):
            return self.whole(flat)
        if above is not None:
            low = max(low, above + min(1e-6, abs(above) * 1e-9 + 1e-9))
        if below is not None:
            high = min(high, below - min(1e-6, abs(below) * 1e-9 + 1e-9))
        low, high = _span(low, high)
        if isinstance(step, int | float) and step > 0:
            first, last = math.ceil(low / step), math.floor(high / step)
            for _ in range(20):
                found = self.rng.randint(first, max(first, last)) * step
                if int(found / step) == found / step and low <= found <= high:
                    return found
            return first * step
        found = round(self.rng.uniform(low, high), 2)
        return found if low <= found <= high else (low + high) / 2

    def whole(self, flat: Mapping[str, Any]) -> int:
        low = flat.get("minimum", -math.inf)
        high = flat.get("maximum", math.inf)
        above = flat.get("exclusiveMinimum")
        below = flat.get("exclusiveMaximum")
        step = flat.get("multipleOf")
        limits = _INT_RANGES.get(str(flat.get("format")), (-math.inf, math.inf))
        if above is not None:
            low = max(low, math.floor(above) + 1)
        if below is not None:
            high = min(high, math.ceil(below) - 1)
        low, high = _span(math.ceil(low) if low > -math.inf else low, high)
        # An int32 or int64 holds its value: a span drawn near zero stays inside.
        low, high = max(low, limits[0]), min(high, limits[1])
        first, last = math.ceil(low), math.floor(high)
        if isinstance(step, int | float) and step > 0:
            lowest, highest = math.ceil(first / step), math.floor(last / step)
            return int(self.rng.randint(lowest, max(lowest, highest)) * step)
        return self.rng.randint(first, max(first, last))

    def string(self, flat: Mapping[str, Any], name: str) -> str:
        low = int(flat.get("minLength", 0))
        high = flat.get("maxLength")
        pattern = flat.get("pattern")
        made = _FORMATS.get(str(flat.get("format")))
        text = made(self.rng, name) if made else None
        if isinstance(pattern, str) and not (text and re.search(pattern, text)):
            # A pattern beside a format: the format's value where the pattern finds it.
            text = self.matching(pattern, low, high) or text
        if text is None:
            text = f"{name}-{self.rng.randrange(1000, 10000)}"
        text = text.ljust(low, "x")
        return text[:high] if isinstance(high, int) else text

    def matching(self, pattern: str, low: int, high: Any) -> str | None:
        """A string ``pattern`` finds, of the length wanted; None if none was drawn (a
        pattern Python cannot read, or lengths it does not meet)."""
        try:
            compiled = re.compile(pattern)
        except re.error:
            return None
        drawer = _Drawer(self.rng)
        for _ in range(10):
            try:
                text = drawer.xeger(pattern)
            except Exception:  # a construct rstr cannot draw from
                return None
            fits = low <= len(text) and (not isinstance(high, int) or len(text) <= high)
            if fits and compiled.search(text):
                return text
        return None


class _Drawer(rstr.Rstr):
    """rstr's drawer with short repeats: a ``+`` or ``*`` repeats a few times rather
    than up to a hundred, so a pattern's string fits the lengths set beside it."""

    def _handle_repeat(self, start_range: int, end_range: int, value: str) -> str:
        return super()._handle_repeat(
            start_range, min(end_range, start_range + 8), value
        )


def _last(pointer: str) -> str:
    """The name a pointer (or a mapping's bare name) ends with: ``Cat`` of
    ``#/components/schemas/Cat`` and of ``#/$defs/Cat``."""
    found = steps(pointer) if pointer.startswith("#") else [pointer]
    return found[-1] if found else pointer


def _span(low: float, high: float) -> tuple[float, float]:
    """Bounds where either may be missing: a thousand wide, near zero if it may."""
    if low == -math.inf and high == math.inf:
        return 0, 1000
    if low == -math.inf:
        return min(0, high - 1000), high
    if high == math.inf:
        return low, max(low, 0) + 1000
    return low, max(low, high)


def _type_of(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "integer" if value.is_integer() else "number"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object"


def _moment(rng: random.Random) -> datetime:
    return EPOCH + timedelta(minutes=rng.randrange(0, 60 * 24 * 90))


_Made = Callable[[random.Random, str], str]
_FORMATS: Mapping[str, _Made] = {
    "date-time": lambda rng, _: iso(_moment(rng)),
    "date": lambda rng, _: _moment(rng).date().isoformat(),
    "time": lambda rng, _: _moment(rng).strftime("%H:%M:%SZ"),
    "duration": lambda rng, _: f"PT{rng.randrange(1, 90)}M",
    "email": lambda rng, _: f"user{rng.randrange(1000)}@example.com",
    "idn-email": lambda rng, _: f"user{rng.randrange(1000)}@example.com",
    "hostname": lambda rng, _: f"host{rng.randrange(1000)}.example.com",
    "idn-hostname": lambda rng, _: f"host{rng.randrange(1000)}.example.com",
    "ipv4": lambda rng, _: f"192.0.2.{rng.randrange(1, 255)}",
    "ipv6": lambda rng, _: f"2001:db8::{rng.randrange(1, 65535):x}",
    "uri": lambda rng, _: f"https://example.com/items/{rng.randrange(1000)}",
    "url": lambda rng, _: f"https://example.com/items/{rng.randrange(1000)}",
    "iri": lambda rng, _: f"https://example.com/items/{rng.randrange(1000)}",
    "uri-reference": lambda rng, _: f"/items/{rng.randrange(1000)}",
    "iri-reference": lambda rng, _: f"/items/{rng.randrange(1000)}",
    "uri-template": lambda rng, _: "https://example.com/items/{id}",
    "uuid": lambda rng, _: str(uuid.UUID(int=rng.getrandbits(128), version=4)),
    "byte": lambda rng, _: base64.b64encode(rng.randbytes(6)).decode(),
    "regex": lambda rng, _: "^[a-z]+$",
    "json-pointer": lambda rng, _: f"/items/{rng.randrange(1000)}",
    "relative-json-pointer": lambda rng, _: "0/items",
    "int32": lambda rng, _: str(rng.randrange(1000)),
    "int64": lambda rng, _: str(rng.randrange(1000)),
    "decimal": lambda rng, _: f"{rng.randrange(1000)}.{rng.randrange(100):02d}",
}
