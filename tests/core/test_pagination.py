"""Pagination against the mock over loopback HTTP, sync and async twins side by side."""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import gc
import math
import ssl
import sys
import threading
import time
import warnings
from collections.abc import AsyncIterator, Callable
from types import ModuleType
from typing import Any, cast

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import service_api_client
from service_api import (
    ApiStatusError,
    AuthenticationError,
    Client,
    InvalidCredentialsError,
    InvalidRecordError,
    Page,
    PaginationWarning,
    ServiceApiError,
    paginate,
    testing,
)
from service_api_client.api.devices import list_devices
from service_api_client.api.shipments import list_shipments
from service_api_client.models import DevicePage, ShipmentPage
from service_api_mock import DEMO_CLIENT_ID, DEMO_CLIENT_SECRET, RunningMock

pytestmark = pytest.mark.anyio

ENDPOINTS: dict[str, tuple[ModuleType, str, str, str]] = {
    # resource: (module, operationId, id attribute, id field on the wire)
    "shipments": (list_shipments, "listShipments", "shipment_id", "shipmentId"),
    "devices": (list_devices, "listDevices", "device_id", "deviceId"),
}


@pytest.fixture(scope="session")
def tls_context() -> ssl.SSLContext:
    """One TLS context for every client: loading the CA bundle is what makes creating
    a client slow, and the loopback mock never uses it."""
    return ssl.create_default_context()


def make_client(mock: RunningMock, tls: ssl.SSLContext, **options: Any) -> Client:
    return Client(
        mock.base_url,
        DEMO_CLIENT_ID,
        DEMO_CLIENT_SECRET,
        "acct-1",
        httpx_args={"verify": tls},
        **options,
    )


@pytest.fixture
async def client(
    mock: RunningMock, tls_context: ssl.SSLContext
) -> AsyncIterator[Client]:
    """A client of the mock for acct-1; both connection pools closed at the end."""
    async with make_client(mock, tls_context) as made:
        with made:
            yield made


@pytest.fixture(params=sorted(ENDPOINTS))
def resource(request: pytest.FixtureRequest) -> str:
    return str(request.param)


async def drain(
    twin: str, endpoint: Any, client: service_api_client.Client, **options: Any
) -> list[Any]:
    pager = paginate(endpoint, client, **options)
    if twin == "sync":
        return list(pager)
    return [item async for item in pager]


def ids_of(items: list[Any], resource: str) -> list[str]:
    attr = ENDPOINTS[resource][2]
    return [getattr(item, attr) for item in items]


def dataset_ids(mock: RunningMock, resource: str) -> list[str]:
    field = ENDPOINTS[resource][3]
    return [row[field] for row in mock.service.dataset(resource, "acct-1")]


def page_requests(mock: RunningMock, resource: str) -> int:
    return mock.service.count(ENDPOINTS[resource][1], status=200)


def settled_requests(mock: RunningMock, resource: str, expected: int) -> bool:
    """Whether the mock counted exactly ``expected`` pages served. The mock counts a
    request just after answering it, so the last one may need a moment to show."""
    deadline = time.monotonic() + 5
    while page_requests(mock, resource) < expected and time.monotonic() < deadline:
        time.sleep(0.005)
    return page_requests(mock, resource) == expected


def expected_requests(total: int, size: int, start: int, max_items: int | None) -> int:
    """The fewest requests that can give the items asked for."""
    if max_items == 0:
        return 0
    last = math.ceil(total / size)
    if start > last:
        return 1  # one request to learn that the start is past the end
    pages = last - start + 1
    if max_items is not None:
        pages = min(pages, math.ceil(max_items / size))
    return pages


# -- every record exactly once, in order, with the fewest requests -----------------------


# Pages served per example are capped (through max_items) so the property runs in a
# few seconds; every argument still spans its whole range.
MAX_PAGES_PER_EXAMPLE = 25


@st.composite
def paging_cases(draw: st.DrawFn) -> tuple[int, int, int, int | None, int, str]:
    total = draw(st.integers(0, 500))
    page_size = draw(st.integers(1, 60))
    size = min(page_size, 50)
    start_page = draw(st.integers(1, max(1, math.ceil(total / size)) + 2))
    pages_left = math.ceil(total / size) - start_page + 1
    if pages_left > MAX_PAGES_PER_EXAMPLE:
        max_items: int | None = draw(st.integers(0, MAX_PAGES_PER_EXAMPLE * size))
    else:
        max_items = draw(st.none() | st.integers(0, 520))
    concurrency = draw(st.integers(1, 8))
    resource = draw(st.sampled_from(sorted(ENDPOINTS)))
    return total, page_size, start_page, max_items, concurrency, resource


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(case=paging_cases())
async def test_every_record_once_in_order_with_minimal_requests(
    mock: RunningMock,
    client: Client,
    twin: str,
    case: tuple[int, int, int, int | None, int, str],
) -> None:
    total, page_size, start_page, max_items, concurrency, resource = case
    mock.service.reset(records=total)
    size = min(page_size, 50)
    options = dict(
        page_size=page_size,
        start_page=start_page,
        max_items=max_items,
        concurrency=concurrency,
    )
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("error")
        warnings.simplefilter("always", PaginationWarning)
        items = await drain(twin, ENDPOINTS[resource][0], client, **options)
    # Only the clamp of page_size, and only once.
    assert [str(w.message) for w in caught] == (
        [f"page_size {page_size} is above the service's maximum; using 50"]
        if page_size > 50
        else []
    )
    expected = dataset_ids(mock, resource)[(start_page - 1) * size :]
    if max_items is not None:
        expected = expected[:max_items]
    assert ids_of(items, resource) == expected
    assert settled_requests(
        mock, resource, expected_requests(total, size, start_page, max_items)
    )


async def test_the_list_accessor_and_paginate_page_alike(
    mock: RunningMock, client: Client, twin: str, resource: str
) -> None:
    mock.service.reset(records=37)
    module = ENDPOINTS[resource][0]
    pager = getattr(client, resource).list(page_size=10, concurrency=3)
    assert repr(pager) == repr(paginate(module, client, page_size=10, concurrency=3))
    by_list = list(pager) if twin == "sync" else [item async for item in pager]
    by_module = await drain(twin, module, client, page_size=10)
    assert ids_of(by_list, resource) == ids_of(by_module, resource)
    assert ids_of(by_list, resource) == dataset_ids(mock, resource)


async def test_pages_carry_number_model_and_items(
    mock: RunningMock, client: Client, twin: str
) -> None:
    mock.service.reset(records=23)
    paged = client.shipments.list(page_size=10, start_page=2).pages()
    pages = list(paged) if twin == "sync" else [p async for p in paged]
    assert [p.number for p in pages] == [2, 3]
    assert [len(p.items) for p in pages] == [10, 3]
    assert all(p.total_records == 23 for p in pages)
    assert all(isinstance(p.model, ShipmentPage) for p in pages)
    assert repr(pages[0]) == "Page(number=2, items=10, model=ShipmentPage)"
    with pytest.raises(dataclasses.FrozenInstanceError):
        pages[0].number = 3  # type: ignore[misc]  # a page is what the server sent


async def test_raw_items_are_the_records_as_the_api_sent_them(
    mock: RunningMock, client: Client, twin: str, resource: str
) -> None:
    mock.service.reset(records=23)
    module = ENDPOINTS[resource][0]
    paged = paginate(module, client, page_size=10, concurrency=2).pages()
    pages: list[Page[Any]] = list(paged) if twin == "sync" else [p async for p in paged]
    raw = [record for page in pages for record in page.raw_items]
    # Exactly, undeclared fields and the spelling of date-times included.
    assert raw == mock.service.dataset(resource, "acct-1")
    assert all(len(page.raw_items) == len(page.items) for page in pages)
    assert pages[0].raw_items is pages[0].raw_items  # decoded once


async def test_max_pages_bounds_page_iteration(
    mock: RunningMock, client: Client, twin: str
) -> None:
    mock.service.reset(records=100)
    paged = client.devices.list(page_size=10, max_pages=3, concurrency=4).pages()
    pages = list(paged) if twin == "sync" else [p async for p in paged]
    assert [p.number for p in pages] == [1, 2, 3]
    assert settled_requests(mock, "devices", 3)


# -- arguments ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "options",
    [
        {"page_size": 0},
        {"page_size": -5},
        {"start_page": 0},
        {"start_page": -3},
        {"concurrency": 0},
        {"max_items": -1},
        {"max_pages": -1},
    ],
)
async def test_bad_arguments_fail_before_any_request(
    mock: RunningMock, client: Client, twin: str, options: dict[str, Any]
) -> None:
    call: Callable[..., object] = client.shipments.list
    if twin == "sync":
        call = functools.partial(paginate, list_shipments, client)
    with pytest.raises(ValueError, match="must be"):
        call(**options)
    assert mock.service.counts() == {}


async def test_reserved_and_unknown_parameters_are_refused_before_any_request(
    mock: RunningMock, client: Client
) -> None:
    with pytest.raises(TypeError, match="start_page"):
        paginate(list_shipments, client, page_number=3)
    with pytest.raises(TypeError, match=r"list_shipments: .*'colour'"):
        paginate(list_shipments, client, colour="red")
    with pytest.raises(
        TypeError, match="key must be a function of an item, not 'shipmentId'"
    ):
        paginate(list_shipments, client, key=cast(Any, "shipmentId"))
    # The accessor's signature names every option: anything else is Python's TypeError.
    unknown: Any = {"colour": "red"}
    for options in (unknown, {"page_number": 3}, {"page_retries": 3}):
        with pytest.raises(TypeError, match="unexpected keyword argument"):
            client.shipments.list(**options)
    with pytest.raises(TypeError, match="key must be a function of an item"):
        client.shipments.list(key=cast(Any, "shipmentId"))
    assert mock.service.counts() == {}


async def test_a_page_size_above_50_warns_once_and_pages_by_50(
    mock: RunningMock, client: Client, twin: str
) -> None:
    mock.service.reset(records=120)
    with pytest.warns(PaginationWarning, match="page_size 80") as caught:
        items = await drain(twin, list_shipments, client, page_size=80)
    assert len(caught) == 1
    assert caught[0].filename == __file__
    assert len(items) == 120
    assert settled_requests(mock, "shipments", 3)


# -- leaving early, failing, resuming ----------------------------------------------------


def page_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name.startswith("service-api-pages")]


async def test_leaving_a_sync_loop_early_stops_every_thread(
    mock: RunningMock, client: Client
) -> None:
    mock.service.reset(records=400)
    items = iter(paginate(list_shipments, client, page_size=10, concurrency=6))
    taken = [next(items) for _ in range(25)]
    assert len(taken) == 25
    assert page_threads()  # pages are being fetched ahead
    items.close()
    assert page_threads() == []
    # At most the pages fetched ahead (two per unit of concurrency) beyond the three
    # handed over and the one being read.
    assert page_requests(mock, "shipments") <= 3 + 1 + 2 * 6

    abandoned = iter(paginate(list_shipments, client, page_size=10, concurrency=6))
    next(abandoned)
    del abandoned
    gc.collect()
    assert page_threads() == []

    pages = iter(client.shipments.list(page_size=10, concurrency=6).pages())
    assert next(pages).number == 1
    assert page_threads()
    pages.close()
    assert page_threads() == []


async def test_leaving_an_async_loop_early_cancels_every_task(
    mock: RunningMock, client: Client
) -> None:
    mock.service.reset(records=400)
    before = asyncio.all_tasks()
    items = aiter(client.shipments.list(page_size=10, concurrency=6))
    taken = 0
    async for _ in items:
        taken += 1
        if taken == 15:  # on page 2: the pages after it are in flight
            break
    assert asyncio.all_tasks() != before
    await items.aclose()
    assert asyncio.all_tasks() == before
    assert page_requests(mock, "shipments") <= 2 + 1 + 6

    pages = aiter(client.shipments.list(page_size=10, concurrency=6).pages())
    assert (await anext(pages)).number == 1
    await anext(pages)  # the first page told how many: the pages after it are in flight
    assert asyncio.all_tasks() != before
    await pages.aclose()
    assert asyncio.all_tasks() == before


async def test_resuming_after_failures_gives_every_record_once(
    mock: RunningMock, tls_context: ssl.SSLContext, twin: str, resource: str
) -> None:
    mock.service.reset(records=300, seed=7)
    mock.service.set_faults(fault_rate=0.25)
    collected: list[Any] = []
    start, failures = 1, 0
    async with make_client(mock, tls_context, max_retries=0) as flaky:
        with flaky:
            while True:
                # No retries (the client's are the only ones): each failure shows, and
                # is resumed by the caller.
                options: dict[str, Any] = dict(
                    page_size=20, start_page=start, concurrency=3
                )
                try:
                    if twin == "sync":
                        for item in paginate(ENDPOINTS[resource][0], flaky, **options):
                            collected.append(item)
                    else:
                        async for item in paginate(
                            ENDPOINTS[resource][0], flaky, **options
                        ):
                            collected.append(item)
                    break
                except ServiceApiError as exc:
                    failures += 1
                    if exc.start_page is None or exc.items_yielded is None:
                        raise  # not a failure of the iteration
                    yielded, start_page = exc.items_yielded, exc.start_page
                assert failures < 100, "the resume loop does not progress"
                assert yielded == (start_page - start) * 20
                start = start_page
    assert failures > 0  # the faults did happen
    assert ids_of(collected, resource) == dataset_ids(mock, resource)


async def test_paging_survives_token_revocation_and_retries(
    mock: RunningMock, tls_context: ssl.SSLContext, twin: str
) -> None:
    mock.service.reset(records=250, seed=3)
    mock.service.set_faults(fault_rate=0.2, retry_after=0.0)
    with testing.no_retry_sleep():
        async with make_client(mock, tls_context, max_retries=8) as sturdy:
            with sturdy:
                items: list[Any] = []
                if twin == "sync":
                    for item in paginate(
                        list_devices, sturdy, page_size=10, concurrency=5
                    ):
                        items.append(item)
                        if len(items) == 30:
                            mock.service.revoke_tokens()
                else:
                    async for item in sturdy.devices.list(page_size=10, concurrency=5):
                        items.append(item)
                        if len(items) == 30:
                            mock.service.revoke_tokens()
    assert ids_of(items, "devices") == dataset_ids(mock, "devices")
    # Single-flight refresh: one token at start and about one after the revocation.
    assert mock.service.count("authenticate", status=200) <= 3


# -- which endpoint, which client: refused before any request ------------------------------


@pytest.mark.parametrize(
    ("endpoint", "message"),
    [
        # Functions are no longer endpoints: the module is.
        (list_shipments.sync, "not a generated list endpoint module"),
        (list_shipments.sync_detailed, "not a generated list endpoint module"),
        (list_shipments.asyncio_detailed, "not a generated list endpoint module"),
        (lambda **kwargs: None, "not a generated list endpoint module"),
        (42, "not a generated list endpoint module"),
        (ShipmentPage, "not a generated list endpoint module"),
        (functools, "not a generated list endpoint module"),
    ],
)
async def test_what_is_not_an_endpoint_is_a_type_error_before_any_request(
    mock: RunningMock, client: Client, endpoint: Any, message: str
) -> None:
    with pytest.raises(TypeError, match=message):
        paginate(endpoint, client)
    assert mock.service.counts() == {}


@pytest.mark.parametrize(
    "not_a_client", [None, "http://127.0.0.1/public/v3", list_shipments]
)
async def test_what_is_not_a_client_is_a_type_error_before_any_request(
    mock: RunningMock, not_a_client: Any
) -> None:
    with pytest.raises(TypeError, match=r"client must be a service_api\.Client"):
        paginate(list_shipments, not_a_client)
    assert mock.service.counts() == {}


@pytest.mark.parametrize("status", [199, 201, 204])
async def test_only_a_200_answer_is_a_page(twin: str, status: int) -> None:
    # A plain generated client hands back every answer: one with a page's body but
    # another status is the typed error of that status, not a page.
    def answer(request: httpx.Request) -> httpx.Response:
        return httpx.Response(
            status, json={"totalRecords": 0, "pageNumber": 1, "data": []}
        )

    plain = service_api_client.Client(
        base_url="http://127.0.0.1:9/public/v3",
        httpx_args={"transport": httpx.MockTransport(answer)},
    )
    with pytest.raises(ApiStatusError) as info:
        await drain(twin, list_shipments, plain)
    assert info.value.status_code == status
    assert (info.value.start_page, info.value.items_yielded) == (1, 0)


def test_an_invalid_record_error_takes_its_details_by_keyword() -> None:
    error = InvalidRecordError(
        "page 2: record 1", index=1, raw_item=7, raw_items=[{}, 7]
    )
    assert (error.index, error.raw_item, error.raw_items) == (1, 7, [{}, 7])
    with pytest.raises(TypeError):
        InvalidRecordError("page 2: record 1", 1, 7, [{}, 7])  # type: ignore[call-arg]


async def test_pages_fetched_ahead_are_parsed_by_the_consumer(
    mock: RunningMock, client: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Workers only send and read: every page is built on the thread that iterates.
    mock.service.reset(records=95)
    parsed_on: list[str] = []
    build = DevicePage.from_dict.__func__  # type: ignore[attr-defined]

    def recording(cls: type[DevicePage], src: Any) -> DevicePage:
        parsed_on.append(threading.current_thread().name)
        return cast(DevicePage, build(cls, src))

    monkeypatch.setattr(DevicePage, "from_dict", classmethod(recording))
    items = list(paginate(list_devices, client, page_size=10, concurrency=3))
    assert len(items) == 95
    assert parsed_on == [threading.current_thread().name] * 10


# -- the pager: items with for / async for, pages with pages() and for / async for ---------


async def test_the_pager_gives_items_and_pages_sync_and_async_and_starts_afresh(
    mock: RunningMock, client: Client
) -> None:
    mock.service.reset(records=23)
    pager = paginate(list_shipments, client, page_size=10)
    assert repr(pager) == "Pager(list_shipments, page_size=10)"
    expected = dataset_ids(mock, "shipments")
    assert ids_of(list(pager), "shipments") == expected
    assert ids_of([item async for item in pager], "shipments") == expected
    assert [page.number for page in pager.pages()] == [1, 2, 3]
    assert [len(page.items) async for page in pager.pages()] == [10, 10, 3]
    assert (
        page_requests(mock, "shipments") == 3 * 4
    )  # each iteration fetches every page


async def test_refused_credentials_are_raised_at_once_and_not_advised_to_resume(
    mock: RunningMock, tls_context: ssl.SSLContext, twin: str
) -> None:
    refused = Client(
        mock.base_url,
        DEMO_CLIENT_ID,
        "not-the-secret",
        "acct-1",
        httpx_args={"verify": tls_context},
    )
    async with refused:
        with refused, testing.no_retry_sleep() as delays:
            try:
                await drain(twin, list_shipments, refused)
            except (
                AuthenticationError
            ) as exc:  # InvalidCredentialsError, caught as such
                caught: ServiceApiError | None = exc
            except (
                InvalidCredentialsError
            ) as exc:  # before it moves under AuthenticationError
                caught = exc
            else:
                caught = None
    assert isinstance(caught, InvalidCredentialsError)
    assert (caught.start_page, caught.items_yielded) == (1, 0)
    assert not caught.resumable
    assert delays == []  # refused credentials are not retried
    assert mock.service.count("authenticate") == 1
    assert page_requests(mock, "shipments") == 0


async def test_max_pages_0_fetches_nothing(
    mock: RunningMock, client: Client, twin: str
) -> None:
    assert await drain(twin, list_shipments, client, max_pages=0) == []
    assert [page async for page in client.shipments.list(max_pages=0).pages()] == []
    assert mock.service.counts() == {}


def line_here() -> int:
    """The caller's line number."""
    return sys._getframe(1).f_lineno


def serve_one_record_too_many(request: httpx.Request) -> httpx.Response:
    """A token, then each page of 5 records holding one record more than pageSize."""
    if request.url.path.endswith("/authenticate"):
        token = {"access_token": "tk", "token_type": "Bearer", "expires_in": "3600"}
        return httpx.Response(200, json=token)
    number, size = (
        int(request.url.params[name]) for name in ("pageNumber", "pageSize")
    )
    records = [{"shipmentId": f"s-{n}"} for n in range(5)][
        (number - 1) * size : number * size + 1
    ]
    envelope = {"totalRecords": 5, "pageNumber": number, "pageSize": size}
    return httpx.Response(200, json={**envelope, "data": records})


async def test_a_warning_names_the_caller_s_line(twin: str) -> None:
    transport: Any = httpx.MockTransport(serve_one_record_too_many)
    async with Client(
        "https://api.test/public/v3",
        "cid",
        "s3cret",
        "acct-1",
        httpx_args={"transport": transport},
    ) as client:
        with pytest.warns(PaginationWarning, match="page_size 80") as made:
            line, pager = line_here(), client.shipments.list(page_size=80)
        assert [w.lineno for w in made] == [line]
        with pytest.warns(PaginationWarning, match="page_size 80") as made:
            line, pager = line_here(), paginate(list_shipments, client, page_size=80)
        assert [w.lineno for w in made] == [line]
        pager = client.shipments.list(page_size=2)
        with warnings.catch_warnings(record=True) as iterated:
            warnings.simplefilter("always", PaginationWarning)
            if twin == "sync":
                line, items = line_here(), list(pager)
            else:
                line, items = line_here(), [item async for item in pager]
        assert len(items) == 5
        assert [str(w.message) for w in iterated] == [
            "page 1 holds 3 items, more than pageSize 2; the extra items are ignored"
        ]
        assert [(w.filename, w.lineno) for w in iterated] == [(__file__, line)]


def test_a_pager_prints_every_option_it_was_given() -> None:
    with Client("http://127.0.0.1:9/public/v3", "c", "a-secret", None) as client:
        plain = paginate(list_shipments, client)
        given = paginate(
            list_shipments,
            client,
            page_size=20,
            start_page=3,
            max_items=100,
            max_pages=4,
            concurrency=2,
            key=repr,
        )
    assert repr(plain).startswith("Pager(list_shipments, page_size=")
    assert repr(given) == (
        "Pager(list_shipments, page_size=20, start_page=3, max_items=100, "
        "max_pages=4, concurrency=2, key='repr')"
    )
