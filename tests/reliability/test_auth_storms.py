"""Auth storms: hundreds of concurrent calls on one client meet a dead token together.

``tests/core/test_client.py`` covers 50 tasks and 8 threads after an expiry and two
loops sharing the first fetch. Here the storm is 200 asyncio tasks and 16 threads, after
an expiry and after a revocation, across two event loops in two threads, and while the
service answers 20 % of requests 503/429: every time, exactly one new token is fetched,
and every call gets its page.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Iterator

import pytest

import service_api
from service_api import testing
from service_api_client.api.shipments import list_shipments
from service_api_client.models.shipment_page import ShipmentPage
from service_api_mock import DEMO_CLIENT_ID, DEMO_CLIENT_SECRET, RunningMock

TASKS = 200
THREADS = 16
CALLS_PER_THREAD = 1
JOIN_TIMEOUT = 60.0


@pytest.fixture
def client(mock: RunningMock) -> Iterator[service_api.Client]:
    policy = service_api.RetryPolicy(max_retries=8, initial_delay=0.001, max_delay=0.01)
    with service_api.Client(
        mock.base_url, DEMO_CLIENT_ID, DEMO_CLIENT_SECRET, "acct-1", retry=policy
    ) as c:
        yield c


def storm(
    clients_per_loop: list[service_api.Client], sync_client: service_api.Client
) -> int:
    """Release ``TASKS`` async calls (split over one event loop per client, each in its
    own thread) and ``THREADS`` sync threads at once; returns the pages received."""
    results: list[object] = []
    errors: list[BaseException] = []
    start = threading.Barrier(len(clients_per_loop) + THREADS)
    per_loop = TASKS // len(clients_per_loop)

    def guarded(target: Callable[..., None]) -> Callable[..., None]:
        def run(*args: object) -> None:
            try:
                target(*args)
            except (
                BaseException
            ) as exc:  # reported by the test thread, not lost in this one
                errors.append(exc)

        return run

    def loop_thread(c: service_api.Client) -> None:
        async def calls() -> None:
            start.wait(JOIN_TIMEOUT)
            try:
                pages = await asyncio.gather(
                    *(
                        list_shipments.asyncio(client=c, page_size=1)
                        for _ in range(per_loop)
                    )
                )
                results.extend(pages)
            finally:
                await c.aclose()

        asyncio.run(calls())

    def sync_thread() -> None:
        start.wait(JOIN_TIMEOUT)
        for _ in range(CALLS_PER_THREAD):
            results.append(list_shipments.sync(client=sync_client, page_size=1))

    threads = [
        threading.Thread(target=guarded(lambda c=c: loop_thread(c)))
        for c in clients_per_loop
    ]
    threads += [threading.Thread(target=guarded(sync_thread)) for _ in range(THREADS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(JOIN_TIMEOUT)
    assert not any(t.is_alive() for t in threads), "a storm thread hung"
    assert not errors, errors
    assert all(isinstance(page, ShipmentPage) for page in results)
    assert len(results) == per_loop * len(clients_per_loop) + THREADS * CALLS_PER_THREAD
    return len(results)


def warm(mock: RunningMock, client: service_api.Client) -> None:
    list_shipments.sync(client=client, page_size=1)
    assert mock.service.count("authenticate") == 1


def test_storm_after_expiry_fetches_exactly_one_token(
    mock: RunningMock, client: service_api.Client
) -> None:
    warm(mock, client)
    mock.service.advance_clock(
        2 * 3600
    )  # the server now sees the cached token as expired
    storm([client.with_account("acct-1")], client)
    assert mock.service.count("authenticate") == 2
    assert mock.service.count("listShipments", 401) >= 1  # the expiry really bit


def test_storm_after_revocation_fetches_exactly_one_token(
    mock: RunningMock, client: service_api.Client
) -> None:
    warm(mock, client)
    mock.service.revoke_tokens()
    storm([client.with_account("acct-1")], client)
    assert mock.service.count("authenticate") == 2
    assert mock.service.count("listShipments", 401) >= 1


def test_storm_over_two_event_loops_in_two_threads_fetches_exactly_one_token(
    mock: RunningMock, client: service_api.Client
) -> None:
    warm(mock, client)
    mock.service.advance_clock(2 * 3600)
    storm([client.with_account("acct-1"), client.with_account("acct-2")], client)
    assert mock.service.count("authenticate") == 2
    # The dead token was met; whether the second loop sent with it before the first loop's
    # refresh is the scheduler's choice (on a busy machine it may not have).
    assert mock.service.count("listShipments", 401) >= 1


def test_storm_through_faults_still_gets_exactly_one_token(
    mock: RunningMock, client: service_api.Client
) -> None:
    warm(mock, client)
    mock.service.revoke_tokens()
    mock.service.set_faults(fault_rate=0.2, retry_after=0.001)
    with testing.no_retry_sleep() as delays:
        storm([client.with_account("acct-1"), client.with_account("acct-2")], client)
    # Refused token requests are retried, but only one token is ever issued.
    assert mock.service.count("authenticate", 200) == 2
    assert len(mock.service.issued_tokens()) == 2
    assert delays  # the faults were met and retried
