"""Pagination against a server that misbehaves: each fault, sync and async, both resources.

Every test checks the three promises: the documented policy (a warning or a
the typed error, with where to resume), no item yielded twice, and a bounded number of requests.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
import warnings
from types import ModuleType
from typing import Any

import pytest
from hostile_app import ID_FIELDS, HostileServer

from service_api import (
    AuthenticationError,
    BadRequestError,
    InconsistentPageError,
    InvalidRecordError,
    InvalidResponseError,
    NotFoundError,
    PaginationWarning,
    PermissionDeniedError,
    ServerError,
    ServiceApiError,
    paginate,
    testing,
)
from service_api_client import Client
from service_api_client.api import LIST_ENDPOINTS
from service_api_client.api.devices import list_devices
from service_api_client.api.shipments import list_shipments

pytestmark = pytest.mark.anyio

# Every list endpoint the hostile server can serve (those whose records have an id)
# that a call pages through with no argument of its own (no parent's id, no required
# header): the pager's behaviour is the same for the others.
ENDPOINTS = {
    name: LIST_ENDPOINTS[name].module
    for name in ID_FIELDS
    if not any(p.required for p in LIST_ENDPOINTS[name].parameters)
}
ID_BY_MODEL = {
    LIST_ENDPOINTS[name].item_model: field for name, field in ID_FIELDS.items()
}


@pytest.fixture(params=sorted(ENDPOINTS))
def resource(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def ids(items: list[Any]) -> list[str]:
    return [_id(item) for item in items]


def _id(item: Any) -> str:
    return str(item.to_dict()[ID_BY_MODEL[type(item)]])


async def drain(
    twin: str, endpoint: ModuleType, client: Client, out: list[Any], **options: Any
) -> None:
    """Collect items into ``out`` (so a test sees what came before a failure)."""
    if twin == "sync":
        out.extend(paginate(endpoint, client, **options))
    else:
        async for item in paginate(endpoint, client, **options):
            out.append(item)


def expected_ids(
    hostile: HostileServer, resource: str, count: int | None = None
) -> list[str]:
    return [row[ID_FIELDS[resource]] for row in hostile.state.dataset(resource, count)]


def asked(hostile: HostileServer, resource: str) -> list[int]:
    return [number for name, number in hostile.state.asked if name == resource]


async def test_an_honest_server_gives_every_item_once(
    hostile: HostileServer, hostile_client: Client, twin: str, resource: str
) -> None:
    out: list[Any] = []
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        await drain(twin, ENDPOINTS[resource], hostile_client, out, page_size=10)
    assert ids(out) == expected_ids(hostile, resource)
    assert asked(hostile, resource) == [1, 2, 3]


async def run_faulty(
    hostile: HostileServer,
    client: Client,
    twin: str,
    resource: str,
    mode: str,
    **options: Any,
) -> tuple[list[Any], ServiceApiError | None]:
    hostile.state.reset(mode)
    out: list[Any] = []
    try:
        await drain(twin, ENDPOINTS[resource], client, out, page_size=10, **options)
    except ServiceApiError as exc:
        error: ServiceApiError | None = exc
    else:
        error = None
    assert error is None or error.items_yielded == len(out)
    return out, error


@pytest.mark.parametrize(
    ("mode", "warning", "kept", "pages"),
    [
        ("total_grows", "totalRecords changed", 30, [1, 2, 3]),
        ("long_data", "more than pageSize", 25, [1, 2, 3]),
    ],
)
async def test_absorbed_faults_warn_and_yield_each_item_once(
    hostile: HostileServer,
    hostile_client: Client,
    twin: str,
    resource: str,
    mode: str,
    warning: str,
    kept: int,
    pages: list[int],
) -> None:
    with pytest.warns(PaginationWarning, match=warning) as records:
        # Some modes through the fetch-ahead driver, some through the sequential one.
        out, error = await run_faulty(
            hostile, hostile_client, twin, resource, mode, concurrency=1 + len(mode) % 3
        )
    # Warnings point at the caller's code, not into the package.
    assert {r.filename for r in records} == {__file__}
    assert error is None
    # (With a growing set, page 3 is full: the first 30 of a longer list.)
    assert ids(out) == expected_ids(hostile, resource, 100)[:kept]
    # The plan from the first page bounds the requests whatever the links say.
    assert sorted(asked(hostile, resource)) == pages


@pytest.mark.parametrize("mode", ["next_back", "next_offsite", "no_next"])
async def test_next_links_are_neither_followed_nor_checked(
    hostile: HostileServer, hostile_client: Client, twin: str, resource: str, mode: str
) -> None:
    # Pages go by number: a link backwards, to another origin or missing changes nothing.
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out, error = await run_faulty(
            hostile, hostile_client, twin, resource, mode, concurrency=2
        )
    assert error is None
    assert ids(out) == expected_ids(hostile, resource)
    assert sorted(asked(hostile, resource)) == [1, 2, 3]


@pytest.mark.parametrize(
    ("mode", "warning"),
    [
        ("total_grows", "totalRecords changed from 25 to 50"),
        ("long_data", "more than pageSize"),
    ],
)
async def test_absorbed_faults_name_the_fault_in_one_warning(
    hostile: HostileServer, hostile_client: Client, mode: str, warning: str
) -> None:
    hostile.state.reset(mode)
    with pytest.warns(PaginationWarning) as records:
        items = list(paginate(list_shipments, hostile_client, page_size=10))
    messages = [str(r.message) for r in records]
    assert len(messages) == 1, messages
    assert warning in messages[0]
    assert len({_id(i) for i in items}) == len(items)


async def test_records_shifted_by_an_insertion_are_yielded_once(
    hostile: HostileServer, hostile_client: Client, twin: str, resource: str
) -> None:
    # Page 2 starts with the last three records of page 1: the plan keeps nothing of
    # page 1 in memory but its body, and rebuilds those items from it to compare.
    with pytest.warns(PaginationWarning) as records:
        out, error = await run_faulty(
            hostile, hostile_client, twin, resource, "shifted"
        )
    assert error is None
    assert ids(out) == expected_ids(hostile, resource)
    messages = [str(r.message) for r in records]
    assert any("3 items already yielded were dropped" in m for m in messages), messages
    assert asked(hostile, resource) == [1, 2, 3]


@pytest.mark.parametrize(
    ("mode", "page", "cause", "message", "attempts"),
    [
        ("twice", 2, InconsistentPageError, "repeats items", 1),
        ("wrong_number", 2, InconsistentPageError, "answered page 1", 1),
        ("wrong_size", 1, InconsistentPageError, "pageSize 11", 1),
        ("empty_middle", 2, InconsistentPageError, "empty", 1),
        ("missing_total", 1, InvalidResponseError, "unreadable answer", 1),
        ("missing_data", 1, InvalidResponseError, "unreadable answer", 1),
        ("not_json", 2, InvalidResponseError, "unreadable answer", 1),
        ("not_a_page", 2, InvalidResponseError, "unreadable answer", 1),
        # A plain generated client retries nothing (and no client retries a 500).
        ("fail", 2, ServerError, "500", 1),
    ],
)
async def test_unusable_pages_stop_with_the_page_to_resume_from(
    hostile: HostileServer,
    hostile_client: Client,
    twin: str,
    resource: str,
    mode: str,
    page: int,
    cause: type[Exception],
    message: str,
    attempts: int,
) -> None:
    with testing.no_retry_sleep() as delays:
        out, error = await run_faulty(hostile, hostile_client, twin, resource, mode)
    assert error is not None
    assert error.page_number == error.start_page == page
    assert isinstance(error, cause)
    assert message in str(error)
    assert ids(out) == expected_ids(hostile, resource)[: (page - 1) * 10]
    assert asked(hostile, resource) == list(range(1, page)) + [page] * attempts
    assert len(delays) == attempts - 1

    # Once the server behaves again, resuming gives exactly the items not yet yielded.
    hostile.state.reset("honest")
    rest: list[Any] = []
    await drain(
        twin,
        ENDPOINTS[resource],
        hostile_client,
        rest,
        page_size=10,
        start_page=error.start_page,
    )
    assert ids(out + rest) == expected_ids(hostile, resource)


async def test_a_server_that_never_ends_is_bounded_by_the_first_page(
    hostile: HostileServer, hostile_client: Client, twin: str, resource: str
) -> None:
    with pytest.warns(PaginationWarning, match="totalRecords changed"):
        out, error = await run_faulty(
            hostile, hostile_client, twin, resource, "total_grows", concurrency=3
        )
    assert error is None
    assert ids(out) == expected_ids(hostile, resource, 100)[:30]
    assert sorted(asked(hostile, resource)) == [1, 2, 3]


def page_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name.startswith("service-api-pages")]


async def test_a_failure_with_pages_in_flight_leaves_no_thread(
    hostile: HostileServer, hostile_client: Client
) -> None:
    hostile.state.reset("fail", records=200, fail_page=3, delay=0.2)
    out: list[Any] = []
    pager = paginate(list_devices, hostile_client, page_size=10, concurrency=4)
    with pytest.raises(ServiceApiError) as info:
        out.extend(pager)
    assert info.value.start_page == 3
    assert len(out) == 20
    assert page_threads() == []
    # Pages beyond the window were never asked for.
    assert max(asked(hostile, "devices")) <= 3 + 4


async def test_a_failure_with_pages_in_flight_cancels_the_tasks(
    hostile: HostileServer, hostile_client: Client
) -> None:
    hostile.state.reset("fail", records=200, fail_page=3, delay=0.2)
    before = asyncio.all_tasks()
    out: list[Any] = []
    started = time.monotonic()
    with pytest.raises(ServiceApiError) as info:
        await drain(
            "async", list_devices, hostile_client, out, page_size=10, concurrency=4
        )
    assert info.value.start_page == 3
    assert len(out) == 20
    assert asyncio.all_tasks() == before
    assert max(asked(hostile, "devices")) <= 3 + 4
    assert time.monotonic() - started < 5


async def test_at_most_concurrency_requests_are_in_flight(
    hostile: HostileServer, hostile_client: Client, twin: str
) -> None:
    deadline = time.monotonic() + 10
    while hostile.state.in_flight:  # pages of an earlier test still being answered
        assert time.monotonic() < deadline, "the server never went idle"
        await asyncio.sleep(0.01)
    hostile.state.reset("slow", records=300, delay=0.02)
    out: list[Any] = []
    await drain(twin, list_devices, hostile_client, out, page_size=10, concurrency=3)
    assert ids(out) == expected_ids(hostile, "devices")
    # Pages wait ahead of the consumer, but never more than three requests at once.
    assert hostile.state.peak_in_flight == 3


async def test_cancelling_the_consumer_cancels_the_pages_in_flight(
    hostile: HostileServer, hostile_client: Client
) -> None:
    hostile.state.reset("slow", records=200, delay=1.0)
    before = asyncio.all_tasks()
    items = aiter(paginate(list_devices, hostile_client, page_size=10, concurrency=4))
    seen: list[Any] = []

    async def consume() -> None:
        async for item in items:
            seen.append(item)

    consumer = asyncio.create_task(consume())
    deadline = time.monotonic() + 10
    while len(asked(hostile, "devices")) < 1 + 4:  # page 1, then four in flight
        assert time.monotonic() < deadline, "the pages ahead were never asked for"
        await asyncio.sleep(0.01)
    consumer.cancel()
    with pytest.raises(asyncio.CancelledError):
        await consumer
    await items.aclose()
    assert len(seen) == 10
    assert asyncio.all_tasks() == before


# -- pages refused: no retry layer here (a plain generated client retries nothing) -----------


@pytest.mark.parametrize(
    ("status", "cause"),
    [(400, BadRequestError), (403, PermissionDeniedError), (404, NotFoundError)],
)
async def test_a_page_refused_for_good_is_not_fetched_again_nor_advised_to_resume(
    hostile: HostileServer,
    hostile_client: Client,
    twin: str,
    status: int,
    cause: type[ServiceApiError],
) -> None:
    hostile.state.reset("fail", fail_status=status)
    out: list[Any] = []
    with testing.no_retry_sleep() as delays, pytest.raises(cause) as info:
        await drain(twin, list_devices, hostile_client, out, page_size=10)
    assert asked(hostile, "devices") == [1, 2]
    assert delays == []
    assert info.value.start_page == 2
    assert info.value.items_yielded == len(out) == 10
    assert info.value.resumable is (status == 404)
    advice = [note for note in getattr(info.value, "__notes__", []) if "resume" in note]
    assert bool(advice) is info.value.resumable


async def test_a_401_on_a_page_is_caught_as_an_authentication_error(
    hostile: HostileServer, hostile_client: Client, twin: str
) -> None:
    hostile.state.reset("fail", fail_status=401)
    out: list[Any] = []
    with testing.no_retry_sleep():
        try:
            await drain(twin, list_devices, hostile_client, out, page_size=10)
        except AuthenticationError as exc:  # what a user writes around the loop
            caught: AuthenticationError | None = exc
        else:
            caught = None
    assert caught is not None
    assert caught.status_code == 401
    assert caught.resumable
    assert (caught.start_page, caught.items_yielded) == (2, 10)
    assert asked(hostile, "devices") == [1, 2]


# -- records that cannot become their model ----------------------------------------------------


@pytest.mark.parametrize("odd", [5, [1, 2], None, "text", True, "long " * 40])
async def test_a_record_that_is_not_an_object_stops_with_the_page_and_every_record(
    hostile: HostileServer, hostile_client: Client, twin: str, resource: str, odd: Any
) -> None:
    hostile.state.reset("odd_record", odd=odd)
    out: list[Any] = []
    with pytest.raises(InvalidRecordError) as info:
        await drain(twin, ENDPOINTS[resource], hostile_client, out, page_size=10)
    error = info.value
    assert isinstance(error, InvalidResponseError)
    assert (error.page_number, error.index, error.items_yielded) == (2, 3, 10)
    assert error.raw_item == odd
    assert "page 2" in str(error)
    # The record is quoted, cut to 80 characters.
    assert str(error).endswith(
        f"record 3 of data is not a record: {json.dumps(odd)[:80]}"
    )
    # Nothing lost: the page's records as sent, the odd one in its place.
    page_rows = hostile.state.dataset(resource)[10:20]
    assert error.raw_items == [*page_rows[:3], odd, *page_rows[4:]]
    # Resuming at the same page would fail the same way: not advised.
    assert not error.resumable
    assert not [note for note in getattr(error, "__notes__", []) if "resume" in note]
    assert error.start_page is not None
    rest: list[Any] = []
    await drain(
        twin,
        ENDPOINTS[resource],
        hostile_client,
        rest,
        page_size=10,
        start_page=error.start_page + 1,
    )
    saved = [
        row[ID_FIELDS[resource]] for row in error.raw_items if isinstance(row, dict)
    ]
    assert ids(out) + saved + ids(rest) == [
        i for n, i in enumerate(expected_ids(hostile, resource)) if n != 13
    ]


async def test_raw_items_of_a_page_are_its_records_as_sent(
    hostile: HostileServer, hostile_client: Client
) -> None:
    hostile.state.reset("shifted")
    with pytest.warns(PaginationWarning):
        pages = list(paginate(list_devices, hostile_client, page_size=10).pages())
    # The three repeats on page 2 are dropped from items and raw_items alike.
    assert (
        [len(p.raw_items) for p in pages] == [len(p.items) for p in pages] == [10, 7, 8]
    )
    assert [raw["deviceId"] for p in pages for raw in p.raw_items] == ids(
        [item for p in pages for item in p.items]
    )
