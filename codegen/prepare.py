"""The spec as openapi-python-client is given it: a copy of the document in which the
Python names it would give twice are made distinct, by the rules of
docs/development/endpoint.md ("Python names"), and what it cannot carry but the client
does not need is left out. The spec itself, the spec model and every JSON name on the
wire are unchanged.

1. A component schema's ``title`` names nothing (openapi-python-client would take it
   for the class name, and two components of one title, ``Basic Error``, would clash):
   its key names its class. An inline schema's title still names its class.
2. Component schemas whose keys give one class name (``address`` and ``Address``,
   ``error`` and ``Error``): the first in the document keeps it, each next one gets
   ``2``, ``3``, ... (``Address2``), its ``$ref`` s rewritten.
3. Properties of one schema, or parameters of one operation, whose names give one Python
   name (``+1`` and ``-1``; ``StartTime``, ``StartTime<`` and ``StartTime>``): each whose
   name holds symbols gets them spelled as words (``plus_1``, ``minus_1``,
   ``start_time_lt``, ``start_time_gt``); a clash left gets ``_2``, ``_3`` in document
   order. The generator sees a placeholder; :func:`restore` gives the generated property
   back its JSON name and sets its Python name.
4. A default that is an object or an array (``default: {}`` beside an ``allOf``) is left
   out: the client never sends a default, and the generator cannot type one.
5. A request body offered in several media types is sent as JSON where JSON is one of
   them (the others could give the body's model too, and a door could not tell them
   apart), else as any but XML.
6. A header or cookie parameter whose schema is an array or an object is given as the
   text its style sends (``token: "1,2"``); a parameter described by ``content`` (a
   media type) rather than a schema, as the text of that media type
   (``coordinates: '{"lat": 1}'``): the generator would leave it out.
7. An enum that may be null (OpenAPI 3.0's ``nullable: true``, or ``null`` among 3.1's
   types) without ``null`` among its values gets it, as the spec model reads it (Stripe's
   ``tax_exempt``): the generator would type it without ``None`` and a record would
   report every null as drift.

Example::

    prepared = Prepared.of(document)
    openapi = GeneratorData.from_dict(prepared.document, config=config)
    prepared.restore(openapi)
"""

from __future__ import annotations

import copy
import re
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import attrs
from openapi_python_client.parser.openapi import GeneratorData
from openapi_python_client.strings import ClassName, PythonIdentifier

__all__ = ["Prepared", "python_name"]

PREFIX = (
    "field_"  # openapi-python-client's field_prefix (codegen/config.yaml leaves it)
)
SCHEMAS = "#/components/schemas/"
# Symbols spelled as words where two names would otherwise give one Python name.
WORDS = {
    "+": "plus",
    "-": "minus",
    "<": "lt",
    ">": "gt",
    "=": "eq",
    "!": "not",
    "@": "at",
    "$": "dollar",
    "%": "percent",
    "&": "and",
    "*": "star",
    "#": "hash",
    "~": "tilde",
}
_SYMBOL = re.compile("[" + re.escape("".join(WORDS)) + "]")
# A placeholder openapi-python-client keeps as it is: restore() finds it by its prefix.
_MARK = "zzspecname"
# Keys whose values are no part of the document to walk for schemas: schemas
# themselves (walked as schemas) and examples (data, whatever keys they hold).
_NOT_SPEC = frozenset(["schema", "example", "examples"])
_SCHEMA_MAPS = ("properties", "patternProperties", "$defs", "definitions")
_SCHEMA_LISTS = ("allOf", "anyOf", "oneOf", "prefixItems")
_SCHEMA_ONES = (
    "items",
    "additionalProperties",
    "not",
    "contentSchema",
    "propertyNames",
)


def python_name(name: str) -> str:
    """The Python name openapi-python-client gives a field or parameter ``name``.

    Example::

        python_name("StartTime<")  # "start_time"
    """
    return str(PythonIdentifier(name, prefix=PREFIX))


def _spelled(name: str) -> str:
    """``name`` with its symbols as words: ``StartTime<`` -> ``start_time_lt``."""
    words = _SYMBOL.sub(lambda m: f"_{WORDS[m.group()]}_", name)
    return python_name(words.strip("_"))


def distinct(names: list[str]) -> dict[str, str]:
    """The Python name of each of ``names`` (one schema's properties, or one
    operation's parameters), made distinct by the rule of the module's docstring; only
    the names whose Python name changes.

    Example::

        distinct(["+1", "-1", "laugh"])  # {"+1": "plus_1", "-1": "minus_1"}
    """
    plain = {name: python_name(name) for name in names}
    counts: dict[str, int] = {}
    for python in plain.values():
        counts[python] = counts.get(python, 0) + 1
    wanted = {
        name: _spelled(name) if counts[python] > 1 and _SYMBOL.search(name) else python
        for name, python in plain.items()
    }
    taken: set[str] = set()
    changed: dict[str, str] = {}
    for name in names:
        python = wanted[name]
        if python in taken:
            number = 2
            while (
                f"{python}_{number}" in taken or f"{python}_{number}" in wanted.values()
            ):
                number += 1
            python = f"{python}_{number}"
        taken.add(python)
        if python != plain[name]:
            changed[name] = python
    return changed


@attrs.frozen
class Prepared:
    """The document given to openapi-python-client, and the placeholders to restore."""

    document: dict[str, Any]
    placeholders: Mapping[str, tuple[str, str]]
    """Placeholder -> (the JSON name, its Python name)."""
    renamed: Mapping[str, str]
    """Component schemas given another key: the spec's key -> the generator's key."""

    @classmethod
    def of(cls, source: Mapping[str, Any]) -> Prepared:
        """The prepared copy of ``source`` (the spec, as read)."""
        document = copy.deepcopy(dict(source))
        renamed = _rename_schemas(document)
        placeholders: dict[str, tuple[str, str]] = {}

        def mark(name: str, python: str) -> str:
            placeholder = f"{_MARK}{len(placeholders)}_{python}"
            placeholders[placeholder] = (name, python)
            return placeholder

        for schema in document.get("components", {}).get("schemas", {}).values():
            if isinstance(schema, dict):
                schema.pop("title", None)
        for schema in _schemas(document):
            _prepare_schema(schema, mark)
        for operation in _operations(document):
            _prepare_operation(document, operation, mark)
        return cls(document=document, placeholders=placeholders, renamed=renamed)

    def restore(self, openapi: GeneratorData) -> None:
        """Give each generated property and parameter that got a placeholder its JSON
        name back and its Python name."""
        properties: list[Any] = []
        for model in openapi.models:
            properties += [
                *(model.required_properties or []),
                *(model.optional_properties or []),
            ]
        for collection in openapi.endpoint_collections_by_tag.values():
            for endpoint in collection.endpoints:
                properties += [prop for _, prop in endpoint.iter_all_parameters()]
        for prop in properties:
            raw = _raw(prop.name)
            if raw not in self.placeholders:
                continue
            name, python = self.placeholders[raw]
            kind = type(prop.name)
            object.__setattr__(prop, "name", name if kind is str else kind(name))
            object.__setattr__(
                prop,
                "python_name",
                PythonIdentifier(python, prefix="", skip_snake_case=True),
            )


def _prepare_schema(schema: dict[str, Any], mark: Callable[[str, str], str]) -> None:
    """Rules 3, 4 and 7 on one schema object."""
    if isinstance(schema.get("default"), dict | list):
        del schema["default"]
    declared = schema.get("type")
    nullable = schema.get("nullable") is True or (
        isinstance(declared, list) and "null" in declared
    )
    values = schema.get("enum")
    if nullable and isinstance(values, list) and None not in values:
        schema["enum"] = [*values, None]
    properties = schema.get("properties")
    changed = distinct(list(properties)) if isinstance(properties, dict) else {}
    if properties and changed:
        keys = {k: mark(k, v) for k, v in changed.items()}
        schema["properties"] = {keys.get(k, k): v for k, v in properties.items()}
        if isinstance(schema.get("required"), list):
            schema["required"] = [keys.get(r, r) for r in schema["required"]]


def _prepare_operation(
    document: dict[str, Any], operation: dict[str, Any], mark: Callable[[str, str], str]
) -> None:
    """Rules 3, 5 and 6 on one operation."""
    parameters = [p for p in _parameters(document, operation) if isinstance(p, dict)]
    changed = distinct([str(p.get("name")) for p in parameters])
    resolved = [_sent_as_text(p) for p in parameters]
    if changed or resolved != parameters:
        for index, parameter in enumerate(resolved):
            name = str(parameter.get("name"))
            if name in changed:
                resolved[index] = {**parameter, "name": mark(name, changed[name])}
        operation["parameters"] = resolved
    body = _resolved(document, operation.get("requestBody"))
    content = body.get("content") if isinstance(body, dict) else None
    if isinstance(content, dict) and len(content) > 1:
        # JSON where it is offered (several media of one model could not be told apart
        # by the body's type), else every media but XML.
        kept = {m: v for m, v in content.items() if m == "application/json"}
        kept = kept or {m: v for m, v in content.items() if "xml" not in m}
        if kept and len(kept) < len(content):
            operation["requestBody"] = {**body, "content": kept}


def _sent_as_text(parameter: dict[str, Any]) -> dict[str, Any]:
    """Rule 6: a header or cookie parameter whose schema is an array or an object is
    given as the text its style sends (``1,2,3``): the generator types those as
    strings only; one described by ``content`` as that media type's text (the
    generator skips a parameter of no schema, and nothing says so)."""
    schema = parameter.get("schema")
    content = parameter.get("content")
    if schema is None and isinstance(content, dict) and content:
        said = f"As sent: {next(iter(content))} text"
        kept = {k: v for k, v in parameter.items() if k != "content"}
        return {**kept, "schema": {"type": "string", "description": said}}
    if parameter.get("in") not in ("header", "cookie") or not isinstance(schema, dict):
        return parameter
    kinds = schema.get("type")
    kinds = kinds if isinstance(kinds, list) else [kinds]
    if not {"array", "object"} & set(kinds):
        return parameter
    text = {"type": "string", "description": f"As sent: {schema.get('type')} as text"}
    return {**parameter, "schema": text}


def _raw(name: Any) -> str:
    return str(
        name.get_untrusted_value() if hasattr(name, "get_untrusted_value") else name
    )


def _rename_schemas(document: dict[str, Any]) -> dict[str, str]:
    """Rule 2: keys of component schemas that give one class name made distinct."""
    schemas = document.get("components", {}).get("schemas", {})
    if not isinstance(schemas, dict):
        return {}
    seen: dict[str, int] = {}
    renamed: dict[str, str] = {}
    taken = {str(ClassName(key, PREFIX)) for key in schemas}
    for key in list(schemas):
        name = str(ClassName(key, PREFIX))
        seen[name] = seen.get(name, 0) + 1
        if seen[name] == 1:
            continue
        number = seen[name]
        while str(ClassName(f"{key}_{number}", PREFIX)) in taken:
            number += 1
        renamed[key] = f"{key}_{number}"
        taken.add(str(ClassName(renamed[key], PREFIX)))
    if renamed:
        document["components"]["schemas"] = {
            renamed.get(k, k): v for k, v in schemas.items()
        }
        refs = {
            f"{SCHEMAS}{_escape(k)}": f"{SCHEMAS}{_escape(v)}"
            for k, v in renamed.items()
        }
        _replace_strings(document, lambda text: refs.get(text, text))
    return renamed


def _escape(key: str) -> str:
    return key.replace("~", "~0").replace("/", "~1")


def _replace_strings(node: Any, change: Callable[[str], str]) -> None:
    """Every ``$ref`` and discriminator mapping value in ``node`` passed through
    ``change``."""
    if isinstance(node, dict):
        for key, value in node.items():
            if isinstance(value, str) and key == "$ref":
                node[key] = change(value)
            elif key == "mapping" and isinstance(value, dict):
                node[key] = {
                    k: change(v) if isinstance(v, str) else v for k, v in value.items()
                }
            else:
                _replace_strings(value, change)
    elif isinstance(node, list):
        for item in node:
            _replace_strings(item, change)


def _schemas(document: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """Every schema object of the document, each once: the components' and every
    ``schema`` of a parameter, media type or header, and every schema inside them."""
    roots: list[Any] = list(document.get("components", {}).get("schemas", {}).values())
    stack: list[Any] = [v for k, v in document.items() if k != "components"]
    stack += [v for k, v in document.get("components", {}).items() if k != "schemas"]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            roots += [node["schema"]] if isinstance(node.get("schema"), dict) else []
            stack += [v for k, v in node.items() if k not in _NOT_SPEC]
        elif isinstance(node, list):
            stack += node
    seen: set[int] = set()
    todo = [r for r in roots if isinstance(r, dict)]
    while todo:
        schema = todo.pop()
        if id(schema) in seen:
            continue
        seen.add(id(schema))
        yield schema
        todo += _inner_schemas(schema)


def _inner_schemas(schema: dict[str, Any]) -> list[dict[str, Any]]:
    found: list[Any] = []
    for key in _SCHEMA_MAPS:
        value = schema.get(key)
        found += list(value.values()) if isinstance(value, dict) else []
    for key in _SCHEMA_LISTS:
        value = schema.get(key)
        found += value if isinstance(value, list) else []
    found += [schema.get(key) for key in _SCHEMA_ONES]
    return [f for f in found if isinstance(f, dict)]


def _operations(document: dict[str, Any]) -> Iterator[dict[str, Any]]:
    for item in (document.get("paths") or {}).values():
        if not isinstance(item, dict):
            continue
        for method in (
            "get",
            "put",
            "post",
            "delete",
            "options",
            "head",
            "patch",
            "trace",
        ):
            operation = item.get(method)
            if isinstance(operation, dict):
                operation.setdefault("x-path-parameters", item.get("parameters", []))
                yield operation
                operation.pop("x-path-parameters")


def _parameters(document: dict[str, Any], operation: dict[str, Any]) -> list[Any]:
    """The operation's parameters and its path item's, ``$ref`` s resolved (the
    operation's win, by name and place)."""
    found: dict[tuple[str, str], Any] = {}
    for parameter in [
        *operation.get("x-path-parameters", []),
        *operation.get("parameters", []),
    ]:
        parameter = _resolved(document, parameter)
        if isinstance(parameter, dict):
            found[(str(parameter.get("name")), str(parameter.get("in")))] = parameter
    return list(found.values())


def _resolved(document: dict[str, Any], node: Any) -> Any:
    while isinstance(node, dict) and isinstance(node.get("$ref"), str):
        target: Any = document
        for part in node["$ref"].lstrip("#/").split("/"):
            part = part.replace("~1", "/").replace("~0", "~")
            target = target.get(part) if isinstance(target, dict) else None
        node = target
    return node
