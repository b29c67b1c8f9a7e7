"""Page iteration for every list endpoint: ``paginate`` / ``apaginate`` over items and
``iter_pages`` / ``aiter_pages`` over pages, sync and async twins.

Every decision lives in the I/O-free :class:`~service_api._page_plan.PagePlan`; the
drivers here only call the generated endpoint function for the page the plan names,
read the response, and hand pages back in order. With ``concurrency > 1`` they fetch
ahead with threads or tasks, which send the requests and read the answers (through the
generated module's ``_get_kwargs`` and the client), while the pages are parsed
(``_build_response``) by the consumer in page order: so the next request goes out as
soon as a worker is free, not once another page's models are built.

Each page request is built by the generated function from ``pageNumber`` and
``pageSize`` against the client's base URL; a ``next`` link in a page is a signal that
another page exists, checked but never followed, so credentials never go to another
origin or over a downgraded scheme whatever the server writes there.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import functools
import inspect
import json
import os
import sys
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
    InvalidResponseError,
    PaginationWarning,
    ServiceApiError,
    error_from_response,
)
from service_api._page_plan import MAX_PAGE_SIZE, PagePlan, PageRequest, item_texts
from service_api_client import Client
from service_api_client.types import Response, Unset

T = TypeVar("T")
T_co = TypeVar("T_co", covariant=True)
M = TypeVar("M", bound="PageModel[Any]")
M_co = TypeVar("M_co", bound="PageModel[Any]", covariant=True)


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
    """One page of a list endpoint, as :func:`iter_pages` / :func:`aiter_pages` yield it.

    Attributes:
        number: the page number (``pageNumber``), counted from 1.
        model: the typed page model the endpoint returned (``ShipmentPage``, ...), with
            its envelope and any field the spec does not name (``additional_properties``).
        items: the items of the page to use: ``model.data`` without items an earlier
            page already gave (see the pagination policy in the README).
        total_records: ``totalRecords`` of this page.
        raw_items: each of ``items`` as the JSON the server sent (a dict for an object),
            every field included, spelled as sent: decoded on first use only.

    Example::

        for page in service_api.iter_pages(list_shipments, client):
            print(page.number, len(page.items), "of", page.total_records)
    """

    number: int
    model: M_co
    _items: tuple[Any, ...] = field(default=())
    # The response body and where each of _items stands in its data; the items' JSON is
    # cut out of it and decoded into _raw when first asked for.
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
        """The items as the server sent them, aligned with :attr:`items`: each decoded
        from the response body (a ``dict`` for an object), with every field it had,
        declared or not, and values spelled as sent (a date-time keeps its ``Z``).

        Decoded on first access only, so iterating without asking costs nothing.

        Example::

            for page in service_api.iter_pages(list_shipments, client):
                for raw in page.raw_items:
                    print(json.dumps(raw))
        """
        if not self._raw:
            if self._content is None:
                # A page built by hand: the models are all there is.
                decoded = tuple(_model_dict(item) for item in self._items)
            else:
                texts = item_texts(self._content)
                decoded = tuple(json.loads(texts[index]) for index in self._kept)
            self._raw.append(decoded)
        return self._raw[0]

    def __repr__(self) -> str:
        return (
            f"Page(number={self.number}, items={len(self._items)}, "
            f"model={type(self.model).__name__})"
        )


def _model_dict(item: Any) -> Any:
    to_dict = getattr(item, "to_dict", None)
    return to_dict() if callable(to_dict) else item


# -- the endpoint ------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Operation:
    """The sync and async functions of one list endpoint, and its page model.

    ``request_kwargs`` and ``build_response`` are the two halves of the module's
    ``*_detailed`` functions (``_get_kwargs`` and ``_build_response`` of the generated
    module), kept when the endpoint is used as generated: the drivers that fetch ahead
    send requests on worker threads or tasks and parse the pages themselves, in order.
    """

    name: str
    sync_call: SyncListFunction | None
    async_call: AsyncListFunction | None
    model: type[Any] | None
    request_kwargs: Callable[..., dict[str, Any]] | None = None
    build_response: Callable[..., Response[Any]] | None = None


def _resolve(endpoint: object) -> _Operation:
    """Accept an endpoint module or either of its ``*_detailed`` functions.

    A function leads back to its module, so ``paginate`` given ``asyncio_detailed`` (or
    ``apaginate`` given ``sync_detailed``) still finds the twin it needs.
    """
    given_sync: Any = None
    given_async: Any = None
    module: object = endpoint
    if not isinstance(endpoint, ModuleType):
        if not callable(endpoint):
            raise TypeError(f"not a list endpoint: {endpoint!r}")
        # The function given is used for its own kind; its module supplies the twin.
        if inspect.iscoroutinefunction(endpoint):
            given_async = endpoint
        else:
            given_sync = endpoint
        module = sys.modules.get(getattr(endpoint, "__module__", ""), None)
        if module is None or not hasattr(module, "sync_detailed"):
            return _Operation(
                name=getattr(endpoint, "__qualname__", repr(endpoint)),
                sync_call=given_sync,
                async_call=given_async,
                model=None,
            )
    sync_call = given_sync or getattr(module, "sync_detailed", None)
    async_call = given_async or getattr(module, "asyncio_detailed", None)
    if not callable(sync_call) and not callable(async_call):
        raise TypeError(f"not a list endpoint (no sync_detailed): {endpoint!r}")
    model = getattr(module, "SUCCESS_MODEL", None)
    request_kwargs = getattr(module, "_get_kwargs", None)
    build_response = getattr(module, "_build_response", None)
    # Split only what is the module's own: a function given in its place (a wrapper
    # keeping the module's name) must be called as it is.
    as_generated = (
        given_sync is None or given_sync is getattr(module, "sync_detailed", None)
    ) and (given_async is None or given_async is getattr(module, "asyncio_detailed", None))
    split = as_generated and callable(request_kwargs) and callable(build_response)
    return _Operation(
        name=getattr(module, "__name__", repr(module)).rpartition(".")[2],
        sync_call=sync_call if callable(sync_call) else None,
        async_call=async_call if callable(async_call) else None,
        model=model if isinstance(model, type) else None,
        request_kwargs=request_kwargs if split else None,
        build_response=build_response if split else None,
    )


def _prepare(
    endpoint: object,
    client: Client,
    *,
    page_size: int,
    start_page: int,
    max_items: int | None,
    max_pages: int | None,
    concurrency: int,
    params: dict[str, Any],
    is_async: bool,
) -> tuple[_Operation, PagePlan]:
    """Check every argument before any request, so mistakes surface at the call."""
    for name, value in (("page_size", page_size), ("start_page", start_page)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"{name} must be an integer of at least 1, not {value!r}")
    for name, limit in (("max_items", max_items), ("max_pages", max_pages)):
        if limit is not None and (
            isinstance(limit, bool) or not isinstance(limit, int) or limit < 0
        ):
            raise ValueError(f"{name} must be None or an integer of at least 0, not {limit!r}")
    if isinstance(concurrency, bool) or not isinstance(concurrency, int) or concurrency < 1:
        raise ValueError(f"concurrency must be an integer of at least 1, not {concurrency!r}")
    for reserved in ("page_number", "page_size", "client"):
        if reserved in params:
            raise TypeError(f"{reserved!r} is set by the iteration; use page_size / start_page")
    if page_size > MAX_PAGE_SIZE:
        _warn(f"page_size {page_size} is above the service's maximum; using {MAX_PAGE_SIZE}")
        page_size = MAX_PAGE_SIZE
    operation = _resolve(endpoint)
    call = operation.async_call if is_async else operation.sync_call
    if call is None:
        wanted = "asyncio_detailed" if is_async else "sync_detailed"
        raise TypeError(f"{operation.name}: no {wanted} function to call; pass the module")
    try:
        signature = inspect.signature(call)
    except (TypeError, ValueError):  # a callable without one (a C function): let it be
        signature = None
    if signature is not None:
        try:
            # Here rather than at the first page, where a TypeError would read as a
            # bad answer from the server.
            signature.bind(client=client, page_number=1, page_size=1, **params)
        except TypeError as exc:
            raise TypeError(f"{operation.name}: {exc}") from None
    plan = PagePlan(
        page_size=page_size,
        start_page=start_page,
        base_url=str(getattr(client, "_base_url", "")),
        max_items=max_items,
        max_pages=max_pages,
    )
    return operation, plan


# -- one page: the response and what can go wrong ---------------------------------------


def _status_error(response: Response[Any], number: int) -> ServiceApiError:
    """The typed error of a non-200 answer that reached us unconverted: a plain
    generated client returns it (the package's ``Client`` raises it itself)."""
    status = int(response.status_code)
    if status < 400:
        return InvalidResponseError(f"page {number}: unexpected status {status}")
    raw = httpx.Response(status, headers=dict(response.headers), content=response.content)
    return error_from_response(raw)


def _page_model(response: Response[Any], operation: _Operation, number: int) -> object:
    if response.status_code != 200:
        raise _status_error(response, number)
    model = response.parsed
    if model is None or (operation.model is not None and not isinstance(model, operation.model)):
        raise InvalidResponseError(
            f"page {number}: the answer is not a {getattr(operation.model, '__name__', 'page')}"
        )
    return model


def _failure(
    exc: BaseException, request: PageRequest, plan: PagePlan, operation: _Operation
) -> ServiceApiError:
    """The typed error for what went wrong with a page, marked with where to resume
    (an httpx or parsing error is converted, and chained)."""
    if isinstance(exc, ServiceApiError):
        error = exc
    elif isinstance(exc, httpx.TimeoutException):
        error = ApiTimeoutError(f"{operation.name}: page {request.number}: no answer in time")
    elif isinstance(exc, httpx.TransportError):
        error = ApiConnectionError(f"{operation.name}: page {request.number}: {type(exc).__name__}")
    else:
        # The generated parser raises these for a body that is not JSON or not a page.
        error = InvalidResponseError(
            f"{operation.name}: page {request.number}: unreadable answer "
            f"({type(exc).__name__}: {exc})"
        )
    if error is not exc:
        error.__cause__ = exc
    error.at_page(request.number, items_yielded=plan.items_yielded)
    return error


# What a page fetch may raise that is the page's fault rather than a bug in this module.
_PAGE_ERRORS = (ServiceApiError, httpx.HTTPError, ValueError, KeyError, TypeError, AttributeError)


# A page as fetched: its model and its body.
_Fetched = tuple[object, bytes]


def _fetched(response: Response[Any], operation: _Operation, number: int) -> _Fetched:
    return _page_model(response, operation, number), response.content


def _fetch_sync(
    operation: _Operation, client: Client, request: PageRequest, params: dict[str, Any]
) -> _Fetched:
    assert operation.sync_call is not None
    response = operation.sync_call(
        client=client, page_number=request.number, page_size=request.size, **params
    )
    return _fetched(response, operation, request.number)


async def _fetch_async(
    operation: _Operation, client: Client, request: PageRequest, params: dict[str, Any]
) -> _Fetched:
    assert operation.async_call is not None
    response = await operation.async_call(
        client=client, page_number=request.number, page_size=request.size, **params
    )
    return _fetched(response, operation, request.number)


# A page fetched ahead: what is left to do with it once its turn comes (parsing it).
_Finish = Callable[[], _Fetched]


def _parse(
    operation: _Operation, client: Client, number: int, response: httpx.Response
) -> _Fetched:
    assert operation.build_response is not None
    return _fetched(operation.build_response(client=client, response=response), operation, number)


def _fetch_ahead_sync(
    operation: _Operation, client: Client, request: PageRequest, params: dict[str, Any]
) -> _Finish:
    """The part of a page fetch run on a worker thread: the request only, when the
    endpoint can be split (see :class:`_Operation`), so that parsing happens in page
    order on the consumer's side and the next request goes out as soon as a page's
    turn comes, not when a worker holding the GIL is done parsing another page."""
    if operation.request_kwargs is None:
        fetched = _fetch_sync(operation, client, request, params)
        return lambda: fetched
    kwargs = operation.request_kwargs(page_number=request.number, page_size=request.size, **params)
    response = client.get_httpx_client().request(**kwargs)
    return functools.partial(_parse, operation, client, request.number, response)


async def _fetch_ahead_async(
    operation: _Operation, client: Client, request: PageRequest, params: dict[str, Any]
) -> _Finish:
    """Async twin of :func:`_fetch_ahead_sync`: the task sends the request and reads the
    answer; the consumer parses it when its turn comes."""
    if operation.request_kwargs is None:
        fetched = await _fetch_async(operation, client, request, params)
        return lambda: fetched
    kwargs = operation.request_kwargs(page_number=request.number, page_size=request.size, **params)
    response = await client.get_async_httpx_client().request(**kwargs)
    return functools.partial(_parse, operation, client, request.number, response)


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


def _judge(plan: PagePlan, request: PageRequest, fetched: _Fetched) -> Page[Any]:
    """Let the plan judge a page that arrived; the page to hand over."""
    model, content = fetched
    verdict = plan.accept(request.number, model, content)
    for message in verdict.warnings:
        _warn(message)
    return Page(request.number, model, verdict.items, content, verdict.kept)


# -- the drivers ------------------------------------------------------------------------
#
# The twins are line-for-line alike: fetch the page the plan names, let the plan judge
# it, yield it. With concurrency > 1, the pages after the first (whose number the first
# page's totalRecords fixes) are fetched ahead, at most ``concurrency`` in flight, and
# still judged and yielded in order.


def _sync_pages(
    operation: _Operation,
    client: Client,
    plan: PagePlan,
    params: dict[str, Any],
    concurrency: int,
) -> Generator[Page[Any], None, None]:
    while (request := plan.next_page_info()) is not None:
        try:
            page = _judge(plan, request, _fetch_sync(operation, client, request, params))
        except _PAGE_ERRORS as exc:
            error = _failure(exc, request, plan, operation)
            raise error from error.__cause__
        if concurrency > 1 and plan.has_next_page():
            # The first page told how many there are: fetch ahead from now on, starting
            # before the consumer works on this page rather than after.
            yield from _sync_pages_ahead(operation, client, plan, params, concurrency, page)
            return
        yield page


# Pages fetched ahead of the consumer, per unit of concurrency: at most ``concurrency``
# requests are in flight, and at most ``_AHEAD * concurrency`` pages are asked for and
# not yet handed over (those that arrived wait as bodies, not parsed), so that a slow
# page does not idle the other workers.
_AHEAD = 2


def _sync_pages_ahead(
    operation: _Operation,
    client: Client,
    plan: PagePlan,
    params: dict[str, Any],
    concurrency: int,
    first: Page[Any],
) -> Generator[Page[Any], None, None]:
    """``first``, then the pages after it, fetched ``concurrency`` at a time on threads
    and handed over in order; the window is filled before ``first`` is handed over."""
    pending: collections.deque[tuple[PageRequest, Future[_Finish]]] = collections.deque()
    numbers = iter(plan.remaining_pages())
    pool = ThreadPoolExecutor(max_workers=concurrency, thread_name_prefix="service-api-pages")

    def submit_next() -> None:
        number = next(numbers, None)
        if number is not None:
            request = PageRequest(number, plan.page_size)
            future = pool.submit(_fetch_ahead_sync, operation, client, request, params)
            pending.append((request, future))

    try:
        # The pool runs ``concurrency`` fetches; the pages queued behind them start as
        # soon as any worker is free, not when the oldest page is handed over.
        for _ in range(_AHEAD * concurrency):
            submit_next()
        yield first
        while pending and plan.has_next_page():
            request, future = pending.popleft()
            try:
                finish = future.result()
                # Refill before parsing the page and handing it over: the window stays
                # full while this thread and the consumer work on it.
                submit_next()
                page = _judge(plan, request, finish())
            except _PAGE_ERRORS as exc:
                error = _failure(exc, request, plan, operation)
                raise error from error.__cause__
            yield page
    finally:
        # Early exit, error or garbage collection: drop what has not started and wait
        # for what is in flight, so no thread outlives the iterator.
        for _, future in pending:
            future.cancel()
        pool.shutdown(wait=True, cancel_futures=True)


async def _async_pages(
    operation: _Operation,
    client: Client,
    plan: PagePlan,
    params: dict[str, Any],
    concurrency: int,
) -> AsyncGenerator[Page[Any], None]:
    while (request := plan.next_page_info()) is not None:
        try:
            page = _judge(plan, request, await _fetch_async(operation, client, request, params))
        except _PAGE_ERRORS as exc:
            error = _failure(exc, request, plan, operation)
            raise error from error.__cause__
        if concurrency > 1 and plan.has_next_page():
            # As in _sync_pages. Closed explicitly: closing this generator does not
            # close one it iterates.
            ahead = _async_pages_ahead(operation, client, plan, params, concurrency, page)
            async with contextlib.aclosing(ahead):
                async for later in ahead:
                    yield later
            return
        yield page


async def _async_pages_ahead(
    operation: _Operation,
    client: Client,
    plan: PagePlan,
    params: dict[str, Any],
    concurrency: int,
    first: Page[Any],
) -> AsyncGenerator[Page[Any], None]:
    """``first``, then the pages after it, fetched ``concurrency`` at a time by tasks and
    handed over in order; the tasks are started before ``first`` is handed over."""
    pending: collections.deque[tuple[PageRequest, asyncio.Task[_Finish]]] = collections.deque()
    numbers = iter(plan.remaining_pages())
    in_flight = asyncio.Semaphore(concurrency)

    async def fetch(request: PageRequest) -> _Finish:
        async with in_flight:
            return await _fetch_ahead_async(operation, client, request, params)

    def submit_next() -> None:
        number = next(numbers, None)
        if number is not None:
            request = PageRequest(number, plan.page_size)
            pending.append((request, asyncio.ensure_future(fetch(request))))

    try:
        # As in _sync_pages_ahead: the tasks queued behind the semaphore start as soon
        # as any fetch is done.
        for _ in range(_AHEAD * concurrency):
            submit_next()
        yield first
        while pending and plan.has_next_page():
            # Left in ``pending`` while awaited: if the consumer is cancelled here, the
            # cleanup below still cancels and awaits this task.
            request, task = pending[0]
            try:
                finish = await task
                pending.popleft()
                submit_next()
                # Let the new task send its request before this page is parsed (a done
                # task is awaited without giving the event loop a turn).
                await asyncio.sleep(0)
                page = _judge(plan, request, finish())
            except _PAGE_ERRORS as exc:
                error = _failure(exc, request, plan, operation)
                raise error from error.__cause__
            yield page
    finally:
        # Early exit, error, cancellation or garbage collection: cancel what is in
        # flight and wait for it, so no task outlives the iterator.
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


# -- the public functions ----------------------------------------------------------------


@overload
def paginate(
    endpoint: ListOperation[PageModel[T]],
    client: Client,
    /,
    *,
    page_size: int = ...,
    start_page: int = ...,
    max_items: int | None = ...,
    concurrency: int = ...,
    **params: Any,
) -> Generator[T, None, None]: ...
@overload
def paginate(
    endpoint: SyncListFunction | AsyncListFunction,
    client: Client,
    /,
    *,
    page_size: int = ...,
    start_page: int = ...,
    max_items: int | None = ...,
    concurrency: int = ...,
    **params: Any,
) -> Generator[Any, None, None]: ...
def paginate(
    endpoint: object,
    client: Client,
    /,
    *,
    page_size: int = 50,
    start_page: int = 1,
    max_items: int | None = None,
    concurrency: int = 1,
    **params: Any,
) -> Generator[Any, None, None]:
    """Iterate over every item of a list endpoint, page after page.

    Args:
        endpoint: a generated list endpoint module (``list_shipments``), or its
            ``sync_detailed`` function. With the module, items are typed (``Shipment``).
        client: the client (``service_api.Client`` or a generated ``Client``).
        page_size: records per page, 1 to 50; above 50 the service uses 50, and so does
            this function, with a ``PaginationWarning``.
        start_page: the first page to fetch; the failed error's ``start_page`` resumes.
        max_items: stop after this many items, fetching no page more than needed.
        concurrency: requests in flight at once after the first page (threads); up
            to twice as many pages are fetched ahead of the loop.
        **params: the endpoint's other arguments.

    Pages ``start_page`` to ``ceil(totalRecords / page_size)`` are fetched, each built
    from ``pageNumber`` / ``pageSize`` against the client's base URL; a ``next`` link is
    only a signal (its absence ends the iteration) and is never followed, so credentials
    stay with the base URL. A page's items are yielded once the whole page arrived.

    Raises:
        ValueError: a ``page_size``, ``start_page``, ``max_items`` or ``concurrency``
            out of range, before any request.
        ServiceApiError: a page failed: the typed error itself (an API error, or an
            ``InvalidResponseError`` for a bad or inconsistent page), whose
            ``start_page`` resumes with exactly the items not yet yielded.

    Leaving early (``break``, an exception) closes the iteration when the generator is
    closed or collected; ``contextlib.closing`` makes that immediate.

    Example::

        from service_api_client.api.shipments import list_shipments

        for shipment in service_api.paginate(list_shipments, client, concurrency=4):
            print(shipment.shipment_id)
    """
    operation, plan = _prepare(
        endpoint,
        client,
        page_size=page_size,
        start_page=start_page,
        max_items=max_items,
        max_pages=None,
        concurrency=concurrency,
        params=params,
        is_async=False,
    )
    return _sync_items(_sync_pages(operation, client, plan, params, concurrency))


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
    **params: Any,
) -> AsyncGenerator[Any, None]: ...
def apaginate(
    endpoint: object,
    client: Client,
    /,
    *,
    page_size: int = 50,
    start_page: int = 1,
    max_items: int | None = None,
    concurrency: int = 1,
    **params: Any,
) -> AsyncGenerator[Any, None]:
    """Iterate asynchronously over every item of a list endpoint: the twin of
    :func:`paginate`, with the same arguments and rules; pages in flight are tasks.

    The result is an async generator: ``async for`` it, and close it with
    ``aclose()`` (or ``contextlib.aclosing``) when leaving early, which cancels and
    awaits any page still in flight.

    Example::

        from contextlib import aclosing
        from service_api_client.api.devices import list_devices

        async with aclosing(service_api.apaginate(list_devices, client)) as devices:
            async for device in devices:
                print(device.device_id)
    """
    operation, plan = _prepare(
        endpoint,
        client,
        page_size=page_size,
        start_page=start_page,
        max_items=max_items,
        max_pages=None,
        concurrency=concurrency,
        params=params,
        is_async=True,
    )
    return _async_items(_async_pages(operation, client, plan, params, concurrency))


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
    **params: Any,
) -> Generator[Page[Any], None, None]: ...
def iter_pages(
    endpoint: object,
    client: Client,
    /,
    *,
    page_size: int = 50,
    start_page: int = 1,
    max_pages: int | None = None,
    concurrency: int = 1,
    **params: Any,
) -> Generator[Page[Any], None, None]:
    """Iterate over the pages of a list endpoint, each a :class:`Page` with its number,
    typed model and items: :func:`paginate` one level up, with the same rules.

    ``max_pages`` stops after that many pages.

    Example::

        for page in service_api.iter_pages(list_shipments, client, max_pages=2):
            print(page.number, page.total_records, len(page.items))
    """
    operation, plan = _prepare(
        endpoint,
        client,
        page_size=page_size,
        start_page=start_page,
        max_items=None,
        max_pages=max_pages,
        concurrency=concurrency,
        params=params,
        is_async=False,
    )
    return _sync_pages(operation, client, plan, params, concurrency)


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
    **params: Any,
) -> AsyncGenerator[Page[Any], None]: ...
def aiter_pages(
    endpoint: object,
    client: Client,
    /,
    *,
    page_size: int = 50,
    start_page: int = 1,
    max_pages: int | None = None,
    concurrency: int = 1,
    **params: Any,
) -> AsyncGenerator[Page[Any], None]:
    """Iterate asynchronously over the pages of a list endpoint: the twin of
    :func:`iter_pages`; close it with ``aclose()`` when leaving early.

    Example::

        async for page in service_api.aiter_pages(list_devices, client, concurrency=4):
            print(page.number, len(page.items))
    """
    operation, plan = _prepare(
        endpoint,
        client,
        page_size=page_size,
        start_page=start_page,
        max_items=None,
        max_pages=max_pages,
        concurrency=concurrency,
        params=params,
        is_async=True,
    )
    return _async_pages(operation, client, plan, params, concurrency)
