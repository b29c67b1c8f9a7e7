"""The I/O-free heart of pagination: which page to fetch next, and what a page may say.

:class:`PagePlan` decides everything (the next page, ``next_page_info``; once
``totalRecords`` is known, the pages to fetch ahead, ``pages_ahead``; whether a page is
consistent and which items are repeats, ``accept``); the sync and async drivers in
``_pagination`` only fetch what it asks for and hand the pages back in order. Because it
does no I/O (its warnings go to the function it is given), both twins share every
decision and the unit tests drive it with plain objects.

What the plan does with a misbehaving server is the policy table of
docs/guides/pagination.md ("Pagination policy"). The plan never asks for a page beyond
``ceil(totalRecords / pageSize)`` of the first page (or, when ``start_page`` is already
past the end, beyond ``start_page``), so iteration is bounded whatever the server says.
Pages go by number: a ``next`` link is neither followed nor checked.

Repeats are recognised by the record's key (by default its id, see :func:`id_key`)
among the keys of the items handed over from the last ``REPEAT_WINDOW_PAGES`` pages:
records shifted by an insertion or a deletion land on a neighbouring page.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable, Hashable, Sequence
from typing import Any, NamedTuple

from service_api._errors import InconsistentPageError, InvalidResponseError
from service_api_client.types import Unset

#: How many of the latest pages have their items' keys remembered, to drop repeats.
REPEAT_WINDOW_PAGES = 8

#: A record's identity: equal keys are the same record; ``None`` means "unknown", so
#: the record is never taken for a repeat.
KeyFunction = Callable[[Any], Hashable | None]
# The counts of the envelope: their names on the wire and in the page models. The
# echoes of the request (pageNumber, pageSize) may be left out where the spec makes them
# optional (the page model then holds UNSET): the page asked for is the page answered.
_COUNTS = {
    "totalRecords": "total_records",
    "pageNumber": "page_number",
    "pageSize": "page_size",
}
_ECHOES = {"pageNumber", "pageSize"}


def id_key(attribute: str | None, item: Any) -> Hashable | None:
    """The default record key: the record's id, its ``attribute`` as the generated list
    endpoint module names it (``ID_ATTRIBUTE``: ``shipment_id``, ``device_id``); the
    pager binds it (``functools.partial(id_key, "shipment_id")``). ``None`` (never a
    repeat) when there is no such attribute, or the record has none or one that is not
    a string or an integer.

    Example::

        >>> id_key("shipment_id", Shipment(shipment_id="s-1"))
        's-1'
    """
    value = getattr(item, attribute, None) if attribute else None
    return (
        value if isinstance(value, str | int) and not isinstance(value, bool) else None
    )


class PageOptions(NamedTuple):
    """The options of one iteration (``client.<tag>.list(**options)``), with their
    defaults; the pager checks them before any request."""

    # None: the endpoint's PAGE_SIZE, the spec's default (the pager sets it first).
    page_size: int | None = None
    start_page: int = 1
    max_items: int | None = None
    max_pages: int | None = None
    concurrency: int = 1
    key: KeyFunction | None = None  # None: the record's id (id_key)


class PagePlan:
    """Decides which pages to fetch and checks each page that arrives, with no I/O.

    Pages must be handed to :meth:`accept` in order, each one the page
    :meth:`next_page_info` named (with concurrency the driver fetches ahead the pages
    :meth:`pages_ahead` names, but still accepts in order). Warnings go to ``warn``,
    once per kind.

    Example::

        plan = PagePlan(options, warn=print)
        while (number := plan.next_page_info()) is not None:
            page = fetch(number, plan.page_size)
            yield from (page.data[index] for index in plan.accept(number, page))
    """

    def __init__(self, options: PageOptions, *, warn: Callable[[str], None]):
        if options.page_size is None:
            raise ValueError("a plan needs a page_size")
        self.page_size = options.page_size
        self.start_page = options.start_page
        # No max_items, no max_pages: as good as unbounded.
        self.max_items = sys.maxsize if options.max_items is None else options.max_items
        self.key = options.key or (lambda item: None)  # no key: no record is a repeat
        # Pages asked for ahead of the one in hand: twice the requests in flight, if any.
        self.window = 2 * options.concurrency if options.concurrency > 1 else 0
        self._warn = warn
        cap = sys.maxsize if options.max_pages is None else options.max_pages
        #: The last page to fetch: what max_items and max_pages allow, then also what the
        #: first page's totalRecords allows, then the page that ended the iteration.
        self.last_page = (
            self.start_page - 1 + min(cap, math.ceil(self.max_items / self.page_size))
        )
        self.items_yielded = 0
        self.pages_accepted = 0
        # The last page named by pages_ahead(), and the first page's end by its count.
        self._asked = 0
        self._end = 0
        self._first_total: int | None = None
        # Keys handed over, oldest first, bounded: memory does not grow with the set.
        self._recent: dict[Hashable, None] = {}
        self._warned: set[str] = set()

    def next_page_info(self) -> int | None:
        """The number of the next page to fetch and accept, or ``None`` when iteration
        is over (the page size is always ``page_size``)."""
        number = self.start_page + self.pages_accepted
        return number if number <= self.last_page else None

    def pages_ahead(self, number: int) -> list[int]:
        """The pages after ``number`` (the page in hand) up to ``number + window`` and
        within the plan that no earlier call named: what concurrent drivers fetch ahead,
        once ``number`` was accepted (the first page tells how many pages there are)."""
        first = max(self._asked, number) + 1
        last = min(self.last_page, number + self.window)
        self._asked = max(self._asked, last)
        return list(range(first, last + 1))

    def accept(self, number: int, model: Any) -> list[int]:
        """Check the page ``number``; the places in its ``data`` of the items to hand
        over (repeats dropped, cut to ``max_items``).

        Raises ``InvalidResponseError`` (or its ``InconsistentPageError``) when the page
        cannot be used; the plan then stays on that page, which is where to resume.
        """
        total, data = self._envelope(number, model)
        self._track_total(total, number)
        data, cut = self._fit(data, total, number)
        kept = self._drop_repeats(data, number)
        # The page bound ends on the last.
        kept = kept[: self.max_items - self.items_yielded]
        self.items_yielded += len(kept)
        self.pages_accepted += 1
        if cut:  # a page at or past the first page's end is already the last planned
            self.last_page = number
        return kept

    def _envelope(self, number: int, model: Any) -> tuple[int, Sequence[Any]]:
        """``totalRecords`` and ``data``, once the counts are counts and name the page
        asked for (``data`` is a list: the page model's ``from_dict`` builds it)."""
        for wire, name in _COUNTS.items():
            value = getattr(model, name, None)
            if wire in _ECHOES and isinstance(value, Unset):
                continue
            # bool is an int in Python, but never a count.
            if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                msg = (
                    f"page {number}: envelope field {wire!r} is missing or not a count"
                )
                raise InvalidResponseError(msg)
        echoes = [
            ("page", number, model.page_number),
            ("pageSize", self.page_size, model.page_size),
        ]
        for what, asked, answered in echoes:
            if answered != asked and not isinstance(answered, Unset):
                msg = (
                    f"page {number}: asked for {what} {asked}, "
                    f"the server answered {what} {answered}"
                )
                raise InconsistentPageError(msg, page_number=number)
        return model.total_records, model.data

    def _track_total(self, total: int, number: int) -> None:
        """The first page's ``totalRecords`` plans the iteration; a change is reported."""
        if self._first_total is None:
            self._first_total = total
            self._end = math.ceil(total / self.page_size)
            self.last_page = min(self.last_page, self._end)
        elif total != self._first_total:  # reported once: the first change is the news
            self._note(
                "total",
                f"page {number}: totalRecords changed from {self._first_total} to "
                f"{total}; keeping the {self.last_page} pages planned",
            )

    def _fit(
        self, data: Sequence[Any], total: int, number: int
    ) -> tuple[Sequence[Any], bool]:
        """The items the page may hold, and whether it ends the iteration: no more than
        pageSize (the rest belong to the next page), nor than its own totalRecords allows
        (no page can follow by that count); none before the planned end only if
        something explains it (the set shrank)."""
        if len(data) > self.page_size:
            self._note(
                "long",
                f"page {number} holds {len(data)} items, more than pageSize "
                f"{self.page_size}; the extra items are ignored",
            )
            data = data[: self.page_size]
        allowed = max(0, total - (number - 1) * self.page_size)
        if len(data) > allowed:
            self._note(
                "beyond-total",
                f"page {number} holds {len(data)} items but its totalRecords ({total}) "
                f"allows {allowed}; the rest are ignored, stopping",
            )
            return data[:allowed], True
        if data or number > self._end:
            return data, False
        if allowed:
            msg = f"page {number} is empty although totalRecords is {total}"
            raise InconsistentPageError(msg, page_number=number)
        self._note(
            "shrank",
            f"page {number} is empty: the result set shrank to {total} records; stopping",
        )
        return data, True

    def _drop_repeats(self, data: Sequence[Any], number: int) -> list[int]:
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
            del self._recent[next(iter(self._recent))]
        if data and not kept:
            msg = f"page {number} repeats items already yielded (a page served twice?)"
            raise InconsistentPageError(msg, page_number=number)
        if dropped := len(data) - len(kept):
            self._note(
                "repeat", f"page {number}: {dropped} items already yielded were dropped"
            )
        return kept

    def _note(self, kind: str, message: str) -> None:
        # Once per kind: a server that repeats a fault on every page should not flood.
        if kind not in self._warned:
            self._warned.add(kind)
            self._warn(message)
