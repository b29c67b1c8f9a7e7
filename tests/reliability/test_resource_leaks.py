"""Closing clients closes their connections: none stays open to the service afterwards.

Counted from the operating system's table of this process's TCP connections, so the
check does not depend on the client's internals or on garbage collection.
"""

from __future__ import annotations

import asyncio
import gc
import time
import warnings

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
        root._shared.close()


def test_a_root_used_as_a_context_manager_closes_the_shared_pool(
    mock: RunningMock,
) -> None:
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


def test_each_event_loop_s_pool_closes_when_its_asyncio_run_ends(
    mock: RunningMock,
) -> None:
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


def test_connections_left_open_when_asyncio_run_ends_are_closed_in_their_loop(
    mock: RunningMock,
) -> None:
    """Two ``asyncio.run`` in a row, each ending with an idle keep-alive connection and a
    streamed answer never read nor closed: each loop's end closes its pool there, so no
    socket outlives its run and none is left for the garbage collector to warn about."""
    client = make_root(mock).with_account("acct-1")
    left_open: list[httpx.Response] = []

    async def leave_connections_open() -> None:
        request = client.get_async_httpx_client().build_request("GET", "/shipments")
        left_open.append(
            await client.get_async_httpx_client().send(request, stream=True)
        )
        await list_shipments.asyncio(client=client)  # a second connection, left idle
        assert open_connections(mock.base_url) >= 2

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for _ in range(2):
            asyncio.run(leave_connections_open())
            assert wait_for_no_connections(mock.base_url) == 0
        left_open.clear()
        gc.collect()
    assert [str(w.message) for w in caught] == []
    assert mock.service.count("authenticate") == 1  # one token for both loops
    client.close()


def test_a_task_cancelled_when_asyncio_run_ends_may_still_send_in_its_cleanup(
    mock: RunningMock,
) -> None:
    """asyncio.run cancels the tasks left before it finalizes async generators, so a
    task's cleanup still finds its loop's pool open; the pool closes after it."""
    client = make_root(mock).with_account("acct-1")
    tasks: list[asyncio.Task[None]] = []
    pages: list[object] = []

    async def send_when_cancelled() -> None:
        try:
            await asyncio.Event().wait()  # until asyncio.run cancels the task
        finally:
            pages.append(await list_shipments.asyncio(client=client))

    async def main() -> None:
        await list_shipments.asyncio(client=client)
        tasks.append(asyncio.get_running_loop().create_task(send_when_cancelled()))
        await asyncio.sleep(0)  # the task starts waiting

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        asyncio.run(main())
        assert wait_for_no_connections(mock.base_url) == 0
        tasks.clear()
        gc.collect()
    assert [str(w.message) for w in caught] == []
    assert len(pages) == 1
    assert mock.service.count("listShipments", 200) == 2
    client.close()
