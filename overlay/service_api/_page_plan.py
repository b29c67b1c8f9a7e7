"""The I/O-free heart of pagination: which page to fetch next, and what a page may say.

:class:`PagePlan` decides everything (the next page, ``next_page_info``; once
``totalRecords`` is known, the pages to fetch ahead, ``pages_ahead``; whether a page is
consistent and which items are repeats, ``accept``); the sync and async drivers in
``_pagination`` only fetch what it asks for and hand the pages back in order. Because it
does no I/O, both twins share every decision and the unit tests drive it with plain
objects.

What the plan does with a misbehaving server is the policy table of the README
("Pagination"). The plan never asks for a page beyond ``ceil(totalRecords / pageSize)``
of the first page (or, when ``start_page`` is already past the end, beyond
``start_page``), so iteration is bounded whatever the server says.

Repeats are recognised by the record's key (by default its id, see :func:`id_key`)
among the keys of the items handed over from the last ``REPEAT_WINDOW_PAGES`` pages:
records shifted by an insertion or a deletion land on a neighbouring page.
"""

from __future__ import annotations

import collections
import math
import sys
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl

import attrs
import httpx

from service_api._errors import InconsistentPageError, InvalidResponseError

# The service serves at most 50 records per page and treats a larger pageSize as 50.
MAX_PAGE_SIZE = 50
#: How many of the latest pages have their items' keys remembered, to drop repeats.
REPEAT_WINDOW_PAGES = 8

#: A record's identity: equal keys are the same record; ``None`` means "unknown", so
#: the record is never taken for a repeat.
KeyFunction = Callable[[Any], Hashable | None]


@dataclass(frozen=True, slots=True)
class PageRequest:
    """A page to fetch: its number and size, the only inputs of the page request."""

    number: int
    size: int


@dataclass(frozen=True, slots=True)
class PageVerdict:
    """What to do with a page that arrived.

    Attributes:
        items: the items to hand over (repeats dropped, cut to ``max_items``).
        warnings: messages to emit as ``PaginationWarning``.
        last: no page is fetched after this one.
        kept: where each of ``items`` stands in the page's ``data``.
    """

    items: tuple[Any, ...]
    warnings: tuple[str, ...]
    last: bool
    kept: tuple[int, ...] = ()


@dataclass(frozen=True, slots=True)
class Envelope:
    """The pagination envelope of a page, read and type-checked."""

    total_records: int
    page_number: int
    page_size: int
    data: Sequence[Any]
    next_link: str | None


def read_envelope(model: object, *, page_number: int) -> Envelope:
    """Read the envelope fields of a parsed page model.

    Raises ``InvalidResponseError`` for a field that is missing (``UNSET`` or ``None``,
    should a future schema make it optional) or of the wrong type.

    Example::

        env = read_envelope(shipment_page, page_number=1)   # env.total_records, ...
    """
    counts: list[Any] = [
        getattr(model, name, None) for name in ("total_records", "page_number", "page_size")
    ]
    for value, wire in zip(counts, ("totalRecords", "pageNumber", "pageSize"), strict=True):
        # bool is an int in Python, but never a count.
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            raise InvalidResponseError(
                f"page {page_number}: envelope field {wire!r} is missing or not a count"
            )
    total, number, size = counts
    data = getattr(model, "data", None)
    if not isinstance(data, list | tuple):
        raise InvalidResponseError(f"page {page_number}: envelope field 'data' is missing")
    link = getattr(model, "next_", None)
    # UNSET, None and "" all mean "no next page".
    return Envelope(total, number, size, data, link if isinstance(link, str) and link else None)


def check_next_link(link: str, *, base_url: str | httpx.URL, request: PageRequest) -> str | None:
    """Why a ``next`` link cannot be trusted, or ``None`` if it is the expected page.

    The link is never followed (the next request is built from pageNumber/pageSize
    against the client's base URL, so credentials go nowhere else); it is only
    checked, so that a server pointing elsewhere or backwards is reported. Accepted:
    same host and port, a path under the base URL's path, and the same scheme or
    ``http`` under an ``https`` base (public documentation shows such links).

    Example::

        check_next_link("https://evil.example/x", base_url=base, request=PageRequest(1, 50))
        # 'next link to another origin (https://evil.example)'
    """
    place, _, query = link.partition("?")
    return _place_problem(place, httpx.URL(base_url)) or _query_problem(query, request)


def _place_problem(place: str, base: httpx.URL) -> str | None:
    """The origin and path part of :func:`check_next_link` (the costly URL parsing)."""
    try:
        url = base.join(place)
    except (httpx.InvalidURL, TypeError, ValueError):
        return f"unparsable next link {place!r}"
    scheme_ok = url.scheme == base.scheme or (url.scheme == "http" and base.scheme == "https")
    # A scheme upgrade changes the default port; compare explicit ports only.
    port_ok = url.port == base.port or (url.scheme != base.scheme and url.port is None)
    if not (scheme_ok and url.host == base.host and port_ok):
        return f"next link to another origin ({url.scheme}://{url.host})"
    if not url.path.startswith(base.path.rstrip("/") + "/"):
        return f"next link outside the API path ({url.path})"
    return None


def _query_problem(query: str, request: PageRequest) -> str | None:
    # Parsed as httpx parses a query; the first of repeated names counts, as in httpx.
    given = dict(reversed(parse_qsl(query.partition("#")[0], keep_blank_values=True)))
    for name, value in (("pageNumber", request.number + 1), ("pageSize", request.size)):
        if given.get(name, str(value)) != str(value):
            return f"next link with {name}={given[name]}, expected {value}"
    return None


# Per model class: the name of its id attribute, or None.
_ID_ATTRIBUTES: dict[type, str | None] = {}


def id_key(item: object) -> Hashable | None:
    """The default record key: the record's id, the first declared field of its model
    whose name ends in ``_id`` (the spec lists each resource's identifier first:
    ``shipmentId``, ``deviceId``). ``None`` (never a repeat) when the model declares
    no id, or the record has none or one that is not a string or an integer.

    Example::

        >>> id_key(Shipment(shipment_id="s-1"))
        's-1'
    """
    cls = type(item)
    if cls not in _ID_ATTRIBUTES:
        names = [f.name for f in attrs.fields(cls)] if attrs.has(cls) else []
        _ID_ATTRIBUTES[cls] = next((name for name in names if name.endswith("_id")), None)
    name = _ID_ATTRIBUTES[cls]
    value = getattr(item, name, None) if name is not None else None
    return value if isinstance(value, str | int) and not isinstance(value, bool) else None


class PagePlan:
    """Decides which pages to fetch and checks each page that arrives, with no I/O.

    Pages must be handed to :meth:`accept` in order, each one the page
    :meth:`next_page_info` named (with concurrency the driver fetches ahead the pages
    :meth:`pages_ahead` names, but still accepts in order).

    Example::

        plan = PagePlan(page_size=50, start_page=1, base_url=base_url)
        while (request := plan.next_page_info()) is not None:
            verdict = plan.accept(request.number, fetch(request))
            yield from verdict.items
    """

    def __init__(
        self,
        *,
        page_size: int,
        start_page: int,
        base_url: str,
        max_items: int | None = None,
        max_pages: int | None = None,
        key: KeyFunction = id_key,
    ) -> None:
        if not (1 <= page_size <= MAX_PAGE_SIZE and start_page >= 1):
            raise ValueError(f"page_size must be 1..{MAX_PAGE_SIZE} and start_page at least 1")
        self.page_size, self.start_page = page_size, start_page
        self.max_items, self.key = max_items, key
        self.base_url = httpx.URL(base_url)  # parsed once: parsing is a visible cost
        # The last page max_items and max_pages allow.
        pages = [max_pages, None if max_items is None else math.ceil(max_items / page_size)]
        self._limit = start_page - 1 + min([n for n in pages if n is not None] or [sys.maxsize])
        self.items_yielded = self.pages_accepted = self._asked = self._planned_end = 0
        self._next_number = start_page
        self._first_total: int | None = None
        self._last_total: int | None = None
        self._done = self._next_missing = False
        # Keys handed over, oldest first, bounded: memory does not grow with the set.
        self._recent: collections.OrderedDict[Hashable, None] = collections.OrderedDict()
        self._warned: set[str] = set()
        self._notes: list[str] = []
        self._trusted_place: str | None = None  # the part before "?" of a checked link

    # -- what to fetch --------------------------------------------------------------

    @property
    def planned_last_page(self) -> int | None:
        """The last page to fetch, once the first page told ``totalRecords``."""
        return None if self._first_total is None else min(self._planned_end, self._limit)

    def next_page_info(self) -> PageRequest | None:
        """The next page to fetch and accept, or ``None`` when iteration is over."""
        last = self.planned_last_page
        if self._done or self._next_number > (self._limit if last is None else last):
            return None
        return PageRequest(self._next_number, self.page_size)

    def pages_ahead(self, number: int, window: int) -> list[PageRequest]:
        """The pages after ``number`` (the page in hand) up to ``number + window`` and
        within the plan that no earlier call named: what concurrent drivers fetch ahead.
        None until the first page told how many pages there are."""
        last = self.planned_last_page
        if self._done or last is None:
            return []
        first, stop = max(self._asked, number) + 1, min(last, number + window) + 1
        self._asked = max(self._asked, stop - 1)
        return [PageRequest(ahead, self.page_size) for ahead in range(first, stop)]

    # -- what arrived ---------------------------------------------------------------

    def accept(self, number: int, model: object) -> PageVerdict:
        """Check the page ``number`` and decide what to hand over.

        Raises ``InvalidResponseError`` (or its ``InconsistentPageError``) when the page
        cannot be used; the plan then stays on that page, which is where to resume.
        """
        if number != self._next_number or self.next_page_info() is None:
            raise RuntimeError(f"page {number} accepted out of order")  # a driver bug
        self._notes = []
        env = read_envelope(model, page_number=number)
        echo = {"page": (number, env.page_number), "pageSize": (self.page_size, env.page_size)}
        for what, (want, got) in echo.items():
            if got != want:
                msg = f"page {number}: asked for {what} {want}, the server answered {what} {got}"
                raise InconsistentPageError(msg, page_number=number)
        last = self._track_total(env.total_records, number)
        data, cut = self._fit(env, number)
        kept = self._drop_repeats(data, number)
        last = self._read_next_link(env, number, last or cut)
        if self.max_items is not None and len(kept) >= self.max_items - self.items_yielded:
            kept, last = kept[: self.max_items - self.items_yielded], True
        self.items_yielded += len(kept)
        self.pages_accepted += 1
        self._next_number, self._done = number + 1, last
        items = tuple(data[index] for index in kept)
        return PageVerdict(items, tuple(self._notes), self.next_page_info() is None, tuple(kept))

    def _track_total(self, total: int, number: int) -> bool:
        """Remember ``totalRecords`` (the first page's plans the iteration); whether
        ``number`` is the planned last page."""
        if self._first_total is None:
            self._first_total = self._last_total = total
            self._planned_end = math.ceil(total / self.page_size)
        elif total != self._last_total:
            self._note(
                "total",
                f"totalRecords changed from {self._last_total} to {total} at page {number}; "
                f"keeping the {self.planned_last_page} pages planned",
            )
            self._last_total = total
        return number >= self._planned_end

    def _fit(self, env: Envelope, number: int) -> tuple[list[Any], bool]:
        """The items the page may hold, and whether it ends the iteration: no more than
        pageSize (the rest belong to the next page), nor than its own totalRecords allows
        (no page can follow by that count); none before the planned end only if
        something explains it."""
        data = list(env.data[: self.page_size])
        if len(env.data) > self.page_size:
            self._note(
                "long",
                f"page {number} holds {len(env.data)} items, more than pageSize "
                f"{self.page_size}; the extra items are ignored",
            )
        allowed = max(0, min(self.page_size, env.total_records - (number - 1) * self.page_size))
        if len(data) > allowed:
            self._note(
                "beyond-total",
                f"page {number} holds {len(data)} items but its totalRecords "
                f"({env.total_records}) allows {allowed}; the rest are ignored, stopping",
            )
            return data[:allowed], True
        if data or number > self._planned_end:
            return data, False
        if allowed == 0:
            self._note(
                "shrank",
                f"page {number} is empty: the result set shrank to {env.total_records} "
                "records; stopping",
            )
        elif self._next_missing:
            self._note(
                "no-next-end", f"page {number} is empty, as the missing next link said; stopping"
            )
        else:
            raise InconsistentPageError(
                f"page {number} is empty although totalRecords is {env.total_records}",
                page_number=number,
            )
        return data, True

    def _drop_repeats(self, data: list[Any], number: int) -> list[int]:
        """The places in ``data`` of the items to hand over: those whose key was not
        handed over on a recent page or earlier on this one (remembered from now on)."""
        kept: list[int] = []
        for index, item in enumerate(data):
            key = self.key(item)
            if key is None or key not in self._recent:
                kept.append(index)
                if key is not None:
                    self._recent[key] = None
        while len(self._recent) > REPEAT_WINDOW_PAGES * self.page_size:
            self._recent.popitem(last=False)
        if data and not kept:
            raise InconsistentPageError(
                f"page {number} repeats items already yielded (a page served twice?)",
                page_number=number,
            )
        if len(kept) < len(data):
            dropped = len(data) - len(kept)
            self._note("repeat", f"page {number}: {dropped} items already yielded were dropped")
        return kept

    def _read_next_link(self, env: Envelope, number: int, last: bool) -> bool:
        """The ``next`` link is a signal, checked but never followed; whether this page
        is the last one."""
        if env.next_link is None:
            if last or number >= self._planned_end:
                return True
            # totalRecords promises more: going on by page number loses nothing, and the
            # plan still bounds the pages; an empty page ends it without an error.
            self._note(
                "no-next",
                f"page {number} has no next link although totalRecords implies "
                f"{self._planned_end} pages; going on by page number",
            )
            self._next_missing = True
            return False
        # The origin and path are checked once per distinct link prefix (URL parsing
        # is most of the cost); pageNumber / pageSize on every page.
        place, _, query = env.next_link.partition("?")
        problem = None if place == self._trusted_place else _place_problem(place, self.base_url)
        if problem is None:
            self._trusted_place = place
            problem = _query_problem(query, PageRequest(number, self.page_size))
        if problem is not None:
            self._note("link", f"page {number}: {problem}; link ignored")
        if last and env.total_records == self._first_total:
            self._note(
                "extra-next",
                f"page {number} links a next page beyond the {self._planned_end} pages "
                "totalRecords implies; stopping",
            )
        return last

    def _note(self, kind: str, message: str) -> None:
        # Once per kind: a server that repeats a fault on every page should not flood.
        if kind not in self._warned:
            self._warned.add(kind)
            self._notes.append(message)
