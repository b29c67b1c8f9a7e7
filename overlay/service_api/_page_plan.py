"""The I/O-free heart of pagination: which page to fetch next, and what a page may say.

:class:`PagePlan` decides everything (``has_next_page`` / ``next_page_info``, the pages
left once ``totalRecords`` is known, whether a page is consistent, which items are
repeats); the sync and async drivers in ``_pagination`` only fetch what it asks for and
hand the pages back in order. Because it does no I/O, both twins share every decision
and the unit tests drive it with plain objects.

What the plan does with a misbehaving server is the policy table of the README
("Pagination"). The plan never asks for a page beyond ``ceil(totalRecords / pageSize)``
of the first page (or, when ``start_page`` is already past the end, beyond
``start_page``), so iteration is bounded whatever the server says.

Repeats are recognised by the record's key (by default its id, see :func:`id_key`)
among the keys of the items handed over from the last ``REPEAT_WINDOW_PAGES`` pages:
records shifted by an insertion or a deletion land on a neighbouring page.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from typing import Any

import attrs
import httpx

from service_api._errors import InconsistentPageError, InvalidResponseError

# A query made of letters, digits, "=" and "&" only: read without parsing the URL.
_PLAIN_QUERY = re.compile(r"[A-Za-z0-9=&]*")

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
    counts: dict[str, int] = {}
    for attr, wire in (
        ("total_records", "totalRecords"),
        ("page_number", "pageNumber"),
        ("page_size", "pageSize"),
    ):
        value = getattr(model, attr, None)
        # bool is an int in Python, but never a count.
        if not isinstance(value, int) or isinstance(value, bool):
            raise InvalidResponseError(
                f"page {page_number}: envelope field {wire!r} is missing or not an integer"
            )
        counts[attr] = value
    if counts["total_records"] < 0:
        raise InvalidResponseError(f"page {page_number}: totalRecords is negative")
    data = getattr(model, "data", None)
    if not isinstance(data, list | tuple):
        raise InvalidResponseError(f"page {page_number}: envelope field 'data' is missing")
    link = getattr(model, "next_", None)
    # UNSET, None and "" all mean "no next page".
    return Envelope(**counts, data=data, next_link=link if isinstance(link, str) and link else None)


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
    try:
        base = base_url if isinstance(base_url, httpx.URL) else httpx.URL(base_url)
        url = base.join(link)
    except (httpx.InvalidURL, TypeError, ValueError):
        return f"unparsable next link {link!r}"
    scheme_ok = url.scheme == base.scheme or (url.scheme == "http" and base.scheme == "https")
    # A scheme upgrade changes the default port; compare explicit ports only.
    port_ok = url.port == base.port or (url.scheme != base.scheme and url.port is None)
    if not (scheme_ok and url.host == base.host and port_ok):
        return f"next link to another origin ({url.scheme}://{url.host})"
    if not url.path.startswith(base.path.rstrip("/") + "/"):
        return f"next link outside the API path ({url.path})"
    for name, value in (("pageNumber", request.number + 1), ("pageSize", request.size)):
        given = url.params.get(name)
        if given is not None and given != str(value):
            return f"next link with {name}={given}, expected {value}"
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


class RecentKeys:
    """The last ``size`` keys added, oldest forgotten first: memory that does not grow
    with the result set.

    Example::

        recent = RecentKeys(2); recent.add("a"); recent.add("b"); recent.add("c")
        "a" in recent   # False
    """

    def __init__(self, size: int) -> None:
        self.size = size
        self._keys: dict[Hashable, None] = {}  # insertion-ordered: the oldest first

    def __contains__(self, key: Hashable) -> bool:
        return key in self._keys

    def __len__(self) -> int:
        return len(self._keys)

    def add(self, key: Hashable) -> None:
        self._keys.pop(key, None)
        self._keys[key] = None
        if len(self._keys) > self.size:
            del self._keys[next(iter(self._keys))]


class PagePlan:
    """Decides which pages to fetch and checks each page that arrives, with no I/O.

    Pages must be handed to :meth:`accept` in order, each one the page
    :meth:`next_page_info` named (with concurrency the driver fetches ahead from
    :meth:`remaining_pages` but still accepts in order).

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
        if page_size < 1 or page_size > MAX_PAGE_SIZE:
            raise ValueError(f"page_size must be 1..{MAX_PAGE_SIZE}, not {page_size}")
        if start_page < 1:
            raise ValueError(f"start_page must be at least 1, not {start_page}")
        self.page_size = page_size
        self.start_page = start_page
        # Parsed once: URL parsing is a visible share of the per-page cost.
        self.base_url = httpx.URL(base_url)
        self.max_items = max_items
        self.max_pages = max_pages
        self.key = key
        self.items_yielded = 0
        self.pages_accepted = 0
        self._next_number = start_page
        self._first_total: int | None = None
        self._last_total: int | None = None
        self._done = max_items == 0 or max_pages == 0
        self._recent = RecentKeys(REPEAT_WINDOW_PAGES * page_size)
        self._next_missing = False
        self._warned: set[str] = set()
        self._notes: list[str] = []
        self._trusted_link_path: str | None = None

    # -- what to fetch --------------------------------------------------------------

    @property
    def planned_last_page(self) -> int | None:
        """The last page to fetch, once the first page told ``totalRecords``."""
        if self._first_total is None:
            return None
        last = math.ceil(self._first_total / self.page_size)
        if self.max_items is not None:
            last = min(last, self.start_page - 1 + math.ceil(self.max_items / self.page_size))
        if self.max_pages is not None:
            last = min(last, self.start_page - 1 + self.max_pages)
        return last

    def has_next_page(self) -> bool:
        """Whether another page is to be fetched."""
        return self.next_page_info() is not None

    def next_page_info(self) -> PageRequest | None:
        """The next page to fetch and accept, or ``None`` when iteration is over."""
        last = self.planned_last_page
        if self._done or (last is not None and self._next_number > last):
            return None
        return PageRequest(self._next_number, self.page_size)

    def remaining_pages(self) -> range:
        """Every page still to fetch if the server behaves, known after the first page
        (empty before it): what concurrent drivers fetch ahead."""
        last = self.planned_last_page
        if self._done or last is None:
            return range(0)
        return range(self._next_number, last + 1)

    # -- what arrived ---------------------------------------------------------------

    def accept(self, number: int, model: object) -> PageVerdict:
        """Check the page ``number`` and decide what to hand over.

        Raises ``InvalidResponseError`` (or its ``InconsistentPageError``) when the page
        cannot be used; the plan then stays on that page, which is where to resume.
        """
        request = self.next_page_info()
        if request is None or request.number != number:
            raise RuntimeError(f"page {number} accepted out of order")  # a driver bug
        self._notes = []
        env = read_envelope(model, page_number=number)
        self._check_echo(env, number)
        data = self._cut_to_page_size(list(env.data), number)
        last = self._track_total(env, number)
        last = self._check_empty(env, data, number) or last
        data, cut = self._cut_to_total(env, data, number)
        items, kept, keys = self._drop_repeats(data, number)
        last = self._read_next_link(env, number, last or cut)
        if self.max_items is not None and len(items) >= self.max_items - self.items_yielded:
            room = self.max_items - self.items_yielded
            items, kept, keys, last = items[:room], kept[:room], keys[:room], True
        self._commit(keys, number, last)
        return PageVerdict(tuple(items), tuple(self._notes), self._done, tuple(kept))

    def _check_echo(self, env: Envelope, number: int) -> None:
        """The page must be the one asked for, at the size asked for."""
        if env.page_number != number:
            raise InconsistentPageError(
                f"asked for page {number}, the server answered page {env.page_number}",
                page_number=number,
            )
        if env.page_size != self.page_size:
            raise InconsistentPageError(
                f"page {number}: asked for pageSize {self.page_size}, "
                f"the server answered pageSize {env.page_size}",
                page_number=number,
            )

    def _cut_to_page_size(self, data: list[Any], number: int) -> list[Any]:
        if len(data) > self.page_size:
            self._note(
                "long",
                f"page {number} holds {len(data)} items, more than pageSize "
                f"{self.page_size}; the extra items are ignored",
            )
        return data[: self.page_size]

    def _track_total(self, env: Envelope, number: int) -> bool:
        """Remember ``totalRecords`` (the first page's plans the iteration); whether
        ``number`` is the planned last page."""
        if self._first_total is None:
            self._first_total = self._last_total = env.total_records
        elif env.total_records != self._last_total:
            self._note(
                "total",
                f"totalRecords changed from {self._last_total} to {env.total_records} at "
                f"page {number}; keeping the {self.planned_last_page} pages planned",
            )
            self._last_total = env.total_records
        return number >= self._planned_end

    @property
    def _planned_end(self) -> int:
        return math.ceil((self._first_total or 0) / self.page_size)

    def _check_empty(self, env: Envelope, data: list[Any], number: int) -> bool:
        """An empty page before the planned end: an error, unless something explains it
        (then it is the last page)."""
        if data or number > self._planned_end:
            return False
        if (number - 1) * self.page_size >= env.total_records:
            self._note(
                "shrank",
                f"page {number} is empty: the result set shrank to "
                f"{env.total_records} records; stopping",
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
        return True

    def _cut_to_total(self, env: Envelope, data: list[Any], number: int) -> tuple[list[Any], bool]:
        """The page's own totalRecords caps what it may hold: items beyond it are ones
        the count denies, and pages after it cannot exist by that count."""
        allowed = max(0, min(self.page_size, env.total_records - (number - 1) * self.page_size))
        if len(data) <= allowed:
            return data, False
        self._note(
            "beyond-total",
            f"page {number} holds {len(data)} items but its totalRecords "
            f"({env.total_records}) allows {allowed}; the rest are ignored, stopping",
        )
        return data[:allowed], True

    def _drop_repeats(
        self, data: list[Any], number: int
    ) -> tuple[list[Any], list[int], list[Hashable | None]]:
        """Drop items whose key was handed over on a recent page or earlier on this one;
        the items kept, their places in ``data``, their keys."""
        items: list[Any] = []
        kept: list[int] = []
        keys: list[Hashable | None] = []
        on_page: set[Hashable] = set()
        for index, item in enumerate(data):
            key = self.key(item)
            if key is not None:
                if key in self._recent or key in on_page:
                    continue
                on_page.add(key)
            items.append(item)
            kept.append(index)
            keys.append(key)
        if data and not items:
            raise InconsistentPageError(
                f"page {number} repeats items already yielded (a page served twice?)",
                page_number=number,
            )
        if len(items) < len(data):
            self._note(
                "repeat",
                f"page {number}: {len(data) - len(items)} items already yielded were dropped",
            )
        return items, kept, keys

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
        problem = self._link_problem(env.next_link, number)
        if problem is not None:
            self._note("link", f"page {number}: {problem}; link ignored")
        if last and env.total_records == self._first_total:
            self._note(
                "extra-next",
                f"page {number} links a next page beyond the {self._planned_end} pages "
                "totalRecords implies; stopping",
            )
        return last

    def _link_problem(self, link: str, number: int) -> str | None:
        """:func:`check_next_link`, without parsing URLs on every page (most of its
        cost): once a link's part before ``?`` passed the full check, a link with the
        same part and a plain query without repeated names has only its ``pageNumber``
        / ``pageSize`` compared."""
        path, _, query = link.partition("?")
        pairs = [pair.partition("=") for pair in query.split("&")]
        given = {name: value for name, _, value in pairs}
        if (
            path == self._trusted_link_path
            and _PLAIN_QUERY.fullmatch(query)
            and len(given) == len(pairs)
        ):
            for name, expected in (("pageNumber", number + 1), ("pageSize", self.page_size)):
                if given.get(name, str(expected)) != str(expected):
                    return f"next link with {name}={given[name]}, expected {expected}"
            return None
        request = PageRequest(number, self.page_size)
        problem = check_next_link(link, base_url=self.base_url, request=request)
        if problem is None:
            self._trusted_link_path = path
        return problem

    def _commit(self, keys: list[Hashable | None], number: int, last: bool) -> None:
        """The page is accepted: remember the keys of its items and move on."""
        for key in keys:
            if key is not None:
                self._recent.add(key)
        self.items_yielded += len(keys)
        self.pages_accepted += 1
        self._next_number = number + 1
        if last or (self.max_pages is not None and self.pages_accepted >= self.max_pages):
            self._done = True

    def _note(self, kind: str, message: str) -> None:
        # Once per kind: a server that repeats a fault on every page should not flood.
        if kind not in self._warned:
            self._warned.add(kind)
            self._notes.append(message)
