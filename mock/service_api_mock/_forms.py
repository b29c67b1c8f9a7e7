"""Form values read as the JSON values their schema describes, so that a form body (or a
``deepObject`` query parameter) is checked against its schema as a JSON body is.

A form carries only text: ``address[city]=Paris&tags[0]=a&tags[1]=b&age=7`` is read as
``{"address": {"city": "Paris"}, "tags": ["a", "b"], "age": 7}`` where the schema says
``tags`` is an array and ``age`` an integer. Text the schema does not type stays text,
and the schema then says whether it fits.
"""

from __future__ import annotations

import json
import math
import random
import re
from collections.abc import Iterable, Mapping
from typing import Any

from ._build import Unbuildable, ValueBuilder

__all__ = ["nested", "typed"]

# One step of a deepObject key: "address[city]" is "address", then "city".
_STEP = re.compile(r"\[([^\[\]]*)\]")
_INTEGER = re.compile(r"[+-]?[0-9]{1,4000}")


def nested(pairs: Iterable[tuple[str, Any]]) -> dict[str, Any]:
    """The form's ``(key, value)`` pairs as one object: ``a[b][c]`` nests, ``a[]`` and
    a key sent twice make a list.

    Example::

        nested([("a[b]", "1"), ("t[]", "x"), ("t[]", "y")])  # {"a": {"b": "1"}, "t": [...]}
    """
    found: dict[str, Any] = {}
    for key, value in pairs:
        head = key.split("[", 1)[0]
        steps = [head, *_STEP.findall(key[len(head) :])] if head else [key]
        node: Any = found
        for step, following in zip(steps, [*steps[1:], None], strict=True):
            if following is None:
                _put(node, step, value)
            elif isinstance(node, dict):
                if not isinstance(node.get(step), dict):
                    node[step] = {}
                node = node[step]
    return found


def _put(node: Any, step: str, value: Any) -> None:
    if not isinstance(node, dict):
        return
    if step == "":
        step = str(len(node))  # a[]=x, a[]=y: items in order
    if step in node:
        have = node[step]
        node[step] = [*have, value] if isinstance(have, list) else [have, value]
    else:
        node[step] = value


def typed(value: Any, root: Mapping[str, Any], schema: Any = None) -> Any:
    """``value`` (text, or objects of text from :func:`nested`) as the JSON value the
    schema ``schema`` (default: ``root``, a self-contained JSON Schema) types it: numbers,
    booleans, lists from numbered keys, objects from JSON text.

    Example::

        typed({"age": "7"}, {"properties": {"age": {"type": "integer"}}})  # {"age": 7}
    """
    builder = ValueBuilder(root, random.Random(0))  # noqa: S311 -- no draw is made
    return _typed(builder, value, root if schema is None else schema, 0)


def _typed(builder: ValueBuilder, value: Any, schema: Any, depth: int) -> Any:
    if depth > 32:
        return value
    try:
        flat = builder.flatten(schema)
    except Unbuildable:
        return value
    choices = [*flat.get("anyOf", ()), *flat.get("oneOf", ())]
    if choices and not {"type", "properties", "items"} & set(flat):
        # The first choice that types the value, as a client would have meant it.
        for choice in choices:
            found = _typed(builder, value, choice, depth + 1)
            if found is not value:
                return found
        return value
    declared = flat.get("type")
    types = [declared] if isinstance(declared, str) else list(declared or ())
    if not types:
        types = ["object"] if "properties" in flat else []
        types += ["array"] if "items" in flat else []
    if isinstance(value, dict) and "array" in types and all(k.isdigit() for k in value):
        value = [value[k] for k in sorted(value, key=int)]
    if isinstance(value, list):
        if "array" not in types and len(value) == 1:
            return _typed(builder, value[0], schema, depth + 1)
        items = flat.get("items", True)
        return [_typed(builder, item, items, depth + 1) for item in value]
    if isinstance(value, dict):
        properties = flat.get("properties") or {}
        extra = flat.get("additionalProperties", True)
        return {
            k: _typed(builder, v, properties.get(k, extra), depth + 1)
            for k, v in value.items()
        }
    if isinstance(value, str):
        return _scalar(value, types)
    return value


def _number(text: str) -> int | float | None:
    if _INTEGER.fullmatch(text):
        return int(text)
    try:
        number = float(text)
    except ValueError:
        return None
    return number if math.isfinite(number) else None


def _scalar(text: str, types: list[str]) -> Any:
    """``text`` as the first of ``types`` it reads as; itself if none."""
    for kind in types:
        if kind == "integer" and _INTEGER.fullmatch(text):
            return int(text)
        if kind == "number" and _number(text) is not None:
            return _number(text)
        if kind == "boolean" and text in ("true", "false"):
            return text == "true"
        if kind == "null" and text in ("", "null"):
            return None
        if kind in ("object", "array"):
            try:
                found = json.loads(text)
            except ValueError:
                continue
            if isinstance(found, dict if kind == "object" else list):
                return found
        if kind == "string":
            return text
    if "array" in types:
        return [text]
    return text
