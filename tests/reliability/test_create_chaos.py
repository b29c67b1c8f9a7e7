"""Creates through chaos are never made twice: a client sends many creates through 503s,
429s, dropped connections and latency; the server counts what it created. Every create
the client saw succeed exists exactly once, and none exists twice.

The server is the fixture ``creates``, one parameter per service, and the test body is
the same for both:

- ``chaos-app``: a small app here whose faults are as hostile as they can be for a write
  (half of its 503s and every dropped connection come after the record was made, as when
  a gateway gives up on a slow service);
- ``mock``: the mock, serving ``POST /shipments`` from the spec, with its chaos faults
  switched on (503/429 with a short ``Retry-After``, dropped connections, latency),
  signed in as its demo client; what it created is its dataset, counted by
  ``referenceNumber``.

The mock decides every fault before its handler runs, so a create it faulted was never
made: against it a create sent again cannot make a second record, and the test proves
there only that the client gets through the mock's faults and makes each create once.
The control test (a client that sends a create again after any failure, as it does a
read) therefore runs against the chaos app alone, where a resent create does make
records twice.
"""

from __future__ import annotations

import asyncio
import collections
import random
import threading
from collections.abc import Iterator
from typing import Any, Protocol

import anyio
import pytest
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.types import Receive, Scope, Send

import service_api
import service_api._client
from service_api_client.api.shipments import create_shipment
from service_api_client.models.shipment import Shipment
from service_api_mock import serve_asgi
from service_api_mock.pytest_plugin import DemoMock

CREATES = 150
#: Each request's fate at the chaos app, and how often it comes.
FATES = {
    "created": 40,
    "429 before": 10,
    "503 before": 10,
    "503 after": 10,  # made, then a 503: the client cannot know
    "dropped after": 10,  # made, then the connection is cut without an answer
    "slow": 20,  # made, after up to 20 ms
}


class CreateService(Protocol):
    """What the test needs of a service of ``POST /shipments`` under faults."""

    base_url: str
    #: Client ID, client secret and account, as ``service_api.Client`` takes them.
    credentials: tuple[str, str, str]

    def created(self) -> collections.Counter[str]:
        """How many records were made for each ``referenceNumber``."""


class ChaosCreates:
    """An ASGI app serving ``POST /authenticate`` and ``POST /shipments`` whose creates
    fail as the chaos faults do, seeded; the records it made, by reference."""

    credentials = ("chaos-client", "chaos-secret-7f3a", "acct-1")

    def __init__(self, seed: int) -> None:
        self.base_url = ""
        self._rng = random.Random(seed)
        self._lock = threading.Lock()
        self._made: list[dict[str, Any]] = []

    def created(self) -> collections.Counter[str]:
        with self._lock:
            return collections.Counter(
                str(record["referenceNumber"]) for record in self._made
            )

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        request = Request(scope, receive)
        if request.url.path.endswith("/authenticate"):
            token = {
                "access_token": "chaos-token",
                "token_type": "Bearer",
                "expires_in": "3600",
            }
            return await JSONResponse(token)(scope, receive, send)
        body = (
            await request.json()
        )  # the request is read: from here a fault may follow a write
        with self._lock:
            fate = self._rng.choices(list(FATES), weights=list(FATES.values()))[0]
            delay = self._rng.uniform(0, 0.02) if fate == "slow" else 0.0
        if fate.endswith("before"):
            status = int(fate.split()[0])
            answer = JSONResponse({"title": fate}, status, headers={"retry-after": "0"})
            return await answer(scope, receive, send)
        await asyncio.sleep(delay)
        with self._lock:
            record = {**body, "shipmentId": f"s-{len(self._made) + 1}"}
            self._made.append(record)
        if fate == "dropped after":
            return await _drop_connection(send, receive)
        if fate == "503 after":
            return await Response(status_code=503, headers={"retry-after": "0"})(
                scope, receive, send
            )
        return await JSONResponse(record, 201)(scope, receive, send)


async def _drop_connection(send: Send, receive: Receive) -> None:
    """Reset the connection before any byte of an answer (uvicorn's ``send`` holds it)."""
    getattr(send, "__self__").transport.abort()  # noqa: B009 - a bound method's owner
    with anyio.move_on_after(1.0):
        while (await receive())["type"] != "http.disconnect":
            pass


class MockCreates:
    """The mock as a :class:`CreateService`: its demo client and first demo account, and
    the shipments of that account in its dataset, by reference."""

    def __init__(self, mock: DemoMock) -> None:
        self.base_url = mock.base_url
        self.credentials = (mock.client_id, mock.client_secret, mock.account_id)
        self._service = mock.service

    def created(self) -> collections.Counter[str]:
        records = self._service.dataset("shipments", self.credentials[2])
        return collections.Counter(str(record["referenceNumber"]) for record in records)


@pytest.fixture(params=["chaos-app", "mock"])
def creates(request: pytest.FixtureRequest) -> Iterator[CreateService]:
    """A running service of ``POST /shipments`` under faults, by name."""
    if request.param == "mock":
        mock: DemoMock = request.getfixturevalue("service_api_mock")
        # No generated records: the dataset then holds only what the test created.
        mock.service.reset(records=0)
        mock.service.set_faults(
            fault_rate=0.2,
            drop_rate=0.05,
            latency_ms=1,
            latency_jitter_ms=5,
            retry_after=0.01,
        )
        yield MockCreates(mock)
        return
    assert request.param == "chaos-app"
    app = ChaosCreates(seed=31)
    with serve_asgi(app, name="chaos-creates") as origin:
        app.base_url = f"{origin}/public/v3"
        yield app


def send_creates(creates: CreateService, twin: str) -> tuple[list[str], list[str]]:
    """Send ``CREATES`` creates one after the other, each with its own ``referenceNumber``,
    through the sync or the async client; the references whose create the client saw
    succeed, and those it saw fail."""
    outcomes: dict[str, bool] = {}
    client = service_api.Client(creates.base_url, *creates.credentials, max_retries=6)

    def judge(reference: str, made: Any) -> None:
        assert isinstance(made, Shipment)
        assert made["referenceNumber"] == reference
        outcomes[reference] = True

    async def send_async() -> None:
        async with client:
            for reference, body in bodies:
                try:
                    judge(
                        reference,
                        await create_shipment.asyncio(client=client, body=body),
                    )
                except service_api.ServiceApiError:
                    outcomes[reference] = False

    refs = [f"ref-{number}" for number in range(CREATES)]
    bodies = [(ref, Shipment.from_dict({"referenceNumber": ref})) for ref in refs]
    with client, service_api.testing.no_retry_sleep():
        if twin == "async":
            asyncio.run(send_async())
        for reference, body in bodies if twin == "sync" else []:
            try:
                judge(reference, create_shipment.sync(client=client, body=body))
            except service_api.ServiceApiError:
                outcomes[reference] = False
    assert len(outcomes) == CREATES
    return [r for r in refs if outcomes[r]], [r for r in refs if not outcomes[r]]


def test_a_create_through_chaos_is_never_made_twice(
    creates: CreateService, twin: str
) -> None:
    succeeded, failed = send_creates(creates, twin)
    created = creates.created()
    assert [ref for ref, times in created.items() if times > 1] == []
    assert all(created[ref] == 1 for ref in succeeded)
    # The faults did happen, and the retries that are safe did rescue creates.
    assert failed
    assert len(succeeded) > CREATES * 0.6


# The chaos app only: the mock's faults all come before its handler (module docstring).
@pytest.mark.parametrize("creates", ["chaos-app"], indirect=True)
def test_the_chaos_duplicates_creates_retried_like_reads(
    creates: CreateService, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The control: were a create sent again after any failure, as a read is, the same
    # faults would make records twice; the test above would notice.
    monkeypatch.setattr(
        service_api._client, "may_send_again", lambda method, outcome: True
    )
    send_creates(creates, "sync")
    assert [ref for ref, times in creates.created().items() if times > 1] != []
