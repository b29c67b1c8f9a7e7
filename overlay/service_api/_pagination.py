"""Page iteration for every list endpoint: ``paginate`` returns a :class:`Pager`, whose
items come with ``for`` / ``async for`` and pages with ``.pages()`` / ``.apages()``;
``apaginate``, ``iter_pages`` and ``aiter_pages`` are thin names over it.

Every decision about pages lives in the I/O-free :class:`~service_api._page_plan.PagePlan`;
the drivers here send the request for the page the plan names (built by the generated
module's ``_get_kwargs`` from ``pageNumber`` / ``pageSize`` against the client's base URL:
a ``next`` link is never followed), fetch a failed page again within the page retry
budget, parse it into the endpoint's page model and hand pages back in order. With
``concurrency > 1`` threads or tasks send the requests and read the answers while the
consumer parses the pages, in order.

The policies (misbehaving servers, records that cannot become their model, page
retries) are in the README, "Pagination".
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import dataclasses
import inspect
import json
import logging
import os
import random
import sys
import threading
import warnings
from collections.abc import AsyncGenerator, Awaitable, Callable, Generator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any, Generic, Protocol, TypeVar, overload

import httpx

from service_api._errors import (
    ApiConnectionError,
    ApiTimeoutError,
    AuthenticationError,
    InvalidCredentialsError,
    InvalidResponseError,
    PaginationWarning,
    RateLimitError,
    ServerError,
    ServiceApiError,
    error_from_response,
)
from service_api._page_plan import MAX_PAGE_SIZE, KeyFunction, PagePlan, PageRequest, id_key
from service_api._retry import RETRY_SLEEP
from service_api_client import Client
from service_api_client.types import Response, Unset

T = TypeVar("T")
T_co = TypeVar("T_co", covariant=True)
M = TypeVar("M", bound="PageModel[Any]")
M_co = TypeVar("M_co", bound="PageModel[Any]", covariant=True)

logger = logging.getLogger("service_api")

#: Times a failed page is fetched again inside an iteration before its error is raised.
PAGE_RETRIES = 3
# Backoff between page retries: full jitter under min(cap, initial * 2 ** attempt), or
# the server's Retry-After when it asks for no more than _PAGE_MAX_RETRY_AFTER.
_PAGE_BACKOFF_INITIAL = 1.0
_PAGE_BACKOFF_CAP = 30.0
_PAGE_MAX_RETRY_AFTER = 60.0


class PageModel(Protocol[T_co]):
    """What every generated page model offers: the items of the page and the size of
    the whole result set (``ShipmentPage``, ``DevicePage``, ...).

    Example::

        def count(page: service_api.PageModel[Shipment]) -> int:
            return len(page.data)
    """

    @property
    def data(self) -> Sequence[T_co]: ...

    @property
    def total_records(self) -> int: ...


class ListOperation(Protocol[M_co]):
    """A generated list endpoint module, such as
    ``service_api_client.api.shipments.list_shipments``: its ``SUCCESS_MODEL`` tells the
    type checker which page model, hence which items, it returns.

    Example::

        def export(endpoint: service_api.ListOperation[PageModel[T]]) -> list[T]:
            return list(service_api.paginate(endpoint, client))
    """

    @property
    def SUCCESS_MODEL(self) -> type[M_co]: ...

    def sync_detailed(
        self, *, client: Client, page_number: int | Unset = ..., page_size: int | Unset = ...
    ) -> Response[Any]: ...

    async def asyncio_detailed(
        self, *, client: Client, page_number: int | Unset = ..., page_size: int | Unset = ...
    ) -> Response[Any]: ...


SyncListFunction = Callable[..., Response[Any]]
AsyncListFunction = Callable[..., Awaitable[Response[Any]]]


@dataclass(frozen=True, slots=True, repr=False)
class Page(Generic[M_co]):
    """One page of a list endpoint, as :meth:`Pager.pages` / :func:`iter_pages` yield it.

    Attributes:
        number: the page number (``pageNumber``), counted from 1.
        model: the typed page model the endpoint returned (``ShipmentPage``, ...), with
            its envelope and any field the spec does not name (``additional_properties``).
        items: the items of the page to use: ``model.data`` without repeats of earlier
            pages (see the pagination policy in the README).
        total_records: ``totalRecords`` of this page.
        raw_items: each of ``items`` as the JSON the server sent, decoded on first use.

    Example::

        for page in service_api.paginate(list_shipments, client).pages():
            print(page.number, len(page.items), "of", page.total_records)
    """

    number: int
    model: M_co
    _items: tuple[Any, ...] = field(default=())
    # The response body, and where each of _items stands in its data.
    _content: bytes | None = field(default=None)
    _kept: tuple[int, ...] = field(default=())
    _raw: list[tuple[Any, ...]] = field(default_factory=list, compare=False)

    @property
    def items(self: Page[PageModel[T]]) -> Sequence[T]:
        """The items of the page (repeats of earlier pages dropped)."""
        return self._items

    @property
    def total_records(self: Page[PageModel[Any]]) -> int:
        """``totalRecords`` as this page stated it."""
        return self.model.total_records

    @property
    def raw_items(self) -> Sequence[Any]:
        """The items as the server sent them, aligned with :attr:`items`: every field,
        declared or not, spelled as sent (a date-time keeps its ``Z``). Decoded from the
        response body on first access only, so iterating without asking costs nothing.

        Example::

            for page in service_api.iter_pages(list_shipments, client):
                for raw in page.raw_items:
                    print(json.dumps(raw))
        """
        if not self._raw:
            if self._content is None:  # a page built by hand: the models are all there is
                self._raw.append(tuple(_as_dict(item) for item in self._items))
            else:
                data = json.loads(self._content)["data"]
                self._raw.append(tuple(data[index] for index in self._kept))
        return self._raw[0]

    def __repr__(self) -> str:
        return (
            f"Page(number={self.number}, items={len(self._items)}, "
            f"model={type(self.model).__name__})"
        )


def _as_dict(item: Any) -> Any:
    to_dict = getattr(item, "to_dict", None)
    return to_dict() if callable(to_dict) else item


class InvalidRecordError(InvalidResponseError):
    """A record of a page cannot become its model (a number, a list or ``null`` in
    ``data``, or an object the model still refuses). Nothing is lost: the error names
    the page and the record, and carries every record of the page as sent. Resuming at
    ``start_page`` would fail the same way (``resumable`` is false); to go past the
    record, keep ``raw_items`` and resume at ``start_page + 1``.

    Attributes:
        index: the record's place in the page's ``data``.
        raw_item: the record as sent.
        raw_items: every record of the page as sent (none of them was yielded).

    Example::

        except service_api.InvalidRecordError as exc:
            quarantine(exc.raw_items); resume_from = exc.start_page + 1
    """

    def __init__(self, message: str, *, index: int, raw_item: Any, raw_items: list[Any]) -> None:
        super().__init__(message)
        self.index = index
        self.raw_item = raw_item
        self.raw_items = raw_items

    @property
    def resumable(self) -> bool:
        """Always false: the page fails again the same way."""
        return False


# -- the endpoint, the arguments -----------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Endpoint:
    """A generated list endpoint module: how to build a page request, the page model."""

    name: str
    request_kwargs: Callable[..., dict[str, Any]]
    model: type[Any]


def _resolve(endpoint: object) -> _Endpoint:
    """The endpoint module, given or found from its ``sync_detailed`` /
    ``asyncio_detailed`` function; a ``TypeError`` for anything else."""
    module = endpoint
    if not isinstance(endpoint, ModuleType):
        name = getattr(endpoint, "__qualname__", None)
        module = sys.modules.get(str(getattr(endpoint, "__module__", "")))
        # A wrapper (functools.wraps) keeps the name but would be bypassed: refused.
        if name not in ("sync_detailed", "asyncio_detailed") or hasattr(endpoint, "__wrapped__"):
            module_name = getattr(module, "__name__", "").rpartition(".")[2] or "list_shipments"
            raise TypeError(
                f"not a list endpoint: {endpoint!r}; pass the generated endpoint module "
                f"(such as {module_name}) or its sync_detailed function"
            )
    request_kwargs = getattr(module, "_get_kwargs", None)
    model = getattr(module, "SUCCESS_MODEL", None)
    if not callable(request_kwargs) or not callable(getattr(model, "from_dict", None)):
        raise TypeError(f"not a generated list endpoint module: {module!r}")
    assert isinstance(model, type)
    return _Endpoint(str(getattr(module, "__name__", "")).rpartition(".")[2], request_kwargs, model)


@dataclass(frozen=True, slots=True)
class _Options:
    page_size: int
    start_page: int
    max_items: int | None
    max_pages: int | None
    concurrency: int
    page_retries: int
    key: KeyFunction


# The least value of each numeric option (``max_items`` and ``max_pages`` may be None).
_LEAST = {
    "page_size": 1,
    "start_page": 1,
    "concurrency": 1,
    "page_retries": 0,
    "max_items": 0,
    "max_pages": 0,
}


def _check_arguments(
    endpoint: _Endpoint, client: object, options: _Options, params: dict[str, Any]
) -> _Options:
    """Every check of the arguments, before any request; the options to use."""
    if not callable(getattr(client, "get_httpx_client", None)) or not callable(
        getattr(client, "get_async_httpx_client", None)
    ):
        raise TypeError(f"client must be a service_api.Client, not {type(client).__name__}")
    for name, least in _LEAST.items():
        value = getattr(options, name)
        if value is None and name.startswith("max_"):
            continue
        if isinstance(value, bool) or not isinstance(value, int) or value < least:
            raise ValueError(f"{name} must be an integer of at least {least}, not {value!r}")
    if not callable(options.key):
        raise TypeError(f"key must be a function of an item, not {options.key!r}")
    for reserved in ("page_number", "page_size", "client"):
        if reserved in params:
            raise TypeError(f"{reserved!r} is set by the iteration; use page_size / start_page")
    try:
        inspect.signature(endpoint.request_kwargs).bind(page_number=1, page_size=1, **params)
    except TypeError as exc:
        raise TypeError(f"{endpoint.name}: {exc}") from None
    if options.page_size > MAX_PAGE_SIZE:
        _warn(f"page_size {options.page_size} is above the service's maximum; using 50")
        options = dataclasses.replace(options, page_size=MAX_PAGE_SIZE)
    return options


_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))


def _warn(message: str) -> None:
    """Warn at the first frame outside this package: the caller's loop or call, however
    many generators and drivers lie between (their number differs per path)."""
    frame = sys._getframe(1)
    level = 2
    while frame.f_back is not None and frame.f_code.co_filename.startswith(_PACKAGE_DIR):
        frame = frame.f_back
        level += 1
    warnings.warn(message, PaginationWarning, stacklevel=level)


# -- one page: the request, its failures, its parsing -------------------------------------


def _as_error(exc: ServiceApiError | httpx.HTTPError, name: str, number: int) -> ServiceApiError:
    """The typed error of a failed page request (an httpx error converted, chained)."""
    if isinstance(exc, ServiceApiError):
        return exc
    if isinstance(exc, httpx.TimeoutException):
        error: ServiceApiError = ApiTimeoutError(f"{name}: page {number}: no answer in time")
    elif isinstance(exc, httpx.TransportError):
        error = ApiConnectionError(f"{name}: page {number}: {type(exc).__name__}")
    else:
        error = InvalidResponseError(f"{name}: page {number}: {type(exc).__name__}")
    error.__cause__ = exc
    return error


def _checked(response: httpx.Response, number: int) -> httpx.Response:
    """The response of a page, or the typed error of its status (a plain generated
    client returns error statuses; the package's ``Client`` raises them itself)."""
    if response.status_code == 200:
        return response
    if response.status_code >= 400:
        raise error_from_response(response)
    raise InvalidResponseError(f"page {number}: unexpected status {response.status_code}")


def page_retry_delay(error: ServiceApiError, attempt: int, retries: int) -> float | None:
    """Seconds to wait before fetching a failed page again, or ``None`` to give up:
    after ``retries`` page retries, or for an error a new attempt cannot fix. Retried:
    connection errors and timeouts, 429, 5xx, and a 401 other than refused credentials
    (a token revoked meanwhile: the next attempt gets a new one).

    Example::

        page_retry_delay(ServerError("503", status_code=503), 0, 3)   # 0.0 to 1.0
    """
    retryable = isinstance(
        error, ApiConnectionError | RateLimitError | ServerError | AuthenticationError
    ) and not isinstance(error, InvalidCredentialsError)
    if not retryable or attempt >= retries:
        return None
    retry_after = getattr(error, "retry_after", None)
    if isinstance(retry_after, int | float):
        return float(retry_after) if retry_after <= _PAGE_MAX_RETRY_AFTER else None
    ceiling = min(_PAGE_BACKOFF_CAP, _PAGE_BACKOFF_INITIAL * 2.0**attempt)
    return random.uniform(0.0, ceiling)  # noqa: S311 - jitter, not a secret


# What the generated parser raises for a body that is JSON but not a page of its model.
_PARSE_ERRORS = (KeyError, TypeError, ValueError, AttributeError)


@dataclass
class _Run:
    """One iteration: the endpoint, the client, the plan, and how to fetch a page."""

    endpoint: _Endpoint
    client: Client
    options: _Options
    params: dict[str, Any]
    plan: PagePlan
    # Set when the iteration ends: a worker waiting to retry a page gives up at once.
    stopped: threading.Event = field(default_factory=threading.Event)

    def _kwargs(self, request: PageRequest) -> dict[str, Any]:
        return self.endpoint.request_kwargs(
            page_number=request.number, page_size=request.size, **self.params
        )

    def _retry_delay(
        self, exc: ServiceApiError | httpx.HTTPError, number: int, attempt: int
    ) -> float:
        error = _as_error(exc, self.endpoint.name, number)
        delay = page_retry_delay(error, attempt, self.options.page_retries)
        if delay is None:
            raise error from error.__cause__
        logger.warning(
            "page %d of %s failed (%s); fetching it again in %.2f s (page retry %d of %d)",
            number,
            self.endpoint.name,
            type(error).__name__,
            delay,
            attempt + 1,
            self.options.page_retries,
        )
        return RETRY_SLEEP.wait_for(delay)

    def fetch(self, request: PageRequest) -> httpx.Response:
        """The page's response, fetched again within the page retry budget."""
        attempt = 0
        while True:
            try:
                response = self.client.get_httpx_client().request(**self._kwargs(request))
                return _checked(response, request.number)
            except (ServiceApiError, httpx.HTTPError) as exc:
                delay = self._retry_delay(exc, request.number, attempt)
            if self.stopped.wait(delay):
                raise ApiConnectionError("the iteration was closed")  # nobody reads it
            attempt += 1

    async def afetch(self, request: PageRequest) -> httpx.Response:
        """Async twin of :meth:`fetch`."""
        attempt = 0
        while True:
            try:
                client = self.client.get_async_httpx_client()
                response = await client.request(**self._kwargs(request))
                return _checked(response, request.number)
            except (ServiceApiError, httpx.HTTPError) as exc:
                delay = self._retry_delay(exc, request.number, attempt)
            await asyncio.sleep(delay)
            attempt += 1

    def judge(self, request: PageRequest, response: httpx.Response) -> Page[Any]:
        """Parse the page and let the plan judge it; the page to hand over."""
        model = self._parse(response, request.number)
        verdict = self.plan.accept(request.number, model)
        for message in verdict.warnings:
            _warn(message)
        return Page(request.number, model, verdict.items, response.content, verdict.kept)

    def _parse(self, response: httpx.Response, number: int) -> object:
        where = f"{self.endpoint.name}: page {number}"
        try:
            doc = response.json()
        except ValueError as exc:
            raise InvalidResponseError(f"{where}: unreadable answer (not JSON)") from exc
        try:
            return self.endpoint.model.from_dict(doc)
        except _PARSE_ERRORS as exc:
            raise _unreadable(self.endpoint.model, doc, where) from exc

    def mark(self, exc: ServiceApiError, request: PageRequest) -> None:
        """Mark ``exc`` with where the iteration stood."""
        exc.at_page(request.number, items_yielded=self.plan.items_yielded)


def _builds(model: type[Any], doc: dict[str, Any], data: list[Any]) -> bool:
    try:
        model.from_dict({**doc, "data": data})
    except _PARSE_ERRORS:
        return False
    return True


def _unreadable(model: type[Any], doc: object, where: str) -> InvalidResponseError:
    """The error for a page its model refused: the record at fault if the envelope
    itself is fine (found by building the page around one record at a time)."""
    data = doc.get("data") if isinstance(doc, dict) else None
    if isinstance(doc, dict) and isinstance(data, list) and _builds(model, doc, []):
        for index, raw in enumerate(data):
            if not _builds(model, doc, [raw]):
                return InvalidRecordError(
                    f"{where}: record {index} of data cannot be read as a record "
                    f"({type(raw).__name__}: {json.dumps(raw)[:80]})",
                    index=index,
                    raw_item=raw,
                    raw_items=data,
                )
    shape = type(doc).__name__ if not isinstance(doc, dict) else "object"
    return InvalidResponseError(f"{where}: unreadable answer (not a page: a JSON {shape})")


# -- the drivers ----------------------------------------------------------------------------
#
# The twins are line-for-line alike: fetch the page the plan names, let the plan judge
# it, yield it. With concurrency > 1, the pages after the first (whose number the first
# page's totalRecords fixes) are fetched ahead, at most ``concurrency`` in flight and at
# most ``_AHEAD * concurrency`` asked for and not yet handed over, still judged in order.
_AHEAD = 2


def _sync_pages(run: _Run) -> Generator[Page[Any], None, None]:
    plan = run.plan
    while (request := plan.next_page_info()) is not None:
        try:
            page = run.judge(request, run.fetch(request))
        except ServiceApiError as exc:
            run.mark(exc, request)
            raise
        if run.options.concurrency > 1 and plan.has_next_page():
            yield from _sync_pages_ahead(run, page)
            return
        yield page


def _sync_pages_ahead(run: _Run, first: Page[Any]) -> Generator[Page[Any], None, None]:
    """``first``, then the pages after it, fetched on threads and handed over in order;
    the window is filled before ``first`` is handed over."""
    plan = run.plan
    pending: collections.deque[tuple[PageRequest, Future[httpx.Response]]] = collections.deque()
    numbers = iter(plan.remaining_pages())
    pool = ThreadPoolExecutor(run.options.concurrency, thread_name_prefix="service-api-pages")

    def submit_next() -> None:
        number = next(numbers, None)
        if number is not None:
            request = PageRequest(number, plan.page_size)
            pending.append((request, pool.submit(run.fetch, request)))

    try:
        for _ in range(_AHEAD * run.options.concurrency):
            submit_next()
        yield first
        while pending and plan.has_next_page():
            request, future = pending.popleft()
            try:
                response = future.result()
                # Refill before parsing: the window stays full while this thread works.
                submit_next()
                page = run.judge(request, response)
            except ServiceApiError as exc:
                run.mark(exc, request)
                raise
            yield page
    finally:
        # Early exit, error or garbage collection: no thread outlives the iterator.
        run.stopped.set()
        pool.shutdown(wait=True, cancel_futures=True)


async def _async_pages(run: _Run) -> AsyncGenerator[Page[Any], None]:
    plan = run.plan
    while (request := plan.next_page_info()) is not None:
        try:
            page = run.judge(request, await run.afetch(request))
        except ServiceApiError as exc:
            run.mark(exc, request)
            raise
        if run.options.concurrency > 1 and plan.has_next_page():
            # Closed explicitly: closing this generator does not close one it iterates.
            async with contextlib.aclosing(_async_pages_ahead(run, page)) as ahead:
                async for later in ahead:
                    yield later
            return
        yield page


async def _async_pages_ahead(run: _Run, first: Page[Any]) -> AsyncGenerator[Page[Any], None]:
    """Async twin of :func:`_sync_pages_ahead`, with tasks."""
    plan = run.plan
    pending: collections.deque[tuple[PageRequest, asyncio.Task[httpx.Response]]]
    pending = collections.deque()
    numbers = iter(plan.remaining_pages())
    in_flight = asyncio.Semaphore(run.options.concurrency)

    async def fetch(request: PageRequest) -> httpx.Response:
        async with in_flight:
            return await run.afetch(request)

    def submit_next() -> None:
        number = next(numbers, None)
        if number is not None:
            request = PageRequest(number, plan.page_size)
            pending.append((request, asyncio.ensure_future(fetch(request))))

    try:
        for _ in range(_AHEAD * run.options.concurrency):
            submit_next()
        yield first
        while pending and plan.has_next_page():
            # Left in ``pending`` while awaited: if the consumer is cancelled here, the
            # cleanup below still cancels and awaits this task.
            request, task = pending[0]
            try:
                response = await task
                pending.popleft()
                submit_next()
                # Let the new task send its request before this page is parsed.
                await asyncio.sleep(0)
                page = run.judge(request, response)
            except ServiceApiError as exc:
                run.mark(exc, request)
                raise
            yield page
    finally:
        tasks = [task for _, task in pending]
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)


def _sync_items(pages: Generator[Page[Any], None, None]) -> Generator[Any, None, None]:
    with contextlib.closing(pages):
        for page in pages:
            yield from page._items


async def _async_items(pages: AsyncGenerator[Page[Any], None]) -> AsyncGenerator[Any, None]:
    async with contextlib.aclosing(pages):
        async for page in pages:
            for item in page._items:
                yield item


# -- the public names ----------------------------------------------------------------------


class Pager(Generic[M_co]):
    """The pages and items of a list endpoint, as :func:`paginate` returns it.

    ``for`` gives the items, ``async for`` too; :meth:`pages` / :meth:`apages` give the
    pages. Each iteration starts afresh at ``start_page``. An iterator left early is
    closed by ``close()`` / ``aclose()`` (``contextlib.closing`` / ``aclosing``) or by
    garbage collection, which stops every thread or task it started.

    Example::

        shipments = service_api.paginate(list_shipments, client, concurrency=4)
        for shipment in shipments:
            print(shipment.shipment_id)
    """

    def __init__(
        self, endpoint: _Endpoint, client: Client, options: _Options, params: dict[str, Any]
    ) -> None:
        self._endpoint = endpoint
        self._client = client
        self._options = options
        self._params = params

    def _run(self) -> _Run:
        o = self._options
        plan = PagePlan(
            page_size=o.page_size,
            start_page=o.start_page,
            base_url=str(getattr(self._client, "_base_url", "")),
            max_items=o.max_items,
            max_pages=o.max_pages,
            key=o.key,
        )
        return _Run(self._endpoint, self._client, o, self._params, plan)

    def __iter__(self: Pager[PageModel[T]]) -> Generator[T, None, None]:
        return _sync_items(self.pages())

    def __aiter__(self: Pager[PageModel[T]]) -> AsyncGenerator[T, None]:
        return _async_items(self.apages())

    def pages(self) -> Generator[Page[M_co], None, None]:
        """The pages, each a :class:`Page` with its number, model and items.

        Example::

            for page in service_api.paginate(list_shipments, client).pages():
                print(page.number, len(page.items))
        """
        return _sync_pages(self._run())

    def apages(self) -> AsyncGenerator[Page[M_co], None]:
        """Async twin of :meth:`pages`; close it with ``aclose()`` when leaving early.

        Example::

            async for page in service_api.paginate(list_devices, client).apages():
                print(page.number, len(page.items))
        """
        return _async_pages(self._run())

    def __repr__(self) -> str:
        return f"Pager({self._endpoint.name}, page_size={self._options.page_size})"


@overload
def paginate(
    endpoint: ListOperation[M],
    client: Client,
    /,
    *,
    page_size: int = ...,
    start_page: int = ...,
    max_items: int | None = ...,
    max_pages: int | None = ...,
    concurrency: int = ...,
    page_retries: int = ...,
    key: KeyFunction = ...,
    **params: Any,
) -> Pager[M]: ...
@overload
def paginate(
    endpoint: SyncListFunction | AsyncListFunction,
    client: Client,
    /,
    *,
    page_size: int = ...,
    start_page: int = ...,
    max_items: int | None = ...,
    max_pages: int | None = ...,
    concurrency: int = ...,
    page_retries: int = ...,
    key: KeyFunction = ...,
    **params: Any,
) -> Pager[Any]: ...
def paginate(
    endpoint: object,
    client: Client,
    /,
    *,
    page_size: int = 50,
    start_page: int = 1,
    max_items: int | None = None,
    max_pages: int | None = None,
    concurrency: int = 1,
    page_retries: int = PAGE_RETRIES,
    key: KeyFunction = id_key,
    **params: Any,
) -> Pager[Any]:
    """The items and pages of a list endpoint, page after page: a :class:`Pager`.

    Args:
        endpoint: a generated list endpoint module (``list_shipments``: items typed
            ``Shipment``), or its ``sync_detailed`` / ``asyncio_detailed`` function.
        client: the client (``service_api.Client`` or a generated ``Client``).
        page_size: records per page, 1 to 50; above 50 the service uses 50, and so does
            this function, with a ``PaginationWarning``.
        start_page: the first page to fetch; a failure's ``start_page`` resumes.
        max_items: stop after this many items, fetching no page more than needed.
        max_pages: stop after this many pages.
        concurrency: requests in flight at once after the first page (threads or
            tasks); up to twice as many pages are fetched ahead of the loop.
        page_retries: times a failed page is fetched again (with backoff) before its
            error is raised, for connection errors, 429, 5xx and 401s (default 3).
        key: a record's identity, to drop records served again; default its id.
        **params: the endpoint's other arguments.

    Raises:
        TypeError: not an endpoint module or its function, not a client, or an
            argument the endpoint does not take; ValueError: a number out of range.
            Both before any request.
        ServiceApiError: while iterating, a page failed: the typed error itself, whose
            ``start_page`` resumes with exactly the items not yet yielded.

    Example::

        from service_api_client.api.shipments import list_shipments

        for shipment in service_api.paginate(list_shipments, client, concurrency=4):
            print(shipment.shipment_id)
    """
    resolved = _resolve(endpoint)
    options = _Options(page_size, start_page, max_items, max_pages, concurrency, page_retries, key)
    return Pager(resolved, client, _check_arguments(resolved, client, options, params), params)


@overload
def apaginate(
    endpoint: ListOperation[PageModel[T]],
    client: Client,
    /,
    *,
    page_size: int = ...,
    start_page: int = ...,
    max_items: int | None = ...,
    concurrency: int = ...,
    page_retries: int = ...,
    key: KeyFunction = ...,
    **params: Any,
) -> AsyncGenerator[T, None]: ...
@overload
def apaginate(
    endpoint: SyncListFunction | AsyncListFunction,
    client: Client,
    /,
    *,
    page_size: int = ...,
    start_page: int = ...,
    max_items: int | None = ...,
    concurrency: int = ...,
    page_retries: int = ...,
    key: KeyFunction = ...,
    **params: Any,
) -> AsyncGenerator[Any, None]: ...
def apaginate(endpoint: Any, client: Client, /, **options: Any) -> AsyncGenerator[Any, None]:
    """The items of a list endpoint, asynchronously: ``paginate(...).__aiter__()``.

    Example::

        async with aclosing(service_api.apaginate(list_devices, client)) as devices:
            async for device in devices:
                print(device.device_id)
    """
    return paginate(endpoint, client, **options).__aiter__()


@overload
def iter_pages(
    endpoint: ListOperation[M],
    client: Client,
    /,
    *,
    page_size: int = ...,
    start_page: int = ...,
    max_pages: int | None = ...,
    concurrency: int = ...,
    page_retries: int = ...,
    key: KeyFunction = ...,
    **params: Any,
) -> Generator[Page[M], None, None]: ...
@overload
def iter_pages(
    endpoint: SyncListFunction | AsyncListFunction,
    client: Client,
    /,
    *,
    page_size: int = ...,
    start_page: int = ...,
    max_pages: int | None = ...,
    concurrency: int = ...,
    page_retries: int = ...,
    key: KeyFunction = ...,
    **params: Any,
) -> Generator[Page[Any], None, None]: ...
def iter_pages(
    endpoint: Any, client: Client, /, **options: Any
) -> Generator[Page[Any], None, None]:
    """The pages of a list endpoint: ``paginate(...).pages()``.

    Example::

        for page in service_api.iter_pages(list_shipments, client, max_pages=2):
            print(page.number, page.total_records, len(page.items))
    """
    return paginate(endpoint, client, **options).pages()


@overload
def aiter_pages(
    endpoint: ListOperation[M],
    client: Client,
    /,
    *,
    page_size: int = ...,
    start_page: int = ...,
    max_pages: int | None = ...,
    concurrency: int = ...,
    page_retries: int = ...,
    key: KeyFunction = ...,
    **params: Any,
) -> AsyncGenerator[Page[M], None]: ...
@overload
def aiter_pages(
    endpoint: SyncListFunction | AsyncListFunction,
    client: Client,
    /,
    *,
    page_size: int = ...,
    start_page: int = ...,
    max_pages: int | None = ...,
    concurrency: int = ...,
    page_retries: int = ...,
    key: KeyFunction = ...,
    **params: Any,
) -> AsyncGenerator[Page[Any], None]: ...
def aiter_pages(
    endpoint: Any, client: Client, /, **options: Any
) -> AsyncGenerator[Page[Any], None]:
    """The pages of a list endpoint, asynchronously: ``paginate(...).apages()``.

    Example::

        async for page in service_api.aiter_pages(list_devices, client, concurrency=4):
            print(page.number, len(page.items))
    """
    return paginate(endpoint, client, **options).apages()
