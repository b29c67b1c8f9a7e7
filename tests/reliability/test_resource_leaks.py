"""Closing clients closes their connections: none stays open to the service afterwards.

Counted from the operating system's table of this process's TCP connections, so the
check does not depend on the client's internals or on garbage collection.
"""

from __future__ import annotations

import asyncio
import time

import httpx
import psutil  # type: ignore[import-untyped]  # no stubs installed
import pytest

import service_api
from service_api_client.api.shipments import list_shipments
from service_api_mock import DEMO_CLIENT_ID, DEMO_CLIENT_SECRET, RunningMock


def open_connections(base_url: str) -> int:
    port = httpx.URL(base_url).port
    return sum(
        1
        for c in psutil.Process().net_connections("tcp")
        if c.raddr and c.raddr.port == port and c.status == psutil.CONN_ESTABLISHED
    )


def wait_for_no_connections(base_url: str, within: float = 2.0) -> int:
    deadline = time.monotonic() + within
    while (count := open_connections(base_url)) and time.monotonic() < deadline:
        time.sleep(0.02)
    return count


def make_root(mock: RunningMock) -> service_api.Client:
    return service_api.Client(mock.base_url, DEMO_CLIENT_ID, DEMO_CLIENT_SECRET)


def test_closing_the_root_after_its_children_closes_the_pool_they_shared(
    mock: RunningMock,
) -> None:
    """The documented order (children first, then the original) must leave nothing open,
    also when the original itself never sent a request."""
    root = make_root(mock)
    children = [root.with_account(account) for account in ("acct-1", "acct-2")]
    for child in children:
        list_shipments.sync(client=child)
    assert open_connections(mock.base_url) >= 1
    for child in children:
        child.close()
    root.close()
    try:
        assert wait_for_no_connections(mock.base_url) == 0
    finally:
        # Close what leaked, so its ResourceWarning cannot fail an unrelated test later.
        root._family.close_pools()


def test_a_root_used_as_a_context_manager_closes_the_shared_pool(mock: RunningMock) -> None:
    with make_root(mock) as root:
        child = root.with_account("acct-1")
        list_shipments.sync(client=child)
        child.close()
    assert wait_for_no_connections(mock.base_url) == 0


@pytest.mark.anyio
async def test_async_clients_close_their_own_pools(mock: RunningMock) -> None:
    async with make_root(mock) as root:
        child = root.with_account("acct-1")
        await list_shipments.asyncio(client=child)
        await child.aclose()
    assert wait_for_no_connections(mock.base_url) == 0


def test_each_event_loop_s_pool_closes_when_its_asyncio_run_ends(mock: RunningMock) -> None:
    """Two ``asyncio.run`` on one client, neither closing it: each loop's pool is closed
    as its loop ends, so no connection outlives the run that opened it."""
    client = make_root(mock).with_account("acct-1")

    async def fetch() -> None:
        await list_shipments.asyncio(client=client)
        assert open_connections(mock.base_url) >= 1

    for _ in range(2):
        asyncio.run(fetch())
        assert wait_for_no_connections(mock.base_url) == 0
    client.close()
