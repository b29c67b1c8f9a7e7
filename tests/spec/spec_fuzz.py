"""Schemathesis driven to a success of each operation and each link of a spec, by
construction rather than by luck.

An operation on a record is given a record that exists: one its resource's create has
just made, else one its list shows (and a sub-resource's parent the same way). A link is
followed with the values its source answered. Each case is checked by schemathesis with
every check on. What a run must reach is read from the spec model
(:mod:`service_api_spec`): a success of every operation whose records can be found over
the API, and of the target of every link. So the assertions hold however the spec grows.

Example::

    driver = Driver(schema, load_spec(path))  # schema: schemathesis, auth set, base URL
    reached = driver.operations(examples=5)
    assert missing_successes(driver.model, reached) == []
"""

from __future__ import annotations

import collections
import re
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import attrs
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from schemathesis import GenerationMode
from schemathesis.core.result import Err
from schemathesis.core.transport import Response

from service_api_mock import DEMO_CLIENT_ID, DEMO_CLIENT_SECRET
from service_api_spec import Operation, Resource, Spec, unescape

ITEM_KINDS = ("get", "replace", "update", "delete")
TOKEN_FORM = {
    "client_id": DEMO_CLIENT_ID,
    "client_secret": DEMO_CLIENT_SECRET,
    "grant_type": "client_credentials",
}
PATH_PARAMETER = re.compile(r"\{([^{}/]+)\}")

Counts = dict[str, collections.Counter[int]]


def fuzz_settings(examples: int) -> settings:
    """Hypothesis settings of a reproducible run of ``examples`` examples."""
    return settings(
        max_examples=examples,
        deadline=None,
        database=None,
        derandomize=True,
        suppress_health_check=list(HealthCheck),
    )


@attrs.frozen
class Link:
    """A link of the spec: from a status of ``source`` to ``target``, with the values of
    the target's parameters as runtime expressions (``$response.body#/routeId``)."""

    source: Operation
    status: str
    name: str
    target: Operation
    parameters: Mapping[str, Any]

    @property
    def label(self) -> str:
        return f"{self.source.operation_id} {self.status} -> {self.target.operation_id}"


def links(model: Spec) -> Iterator[Link]:
    """Every link of the spec's answers whose target is one of its operations."""
    for source in model.operations:
        for status in source.answers:
            pointer = f"{source.pointer}/responses/{status}"  # a status has no / or ~
            answer = model.document.get(pointer) or {}
            for name, link in (answer.get("links") or {}).items():
                link = model.document.resolve(link)[0]
                target = next(
                    (
                        op
                        for op in model.operations
                        if op.operation_id == link.get("operationId")
                        or op.pointer == link.get("operationRef")
                    ),
                    None,
                )
                if target is not None:
                    parameters = link.get("parameters") or {}
                    yield Link(source, status, name, target, parameters)


def evaluate(expression: Any, case: Any, response: Response) -> Any:
    """The value of a link's runtime expression for the request ``case`` and its
    ``response``; a constant as it is."""
    if not isinstance(expression, str) or not expression.startswith("$"):
        return expression
    if expression.startswith("$response.body#"):
        value: Any = response.json()
        for step in expression.partition("#")[2].split("/")[1:]:
            key = unescape(step)
            value = value[int(key)] if isinstance(value, list) else value[key]
        return value
    if expression.startswith("$response.header."):
        return response.headers[expression.rpartition(".")[2].lower()][0]
    sources = {
        "$request.path.": case.path_parameters,
        "$request.query.": case.query,
        "$request.header.": case.headers,
    }
    for prefix, values in sources.items():
        if expression.startswith(prefix):
            return values[expression.removeprefix(prefix)]
    raise AssertionError(f"a runtime expression the tests do not read: {expression}")


def needs_record(model: Spec, op: Operation) -> bool:
    """Whether ``op`` works on a record that exists (its item or a parent's)."""
    resource = model.resources.get(str(op.resource))
    if resource is None:
        return False
    return op.kind in ITEM_KINDS or bool(resource.parent_parameters)


def findable(model: Spec, resource: Resource) -> bool:
    """Whether a record of ``resource`` can be found over the API: a create makes one,
    or a list shows them (and its parent, if any, is findable too)."""
    kinds = {
        op.kind
        for op in model.operations
        if op.resource == resource.name and op.kind in ("create", "list")
    }
    parent = model.resources.get(str(resource.parent))
    if parent is not None and parent.id_field is not None:
        return bool(kinds) and findable(model, parent)
    return bool(kinds)


def missing_successes(model: Spec, reached: Counts) -> list[str]:
    """The operations that should have answered a success and did not: every one but
    those on records that no operation of the spec can find."""
    missing = []
    for op in model.operations:
        answered = reached.get(op.operation_id, collections.Counter())
        resource = model.resources.get(str(op.resource))
        if resource is not None and not findable(model, resource):
            continue
        if not any(200 <= status < 300 for status in answered):
            missing.append(f"{op.operation_id}: no success among {dict(answered)}")
    return missing


class Driver:
    """Draws and sends the cases of ``schema`` (schemathesis, with its auth and target
    set), each on records that exist, and counts the answers by operation."""

    def __init__(self, schema: Any, model: Spec) -> None:
        self.schema = schema
        self.model = model
        self.makers: dict[str, Operation] = {}
        # A create wins: it makes a record of its own; but only one whose answer says
        # the record (an empty 201 does not tell its id).
        for kind in ("list", "create"):
            for op in model.operations:
                answers = op.success is not None and op.success.pointer is not None
                if op.kind == kind and op.resource is not None and answers:
                    self.makers[op.resource] = op

    def case(
        self,
        data: st.DataObject,
        op: Operation,
        path: dict[str, Any] | None = None,
        **fixed: Any,
    ) -> Any:
        """A positive case of ``op`` with the path parameters ``path`` (the others
        drawn); the token's with the demo credentials."""
        operation = self.schema.find_operation_by_id(op.operation_id)
        if op.kind == "token":
            fixed.update(
                body=TOKEN_FORM, media_type=str(op.body.media if op.body else "")
            )
        strategy = operation.as_strategy(path_parameters=path or None, **fixed)
        return data.draw(strategy, label=op.operation_id)

    def existing(self, data: st.DataObject, resource: Resource) -> dict[str, Any]:
        """The path parameters of a record of ``resource`` that exists: its parents' ids
        and, under its item parameter (or its id field), its own."""
        path = self.parents(data, resource)
        maker = self.makers.get(resource.name)
        if maker is None or resource.id_field is None:
            return path
        case = self.case(data, maker, path)
        if maker.kind == "list":
            required = {p.name for p in maker.parameters if p.required}
            case.query = {k: v for k, v in (case.query or {}).items() if k in required}
        response = case.call()
        assert 200 <= response.status_code < 300, (maker.operation_id, response.text)
        found = response.json()
        record = found["data"][0] if maker.kind == "list" else found
        name = resource.item_parameter or resource.id_field
        return {**path, name: record[resource.id_field]}

    def parents(self, data: st.DataObject, resource: Resource) -> dict[str, Any]:
        parent = self.model.resources.get(str(resource.parent))
        if parent is None or parent.id_field is None:
            return {}
        found = self.existing(data, parent)
        own = found.pop(parent.item_parameter or parent.id_field, None)
        return {**found, resource.parent_parameters[-1]: own}

    def path(self, data: st.DataObject, op: Operation) -> dict[str, Any]:
        """Path parameters of records that exist, as far as ``op`` needs them."""
        resource = self.model.resources.get(str(op.resource))
        if resource is None:
            return {}
        if op.kind not in ITEM_KINDS:
            return self.parents(data, resource)
        found = self.existing(data, resource)
        # The record under the item parameter of this operation's own path.
        names = PATH_PARAMETER.findall(op.path)
        if names and resource.item_parameter in found:
            found[names[-1]] = found.pop(str(resource.item_parameter))
        return found

    def run(self, examples: int, step: Callable[[st.DataObject], None]) -> None:
        @given(data=st.data())
        @fuzz_settings(examples)
        def drawn(data: st.DataObject) -> None:
            step(data)

        drawn()

    def operations(self, examples: int) -> Counts:
        """Each operation, ``examples`` times, on records that exist; the answers."""
        reached: Counts = collections.defaultdict(collections.Counter)
        for op in self.model.operations:

            def step(data: st.DataObject, op: Operation = op) -> None:
                response = self.case(data, op, self.path(data, op)).call_and_validate()
                reached[op.operation_id][response.status_code] += 1

            self.run(examples, step)
        return reached

    def follow(self, link: Link, examples: int) -> collections.Counter[int]:
        """``link`` followed ``examples`` times: its source sent, and its target with the
        values the source answered; the target's answers (0: the source answered
        another status than the link's)."""
        answered: collections.Counter[int] = collections.Counter()

        def step(data: st.DataObject) -> None:
            source = self.case(data, link.source, self.path(data, link.source))
            response = source.call_and_validate()
            if not re.fullmatch(
                link.status.replace("X", "."), str(response.status_code)
            ):
                answered[0] += 1
                return
            where = {p.name: p.location for p in link.target.parameters}
            fixed: dict[str, dict[str, Any]] = {}
            for name, expression in link.parameters.items():
                location, _, bare = name.rpartition(".")
                location = location or where.get(bare, "query")
                value = evaluate(expression, source, response)
                fixed.setdefault(location, {})[bare] = value
            target = self.case(
                data,
                link.target,
                fixed.get("path"),
                query=fixed.get("query"),
                headers=fixed.get("header"),
            )
            answered[target.call_and_validate().status_code] += 1

        self.run(examples, step)
        return answered


def every_case(schema: Any, examples: int) -> collections.Counter[str]:
    """Positive and negative cases of every operation of ``schema``, ``examples`` of
    each, every check on; the cases sent by operation label. For a schema that cannot be
    collected as a test module (a spec made in a test)."""
    sent: collections.Counter[str] = collections.Counter()
    for result in schema.get_all_operations():
        if isinstance(result, Err):
            raise result.err()  # an operation schemathesis cannot read is a failure
        operation = result.ok()
        modes = [GenerationMode.POSITIVE, GenerationMode.NEGATIVE]
        strategy = st.one_of(*(operation.as_strategy(mode) for mode in modes))

        @given(case=strategy)
        @fuzz_settings(examples)
        def conforms(case: Any) -> None:
            sent[case.operation.label] += 1
            case.call_and_validate()

        conforms()
    return sent
