"""Call the door of each operation named, against the service of ``SERVICE_API_*``, with
the client generated from the spec given, and check what each door returns.

Run in a child process whose path puts the generated copy first (``SpecCopy.env``)::

    python tests/spec/growth_calls.py COPY/openapi.yaml createParcel listParcels ...

Arguments come from the spec model: path parameters are ids of records that exist (a
create's answer, else the first record of the resource's list, its parents found the same
way), other required parameters a value of their kind, bodies the record model built from
``{}`` (every field of a drawn record is optional). Creates go first, deletes last. A
door's result must be what its annotation says: a pager of its item model, a list of its
model, its model, or None. One JSON line per operation on standard output; exit 1 when
any failed.
"""

from __future__ import annotations

import datetime
import json
import sys
import typing
import uuid
from collections.abc import Callable
from typing import Any

import service_api
from service_api_client.api import TAG_ATTRIBUTES  # the copy's: first on the path
from service_api_spec import (
    Operation,
    Parameter,
    Resource,
    Spec,
    load_spec,
    python_identifier,
)

UNKNOWN = "no-such-record"
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


class Caller:
    """Calls doors with arguments of records that exist, remembering the ids it meets."""

    def __init__(self, model: Spec, client: service_api.Client) -> None:
        self.model = model
        self.client = client
        self.ids: dict[str, Any] = {}  # path parameter name -> an id of a record

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

    def arguments(self, op: Operation) -> dict[str, Any]:
        found: dict[str, Any] = {}
        for parameter in op.parameters:
            if parameter.name in ("pageNumber", "pageSize"):
                continue
            if parameter.location == "path":
                value = self.id_of(parameter.name)
            elif parameter.required:
                value = sample(parameter)
            else:
                continue
            found[python_identifier(parameter.name)] = value
        if op.body is not None:
            hints = typing.get_type_hints(self.door(op))
            body = [
                a for a in typing.get_args(hints["body"]) if hasattr(a, "from_dict")
            ]
            model = body[0] if body else hints["body"]
            found["body"] = model.from_dict({})
        return found

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
            unknown = UNKNOWN in arguments.values() and "404" in op.answers
            return {
                "operation": op.operation_id,
                "status": exc.status_code,
                "arguments": repr(arguments),
                "ok": unknown and exc.status_code == 404,
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
        ):
            self.ids[resource.item_parameter] = result[resource.id_field]


def _fits(result: Any, annotation: Any) -> bool:
    if annotation is None or annotation is type(None):
        return result is None
    if typing.get_origin(annotation) is list:
        (item,) = typing.get_args(annotation)
        return isinstance(result, list) and all(isinstance(r, item) for r in result)
    return isinstance(result, annotation)


def main(spec: str, operation_ids: list[str]) -> int:
    model = load_spec(spec)
    named = [model.operation(name) for name in operation_ids]
    ordered = sorted(
        named, key=lambda op: ORDER.index(op.kind) if op.kind in ORDER else 0
    )
    failed = 0
    with service_api.Client() as client:
        caller = Caller(model, client)
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
