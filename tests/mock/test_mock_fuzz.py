"""Schemathesis against the mock: every check, zero failures, on every operation of the
spec, and a success of each operation and each link reached by construction.

The mock must answer every request the spec allows, and refuse every request it does
not, in the shape openapi.yaml declares. Auth is real: a token from ``/authenticate``
and an account the demo credentials are associated with. ``FUZZ_EXAMPLES`` scales the
run: a bounded sample in ``make test``, at least 1,000 cases per operation in
``make fuzz`` (which prints the counts the mock recorded). What each run must reach is
read from the spec model (tests/spec/spec_fuzz.py drives each operation on records that
exist, and each link with what its source answered): the assertions hold for the
project's spec, for a copy with a resource of every shape, and for the spec grown by hand
of tests/spec/growth.yaml, served by ``python -m service_api_mock --spec``.
"""

from __future__ import annotations

import collections
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import schemathesis
import yaml
from hypothesis import HealthCheck, settings
from schemathesis import GenerationMode
from schemathesis.python import asgi
from schemathesis.specs.openapi.schemas import OpenApiSchema
from spec_copy import SpecCopy, merged_spec, serve_spec
from spec_fuzz import Driver, checked, every_case, links, missing_successes, validate

from service_api_mock import (
    DEMO_ACCOUNTS,
    DEMO_CLIENT_ID,
    DEMO_CLIENT_SECRET,
    MockConfig,
    MockService,
    RunningMock,
    running_mock,
)
from service_api_spec import Spec, load_spec

if os.environ.get("PYTEST_XDIST_WORKER"):
    # Seen with schemathesis 4.32: in an xdist worker, the parametrized test below runs
    # for the spec's first operation only, and the guard at the end would say so.
    pytest.fail(
        "run the fuzz tests without -n (make test runs them in a process of their own)",
        pytrace=False,
    )

SPEC = Path(__file__).resolve().parents[2] / "openapi.yaml"
GROWTH = SPEC.parent / "tests" / "spec" / "growth.yaml"
MODEL = load_spec(SPEC)
EXAMPLES = int(os.environ.get("FUZZ_EXAMPLES", "50"))
# Cases per operation and per link driven on records that exist: each is built to
# succeed, so a few are enough in make test; make fuzz sends more.
DRIVEN = max(3, EXAMPLES // 20)
# Stateless cases per operation of the copies of the spec (the grown one, served by the
# command, and the one with a resource of every shape): make test stays fast.
COPY_EXAMPLES = max(5, EXAMPLES // 10)
STATEFUL_EXAMPLES = int(
    os.environ.get("FUZZ_STATEFUL_EXAMPLES", str(max(EXAMPLES // 10, 10)))
)

# The multipart form of POST /authenticate with the demo credentials.
TOKEN_FORM = {
    "client_id": (None, DEMO_CLIENT_ID),
    "client_secret": (None, DEMO_CLIENT_SECRET),
    "grant_type": (None, "client_credentials"),
}


def stateful_settings(examples: int) -> settings:
    return settings(
        max_examples=examples,
        deadline=None,
        database=None,
        derandomize=True,
        suppress_health_check=list(HealthCheck),
        stateful_step_count=6,
    )


def with_auth(
    schema: OpenApiSchema, token: Callable[[], str], refresh: int | None = 300
) -> OpenApiSchema:
    """``schema`` with a real token (from ``token()``, a new one after ``refresh`` seconds,
    for each case if ``None``) and a valid account header."""

    @schema.auth(refresh_interval=refresh)
    class MockAuth:
        def get(self, case: Any, context: Any) -> str:
            return token()

        def set(self, case: Any, data: str, context: Any) -> None:
            if case.operation.path == "/authenticate":
                return  # the one operation without security
            case.headers = case.headers or {}
            case.headers["Authorization"] = f"Bearer {data}"
            case.headers["x-service-account-id"] = DEMO_ACCOUNTS[0]

    schema.config.generation.update(
        modes=[GenerationMode.POSITIVE, GenerationMode.NEGATIVE]
    )
    # Schemathesis draws values from the literals of the application's source too:
    # the mock's include the demo client secret, which it would send as a path value
    # that the mock's request log then (rightly) writes, and the leak guard flags.
    schema.config.analysis.constants.enabled = False
    return schema


def in_process(
    service: MockService, spec: Path, refresh: int | None = 300
) -> OpenApiSchema:
    def token() -> str:
        with asgi.get_client(service.app) as client:  # type: ignore[arg-type]
            response = client.post(
                f"http://{asgi.HOST}/public/v3/authenticate", files=TOKEN_FORM
            )
        response.raise_for_status()
        return str(response.json()["access_token"])

    schema = schemathesis.openapi.from_path(spec)
    schema.app = service.app
    return with_auth(schema, token, refresh)


# Schemathesis builds part of its cases while collecting, auth included, so the target
# must exist at import: an in-process service (no thread, no socket) fits.
SERVICE = MockService()
schema = in_process(SERVICE, SPEC)

# Cases generated per operation label, by the stateless and the stateful tests.
CASES: collections.Counter[str] = collections.Counter()


@pytest.fixture(scope="module", autouse=True)
def report_counts() -> Iterator[None]:
    yield
    # Shown with -s (make fuzz): what the mock really answered, per operation and status.
    print("\nschemathesis cases per operation:")
    for label, n in sorted(CASES.items()):
        print(f"  {label}: {n}")
    print(
        "requests answered by the mock (cases plus the checks' own), per operation and status:"
    )
    for operation, by_status in SERVICE.counts().items():
        total = sum(by_status.values())
        print(f"  {operation}: {total} {dict(by_status)}")


@schema.parametrize()
@settings(
    max_examples=EXAMPLES,
    deadline=None,
    database=None,
    derandomize=True,
    suppress_health_check=list(HealthCheck),
)
def test_every_operation_conforms(case: Any) -> None:
    CASES[case.operation.label] += 1
    checked(MODEL, case)


def drive(target: OpenApiSchema, model: Spec, examples: int) -> list[str]:
    """Each operation and each link of ``model`` driven to a success through ``target``;
    what was not reached."""
    driver = Driver(target, model)
    reached = driver.operations(examples)
    print(f"\ndriven on records that exist, answered: {dict(reached)}")
    missing = missing_successes(model, reached)
    for link in links(model):
        answered = driver.follow(link, examples)
        if not any(200 <= status < 300 for status in answered):
            missing.append(f"link {link.label}: no success among {dict(answered)}")
    return missing


def test_each_operation_and_link_succeeds_on_records_that_exist() -> None:
    assert drive(schema, MODEL, DRIVEN) == []


def test_each_operation_was_exercised() -> None:
    # Guards against a run that passes by doing nothing (a broken auth, a filtered schema).
    labels = {f"{op.method} {op.path}" for op in MODEL.operations}
    assert labels, "the spec has operations"
    for label in labels:
        assert CASES[label] > 0, (label, CASES)
    answered = SERVICE.counts()
    assert all(answered.get(op.operation_id) for op in MODEL.operations), answered


def test_a_spec_with_every_shape_fuzzes_clean(shapes_spec: Path) -> None:
    # A copy of the spec with a resource that is listed (with a filter), read, created,
    # replaced, updated and deleted, with an integer id, linked create -> get/update ->
    # delete.
    service = MockService(MockConfig(records=5), spec=shapes_spec)
    copy = in_process(service, shapes_spec)
    model = load_spec(shapes_spec)
    sent = every_case(copy, model, COPY_EXAMPLES)
    assert sent.keys() == {f"{op.method} {op.path}" for op in model.operations}
    assert drive(copy, model, DRIVEN) == []


def test_the_grown_spec_served_by_the_command_fuzzes_clean(tmp_path: Path) -> None:
    # The shapes a user adds by hand (a sub-resource, a plain array, a header parameter,
    # filters, PUT/PATCH/DELETE linked from create, an action), served as users serve it.
    grown = SpecCopy(root=tmp_path, generated=tmp_path / "generated")
    grown.spec.write_text(yaml.safe_dump(merged_spec(GROWTH), sort_keys=False), "utf-8")
    model = load_spec(grown.spec)
    with serve_spec(grown, "--records", "10") as base_url:

        def token() -> str:
            response = httpx.post(f"{base_url}/authenticate", files=TOKEN_FORM)
            response.raise_for_status()
            return str(response.json()["access_token"])

        served = with_auth(schemathesis.openapi.from_path(grown.spec), token)
        served.config.update(base_url=base_url)
        sent = every_case(served, model, COPY_EXAMPLES)
        assert sent.keys() == {f"{op.method} {op.path}" for op in model.operations}
        assert drive(served, model, DRIVEN) == []
        counts = httpx.get(f"{base_url.removesuffix('/public/v3')}/__mock__/counts")
    print(f"\ngrown spec, answered by the mock: {counts.json()}")
    assert not any(
        status.startswith("5") for by in counts.json().values() for status in by
    )


# ---- the same, over loopback HTTP against uvicorn ----------------------------------------
# A state machine generates its cases while it runs, not at collection, so it can target
# a server that a fixture starts: this exercises the mock exactly as clients meet it, in
# random sequences through the spec's links (the coverage is asserted above).


class _Loopback:
    server: RunningMock | None = None


def _loopback_token() -> str:
    assert _Loopback.server is not None
    response = httpx.post(f"{_Loopback.server.base_url}/authenticate", files=TOKEN_FORM)
    response.raise_for_status()
    return str(response.json()["access_token"])


loopback_schema = with_auth(schemathesis.openapi.from_path(SPEC), _loopback_token)


def test_stateful_over_loopback() -> None:
    with running_mock() as server:
        _Loopback.server = server
        loopback_schema.config.update(base_url=server.base_url)
        try:
            base = loopback_schema.as_state_machine()

            class Machine(base):  # type: ignore[misc,valid-type]  # built at run time
                def validate_response(
                    self,
                    response: Any,
                    case: Any,
                    additional_checks: Any = None,
                    **kw: Any,
                ) -> None:
                    validate(
                        MODEL,
                        case,
                        response,
                        additional_checks=additional_checks,
                        transport_kwargs=kw or None,
                        recorder=self.recorder,
                    )

            Machine.run(settings=stateful_settings(STATEFUL_EXAMPLES))
        finally:
            _Loopback.server = None
        counts = server.service.counts()
    print(f"\nloopback stateful run, answered by the mock: {counts}")
    assert counts["authenticate"].get(200, 0) > 0, counts
    assert sum(sum(by.values()) for by in counts.values()) > STATEFUL_EXAMPLES, counts
