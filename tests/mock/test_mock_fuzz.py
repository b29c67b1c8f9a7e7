"""Schemathesis against the mock, in process: every check, zero failures.

The mock must answer every request the spec allows, and refuse every request it does
not, in the shape openapi.yaml declares. Auth is real: a token from ``/authenticate``
and an account the demo credentials are associated with. ``FUZZ_EXAMPLES`` scales the
run: a bounded sample in ``make test``, at least 1,000 cases per operation in
``make fuzz`` (which prints the counts the mock recorded).
"""

from __future__ import annotations

import collections
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis import GenerationMode
from schemathesis.python import asgi

from service_api_mock import (
    DEMO_ACCOUNTS,
    DEMO_CLIENT_ID,
    DEMO_CLIENT_SECRET,
    MockService,
    RunningMock,
    running_mock,
)

SPEC = Path(__file__).resolve().parents[2] / "openapi.yaml"
EXAMPLES = int(os.environ.get("FUZZ_EXAMPLES", "50"))
STATEFUL_EXAMPLES = int(os.environ.get("FUZZ_STATEFUL_EXAMPLES", str(max(EXAMPLES // 10, 10))))

# Schemathesis builds part of its cases while collecting, auth included, so the target
# must exist at import: an in-process service (no thread, no socket) fits.
SERVICE = MockService()
schema = schemathesis.openapi.from_path(SPEC)
schema.app = SERVICE.app
schema.config.generation.update(modes=[GenerationMode.POSITIVE, GenerationMode.NEGATIVE])

# Cases generated per operation label, by the stateless and the stateful tests.
CASES: collections.Counter[str] = collections.Counter()

FUZZ_SETTINGS = settings(
    max_examples=EXAMPLES,
    deadline=None,
    database=None,
    derandomize=True,
    suppress_health_check=list(HealthCheck),
)


# The multipart form of POST /authenticate with the demo credentials.
TOKEN_FORM = {
    "client_id": (None, DEMO_CLIENT_ID),
    "client_secret": (None, DEMO_CLIENT_SECRET),
    "grant_type": (None, "client_credentials"),
}


@schema.auth()
class MockAuth:
    """A real token from the mock's ``/authenticate``, plus a valid account header."""

    def get(self, case: Any, context: Any) -> str:
        with asgi.get_client(SERVICE.app) as client:  # type: ignore[arg-type]
            response = client.post(
                f"http://{asgi.HOST}/public/v3/authenticate",
                files=TOKEN_FORM,
            )
        response.raise_for_status()
        token: str = response.json()["access_token"]
        return token

    def set(self, case: Any, data: str, context: Any) -> None:
        if case.operation.path == "/authenticate":
            return  # the one operation without security
        case.headers = case.headers or {}
        case.headers["Authorization"] = f"Bearer {data}"
        case.headers["x-service-account-id"] = DEMO_ACCOUNTS[0]


@pytest.fixture(scope="module", autouse=True)
def report_counts() -> Iterator[None]:
    yield
    # Shown with -s (make fuzz): what the mock really answered, per operation and status.
    print("\nschemathesis cases per operation:")
    for label, n in sorted(CASES.items()):
        print(f"  {label}: {n}")
    print("requests answered by the mock (cases plus the checks' own), per operation and status:")
    for operation, by_status in SERVICE.counts().items():
        total = sum(by_status.values())
        print(f"  {operation}: {total} {dict(by_status)}")


@schema.parametrize()
@FUZZ_SETTINGS
def test_every_operation_conforms(case: Any) -> None:
    CASES[case.operation.label] += 1
    case.call_and_validate()


StatefulMachine = schema.as_state_machine()


class CountingMachine(StatefulMachine):  # type: ignore[misc,valid-type]
    def before_call(self, case: Any) -> None:
        CASES[f"stateful {case.operation.label}"] += 1


class TestStateful(CountingMachine.TestCase):  # type: ignore[name-defined,misc]
    settings = settings(
        max_examples=STATEFUL_EXAMPLES,
        deadline=None,
        database=None,
        derandomize=True,
        suppress_health_check=list(HealthCheck),
        stateful_step_count=6,
    )


def test_each_operation_was_exercised() -> None:
    # Guards against a run that passes by doing nothing (a broken auth, a filtered schema).
    counts = SERVICE.counts()
    for operation in ("authenticate", "listShipments", "listDevices"):
        assert sum(counts.get(operation, {}).values()) >= min(EXAMPLES, 50), counts
    assert counts["listShipments"].get(200, 0) > 0, counts
    assert counts["authenticate"].get(200, 0) > 0, counts


# ---- the same, over loopback HTTP against uvicorn ----------------------------------------
# A state machine generates its cases while it runs, not at collection, so it can target
# a server that a fixture starts: this exercises the mock exactly as clients meet it.

loopback_schema = schemathesis.openapi.from_path(SPEC)
loopback_schema.config.generation.update(modes=[GenerationMode.POSITIVE, GenerationMode.NEGATIVE])


class _Loopback:
    server: RunningMock | None = None


@loopback_schema.auth()
class LoopbackAuth:
    """A real token from ``/authenticate`` of the served mock, plus a valid account header."""

    def get(self, case: Any, context: Any) -> str:
        assert _Loopback.server is not None
        response = httpx.post(
            f"{_Loopback.server.base_url}/authenticate",
            files=TOKEN_FORM,
        )
        response.raise_for_status()
        token: str = response.json()["access_token"]
        return token

    def set(self, case: Any, data: str, context: Any) -> None:
        MockAuth().set(case, data, context)


def test_stateful_over_loopback() -> None:
    with running_mock() as server:
        _Loopback.server = server
        loopback_schema.config.update(base_url=server.base_url)
        try:
            machine = loopback_schema.as_state_machine()
            machine.run(
                settings=settings(
                    max_examples=max(STATEFUL_EXAMPLES // 2, 5),
                    deadline=None,
                    database=None,
                    derandomize=True,
                    suppress_health_check=list(HealthCheck),
                    stateful_step_count=6,
                )
            )
        finally:
            _Loopback.server = None
        counts = server.service.counts()
    print(f"\nloopback stateful run, answered by the mock: {counts}")
    assert counts["authenticate"].get(200, 0) > 0, counts
    assert (
        sum(counts.get("listShipments", {}).values()) + sum(counts.get("listDevices", {}).values())
        > 0
    ), counts
