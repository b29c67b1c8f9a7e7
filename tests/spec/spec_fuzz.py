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
from urllib.parse import parse_qsl

import attrs
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator  # type: ignore[import-untyped]  # no stubs kept
from schemathesis import GenerationMode
from schemathesis.core.parameters import ParameterLocation
from schemathesis.core.result import Err
from schemathesis.core.transport import Response
from schemathesis.specs.openapi.checks import (
    negative_data_rejection,
    positive_data_acceptance,
    status_code_conformance,
)

from service_api_mock import DEMO_CLIENT_ID, DEMO_CLIENT_SECRET
from service_api_mock._forms import nested, typed
from service_api_mock._spec import success_of
from service_api_spec import Operation, Resource, Spec, escape, is_json, unescape

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


FORM = "application/x-www-form-urlencoded"
# The bodies the mock reads and checks, besides JSON (binary ones are any bytes).
READ = (FORM, "multipart/form-data", "application/octet-stream")


def checked(model: Spec, case: Any) -> Response:
    """``case`` sent and checked by :func:`validate`; the answer."""
    response: Response = case.call()
    validate(model, case, response)
    return response


def validate(model: Spec, case: Any, response: Response, **options: Any) -> None:
    """``response`` to ``case`` checked by every check of schemathesis that can hold
    for its operation (see :func:`exempt`); ``options`` go to ``validate_response``."""
    op = operation(model, case)
    excluded = exempt(model, op, case, response)
    case.validate_response(response, excluded_checks=excluded, **options)
    if success_of(op) is None:
        # In place of the status check it cannot pass: what the mock says it answers.
        declared = {int(k) for k in op.answers if k.isdigit()}
        assert response.status_code in {200, 429, 503, *declared}, response.status_code


def operation(model: Spec, case: Any) -> Operation:
    """The model's operation of a schemathesis ``case``."""
    label = case.operation.label
    return next(op for op in model.operations if f"{op.method} {op.path}" == label)


def exempt(model: Spec, op: Operation, case: Any, response: Response) -> list[Any]:
    """The checks of schemathesis that cannot hold for ``case`` of ``op``, and why:

    - an operation that declares no success (the Swagger Petstore's DELETE answering
      a lone 400, its POST a lone 405) has no answer a valid request could be taken
      for: the mock answers what it declares (its 405), else 200, which no declared
      status describes (``make`` and ``--check-spec`` say so);
    - a form-urlencoded body is text: ``tags=a`` is a one-item array where the schema
      says ``tags`` is an array, so a case schemathesis draws as invalid (a string for
      an array) may be valid on the wire, and one drawn as valid (an array of objects,
      which a form cannot carry) may not be. The bytes sent are read as the mock reads
      a form, and judged by the body's JSON Schema: the request is what they say;
    - a body of a media type the mock does not read (XML) is taken unchecked, so an
      invalid one is not refused.
    """
    found: list[Any] = []
    success = success_of(op)
    if success is None or not 200 <= success.code < 400:
        found.append(positive_data_acceptance)
        if success is None:
            found.append(status_code_conformance)
    negative = {
        location
        for location in ParameterLocation
        if case.meta is not None and case.meta.is_negative_at(location)
    }
    media = str(case.media_type or "")
    if op.body is not None and media and not (is_json(media) or media in READ):
        # XML, say: the mock takes it unread, as it says (docs/extras/mock.md).
        if negative == {ParameterLocation.BODY}:
            found.append(negative_data_rejection)
        return found
    raw = response.request.body or b""
    text = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else str(raw)
    if op.body is None or media != FORM or not text:
        return found
    node, where = model.document.at(f"{op.pointer}/requestBody")
    if "schema" not in node.get("content", {}).get(FORM, {}):
        return found
    pointer = f"{where}/content/{escape(FORM)}/schema"
    schema = model.schemas.json_schema(pointer, "writing")
    sent = typed(nested(parse_qsl(text, keep_blank_values=True)), schema)
    fits = Draft202012Validator(schema).is_valid(sent)
    if fits and negative == {ParameterLocation.BODY}:
        found.append(negative_data_rejection)
    if not fits:
        found.append(positive_data_acceptance)
    return found


def needs_record(model: Spec, op: Operation) -> bool:
    """Whether ``op`` works on a record that exists (its item or a parent's)."""
    resource = model.resources.get(str(op.resource))
    if resource is None:
        return False
    return op.kind in ITEM_KINDS or bool(resource.parent_parameters)


def findable(model: Spec, resource: Resource) -> bool:
    """Whether a record of ``resource`` can be found over the API: a create makes one
    and answers it (an empty 201 does not tell its id), or a list shows them (and its
    parent, if any, is findable too)."""
    kinds = {
        op.kind
        for op in model.operations
        if op.resource == resource.name
        and (op.kind == "list" or (op.kind == "create" and says_record(op)))
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
        if not any(succeeds(op, status) for status in answered):
            missing.append(f"{op.operation_id}: no success among {dict(answered)}")
    return missing


def says_record(op: Operation) -> bool:
    """Whether the success of ``op`` has a body with a schema (a record, a page)."""
    return op.success is not None and op.success.pointer is not None


def succeeds(op: Operation, status: int) -> bool:
    """Whether ``status`` is a success of ``op``: a 2xx, else what it declares in place
    of one (the Swagger Petstore's lone 405; see ``success_of``)."""
    success = success_of(op)
    return 200 <= status < 300 or (success is not None and status == success.code)


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
                if op.kind == kind and op.resource is not None and says_record(op):
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
                case = self.case(data, op, self.path(data, op))
                response = checked(self.model, case)
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
            response = checked(self.model, source)
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
            answered[checked(self.model, target).status_code] += 1

        self.run(examples, step)
        return answered


def every_case(schema: Any, model: Spec, examples: int) -> collections.Counter[str]:
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
            checked(model, case)

        conforms()
    return sent
