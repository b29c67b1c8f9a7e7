"""Call the door of each operation named, against the service of ``SERVICE_API_*``, with
the client generated from the spec given, and check what each door returns.

Run in a child process whose path puts the generated copy first (``SpecCopy.env``)::

    python tests/spec/growth_calls.py COPY/openapi.yaml createParcel listParcels ...

Arguments come from the spec model: path parameters are ids of records that exist (a
create's answer, else the first record of the resource's list, its parents found the same
way), other required parameters a value of their kind, bodies the body's model built from
a JSON value of its schema with every required field (a file's bytes for a binary body).
Creates go first, deletes last. A door's result must be what its annotation says: a
pager of its item model, a list of its model, its model, or None. One JSON line per
operation on standard output; exit 1 when any failed.
"""

from __future__ import annotations

import datetime
import io
import json
import sys
import types
import typing
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml
from hypothesis import find
from hypothesis.strategies import from_regex

import service_api
from service_api_client.api import TAG_ATTRIBUTES  # the copy's: first on the path
from service_api_spec import (
    Operation,
    Parameter,
    Resource,
    Spec,
    SpecDocument,
    escape,
    load_spec,
    python_identifier,
)

UNKNOWN = "no-such-record"
UNKNOWN_NUMBER = 987654321  # an integer path parameter's id no record has
ORDER = ("create", "list", "get", "other", "replace", "update", "delete")
SAMPLES: dict[str, Any] = {
    "string": "sample",
    "integer": 1,
    "number": 1.5,
    "boolean": True,
    "date-time": datetime.datetime(2026, 1, 5, 8, 0, tzinfo=datetime.UTC),
    "date": datetime.date(2026, 1, 5),
    "uuid": uuid.UUID(int=1),
    "array": [],
    "object": {},
}


def sample(parameter: Parameter) -> Any:
    """A value of ``parameter``'s kind (its first choice for an enum)."""
    if parameter.choices:
        return parameter.choices[0]
    return SAMPLES.get(parameter.kind, "sample")


def example(document: SpecDocument, schema: Any, depth: int = 0) -> Any:
    """A JSON value of ``schema`` with every required field: the first choice of an
    enum, the first branch of a oneOf/anyOf that is not null, every part of an allOf,
    bounds and lengths met."""
    schema, _ = document.resolve(schema)
    if not isinstance(schema, dict) or depth > 12:
        return None
    if "const" in schema:
        return schema["const"]
    if schema.get("enum"):
        return next((v for v in schema["enum"] if v is not None), schema["enum"][0])
    if "allOf" in schema:
        merged: dict[str, Any] = {}
        for part in schema["allOf"]:
            value = example(document, part, depth + 1)
            if isinstance(value, dict):
                merged.update(value)
        own = {k: v for k, v in schema.items() if k != "allOf"}
        value = example(document, own, depth + 1) if "properties" in own else {}
        return {**merged, **(value or {})}
    for key in ("oneOf", "anyOf"):
        if key in schema:
            branches = [
                b for b in schema[key] if document.resolve(b)[0] != {"type": "null"}
            ]
            return example(document, (branches or schema[key])[0], depth + 1)
    kinds = schema.get("type", "object" if "properties" in schema else "string")
    kind = (
        next((k for k in kinds if k != "null"), "null")
        if isinstance(kinds, list)
        else kinds
    )
    if kind == "object":
        properties = schema.get("properties", {})
        return {
            name: example(document, properties.get(name, {}), depth + 1)
            for name in schema.get("required", [])
        }
    if kind == "array":
        item = example(document, schema.get("items", {}), depth + 1)
        return [item] * int(schema.get("minItems", 0))
    if kind in ("integer", "number"):
        low = schema.get("minimum", 1)
        return int(low) if kind == "integer" else float(low)
    if kind == "boolean":
        return True
    if kind == "null":
        return None
    if schema.get("format") == "binary":
        return b"corpus"
    if isinstance(schema.get("pattern"), str):
        return find(from_regex(schema["pattern"], fullmatch=True), lambda _: True)
    text = {"date-time": "2026-01-05T08:00:00Z", "date": "2026-01-05"}.get(
        str(schema.get("format")), "sample"
    )
    if schema.get("format") == "uuid":
        text = str(uuid.UUID(int=1))
    return text.ljust(int(schema.get("minLength", 0)), "x")


class Caller:
    """Calls doors with arguments of records that exist, remembering the ids it meets."""

    def __init__(
        self, model: Spec, client: service_api.Client, document: SpecDocument
    ) -> None:
        self.model = model
        self.client = client
        self.document = document
        self.ids: dict[str, Any] = {}  # path parameter name -> an id of a record
        self.guessed = False  # the last call's arguments name a record made up

    def door(self, op: Operation) -> Callable[..., Any]:
        attribute = TAG_ATTRIBUTES[op.tag]
        return typing.cast(
            Callable[..., Any],
            getattr(getattr(self.client, attribute), str(op.door)),
        )

    def owner(self, name: str) -> Resource | None:
        """The resource whose records a path parameter called ``name`` names."""
        for resource in self.model.resources.values():
            if name in (resource.item_parameter, resource.id_field):
                return resource
        return None

    def id_of(self, name: str) -> Any:
        """An id for the path parameter ``name``: remembered, else the first record of
        its resource's list; ``UNKNOWN`` when there is no way to find one."""
        if name not in self.ids:
            resource = self.owner(name)
            listing = next(
                (
                    op
                    for op in self.model.lists
                    if resource and op.resource == resource.name
                ),
                None,
            )
            if resource is None or listing is None or resource.id_field is None:
                return UNKNOWN
            items = list(self.door(listing)(max_items=1, **self.arguments(listing)))
            if not items:
                return UNKNOWN
            self.ids[name] = items[0][resource.id_field]
        return self.ids[name]

    def made_up(self, op: Operation, parameter: Parameter) -> Any:
        """A value of the path parameter's schema (its pattern met) for an id that no
        list or create of the spec gives."""
        item = self.document.get(f"#/paths/{escape(op.path)}")
        declared = [
            *item.get("parameters", []),
            *item[op.method.lower()].get("parameters", []),
        ]
        for node in declared:
            node, _ = self.document.resolve(node)
            if node.get("name") == parameter.name and node.get("in") == "path":
                value = example(self.document, node.get("schema", {}))
                if value not in (None, "sample", 1):
                    return value
        return UNKNOWN_NUMBER if parameter.kind in ("integer", "number") else UNKNOWN

    def arguments(self, op: Operation) -> dict[str, Any]:
        self.guessed = False
        hints = typing.get_type_hints(self.door(op))
        found: dict[str, Any] = {}
        for parameter in op.parameters:
            if parameter.name in ("pageNumber", "pageSize"):
                continue
            if parameter.location == "path":
                value = self.id_of(parameter.name)
                if value == UNKNOWN:
                    # No record to name: a value its schema allows, that names none.
                    value = self.made_up(op, parameter)
                    self.guessed = True
            elif parameter.required:
                value = sample(parameter)
            else:
                continue
            name = python_identifier(parameter.name)
            if hints.get(name) is str and not isinstance(value, str):
                # An array or object sent as text (a header's): its style's text.
                text = ",".join(map(str, value)) if isinstance(value, list) else ""
                value = text or "1"
            found[name] = value
        if op.body is not None:
            found["body"] = self.body(op)
        return found

    def body(self, op: Operation) -> Any:
        """The door's body: its model from a JSON example of the body's schema, or a
        file for a binary body."""
        assert op.body is not None
        hints = typing.get_type_hints(self.door(op))
        choices = typing.get_args(hints["body"]) or (hints["body"],)
        schema = self.document.get(op.body.pointer) if op.body.pointer else {}
        value = example(self.document, schema)
        for choice in choices:
            if getattr(choice, "__name__", "") == "File":
                return choice(payload=io.BytesIO(b"corpus"), file_name="corpus.bin")
            if hasattr(choice, "from_dict") and isinstance(value, dict):
                return _with_files(choice.from_dict(value), choice)
        return value

    def call(self, op: Operation) -> dict[str, Any]:
        door = self.door(op)
        returns = typing.get_type_hints(door)["return"]
        arguments = self.arguments(op)
        try:
            if op.kind == "list":
                result: Any = list(door(max_items=3, **arguments))
                expected = typing.get_args(returns)[1]
                good = all(isinstance(item, expected) for item in result)
            else:
                result = door(**arguments)
                good = _fits(result, returns)
        except service_api.ApiStatusError as exc:
            # Where no record of its resource can be found (no list, no create), the
            # declared 404 is the right answer.
            # A made-up id's 404, where the operation declares it (or any status); an
            # operation that declares no success answers one of the statuses it has.
            unknown = self.guessed and bool({"404", "4XX", "default"} & set(op.answers))
            declared = op.success is None and str(exc.status_code) in op.answers
            return {
                "operation": op.operation_id,
                "status": exc.status_code,
                "arguments": repr(arguments),
                "ok": (unknown and exc.status_code == 404) or declared,
            }
        self.remember(op, result)
        return {"operation": op.operation_id, "type": type(result).__name__, "ok": good}

    def remember(self, op: Operation, result: Any) -> None:
        resource = self.model.resources.get(str(op.resource))
        if (
            op.kind == "create"
            and resource
            and resource.id_field
            and resource.item_parameter
            and hasattr(result, "__getitem__")
        ):
            self.ids[resource.item_parameter] = result[resource.id_field]


def _with_files(model: Any, kind: Any) -> Any:
    """``model`` with each field its class types as a file (a binary part of a
    multipart body) holding a File: a model may keep the bytes it was given as they
    are."""
    hints = typing.get_type_hints(kind)
    for name, hint in hints.items():
        value = getattr(model, name, None)
        if isinstance(value, bytes) and "File" in str(hint):
            file = next(h for h in _flat(hint) if getattr(h, "__name__", "") == "File")
            setattr(
                model, name, file(payload=io.BytesIO(value), file_name="corpus.bin")
            )
    return model


def _flat(hint: Any) -> list[Any]:
    return [hint, *(a for arg in typing.get_args(hint) for a in _flat(arg))]


def _fits(result: Any, annotation: Any) -> bool:
    if annotation is None or annotation is type(None):
        return result is None
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, types.UnionType):
        # A door of several 2xx answers returns the union of their models.
        return any(_fits(result, choice) for choice in typing.get_args(annotation))
    if origin is list:
        (item,) = typing.get_args(annotation)
        return isinstance(result, list) and all(_fits(r, item) for r in result)
    if origin is not None:
        return isinstance(result, origin)
    return isinstance(result, annotation)


def main(spec: str, operation_ids: list[str]) -> int:
    model = load_spec(spec)
    named = [model.operation(name) for name in operation_ids]
    ordered = sorted(
        named, key=lambda op: ORDER.index(op.kind) if op.kind in ORDER else 0
    )
    failed = 0
    with service_api.Client() as client:
        document = SpecDocument(yaml.safe_load(Path(spec).read_text("utf-8")))
        caller = Caller(model, client, document)
        for op in ordered:
            if op.door is None:
                continue
            line = caller.call(op)
            if not line["ok"]:
                failed += 1
            print(json.dumps(line), flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2:]))
