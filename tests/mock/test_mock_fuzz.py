"""Schemathesis against the mock: every check, zero failures, on every operation of the spec.

The mock must answer every request the spec allows, and refuse every request it does
not, in the shape openapi.yaml declares. Auth is real: a token from ``/authenticate``
and an account the demo credentials are associated with. ``FUZZ_EXAMPLES`` scales the
run: a bounded sample in ``make test``, at least 1,000 cases per operation in
``make fuzz`` (which prints the counts the mock recorded). What the run must have reached
is read from the spec: each of its operations, a success for each one that needs no
record to exist or that a link leads to, and each link target through its link.
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

from service_api_mock import (
    DEMO_ACCOUNTS,
    DEMO_CLIENT_ID,
    DEMO_CLIENT_SECRET,
    MockConfig,
    MockService,
    RunningMock,
    running_mock,
)

if os.environ.get("PYTEST_XDIST_WORKER"):
    # Seen with schemathesis 4.32: in an xdist worker, the parametrized test below runs
    # for the spec's first operation only, and the guard at the end would say so.
    pytest.fail(
        "run the fuzz tests without -n (make test runs them in a process of their own)",
        pytrace=False,
    )

SPEC = Path(__file__).resolve().parents[2] / "openapi.yaml"
METHODS = ("get", "put", "post", "delete", "patch")


def operations(path: Path) -> dict[str, str]:
    """operationId to ``METHOD /path`` (the label schemathesis gives it), from the spec."""
    document = yaml.safe_load(path.read_text())
    return {
        op["operationId"]: f"{method.upper()} {route}"
        for route, item in document["paths"].items()
        for method, op in item.items()
        if method in METHODS
    }


def link_targets(path: Path) -> set[str]:
    """The operations some response links to (a stateful run reaches them with real ids)."""
    document = yaml.safe_load(path.read_text())
    return {
        link["operationId"]
        for item in document["paths"].values()
        for method, op in item.items()
        if method in METHODS
        for response in op.get("responses", {}).values()
        for link in response.get("links", {}).values()
    }


OPERATIONS = operations(SPEC)
EXAMPLES = int(os.environ.get("FUZZ_EXAMPLES", "50"))
# Enough stateful runs that each operation, and each link, gets its turns however many
# the spec has: four runs of six steps per operation reached every link target in every
# one of five unseeded trials with the spec of every shape (two runs missed one in five).
STATEFUL_PER_OPERATION = 4
STATEFUL_EXAMPLES = int(
    os.environ.get(
        "FUZZ_STATEFUL_EXAMPLES",
        str(max(EXAMPLES // 10, STATEFUL_PER_OPERATION * len(OPERATIONS))),
    )
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
    case.call_and_validate()


class CountingMachine(schema.as_state_machine()):  # type: ignore[misc]
    def before_call(self, case: Any) -> None:
        CASES[f"stateful {case.operation.label}"] += 1


class TestStateful(CountingMachine.TestCase):  # type: ignore[name-defined,misc]
    settings = stateful_settings(STATEFUL_EXAMPLES)


def reached(counts: dict[str, dict[int, int]], spec: Path) -> list[str]:
    """What a run of the spec's operations should have reached and did not."""
    missing = []
    targets = link_targets(spec)
    for operation_id, label in operations(spec).items():
        answered = counts.get(operation_id, {})
        if not answered:
            missing.append(f"{operation_id}: never answered")
        # An item path succeeds only for an id that exists: one a link hands over.
        needs_record = "{" in label
        if (not needs_record or operation_id in targets) and not any(
            200 <= status < 300 for status in answered
        ):
            missing.append(f"{operation_id}: no success among {answered}")
    return missing


def test_each_operation_was_exercised() -> None:
    # Guards against a run that passes by doing nothing (a broken auth, a filtered schema).
    assert reached(SERVICE.counts(), SPEC) == []
    for label in OPERATIONS.values():
        assert CASES[label] > 0, (label, CASES)
    for operation_id in link_targets(SPEC):
        assert CASES[f"stateful {OPERATIONS[operation_id]}"] > 0, (operation_id, CASES)


def test_a_spec_with_every_shape_fuzzes_clean(shapes_spec: Path) -> None:
    # A copy of the spec with a resource that is listed (with a filter), read, created,
    # replaced, updated and deleted, linked create -> get/update -> delete.
    spec = shapes_spec
    service = MockService(MockConfig(records=5), spec=spec)
    answered: dict[str, collections.Counter[int]] = collections.defaultdict(
        collections.Counter
    )
    # A new token for each case: the mock forgets its tokens when reset.
    machine = in_process(service, spec, refresh=None).as_state_machine()

    class FromScratch(machine):  # type: ignore[misc,valid-type]
        def teardown(self) -> None:
            # Each scenario starts from the same records (a delete, or a get of a fixed id,
            # would answer otherwise), so that hypothesis, replaying one, meets the same
            # answers; the counts are kept across scenarios.
            for operation, by_status in service.counts().items():
                answered[operation].update(by_status)
            service.reset()

    runs = max(STATEFUL_EXAMPLES, STATEFUL_PER_OPERATION * len(operations(spec)))
    FromScratch.run(settings=stateful_settings(runs))
    counts = {operation: dict(by_status) for operation, by_status in answered.items()}
    print(f"\nspec with every shape, answered by the mock: {counts}")
    assert reached(counts, spec) == []


# ---- the same, over loopback HTTP against uvicorn ----------------------------------------
# A state machine generates its cases while it runs, not at collection, so it can target
# a server that a fixture starts: this exercises the mock exactly as clients meet it.


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
            machine = loopback_schema.as_state_machine()
            machine.run(
                settings=stateful_settings(max(STATEFUL_EXAMPLES // 2, len(OPERATIONS)))
            )
        finally:
            _Loopback.server = None
        counts = server.service.counts()
    print(f"\nloopback stateful run, answered by the mock: {counts}")
    assert counts["authenticate"].get(200, 0) > 0, counts
    assert set(counts) == set(OPERATIONS), counts
