"""Page iteration for every list endpoint: ``client.<tag>.list()`` and
``paginate(endpoint_module, client)`` return a :class:`Pager`, whose items come with
``for`` / ``async for`` and whose pages come with ``.pages()`` (``for`` / ``async for``).

Every decision about pages lives in the I/O-free :class:`~service_api._page_plan.PagePlan`,
including which pages to fetch ahead; the two drivers here (``Pager._pages`` and
``Pager._apages``, line for line alike) send the request for each page the plan names
(built by the generated module's ``_get_kwargs`` from ``pageNumber`` / ``pageSize``
against the client's base URL: a ``next`` link is never followed), parse it into the
endpoint's page model and hand pages back in order. A failed request is retried by the
client's own retry loop only. With ``concurrency > 1`` threads or tasks send the
requests and read the answers while the consumer parses the pages, in order.

The policies (misbehaving servers, records that cannot become their model) are in
docs/guides/pagination.md ("Pagination policy").
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import inspect
import json
import sys
import warnings
from collections.abc import AsyncGenerator, Generator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from types import ModuleType
from typing import Any, Generic, Protocol, TypeVar

import httpx

import service_api._errors as errors
from service_api._page_plan import PageOptions, PagePlan, id_key
from service_api_client import Client
from service_api_client.drift import DriftLog
from service_api_client.types import UNSET

T = TypeVar("T")
# A variance is read by type checkers only (make typecheck), never at run time.
T_co = TypeVar("T_co", covariant=True)  # pragma: no mutate
M_co = TypeVar("M_co", bound="PageModel[Any]", covariant=True)  # pragma: no mutate


class PageModel(Protocol[T_co]):
    """What every generated page model offers: the items of the page and the size of
    the whole result set (``ShipmentPage``, ``DevicePage``, ...).

    Example::

        def count(page: service_api.PageModel[Shipment]) -> int:
            return len(page.data)
    """

    # The protocols are read by type checkers only (not runtime_checkable): their
    # decorators do nothing at run time.
    @property  # pragma: no mutate
    def data(self) -> Sequence[T_co]: ...

    @property  # pragma: no mutate
    def total_records(self) -> int: ...


class ListOperation(Protocol[M_co]):
    """A generated list endpoint module, such as
    ``service_api_client.api.shipments.list_shipments``: its ``SUCCESS_MODEL`` tells the
    type checker which page model, hence which items, it returns.

    Example::

        def export(endpoint: service_api.ListOperation[PageModel[T]]) -> list[T]:
            return list(service_api.paginate(endpoint, client))
    """

    @property  # pragma: no mutate (read by type checkers only)
    def SUCCESS_MODEL(self) -> type[M_co]: ...


@dataclass(frozen=True)
class Page(Generic[M_co]):
    """One page of a list endpoint, as ``Pager.pages()`` yields it.

    Attributes:
        number: the page number (``pageNumber``), counted from 1.
        model: the typed page model the endpoint returned (``ShipmentPage``, ...), with
            its envelope and any field the spec does not name (``additional_properties``).
        items: the items of the page to use: ``model.data`` without repeats of earlier
            pages (see "Repeats" in docs/guides/pagination.md).
        total_records: ``totalRecords`` of this page.
        raw_items: each of ``items`` as the JSON the server sent, decoded on first use.

    Example::

        for page in client.shipments.list().pages():
            print(page.number, len(page.items), "of", page.total_records)
    """

    number: int
    model: M_co
    # The response body, and where each of the items stands in its data.
    _content: bytes
    _kept: tuple[int, ...]

    @functools.cached_property
    def items(self: Page[PageModel[T]]) -> Sequence[T]:
        """The items of the page (repeats of earlier pages dropped)."""
        return tuple(self.model.data[index] for index in self._kept)

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

            for page in client.shipments.list().pages():
                for raw in page.raw_items:
                    print(json.dumps(raw))
        """
        data = json.loads(self._content)["data"]
        return tuple(data[index] for index in self._kept)

    def __repr__(self) -> str:
        return (
            f"Page(number={self.number}, items={len(self._kept)}, "
            f"model={type(self.model).__name__})"
        )


class InvalidRecordError(errors.InvalidResponseError):
    """A record of a page cannot become its model (a number, a list or ``null`` in
    ``data``: an object always does). Nothing is lost: the error names
    the page and the record, and carries every record of the page as sent. Resuming at
    ``start_page`` would fail the same way (``resumable`` is false); to go past the
    record, keep ``raw_items`` and resume at ``start_page + 1``.

    Attributes:
        index: the record's place in the page's ``data``.
        raw_item: the record as sent.
        raw_items: every record of the page as sent (none of them was yielded).

    Example::

        except service_api.InvalidRecordError as exc:
            quarantine(exc.raw_items)
            resume_from = exc.start_page + 1
    """

    def __init__(
        self, message: str, *, index: int, raw_item: Any, raw_items: list[Any]
    ) -> None:
        super().__init__(message)
        self.index = index
        self.raw_item = raw_item
        self.raw_items = raw_items

    #: Always false: the page fails again the same way.
    resumable = False


# The least value of each numeric option, and those that may also be None (page_size:
# the endpoint's own; max_items, max_pages: no bound).
_UNSET = ("page_size", "max_items", "max_pages")
_LEAST = {
    "page_size": 1,
    "start_page": 1,
    "concurrency": 1,
    "max_items": 0,
    "max_pages": 0,
}
# Frames skipped to warn at the caller's line: this package's and the generated accessors'.
_PACKAGES = ("service_api.", "service_api_client.")
# What the generated parser raises for a body that is JSON but not a page of its model.
_PARSE_ERRORS = (KeyError, TypeError, ValueError, AttributeError)


def _warn(message: str) -> None:
    """Warn at the first frame outside this package: the caller's loop or call, however
    many generators and drivers lie between (their number differs per path)."""
    frame = sys._getframe(1)
    level = 2
    while frame.f_back is not None and frame.f_globals.get("__name__", "").startswith(
        _PACKAGES
    ):
        frame = frame.f_back
        level += 1
    warnings.warn(message, errors.PaginationWarning, stacklevel=level)


def _builds(model: type[Any], doc: dict[str, Any], data: list[Any]) -> bool:
    try:
        model.from_dict({**doc, "data": data})
    except _PARSE_ERRORS:
        return False
    return True


class Pager(Generic[M_co]):
    """The pages and items of a list endpoint, as ``client.<tag>.list()`` and
    :func:`paginate` return it.

    ``for`` gives the items, ``async for`` too; :meth:`pages` gives the pages, with
    ``for`` or ``async for``. Each iteration starts afresh at ``start_page``. An
    iteration left early is closed by ``close()`` / ``aclose()`` (``contextlib.closing``
    / ``aclosing``) or by garbage collection, which stops every thread or task it started.

    What it takes (the options as keywords, checked when the pager is made):

        endpoint: a generated list endpoint module (``list_shipments``: items typed
            ``Shipment``); ``client.<tag>.list()`` passes its own.
        client: the client (``service_api.Client`` or a generated ``Client``).
        page_size: records per page, 1 to the spec's ``pageSize`` maximum (the
            endpoint's ``MAX_PAGE_SIZE``): above it the service uses its maximum, and so
            does the pager, with a ``PaginationWarning``. Default: the spec's default
            (``PAGE_SIZE``: its ``default``, else its ``maximum``).
        start_page: the first page to fetch; a failure's ``start_page`` resumes.
        max_items: stop after this many items, fetching no page more than needed.
        max_pages: stop after this many pages.
        concurrency: requests in flight at once after the first page (threads or
            tasks); up to twice as many pages are fetched ahead of the loop.
        key: a record's identity, to drop records served again; default (``None``) its id.
        **params: the endpoint's own parameters.

    ``client.<tag>.list()`` names every option in its signature, typed.

    Raises:
        TypeError: not an endpoint module, not a client, or an argument the endpoint
            does not take; ValueError: a number out of range. Both before any request.
        ServiceApiError: while iterating, a page failed after the client's retries:
            the typed error itself, whose ``start_page`` resumes with exactly the items
            not yet yielded.

    Example::

        for shipment in client.shipments.list(concurrency=4):
            print(shipment.shipment_id)

        from service_api_client.api.shipments import list_shipments
        for shipment in service_api.paginate(list_shipments, client, max_items=100):
            print(shipment.shipment_id)
    """

    def __init__(
        self, endpoint: ListOperation[M_co], client: Client, /, **given: Any
    ) -> None:
        """Every check of the arguments, before any request."""
        # The iteration's options (PageOptions, with their defaults); the rest are the
        # endpoint's own parameters.
        params = {k: v for k, v in given.items() if k not in PageOptions._fields}
        options = PageOptions(**{k: v for k, v in given.items() if k not in params})
        if not isinstance(endpoint, ModuleType) or not hasattr(
            endpoint, "SUCCESS_MODEL"
        ):
            raise TypeError(
                f"not a generated list endpoint module (list_shipments): {endpoint!r}"
            )
        if not isinstance(client, Client):
            raise TypeError(
                f"client must be a service_api.Client, not {type(client).__name__}"
            )
        for name, least in _LEAST.items():
            value = getattr(options, name)
            counted = type(value) is int and value >= least
            if not counted and not (value is None and name in _UNSET):
                raise ValueError(
                    f"{name} must be an integer of at least {least}, not {value!r}"
                )
        # The default key: the id attribute the generator found for the endpoint's records.
        key = options.key or functools.partial(
            id_key, getattr(endpoint, "ID_ATTRIBUTE", None)
        )
        if not callable(key):
            raise TypeError(f"key must be a function of an item, not {options.key!r}")
        self._name = endpoint.__name__.rpartition(".")[2]
        try:
            inspect.signature(endpoint._get_kwargs).bind(
                **params, page_number=None, page_size=None
            )
        except TypeError as exc:
            raise TypeError(
                f"{self._name}: {exc} "
                "(for page_number / page_size use start_page / page_size)"
            ) from None
        # The sizes the spec states, as the generated module holds them.
        page_size = options.page_size or getattr(endpoint, "PAGE_SIZE", None)
        largest = getattr(endpoint, "MAX_PAGE_SIZE", None)
        if page_size is None:
            raise ValueError(
                f"{self._name}: the spec gives pageSize no default: pass page_size"
            )
        if largest is not None and page_size > largest:
            _warn(
                f"page_size {page_size} is above the service's maximum; using {largest}"
            )
            page_size = largest
        self._options = options._replace(page_size=page_size, key=key)
        self._given = {k: v for k, v in given.items() if k != "page_size"}
        self._model = endpoint.SUCCESS_MODEL
        self._client = client
        # A plain generated client checks no drift: it has no DriftLog of its own.
        shared = getattr(client, "_shared", None)
        self._drift: DriftLog = shared.drift if shared else DriftLog(enabled=False)
        self._headers = getattr(endpoint, "ANSWER_HEADERS", None)
        # The page request of the generated module, built against the client's base URL.
        self._args = functools.partial(
            endpoint._get_kwargs,
            **params,
            page_size=page_size,
        )

    def __repr__(self) -> str:
        """The endpoint, the page size used and every other option or parameter set
        (not left at its default): ``Pager(list_shipments, page_size=50, max_items=10)``."""
        given = [
            f"{k}={getattr(v, '__name__', v)!r}"
            for k, v in self._given.items()
            if v is not UNSET and v != PageOptions._field_defaults.get(k, UNSET)
        ]
        page_size = self._options.page_size
        return f"Pager({', '.join([self._name, f'page_size={page_size}', *given])})"

    def __iter__(self: Pager[PageModel[T]]) -> Generator[T, None, None]:
        with contextlib.closing(self._pages()) as pages:
            for page in pages:
                yield from page.items

    async def __aiter__(self: Pager[PageModel[T]]) -> AsyncGenerator[T, None]:
        async with contextlib.aclosing(self._apages()) as pages:
            async for page in pages:
                for item in page.items:
                    yield item

    def pages(self) -> Pages[M_co]:
        """The pages, each a :class:`Page` with its number, model and items: iterate the
        result with ``for`` or ``async for``.

        Example::

            for page in client.shipments.list().pages():
                print(page.number, len(page.items))
        """
        return Pages(self)

    def _pages(self) -> Generator[Page[M_co], None, None]:
        plan = PagePlan(self._options, warn=_warn)
        pending: dict[int, Future[httpx.Response]] = {}
        pool = ThreadPoolExecutor(
            self._options.concurrency, thread_name_prefix="service-api-pages"
        )
        try:
            while (number := plan.next_page_info()) is not None:
                future = pending.pop(number, None)
                response = self._fetch(number) if future is None else future.result()
                page = self._checked_page(plan, number, response)
                # The pool works through the pages asked ahead while this thread parses.
                for ahead in plan.pages_ahead(number):
                    pending[ahead] = pool.submit(self._fetch, ahead)
                yield page
        except errors.ServiceApiError as exc:
            _stopped_at(plan, exc)
            raise
        finally:
            # Early exit, error or garbage collection: no thread outlives the iterator.
            pool.shutdown(wait=True, cancel_futures=True)

    async def _apages(self) -> AsyncGenerator[Page[M_co], None]:
        plan = PagePlan(self._options, warn=_warn)
        in_flight = asyncio.Semaphore(self._options.concurrency)
        pending: dict[int, asyncio.Task[httpx.Response]] = {}
        try:
            while (number := plan.next_page_info()) is not None:
                # Left in ``pending`` while awaited: if the consumer is cancelled here,
                # the cleanup below still cancels and awaits this task.
                response = await (
                    pending.get(number) or self._afetch(number, in_flight)
                )
                pending.pop(number, None)
                # Let a queued task send its request before this parse.
                # (sleep treats any delay <= 0 alike: one pass of the loop).
                await asyncio.sleep(0)  # pragma: no mutate
                page = self._checked_page(plan, number, response)
                for ahead in plan.pages_ahead(number):
                    pending[ahead] = asyncio.ensure_future(
                        self._afetch(ahead, in_flight)
                    )
                yield page
        except errors.ServiceApiError as exc:
            _stopped_at(plan, exc)
            raise
        finally:
            for task in pending.values():
                task.cancel()
            await asyncio.gather(*pending.values(), return_exceptions=True)

    def _fetch(self, number: int) -> httpx.Response:
        """The page's response (the client retries what is worth retrying)."""
        try:
            return self._client.get_httpx_client().request(
                **self._args(page_number=number)
            )
        except httpx.HTTPError as exc:  # a plain generated client's transport error
            raise errors.error_from_httpx(exc) from exc

    async def _afetch(
        self, number: int, in_flight: asyncio.Semaphore
    ) -> httpx.Response:
        """Async twin of :meth:`_fetch`, with at most ``concurrency`` requests in flight."""
        kwargs = self._args(page_number=number)
        async with in_flight:
            try:
                return await self._client.get_async_httpx_client().request(**kwargs)
            except httpx.HTTPError as exc:
                raise errors.error_from_httpx(exc) from exc

    def _checked_page(
        self, plan: PagePlan, number: int, response: httpx.Response
    ) -> Page[Any]:
        """Parse the page and have the plan check it; the page to hand over."""
        where = f"{self._name}: page {number}"
        checked = self._drift.answer(
            self._name, response, range(200, 201), self._headers
        )
        # An error status comes from a plain generated client (ours raises them).
        if response.status_code != 200:
            raise errors.error_from_response(response)
        try:
            doc = response.json()
        except ValueError as exc:
            raise errors.InvalidResponseError(
                f"{where}: unreadable answer (not JSON)"
            ) from exc
        try:
            with checked:
                parsed = self._model.from_dict(doc)
        except _PARSE_ERRORS as exc:
            raise self._unreadable(where, doc, exc) from exc
        return Page(
            number, parsed, response.content, tuple(plan.accept(number, parsed))
        )

    def _unreadable(
        self, where: str, doc: Any, cause: Exception
    ) -> errors.InvalidResponseError:
        """The error of a JSON answer that is not a page: the record at fault, if the
        envelope itself is fine, else the envelope's field the spec requires that the
        answer left out (the name only: values stay out of messages)."""
        data: Any = doc.get("data") if isinstance(doc, dict) else None
        envelope_fine = isinstance(data, list) and _builds(self._model, doc, [])
        for index, raw in enumerate(data if envelope_fine else []):
            if not _builds(self._model, doc, [raw]):
                return InvalidRecordError(
                    f"{where}: record {index} of data is not a record: "
                    f"{json.dumps(raw)[:80]}",
                    index=index,
                    raw_item=raw,
                    raw_items=data,
                )
        shape = "object" if isinstance(doc, dict) else type(doc).__name__
        missing = ""
        if isinstance(cause, KeyError) and isinstance(doc, dict):
            missing = f" without {cause.args[0]!r}, which the spec requires"
        return errors.InvalidResponseError(
            f"{where}: unreadable answer (a JSON {shape}{missing})"
        )


@dataclass(frozen=True)
class Pages(Generic[M_co]):
    """The pages of a :class:`Pager`, as ``pager.pages()`` returns them: ``for`` and
    ``async for`` each start an iteration at ``start_page``. An iteration left early is
    closed by its iterator's ``close()`` / ``aclose()`` (``contextlib.closing`` /
    ``aclosing``) or by garbage collection: its threads or tasks stop.

    Example::

        async with contextlib.aclosing(aiter(client.devices.list().pages())) as pages:
            async for page in pages:
                print(page.number, len(page.items))
    """

    pager: Pager[M_co]

    def __iter__(self) -> Generator[Page[M_co], None, None]:
        return self.pager._pages()

    def __aiter__(self) -> AsyncGenerator[Page[M_co], None]:
        return self.pager._apages()


def _stopped_at(plan: PagePlan, error: errors.ServiceApiError) -> None:
    """Record in ``error`` where the iteration stopped: on the page that failed, where
    the plan stays."""
    number = plan.start_page + plan.pages_accepted
    error.at_page(number, items_yielded=plan.items_yielded)


#: ``paginate(endpoint_module, client, **options)``: the :class:`Pager` of a list
#: endpoint given as its generated module, the one ``client.<tag>.list(**options)`` returns.
paginate = Pager
