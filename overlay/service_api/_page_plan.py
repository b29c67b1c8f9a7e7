"""The I/O-free heart of pagination: which page to fetch next, and what a page may say.

:class:`PagePlan` decides everything (``has_next_page`` / ``next_page_info``, the pages
left once ``totalRecords`` is known, whether a page is consistent); the sync and async
drivers in ``_pagination`` only fetch what it asks for and hand the pages back in order.
Because it does no I/O, both twins share every decision and the unit tests drive it with
plain objects.

Policy for a misbehaving server (each warning is given once per iteration):

====================================================  ==========================================
What the server does                                   What the iteration does
====================================================  ==========================================
a missing or mistyped envelope field                   ``InvalidResponseError`` (stop)
another ``pageNumber`` than asked for                  ``InconsistentPageError`` (stop)
another ``pageSize`` than asked for                    ``InconsistentPageError`` (stop)
``data`` longer than ``pageSize``                      warning; only the first ``pageSize`` kept
more items than the page's ``totalRecords`` allows     warning; the extra ignored, stop
a page served twice (all items already yielded)        ``InconsistentPageError`` (stop)
some items already yielded (records shifted)           warning; the repeats are dropped
an empty page before the end                           ``InconsistentPageError`` (stop), unless
                                                       its own ``totalRecords`` ends before it:
                                                       warning, the set shrank, stop
``totalRecords`` changing mid-way                      warning; the page count planned from the
                                                       first page stands
no ``next`` before the planned last page               warning; go on by page number to the
                                                       planned end, so nothing is lost; an empty
                                                       page there ends it (the link was right)
``next`` on the planned last page                      warning; stop (the plan bounds iteration)
``next`` to another origin, path, or page (backwards)  warning; the link is ignored and the next
                                                       page is built from pageNumber/pageSize
====================================================  ==========================================

The plan never asks for a page beyond ``ceil(totalRecords / pageSize)`` of the first page
(or, when ``start_page`` is already past the end, beyond ``start_page``), so iteration is
bounded by the planned page count whatever the server says, and never loops.

Repeats are recognised from the parsed items, in memory that does not grow with the
result set. Each item gets a cheap key (:func:`item_key`: for a generated model, a hash of
its top-level scalar values; nested objects and lists are left out). The items of the
last ``REPEAT_WINDOW_PAGES`` pages are remembered by key (records shifted by an insertion
or a deletion mid-iteration land on a neighbouring page), and an item is a repeat only if
it is equal (``==``, the models' deep comparison) to a remembered item with the same key:
two records that merely share a key are both handed over. A remembered page keeps its
keys and its response body only, not its models: an earlier item is rebuilt from the
body when a key matches, which is rare, so that the window holds a few bytes objects
rather than thousands of live models for the garbage collector to walk on every page.
Beyond the window each page is remembered by one mark, the hash of its items' keys; a
later page with the same mark is taken for a page served again and stops the iteration
(``InconsistentPageError``). That check, unlike the one within the window, goes by key
only, so it can stop, never drop.
"""

from __future__ import annotations

import hashlib
import json
import json.scanner
import math
import operator
import pickle
import re
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import attrs
import httpx

from service_api._errors import InconsistentPageError, InvalidResponseError

_PLAIN_QUERY = re.compile(r"[A-Za-z0-9=&]*")

# The service serves at most 50 records per page and treats a larger pageSize as 50.
MAX_PAGE_SIZE = 50
#: How many of the latest pages have each item remembered, to drop records served again.
REPEAT_WINDOW_PAGES = 8


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
    """The index in the page's ``data`` of each item handed over (aligned with ``items``)."""


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
    """
    values: dict[str, Any] = {}
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
        values[attr] = value
    if values["total_records"] < 0:
        raise InvalidResponseError(f"page {page_number}: totalRecords is negative")
    data = getattr(model, "data", None)
    if not isinstance(data, list | tuple):
        raise InvalidResponseError(f"page {page_number}: envelope field 'data' is missing")
    link = getattr(model, "next_", None)
    return Envelope(
        total_records=values["total_records"],
        page_number=values["page_number"],
        page_size=values["page_size"],
        data=data,
        # UNSET, None and "" all mean "no next page".
        next_link=link if isinstance(link, str) and link else None,
    )


def check_next_link(link: str, *, base_url: str | httpx.URL, request: PageRequest) -> str | None:
    """Why a ``next`` link cannot be trusted, or ``None`` if it is the expected page.

    The link is never followed (the next request is built from pageNumber/pageSize
    against the client's base URL, so credentials go nowhere else); it is only
    checked, so that a server pointing elsewhere or backwards is reported. Accepted:
    same host and port, a path under the base URL's path, and the same scheme or
    ``http`` under an ``https`` base (public documentation shows such links).
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
    prefix = base.path.rstrip("/") + "/"
    if not url.path.startswith(prefix):
        return f"next link outside the API path ({url.path})"
    wanted = {"pageNumber": request.number + 1, "pageSize": request.size}
    for name, value in wanted.items():
        given = url.params.get(name)
        if given is not None and given != str(value):
            return f"next link with {name}={given}, expected {value}"
    return None


# The C scanner behind json.loads: (value, end) for the value starting at an index.
# (typeshed describes make_scanner as a class taking itself; it takes a decoder.)
_SCAN: Callable[[str, int], tuple[Any, int]] = json.scanner.make_scanner(
    json.JSONDecoder()  # type: ignore[arg-type]
)
_SPACE = re.compile(r"[ \t\n\r]*")


def item_texts(content: bytes | str) -> list[str]:
    """The JSON text of each item of a page's ``data`` array, exactly as the server sent
    it, in order: what ``Page.raw_items`` decodes, when asked for.

    The C scanner of the standard ``json`` module finds where each value ends, so this
    costs one parse of the body and no re-serialisation. As ``json.loads`` does, the
    last ``data`` key of the envelope counts; ``[]`` when there is none.

    Raises ``ValueError`` (``json.JSONDecodeError``) for a body that is not a JSON object.

    Example::

        >>> item_texts(b'{"totalRecords": 2, "data": [{"id": 1}, {"id": 2}]}')
        ['{"id": 1}', '{"id": 2}']
    """
    if isinstance(content, bytes):
        text = content.decode(json.detect_encoding(content), "surrogatepass")
    else:
        text = content
    space = _SPACE.match
    found: list[str] = []

    def scan(at: int) -> int:  # the end of the value at ``at``
        try:
            return _SCAN(text, at)[1]
        except StopIteration:  # the scanner's way of saying "no value here"
            raise json.JSONDecodeError("expecting a value", text, at) from None

    def skip(at: int) -> int:  # past any whitespace at ``at``
        blank = space(text, at)
        return blank.end() if blank is not None else at

    def expect(char: str, at: int) -> int:
        if text[at : at + 1] != char:
            raise json.JSONDecodeError(f"expected {char!r}", text, at)
        return skip(at + 1)

    at = expect("{", skip(0))
    if text[at : at + 1] == "}":
        return found
    while True:
        if text[at : at + 1] != '"':
            raise json.JSONDecodeError("expecting a key", text, at)
        end = scan(at)
        key = text[at:end]
        at = expect(":", skip(end))
        if key == '"data"' and text[at : at + 1] == "[":
            found = []
            at = skip(at + 1)
            if text[at : at + 1] == "]":
                at = skip(at + 1)
            else:
                while True:
                    end = scan(at)
                    found.append(text[at:end])
                    at = skip(end)
                    if text[at : at + 1] == "]":
                        at = skip(at + 1)
                        break
                    at = expect(",", at)
        else:
            at = skip(scan(at))
        if text[at : at + 1] == "}":
            return found
        at = expect(",", at)


def fingerprint(item: object) -> bytes:
    """A compact identity of an item that is neither a generated model nor hashable: a
    digest of its fields as the model gives them back (``to_dict``), or of the item.

    Pickle rather than JSON with sorted keys: it is about twice as fast; an item served
    again is serialized by the same server in the same order.
    """
    to_dict = getattr(item, "to_dict", None)
    value = to_dict() if callable(to_dict) else item
    try:
        raw = pickle.dumps(value, protocol=5)
    except (pickle.PicklingError, TypeError, AttributeError, RecursionError):
        raw = repr(value).encode()
    return hashlib.blake2b(raw, digest_size=16).digest()


# The values an item key is made of: JSON scalars (str also covers str enums).
_SCALARS = (str, int, float, type(None))
# Per class: an attrgetter of its declared fields for an attrs class, else None.
_GETTERS: dict[type, Callable[[Any], tuple[Any, ...]] | None] = {}


def _getter(cls: type) -> Callable[[Any], tuple[Any, ...]] | None:
    names = [f.name for f in attrs.fields(cls)] if attrs.has(cls) else []
    if not names:
        return None
    get = operator.attrgetter(*names)
    # attrgetter of one name gives the value, not a 1-tuple.
    return get if len(names) > 1 else lambda item: (get(item),)


def item_key(item: object) -> int:
    """A cheap key of an item: equal items always share it, different ones seldom do.

    For an attrs model (the generated ones), the hash of its top-level scalar values
    (``str``, ``int``, ``float``, ``bool``, ``None``): the declared fields in declaration
    order, then the scalar entries of ``additional_properties`` in any order. Nested
    models, lists and dicts are left out, so items differing only there share a key
    (:class:`PagePlan` compares such items in full). Any other item: its own hash if
    hashable, else the hash of its :func:`fingerprint`.

    Example::

        >>> item_key(("a", 1)) == item_key(("a", 1))
        True
    """
    cls = type(item)
    try:
        get = _GETTERS[cls]
    except KeyError:
        get = _GETTERS[cls] = _getter(cls)
    if get is None:
        try:
            return hash(item)
        except TypeError:
            return hash(fingerprint(item))
    values = [value for value in get(item) if isinstance(value, _SCALARS)]
    extra = getattr(item, "additional_properties", None)
    if isinstance(extra, dict) and extra:
        # Whatever their order, as dict equality goes: the sum of the entries' hashes.
        values.append(
            sum([hash(entry) for entry in extra.items() if isinstance(entry[1], _SCALARS)])
        )
    return hash(tuple(values))


class _RememberedPage:
    """A page of the repeat window: the key and the place in ``data`` of each item handed
    over, and where those items can be had again (the response body, else the items).

    Only ints and one bytes object stay alive: nothing the garbage collector has to walk.
    """

    __slots__ = ("_content", "_items", "_texts", "indices", "keys", "mark")

    def __init__(
        self,
        mark: int | None,
        keys: list[int],
        indices: list[int],
        content: bytes | str | None,
        items: Sequence[Any],
    ) -> None:
        self.mark = mark
        self.keys = keys
        self.indices = indices
        self._content = content
        # Without a body (a plan driven by hand), the items themselves are kept.
        self._items: Sequence[Any] | None = items if content is None else None
        self._texts: list[str] | None = None

    def holds(self, item: object, key: int) -> bool:
        """Whether an item handed over from this page with ``key`` equals ``item``."""
        for remembered_key, index in zip(self.keys, self.indices, strict=True):
            if remembered_key == key and item == self._item(index, type(item)):
                return True
        return False

    def _item(self, index: int, cls: type) -> object:
        if self._items is not None:
            return self._items[index]
        if self._texts is None:
            assert self._content is not None
            self._texts = item_texts(self._content)
        try:
            value = json.loads(self._texts[index])
            from_dict = getattr(cls, "from_dict", None)
            # Built again the way the page model built it, so ``==`` compares alike.
            return from_dict(value) if callable(from_dict) else value
        except (ValueError, TypeError, KeyError, AttributeError, IndexError):
            return _NOTHING  # equal to nothing: the item is handed over, never dropped


_NOTHING = object()


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
    ) -> None:
        if page_size < 1 or page_size > MAX_PAGE_SIZE:
            raise ValueError(f"page_size must be 1..{MAX_PAGE_SIZE}, not {page_size}")
        if start_page < 1:
            raise ValueError(f"start_page must be at least 1, not {start_page}")
        self.page_size = page_size
        self.start_page = start_page
        self.base_url = base_url
        # Parsed once: URL parsing is a visible share of the per-page cost.
        self._base = httpx.URL(base_url)
        self.max_items = max_items
        self.max_pages = max_pages
        self.items_yielded = 0
        self.pages_accepted = 0
        self._next_number = start_page
        self._first_total: int | None = None
        self._last_total: int | None = None
        self._done = max_items == 0 or max_pages == 0
        # How many items handed over from the pages in _recent have each key
        # (item_key); those pages, oldest first; the marks of the pages that left the
        # window: memory bounded by the window, plus a few bytes a page.
        self._seen: dict[int, int] = {}
        self._recent: deque[_RememberedPage] = deque()
        self._page_marks: set[int] = set()
        self._next_missing = False
        self._warned: set[str] = set()
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
        if self._done:
            return None
        last = self.planned_last_page
        if last is not None and self._next_number > last:
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

    def accept(self, number: int, model: object, content: bytes | str | None = None) -> PageVerdict:
        """Check the page ``number`` and decide what to hand over.

        ``content`` is the response body ``model`` was parsed from: given, the plan
        remembers the page by it rather than by its models (see the module
        documentation). The two must agree.

        An item equal to one handed over from this page or the last
        ``REPEAT_WINDOW_PAGES`` pages is one the server sent again (records shifted
        between pages) and is dropped; a page all of whose items are repeats, or whose
        items have the keys of a page beyond that window, is a page served twice (see
        the module documentation).

        Raises ``InvalidResponseError`` (or its ``InconsistentPageError``) when the page
        cannot be used; the plan then stays on that page, which is where to resume.
        """
        request = self.next_page_info()
        if request is None or request.number != number:
            raise RuntimeError(f"page {number} accepted out of order")  # a driver bug
        env = read_envelope(model, page_number=number)
        notes: list[str] = []
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
        data = list(env.data)
        if len(data) > self.page_size:
            self._note(
                notes,
                "long",
                f"page {number} holds {len(data)} items, more than pageSize "
                f"{self.page_size}; the extra items are ignored",
            )
            del data[self.page_size :]

        first = self._first_total is None
        if first:
            self._first_total = self._last_total = env.total_records
        elif env.total_records != self._last_total:
            self._note(
                notes,
                "total",
                f"totalRecords changed from {self._last_total} to {env.total_records} at "
                f"page {number}; keeping the {self.planned_last_page} pages planned",
            )
            self._last_total = env.total_records
        assert self._first_total is not None
        planned_end = math.ceil(self._first_total / self.page_size)
        last = number >= planned_end

        if not data and number <= planned_end:
            if (number - 1) * self.page_size >= env.total_records:
                self._note(
                    notes,
                    "shrank",
                    f"page {number} is empty: the result set shrank to "
                    f"{env.total_records} records; stopping",
                )
                last = True
            elif self._next_missing:
                self._note(
                    notes,
                    "no-next-end",
                    f"page {number} is empty, as the missing next link said; stopping",
                )
                last = True
            else:
                raise InconsistentPageError(
                    f"page {number} is empty although totalRecords is {env.total_records}",
                    page_number=number,
                )

        # The page's own totalRecords caps what it may hold: items beyond it are ones
        # the count denies (the set shrank, or the server appended junk), and pages
        # after it cannot exist by that count.
        allowed = max(0, min(self.page_size, env.total_records - (number - 1) * self.page_size))
        if len(data) > allowed:
            self._note(
                notes,
                "beyond-total",
                f"page {number} holds {len(data)} items but its totalRecords "
                f"({env.total_records}) allows {allowed}; the rest are ignored, stopping",
            )
            del data[allowed:]
            last = True

        fresh: list[Any] = []
        kept_at: list[int] = []
        kept_keys: list[int] = []
        seen = self._seen
        keys = [item_key(item) for item in data]
        # The first item of this page with each key, and any later ones with the same key.
        on_page: dict[int, Any] = {}
        more_on_page: dict[int, list[Any]] = {}
        for index, (item, key) in enumerate(zip(data, keys, strict=True)):
            # A key match is only a hint: the item must equal what was handed over.
            if key in seen and any(page.holds(item, key) for page in self._recent):
                continue
            if key not in on_page:
                on_page[key] = item
            else:
                same_key = more_on_page.setdefault(key, [])
                if item == on_page[key] or any(item == other for other in same_key):
                    continue
                same_key.append(item)
            fresh.append(item)
            kept_at.append(index)
            kept_keys.append(key)
        page_mark = hash(tuple(keys))
        if data and (not fresh or page_mark in self._page_marks):
            raise InconsistentPageError(
                f"page {number} repeats items already yielded (a page served twice?)",
                page_number=number,
            )
        if len(fresh) < len(data):
            self._note(
                notes,
                "repeat",
                f"page {number}: {len(data) - len(fresh)} items already yielded were dropped",
            )

        if env.next_link is None:
            if not last and number < planned_end:
                # totalRecords promises more: fetching on by number loses nothing, and the
                # plan still bounds the pages; an empty page ends it without an error.
                self._note(
                    notes,
                    "no-next",
                    f"page {number} has no next link although totalRecords implies "
                    f"{planned_end} pages; going on by page number",
                )
                self._next_missing = True
            else:
                last = True
        else:
            problem = self._check_link(env.next_link, number)
            if problem is not None:
                self._note(notes, "link", f"page {number}: {problem}; link ignored")
            if last and env.total_records == self._first_total:
                self._note(
                    notes,
                    "extra-next",
                    f"page {number} links a next page beyond the {planned_end} pages "
                    "totalRecords implies; stopping",
                )

        if self.max_items is not None:
            room = self.max_items - self.items_yielded
            if len(fresh) >= room:
                del fresh[room:]
                del kept_at[room:]
                last = True
        kept = len(fresh)
        self._remember(
            _RememberedPage(
                page_mark if data else None, kept_keys[:kept], kept_at, content, env.data
            )
        )
        self.items_yielded += kept
        self.pages_accepted += 1
        self._next_number = number + 1
        if self.max_pages is not None and self.pages_accepted >= self.max_pages:
            last = True
        if last:
            self._done = True
        return PageVerdict(
            items=tuple(fresh), warnings=tuple(notes), last=last, kept=tuple(kept_at)
        )

    def _remember(self, page: _RememberedPage) -> None:
        seen = self._seen
        for key in page.keys:
            seen[key] = seen.get(key, 0) + 1
        self._recent.append(page)
        if len(self._recent) > REPEAT_WINDOW_PAGES:
            # Leaving the window: the items are forgotten, the page keeps its mark only.
            old = self._recent.popleft()
            if old.mark is not None:
                self._page_marks.add(old.mark)
            for key in old.keys:
                left = seen[key] - 1
                if left:
                    seen[key] = left
                else:
                    del seen[key]

    def _check_link(self, link: str, number: int) -> str | None:
        """:func:`check_next_link`, without parsing URLs again for every page: once a
        link's part before ``?`` passed the full check, a link with the same part and a
        plain query (only letters, digits, ``=`` and ``&``, no repeated name) needs only
        its ``pageNumber`` / ``pageSize`` compared."""
        path, mark, query = link.partition("?")
        if path == self._trusted_link_path and "#" not in link and _PLAIN_QUERY.fullmatch(query):
            pairs = [pair.partition("=") for pair in query.split("&")] if mark else []
            given = {name: value for name, _, value in pairs}
            if len(given) == len(pairs):
                for name, value in (("pageNumber", number + 1), ("pageSize", self.page_size)):
                    if name in given and given[name] != str(value):
                        return f"next link with {name}={given[name]}, expected {value}"
                return None
        problem = check_next_link(
            link, base_url=self._base, request=PageRequest(number, self.page_size)
        )
        if problem is None:
            self._trusted_link_path = path
        return problem

    def _note(self, notes: list[str], kind: str, message: str) -> None:
        # Once per kind: a server that repeats a fault on every page should not flood.
        if kind not in self._warned:
            self._warned.add(kind)
            notes.append(message)
