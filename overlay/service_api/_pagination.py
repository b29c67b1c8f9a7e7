"""Page iteration for every list endpoint: ``paginate`` returns a :class:`Pager`, whose
items come with ``for`` / ``async for`` and pages with ``.pages()`` / ``.apages()``;
``apaginate``, ``iter_pages`` and ``aiter_pages`` are thin names over it.

Every decision about pages lives in the I/O-free :class:`~service_api._page_plan.PagePlan`,
including which pages to fetch ahead; the two drivers here (``Pager.pages`` and
``Pager.apages``, line for line alike) send the request for each page the plan names
(built by the generated module's ``_get_kwargs`` from ``pageNumber`` / ``pageSize``
against the client's base URL: a ``next`` link is never followed), fetch a failed page
again within the page retry budget, parse it into the endpoint's page model and hand
pages back in order. With ``concurrency > 1`` threads or tasks send the requests and
read the answers while the consumer parses the pages, in order.

The policies (misbehaving servers, records that cannot become their model, page
retries) are in the README, "Pagination".
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import inspect
import json
import logging
import os
import sys
import threading
import warnings
from collections.abc import AsyncGenerator, Awaitable, Callable, Generator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from types import ModuleType
from typing import Any, Generic, Protocol

import httpx
from typing_extensions import TypeVar

from service_api._errors import (
    ApiConnectionError,
    AuthenticationError,
    InvalidCredentialsError,
    InvalidResponseError,
    PaginationWarning,
    RateLimitError,
    ServerError,
    ServiceApiError,
    error_from_httpx,
    error_from_response,
)
from service_api._page_plan import MAX_PAGE_SIZE, KeyFunction, PageOptions, PagePlan, id_key
from service_api._retry import RETRY_SLEEP, RetryPolicy, retry_delay
from service_api_client import Client
from service_api_client.types import Response, Unset

# The defaults type the function form of an endpoint, whose page model is unknown: Any.
T = TypeVar("T", default=Any)
T_co = TypeVar("T_co", covariant=True)
M = TypeVar("M", bound="PageModel[Any]", default=Any)
M_co = TypeVar("M_co", bound="PageModel[Any]", covariant=True)

logger = logging.getLogger("service_api")

#: Times a failed page is fetched again inside an iteration before its error is raised.
PAGE_RETRIES = 3
# Pages asked for and not yet handed over, per unit of concurrency.
_AHEAD = 2


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


# An endpoint module, or its sync_detailed / asyncio_detailed function (items: Any).
Endpoint = ListOperation[M] | Callable[..., Response[Any]] | Callable[..., Awaitable[Response[Any]]]


@dataclass(frozen=True, repr=False)
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
    _items: tuple[Any, ...] = ()
    # The response body, and where each of _items stands in its data.
    _content: bytes | None = None
    _kept: tuple[int, ...] = ()

    @property
    def items(self: Page[PageModel[T]]) -> Sequence[T]:
        """The items of the page (repeats of earlier pages dropped)."""
        return self._items

    @property
    def total_records(self: Page[PageModel[Any]]) -> int:
        """``totalRecords`` as this page stated it."""
        return self.model.total_records

    @functools.cached_property
    def raw_items(self) -> Sequence[Any]:
        """The items as the server sent them, aligned with :attr:`items`: every field,
        declared or not, spelled as sent (a date-time keeps its ``Z``). Decoded from the
        response body on first access only, so iterating without asking costs nothing.

        Example::

            for page in service_api.iter_pages(list_shipments, client):
                for raw in page.raw_items:
                    print(json.dumps(raw))
        """
        if self._content is None:  # a page built by hand: the models are all there is
            return tuple(i.to_dict() if hasattr(i, "to_dict") else i for i in self._items)
        data = json.loads(self._content)["data"]
        return tuple(data[index] for index in self._kept)

    def __repr__(self) -> str:
        model = type(self.model).__name__
        return f"Page(number={self.number}, items={len(self._items)}, model={model})"


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
        self.index, self.raw_item, self.raw_items = index, raw_item, raw_items

    @property
    def resumable(self) -> bool:
        """Always false: the page fails again the same way."""
        return False


def page_retry_delay(error: ServiceApiError, attempt: int, retries: int) -> float | None:
    """Seconds to wait before fetching a failed page again, or ``None`` to give up:
    after ``retries`` page retries, or for an error a new attempt cannot fix. Retried:
    connection errors and timeouts, 429, 5xx, and a 401 other than refused credentials
    (a token revoked meanwhile: the next attempt gets a new one).

    Example::

        page_retry_delay(ServerError("503", status_code=503), 0, 3)   # 0.0 to 1.0
    """
    if isinstance(error, InvalidCredentialsError) or not isinstance(
        error, ApiConnectionError | RateLimitError | ServerError | AuthenticationError
    ):
        return None
    # Full jitter under min(30 s, 1 s * 2 ** attempt), or the server's Retry-After when it
    # asks for no more than a minute.
    policy = RetryPolicy(
        max_retries=retries, initial_delay=1.0, max_delay=30.0, max_retry_after=60.0
    )
    return retry_delay(policy, attempt, retry_after=getattr(error, "retry_after", None))


# The least value of each numeric option (max_items and max_pages may also be None).
_LEAST = {"page_size": 1, "start_page": 1, "concurrency": 1, "page_retries": 0}
_LEAST |= {"max_items": 0, "max_pages": 0}
# The functions of an endpoint module that lead back to it.
_FUNCTIONS = ("sync_detailed", "asyncio_detailed")
_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))
# What the generated parser raises for a body that is JSON but not a page of its model.
_PARSE_ERRORS = (KeyError, TypeError, ValueError, AttributeError)


def _warn(message: str) -> None:
    """Warn at the first frame outside this package: the caller's loop or call, however
    many generators and drivers lie between (their number differs per path)."""
    frame, level = sys._getframe(1), 2
    while frame.f_back is not None and frame.f_code.co_filename.startswith(_PACKAGE_DIR):
        frame, level = frame.f_back, level + 1
    warnings.warn(message, PaginationWarning, stacklevel=level)


def _ok(response: httpx.Response, number: int) -> httpx.Response:
    """The response of a page, or the typed error of its status (a plain generated
    client returns error statuses; the package's ``Client`` raises them itself)."""
    if response.status_code >= 400:
        raise error_from_response(response)
    if response.status_code != 200:
        raise InvalidResponseError(f"page {number}: unexpected status {response.status_code}")
    return response


def _builds(model: type[Any], doc: dict[str, Any], data: list[Any]) -> bool:
    try:
        model.from_dict({**doc, "data": data})
    except _PARSE_ERRORS:
        return False
    return True


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
        self, endpoint: object, client: Client, options: PageOptions, params: dict[str, Any]
    ) -> None:
        """Every check of :func:`paginate`'s arguments, before any request."""
        module: Any = endpoint
        if not isinstance(endpoint, ModuleType):
            module = sys.modules.get(str(getattr(endpoint, "__module__", "")))
            # A wrapper (functools.wraps) keeps the name but would be bypassed: refused.
            wrapper = hasattr(endpoint, "__wrapped__")
            if wrapper or getattr(endpoint, "__qualname__", None) not in _FUNCTIONS:
                example = getattr(module, "__name__", "").rpartition(".")[2] or "list_shipments"
                raise TypeError(
                    f"not a list endpoint: {endpoint!r}; pass the generated endpoint module "
                    f"(such as {example}) or its sync_detailed function"
                )
        kwargs = getattr(module, "_get_kwargs", None)
        if not callable(kwargs) or not hasattr(getattr(module, "SUCCESS_MODEL", None), "from_dict"):
            raise TypeError(f"not a generated list endpoint module: {module!r}")
        if not all(callable(getattr(client, f"get_{k}httpx_client", None)) for k in ("", "async_")):
            raise TypeError(f"client must be a service_api.Client, not {type(client).__name__}")
        for name, least in _LEAST.items():
            value = getattr(options, name)
            bad = isinstance(value, bool) or not isinstance(value, int) or value < least
            if bad and not (value is None and name.startswith("max_")):
                raise ValueError(f"{name} must be an integer of at least {least}, not {value!r}")
        if not callable(options.key):
            raise TypeError(f"key must be a function of an item, not {options.key!r}")
        self._name = module.__name__.rpartition(".")[2]
        try:
            inspect.signature(kwargs).bind(**params, page_number=1, page_size=1)
        except TypeError as exc:
            raise TypeError(
                f"{self._name}: {exc} (the iteration sets page_number and page_size: use "
                "start_page / page_size)"
            ) from None
        if options.page_size > MAX_PAGE_SIZE:
            _warn(f"page_size {options.page_size} is above the service's maximum; using 50")
            options = options._replace(page_size=MAX_PAGE_SIZE)
        self._model: type[Any] = module.SUCCESS_MODEL
        self._client, self._options = client, options
        # The page request of the generated module, built against the client's base URL.
        self._kwargs: Callable[..., dict[str, Any]] = functools.partial(kwargs, **params)
        # Pages asked for ahead of the one in hand: none without concurrency.
        self._window = _AHEAD * options.concurrency if options.concurrency > 1 else 0

    def __repr__(self) -> str:
        return f"Pager({self._name}, page_size={self._options.page_size})"

    def __iter__(self: Pager[PageModel[T]]) -> Generator[T, None, None]:
        with contextlib.closing(self.pages()) as pages:
            for page in pages:
                yield from page._items

    async def __aiter__(self: Pager[PageModel[T]]) -> AsyncGenerator[T, None]:
        async with contextlib.aclosing(self.apages()) as pages:
            async for page in pages:
                for item in page._items:
                    yield item

    def pages(self) -> Generator[Page[M_co], None, None]:
        """The pages, each a :class:`Page` with its number, model and items.

        Example::

            for page in service_api.paginate(list_shipments, client).pages():
                print(page.number, len(page.items))
        """
        plan, stopped = self._plan(), threading.Event()  # stopped: a waiting retry gives up
        pending: dict[int, Future[httpx.Response]] = {}
        pool = ThreadPoolExecutor(self._options.concurrency, thread_name_prefix="service-api-pages")
        try:
            while (number := plan.next_page_info()) is not None:
                future = pending.pop(number, None)
                response = self._fetch(number, stopped) if future is None else future.result()
                page = self._judge(plan, number, response)
                # The pool works through the pages asked ahead while this thread parses.
                for ahead in plan.pages_ahead(number, self._window):
                    pending[ahead] = pool.submit(self._fetch, ahead, stopped)
                yield page
        except ServiceApiError as exc:  # the plan stays on the page that failed
            exc.at_page(plan.start_page + plan.pages_accepted, items_yielded=plan.items_yielded)
            raise
        finally:
            # Early exit, error or garbage collection: no thread outlives the iterator.
            stopped.set()
            pool.shutdown(wait=True, cancel_futures=True)

    async def apages(self) -> AsyncGenerator[Page[M_co], None]:
        """Async twin of :meth:`pages`; close it with ``aclose()`` when leaving early.

        Example::

            async for page in service_api.paginate(list_devices, client).apages():
                print(page.number, len(page.items))
        """
        plan, in_flight = self._plan(), asyncio.Semaphore(self._options.concurrency)
        pending: dict[int, asyncio.Task[httpx.Response]] = {}
        try:
            while (number := plan.next_page_info()) is not None:
                # Left in ``pending`` while awaited: if the consumer is cancelled here,
                # the cleanup below still cancels and awaits this task.
                task = pending.get(number)
                response = await (self._afetch(number, in_flight) if task is None else task)
                pending.pop(number, None)
                if pending:  # let a queued task send its request before this page is parsed
                    await asyncio.sleep(0)
                page = self._judge(plan, number, response)
                for ahead in plan.pages_ahead(number, self._window):
                    pending[ahead] = asyncio.ensure_future(self._afetch(ahead, in_flight))
                yield page
        except ServiceApiError as exc:  # the plan stays on the page that failed
            exc.at_page(plan.start_page + plan.pages_accepted, items_yielded=plan.items_yielded)
            raise
        finally:
            for task in pending.values():
                task.cancel()
            await asyncio.gather(*pending.values(), return_exceptions=True)

    def _plan(self) -> PagePlan:
        return PagePlan(self._options, base_url=str(self._client._base_url), warn=_warn)

    def _fetch(self, number: int, stopped: threading.Event) -> httpx.Response:
        """The page's response, fetched again within the page retry budget."""
        kwargs, attempt = self._kwargs(page_number=number, page_size=self._options.page_size), 0
        while True:
            try:
                return _ok(self._client.get_httpx_client().request(**kwargs), number)
            except (ServiceApiError, httpx.HTTPError) as exc:
                delay = self._retry_delay(exc, number, attempt)
            if stopped.wait(delay):
                raise ApiConnectionError("the iteration was closed")  # nobody reads it
            attempt += 1

    async def _afetch(self, number: int, in_flight: asyncio.Semaphore) -> httpx.Response:
        """Async twin of :meth:`_fetch`, with at most ``concurrency`` requests in flight."""
        kwargs, attempt = self._kwargs(page_number=number, page_size=self._options.page_size), 0
        async with in_flight:
            while True:
                try:
                    client = self._client.get_async_httpx_client()
                    return _ok(await client.request(**kwargs), number)
                except (ServiceApiError, httpx.HTTPError) as exc:
                    delay = self._retry_delay(exc, number, attempt)
                await asyncio.sleep(delay)
                attempt += 1

    def _retry_delay(
        self, exc: ServiceApiError | httpx.HTTPError, number: int, attempt: int
    ) -> float:
        """Seconds to wait before fetching the page again; its typed error if it is not
        to be fetched again."""
        error = exc if isinstance(exc, ServiceApiError) else error_from_httpx(exc)
        delay = page_retry_delay(error, attempt, self._options.page_retries)
        if delay is None:
            raise error from (exc if error is not exc else exc.__cause__)
        logger.warning(
            f"page {number} of {self._name} failed ({type(error).__name__}); fetching it "
            f"again in {delay:.2f} s (page retry {attempt + 1} of {self._options.page_retries})"
        )
        return RETRY_SLEEP.wait_for(delay)

    def _judge(self, plan: PagePlan, number: int, response: httpx.Response) -> Page[Any]:
        """Parse the page and let the plan judge it; the page to hand over."""
        where = f"{self._name}: page {number}"
        try:
            doc = response.json()
        except ValueError as exc:
            raise InvalidResponseError(f"{where}: unreadable answer (not JSON)") from exc
        try:
            parsed = self._model.from_dict(doc)
        except _PARSE_ERRORS as exc:
            raise self._unreadable(where, doc) from exc
        kept = plan.accept(number, parsed)
        items = tuple(parsed.data[index] for index in kept)
        return Page(number, parsed, items, response.content, tuple(kept))

    def _unreadable(self, where: str, doc: Any) -> InvalidResponseError:
        """The error of a JSON answer that is not a page: the record at fault, if the
        envelope itself is fine."""
        data: Any = doc.get("data") if isinstance(doc, dict) else None
        envelope_fine = isinstance(data, list) and _builds(self._model, doc, [])
        for index, raw in enumerate(data if envelope_fine else []):
            if not _builds(self._model, doc, [raw]):
                msg = (
                    f"{where}: record {index} of data cannot be read as a record "
                    f"({type(raw).__name__}: {json.dumps(raw)[:80]})"
                )
                return InvalidRecordError(msg, index=index, raw_item=raw, raw_items=data)
        shape = "object" if isinstance(doc, dict) else type(doc).__name__
        return InvalidResponseError(f"{where}: unreadable answer (not a page: a JSON {shape})")


# -- the public names -------------------------------------------------------------------------


def paginate(
    endpoint: Endpoint[M],
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
) -> Pager[M]:
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
    options = PageOptions(
        page_size, start_page, max_items, max_pages, concurrency, page_retries, key
    )
    return Pager(endpoint, client, options, params)


def apaginate(
    endpoint: Endpoint[PageModel[T]], client: Client, /, **options: Any
) -> AsyncGenerator[T, None]:
    """The items of a list endpoint, asynchronously: ``paginate(...).__aiter__()``.

    Example::

        async with aclosing(service_api.apaginate(list_devices, client)) as devices:
            async for device in devices:
                print(device.device_id)
    """
    return paginate(endpoint, client, **options).__aiter__()


def iter_pages(
    endpoint: Endpoint[M], client: Client, /, **options: Any
) -> Generator[Page[M], None, None]:
    """The pages of a list endpoint: ``paginate(...).pages()``.

    Example::

        for page in service_api.iter_pages(list_shipments, client, max_pages=2):
            print(page.number, page.total_records, len(page.items))
    """
    return paginate(endpoint, client, **options).pages()


def aiter_pages(
    endpoint: Endpoint[M], client: Client, /, **options: Any
) -> AsyncGenerator[Page[M], None]:
    """The pages of a list endpoint, asynchronously: ``paginate(...).apages()``.

    Example::

        async for page in service_api.aiter_pages(list_devices, client, concurrency=4):
            print(page.number, len(page.items))
    """
    return paginate(endpoint, client, **options).apages()
