"""What the mock serves: the spec model of :mod:`service_api_spec`, and what the mock
adds to it as it starts.

The model says what each operation is (token, list, get, create, replace, update, delete
or other) and which resource it works on; here the mock finds the route of each request
and checks, once, what it will do that the spec does not say. A spec the model reads is
always served; what the mock cannot serve as declared is a warning, printed by
``--check-spec`` and logged at start-up:

- a status the mock must send that the operation does not declare (401 for a missing or
  expired token, 400 and 403 for the account header, 400 for bad input, 404 for an
  unknown id, 429 and 503 for the quota and the faults): sent anyway, as problem+json;
- a query parameter of a list tied to no field (``Operation.unapplied``): not applied;
- a resource without an identifier field: its get, replace, update and delete answer
  data built from their schemas.

An answer it cannot build to fit its schema (a schema no value fits, a page envelope
with required fields of its own...) is a *problem*, naming the operation:
``--check-spec`` fails for it, and the mock, started anyway, logs it as an error. Only a
file the model cannot read (not YAML, not OpenAPI, a ``$ref`` that points nowhere) is a
:class:`SpecError`.
"""

from __future__ import annotations

import functools
import random
from collections.abc import Mapping
from http import HTTPStatus
from pathlib import Path
from typing import Any

import attrs

import service_api_spec
from service_api_spec import (
    Answer,
    Kind,
    Operation,
    Parameter,
    Resource,
    Route,
    Spec,
    SpecError,
    is_json,
    packaged_spec,
)

from ._data import REALISTIC, build_records
from ._schemas import Schemas

__all__ = [
    "DEFAULT_SPEC",
    "ONE_RECORD_KINDS",
    "MockSpec",
    "Route",
    "SpecError",
    "answer_of",
    "fitted",
    "input_status",
    "load_spec",
    "problem_body",
    "success_of",
]

# A wheel carries a copy of the spec inside the package; a checkout has the project's own.
DEFAULT_SPEC = packaged_spec()
ONE_RECORD_KINDS: frozenset[Kind] = frozenset(("get", "replace", "update", "delete"))
"""The kinds of operation that act on one record, named by its id in the path: an
unknown id is their 404."""
# The page envelope's fields the mock writes itself.
_ENVELOPE = ("totalRecords", "pageNumber", "pageSize", "data", "next", "previous")
TOKEN_SAMPLE = {"access_token": "sample", "token_type": "Bearer", "expires_in": "3600"}
OAUTH_SAMPLE = {"error": "invalid_request", "error_description": "sample"}


def problem_body(status: int, detail: str) -> dict[str, Any]:
    """The RFC 9457 problem details ASP.NET Core answers 400, 403 and 404 with.

    Example::

        problem_body(404, "No shipment has this identifier.")  # title "Not Found"
    """
    kind = f"https://tools.ietf.org/html/rfc9110#section-15.5.{status - 399}"
    return {
        "type": kind,
        "title": HTTPStatus(status).phrase,
        "status": status,
        "detail": detail,
    }


def answer_of(op: Operation, status: int) -> Answer | None:
    """The answer ``op`` declares for ``status``: its own, its range's (``4XX``), or the
    default; None if it declares none of them.

    Example::

        answer_of(spec.model.operation("listShipments"), 503).status  # "5XX"
    """
    return op.answer(status)


# The statuses the mock sends of its own accord (refusals, quota, faults): never taken
# for an operation's success.
_REFUSALS = ("400", "401", "403", "404", "422", "429")


def success_of(op: Operation) -> Answer | None:
    """The answer ``op`` succeeds with: its first 2xx; else the first other status it
    declares that is no refusal of the mock's (a 3xx, a 410, the Swagger Petstore's
    lone 405); else its default.

    Example::

        success_of(spec.model.operation("createShipment")).code  # 201
    """
    if op.success is not None:
        return op.success
    for key, answer in op.answers.items():
        if key.isdigit() and key not in _REFUSALS and not key.startswith("5"):
            return answer
    return op.answers.get("default")


def input_status(op: Operation) -> int:
    """The status ``op`` refuses bad input with: 400, or 422 where only 422 is declared.

    Example::

        input_status(op)  # 400
    """
    if answer_of(op, 400) is None and answer_of(op, 422) is not None:
        return 422
    return 400


def fitted(
    schemas: Schemas, answer: Answer | None, preferred: object, rng: random.Random
) -> Any:
    """``preferred`` where it fits the schema of ``answer`` (or ``answer`` has none), else
    a value built from that schema with ``rng``.

    Example::

        fitted(schemas, answer_of(op, 404), problem_body(404, "gone"), random.Random(0))
    """
    if answer is None or answer.pointer is None or not is_json(str(answer.media)):
        return preferred
    if schemas.error(answer.pointer, preferred) is None:
        return preferred
    return schemas.build(answer.pointer, rng)


def sends(op: Operation) -> dict[int, str]:
    """The statuses the mock may answer ``op`` with besides its success, and why.

    Example::

        sends(op)[401]  # "for a missing or expired token"
    """
    found = {429: "for the quota and the faults", 503: "for the faults"}
    if op.kind == "token":
        found[401] = "for wrong client credentials"
        found[input_status(op)] = "for a malformed form"
    if op.bearer:
        found[401] = "for a missing or expired token"
    if op.account_header is not None:
        found[input_status(op)] = "for a missing account header"
        found[403] = "for another's account"
    if op.parameters or op.body is not None:
        found[input_status(op)] = "for bad input"
    if op.kind in ONE_RECORD_KINDS and answer_of(op, 404) is not None:
        # Where the spec declares no 404, every id names a record (see MockState.adopt).
        found[404] = "for an unknown id"
    return found


@attrs.frozen
class MockSpec:
    """A spec as the mock serves it: the model, its schemas, the routes, and what the
    checks at start-up found.

    Example::

        spec = load_spec()
        route, values = spec.match("/shipments/abc")  # values {"shipmentId": "abc"}
    """

    path: Path
    model: Spec = attrs.field(repr=False)
    schemas: Schemas = attrs.field(repr=False)
    routes: tuple[Route, ...] = attrs.field(repr=False)
    realistic: frozenset[str]
    """The resources served by the richer generators of ``_data`` (their schemas take
    those records)."""
    record_answers: frozenset[str]
    """The operations (by operationId) whose success answers the record itself."""
    warnings: tuple[str, ...]
    """What the mock does that the spec does not say (it serves the spec anyway)."""
    page_fields: Mapping[str, Mapping[str, Any]] = attrs.field(factory=dict, repr=False)
    """The fields each list's page carries beyond the mock's own, by operationId."""
    unlisted: frozenset[str] = frozenset()
    """The resources no operation lists or creates: no client can know which of their
    ids exist, so every id names one (built on first use)."""
    problems: tuple[str, ...] = ()
    """What the mock cannot serve as declared, each naming its operation: an answer it
    cannot build to fit its schema. ``--check-spec`` fails for any."""
    chosen: Mapping[str, Mapping[str, tuple[Any, ...]]] = attrs.field(
        factory=dict, repr=False
    )
    """By resource, the fields a list filters by equality with a parameter that has an
    enum, and its members: the records' values are drawn among them, so that each
    member (a default such as GitHub's ``state=open`` too) finds records."""

    @property
    def operations(self) -> tuple[Operation, ...]:
        """Every operation of the spec, as the model reads it."""
        return self.model.operations

    @property
    def resources(self) -> Mapping[str, Resource]:
        """The resources of the spec by name, as the model reads them."""
        return self.model.resources

    def match(
        self, path: str, method: str = "GET"
    ) -> tuple[Route, dict[str, str]] | None:
        """The route ``path`` (percent-encoded, as sent) fits and its path parameters,
        decoded: an encoded ``/`` stays inside a parameter. Of two templates of one
        shape (``/pets/{id}`` for GET, ``/pets/{petId}`` for DELETE), the one that
        declares ``method``; else the first (whose 405 names its methods). A more
        literal path that fits but lacks ``method`` (``/pets/mine``) gives way to a
        template that has it only where the values fit the template's parameters: else
        the request is one to the literal path, and its 405."""
        found = self.model.route(method, path)
        first = self.model.match(path)
        if found is None:
            return first
        op, values = found
        fell = first is not None and first[0].path != op.path
        if fell and not all(self._fits(p, values.get(p.name)) for p in op.parameters):
            return first
        return next(r for r in self.routes if r.path == op.path), values

    def _fits(self, parameter: Parameter, text: str | None) -> bool:
        """Whether a path parameter's ``text`` fits its schema (read as a number where
        it asks for one); true for any other parameter."""
        if parameter.location != "path" or parameter.pointer is None or text is None:
            return True
        value: Any = text
        if parameter.kind in ("integer", "number"):
            try:
                value = int(text) if parameter.kind == "integer" else float(text)
            except ValueError:
                return False
        return self.schemas.error(parameter.pointer, value, "writing") is None


class _Checks:
    """What the mock will do that the spec does not say, found once as it loads."""

    def __init__(self, model: Spec, schemas: Schemas) -> None:
        self.model = model
        self.schemas = schemas
        self.warnings: list[str] = []
        self.problems: list[str] = []
        self.samples: dict[str, dict[str, Any]] = {}
        self.realistic: set[str] = set()
        self.record_answers: set[str] = set()
        self.page_fields: dict[str, dict[str, Any]] = {}
        self.rng = random.Random(0)  # noqa: S311 -- sample data, not crypto

    def resource(self, resource: Resource) -> None:
        pointer = str(resource.pointer)
        rich = REALISTIC.get(resource.name)
        if rich is not None and not resource.parent_parameters:
            sample = rich(0, "sample", 1)[0]
            if (
                resource.id_field in sample
                and self.schemas.error(pointer, sample) is None
            ):
                self.realistic.add(resource.name)
                self.samples[resource.name] = sample
                return
        sample = build_records(self.schemas, resource, account="", seed=0, count=1)[0]
        self.samples[resource.name] = sample
        error = self.schemas.error(pointer, sample)
        if error is not None:
            why = self.schemas.unbuildable(pointer) or error
            self.warnings.append(
                f"{resource.name}: a record built does not fit its schema: {why}"
            )
        if resource.id_field is None:
            self.warnings.append(
                f"{resource.name}: no identifier field (the item path's parameter or "
                "one ...Id field): its get, replace, update and delete answer built data"
            )

    def operation(self, op: Operation) -> None:
        name = op.operation_id
        for status, reason in sends(op).items():
            answer = answer_of(op, status)
            if answer is None:
                self.warnings.append(
                    f"{name}: declares no {status} answer, which the mock sends {reason}"
                )
                continue
            preferred = problem_body(status, "sample")
            if op.kind == "token":
                preferred = OAUTH_SAMPLE
            self.body(op, answer, fitted(self.schemas, answer, preferred, self.rng))
        # What requests carry is checked at run time: a $ref there that points nowhere
        # is a SpecError now rather than a 503 then.
        requests = [p.pointer for p in op.parameters]
        for pointer in [*requests, op.body.pointer if op.body else None]:
            if pointer is not None:
                built = self.schemas.build(pointer, self.rng, direction="writing")
                self.schemas.error(pointer, built, "writing")
        success = success_of(op)
        if success is None:
            self.warnings.append(f"{name}: declares no success; the mock answers 200")
            return
        record = self.samples.get(str(op.resource))
        answers_record = record is not None and op.kind != "list"
        if answers_record and self.body(op, success, record, warn=False):
            self.record_answers.add(name)
            return
        value: object = None
        if op.kind == "token":
            value = TOKEN_SAMPLE
        elif op.kind == "list":
            extras = self.page_extras(op, success)
            value = {
                **extras,
                "totalRecords": 1,
                "pageNumber": 1,
                "pageSize": 1,
                "data": [record],
            }
        elif success.pointer is not None:
            value = self.schemas.build(success.pointer, self.rng, name)
        self.body(op, success, value)

    def page_extras(self, op: Operation, success: Answer) -> dict[str, Any]:
        """The fields of ``op``'s page envelope beyond the mock's own (a Stripe-like
        ``object: "list"``, ``has_more``), built once from its schema, sent on every page."""
        built = None
        if success.pointer is not None:
            rng = random.Random(op.operation_id)  # noqa: S311 -- sample data, not crypto
            built = self.schemas.build(success.pointer, rng, op.operation_id)
        extras = {}
        if isinstance(built, dict):
            extras = {k: v for k, v in built.items() if k not in _ENVELOPE}
        self.page_fields[op.operation_id] = extras
        return extras

    def reachable(self, routes: tuple[Route, ...]) -> None:
        """A problem for each operation whose path another template of the same shape
        takes first (``/pets/{id}`` beside ``/pets/{petId}``): no request reaches it."""
        first: dict[tuple[str, str], str] = {}
        for route in routes:
            for method, op in route.methods.items():
                taken = first.setdefault((route.pattern.pattern, method), route.path)
                if taken != route.path:
                    self.problems.append(
                        f"{op.operation_id}: {method} {route.path} is never reached: "
                        f"{taken} takes the same requests"
                    )

    def body(
        self, op: Operation, answer: Answer, value: object, *, warn: bool = True
    ) -> bool:
        """Whether ``value`` fits the schema of ``answer`` (of ``op``); a problem if
        not, unless ``warn`` is false (another value will be tried)."""
        if answer.pointer is None or not is_json(str(answer.media)):
            return True
        error = self.schemas.error(answer.pointer, value)
        if error is not None and warn:
            why = self.schemas.unbuildable(answer.pointer) or error
            self.problems.append(
                f"{op.operation_id}: its {answer.status} answer cannot be built to fit "
                f"its schema: {why}"
            )
        return error is None


@functools.lru_cache(maxsize=16)
def _read(path: Path, _mtime_ns: int) -> MockSpec:
    model = service_api_spec.load_spec(path)
    schemas = Schemas(model.schemas)
    checks = _Checks(model, schemas)
    for resource in model.resources.values():
        if resource.pointer is not None:
            checks.resource(resource)
    for op in model.operations:
        checks.operation(op)
    checks.reachable(model.routes)
    return MockSpec(
        path=path,
        model=model,
        schemas=schemas,
        routes=model.routes,
        realistic=frozenset(checks.realistic),
        record_answers=frozenset(checks.record_answers),
        warnings=tuple(dict.fromkeys(checks.warnings)),
        problems=tuple(dict.fromkeys(checks.problems)),
        page_fields=checks.page_fields,
        chosen=_chosen(model),
        unlisted=frozenset(model.resources)
        - {
            str(op.resource) for op in model.operations if op.kind in ("list", "create")
        },
    )


def _chosen(model: Spec) -> dict[str, dict[str, tuple[Any, ...]]]:
    """See :attr:`MockSpec.chosen`."""
    found: dict[str, dict[str, tuple[Any, ...]]] = {}
    for op in model.operations:
        for tie in op.filters:
            parameter = op.parameter(tie.parameter)
            if parameter is None or not parameter.choices or tie.compare != "eq":
                continue
            if op.resource is not None:
                found.setdefault(op.resource, {})[tie.field] = parameter.choices
    return found


def load_spec(path: Path | str | None = None) -> MockSpec:
    """Read and check the spec at ``path`` (default: the project's ``openapi.yaml``).

    Loading the same unchanged file again is free. Raises :class:`SpecError` for a file
    that is not an OpenAPI document; anything else is served, with warnings.

    Example::

        spec = load_spec("openapi.yaml")
        print(*spec.warnings, sep="\\n")
    """
    resolved = Path(path if path is not None else DEFAULT_SPEC).resolve()
    try:
        mtime = resolved.stat().st_mtime_ns
    except OSError as exc:
        raise SpecError(f"{resolved}: cannot be read: {exc.strerror}") from None
    return _read(resolved, mtime)
