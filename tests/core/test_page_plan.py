"""The page plan alone: no I/O, pages are plain objects handed to ``accept``."""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

import pytest

from service_api import InconsistentPageError, InvalidResponseError
from service_api._page_plan import (
    REPEAT_WINDOW_PAGES,
    KeyFunction,
    PageOptions,
    PagePlan,
    id_key,
)
from service_api_client.api.devices import list_devices
from service_api_client.api.shipments import list_shipments
from service_api_client.models import Device, Shipment
from service_api_client.types import UNSET

BASE = "https://api.example.test/public/v3"


@dataclass
class FakePage:
    total_records: Any
    page_number: Any
    page_size: Any
    data: Any
    next_: Any = UNSET
    extra: dict[str, Any] = field(default_factory=dict)


def records(n: int) -> list[dict[str, int]]:
    return [{"id": i} for i in range(n)]


# The key a pager of list_shipments uses by default: the records' shipment_id.
shipment_key = functools.partial(id_key, list_shipments.ID_ATTRIBUTE)


def row_key(row: Any) -> Any:
    return row.get("id") if isinstance(row, dict) else shipment_key(row)


@dataclass(frozen=True)
class Verdict:
    """What the driver makes of an accepted page."""

    items: tuple[Any, ...]  # the items handed over
    warnings: tuple[str, ...]  # the warnings this page drew
    last: bool  # no page is fetched after it
    kept: tuple[int, ...]  # where each of the items stands in the page's data


class RecordingPlan(PagePlan):
    """A plan that records its warnings, judged page by page as a driver does."""

    def __init__(
        self,
        *,
        page_size: int,
        start_page: int,
        max_items: int | None = None,
        max_pages: int | None = None,
        concurrency: int = 1,
        key: KeyFunction = shipment_key,
    ) -> None:
        self.notes: list[str] = []
        options = PageOptions(
            page_size, start_page, max_items, max_pages, concurrency, key
        )
        super().__init__(options, warn=self.notes.append)

    def judge(self, number: int, page: FakePage) -> Verdict:
        before = len(self.notes)
        kept = tuple(self.accept(number, page))
        items = tuple(page.data[index] for index in kept)
        return Verdict(
            items, tuple(self.notes[before:]), self.next_page_info() is None, kept
        )


def plan_of(**options: Any) -> RecordingPlan:
    """A plan over the rows of these tests, keyed by their "id"."""
    return RecordingPlan(key=row_key, **options)


def page_of(
    rows: list[dict[str, int]], number: int, size: int, *, total: int | None = None
) -> FakePage:
    total = len(rows) if total is None else total
    last = math.ceil(total / size)
    link = (
        f"{BASE}/shipments?pageSize={size}&pageNumber={number + 1}"
        if number < last
        else UNSET
    )
    return FakePage(
        total, number, size, rows[(number - 1) * size : number * size], link
    )


def drive(
    plan: RecordingPlan, rows: list[dict[str, int]]
) -> tuple[list[Any], list[str], int]:
    """Run the plan against a well-behaved server; return items, warnings, requests."""
    items: list[Any] = []
    notes: list[str] = []
    requests = 0
    while (number := plan.next_page_info()) is not None:
        requests += 1
        verdict = plan.judge(number, page_of(rows, number, plan.page_size))
        items.extend(verdict.items)
        notes.extend(verdict.warnings)
    return items, notes, requests


@pytest.mark.parametrize(
    ("total", "size", "start", "max_items", "expected_requests"),
    [
        (0, 50, 1, None, 1),
        (1, 50, 1, None, 1),
        (50, 50, 1, None, 1),
        (51, 50, 1, None, 2),
        (120, 10, 3, None, 10),
        (120, 10, 13, None, 1),  # past the end: one request to learn it
        (120, 10, 1, 0, 0),
        (120, 10, 1, 25, 3),
        (120, 10, 1, 30, 3),
        (120, 10, 11, 30, 2),
    ],
)
def test_a_well_behaved_server_gives_each_item_once_with_minimal_requests(
    total: int, size: int, start: int, max_items: int | None, expected_requests: int
) -> None:
    rows = records(total)
    plan = plan_of(page_size=size, start_page=start, max_items=max_items)
    items, notes, requests = drive(plan, rows)
    expected = rows[(start - 1) * size :]
    if max_items is not None:
        expected = expected[:max_items]
    assert items == expected
    assert notes == []
    assert requests == expected_requests
    assert plan.items_yielded == len(expected)


def test_pages_ahead_stay_within_the_plan_and_are_named_once() -> None:
    plan = plan_of(page_size=10, start_page=2, max_pages=3, concurrency=2)
    assert plan.next_page_info() == 2
    plan.judge(2, page_of(records(95), 2, 10))
    assert plan.pages_ahead(2) == [3, 4]  # within the plan (pages 2 to 4)
    assert plan.pages_ahead(3) == []  # not named again


def test_the_window_ahead_is_twice_the_concurrency() -> None:
    plan = plan_of(page_size=10, start_page=1, concurrency=3)
    plan.judge(1, page_of(records(200), 1, 10))
    assert plan.pages_ahead(1) == [2, 3, 4, 5, 6, 7]
    plan.judge(2, page_of(records(200), 2, 10))
    assert plan.pages_ahead(2) == [8]  # the window moves on with the page in hand


def test_without_concurrency_no_page_is_fetched_ahead() -> None:
    plan = plan_of(page_size=10, start_page=1)
    assert plan.window == 0  # one request in flight: no page ahead of the one in hand
    plan.judge(1, page_of(records(95), 1, 10))
    assert plan.pages_ahead(1) == []
    assert plan.pages_ahead(2) == []  # page 2, in hand, is never named


def test_the_warning_function_is_given_by_keyword_only() -> None:
    with pytest.raises(TypeError, match="positional"):
        PagePlan(PageOptions(page_size=10), print)  # type: ignore[call-arg]
    assert PagePlan(PageOptions(page_size=10), warn=print).next_page_info() == 1


# -- a misbehaving server, one rule at a time -------------------------------------------


@pytest.mark.parametrize(
    "broken",
    [
        FakePage(UNSET, 1, 10, []),
        FakePage(None, 1, 10, []),
        FakePage(10, "1", 10, []),
        FakePage(10, 1, True, []),
        FakePage(-1, 1, 10, []),
    ],
)
def test_a_missing_or_mistyped_envelope_field_is_an_invalid_response(
    broken: FakePage,
) -> None:
    plan = plan_of(page_size=10, start_page=1)
    with pytest.raises(InvalidResponseError, match="page 1"):
        plan.judge(1, broken)
    assert plan.next_page_info() == 1  # resume where it failed


def test_echoes_the_spec_lets_the_service_leave_out_are_the_page_asked_for() -> None:
    # With pageNumber or pageSize optional in the spec, a page without them is read.
    plan = plan_of(page_size=10, start_page=1)
    plan.judge(1, FakePage(25, UNSET, UNSET, records(10)))
    assert plan.next_page_info() == 2
    with pytest.raises(InconsistentPageError, match="asked for page 2"):
        plan.judge(2, FakePage(25, 3, UNSET, records(10)))


def test_another_page_number_than_asked_is_an_error() -> None:
    plan = plan_of(page_size=10, start_page=2)
    with pytest.raises(InconsistentPageError, match="asked for page 2") as info:
        plan.judge(2, page_of(records(30), 1, 10))
    assert info.value.page_number == 2


def test_a_page_far_on_is_accepted_when_it_names_itself() -> None:
    # Past 256, Python's equal ints are distinct objects: the echo compares values.
    plan = plan_of(page_size=10, start_page=1000)
    rows = records(10_010)
    plan.judge(1000, page_of(rows, int("1000"), int("10")))
    assert plan.next_page_info() == 1001


def test_another_page_size_than_asked_is_an_error() -> None:
    plan = plan_of(page_size=10, start_page=1)
    page = page_of(records(30), 1, 10)
    page.page_size = 20
    with pytest.raises(InconsistentPageError, match="pageSize 10"):
        plan.judge(1, page)


def test_data_longer_than_page_size_is_cut_with_a_warning() -> None:
    rows = records(30)
    plan = plan_of(page_size=10, start_page=1)
    page = page_of(rows, 1, 10)
    page.data = rows[:12]
    verdict = plan.judge(1, page)
    assert list(verdict.items) == rows[:10]
    assert any("more than pageSize" in w for w in verdict.warnings)


def test_a_page_served_twice_is_an_error_and_never_yielded_twice() -> None:
    rows = records(30)
    plan = plan_of(page_size=10, start_page=1)
    plan.judge(1, page_of(rows, 1, 10))
    again = page_of(rows, 1, 10)
    again.page_number = 2
    with pytest.raises(InconsistentPageError, match="repeats items"):
        plan.judge(2, again)
    assert plan.items_yielded == 10


def test_partly_repeated_items_are_dropped_with_a_warning() -> None:
    rows = records(30)
    plan = plan_of(page_size=10, start_page=1)
    plan.judge(1, page_of(rows, 1, 10))
    shifted = page_of(rows, 2, 10)
    shifted.data = rows[7:17]  # three records slid over from page 1
    verdict = plan.judge(2, shifted)
    assert list(verdict.items) == rows[10:17]
    assert any("3 items already yielded" in w for w in verdict.warnings)


def shipment(shipment_id: str, *devices: str, **extra: Any) -> Shipment:
    item = Shipment(shipment_id=shipment_id, devices=list(devices))
    item.additional_properties.update(extra)
    return item


def models_page(
    items: list[Any], number: int, *, total: int, size: int = 10
) -> FakePage:
    link = f"{BASE}/shipments?pageSize={size}&pageNumber={number + 1}"
    return FakePage(
        total, number, size, items, link if number * size < total else UNSET
    )


def test_models_a_page_served_twice_is_an_error() -> None:
    items = [shipment(f"s{i}", f"d{i}") for i in range(30)]
    plan = plan_of(page_size=10, start_page=1)
    plan.judge(1, models_page(items[:10], 1, total=30))
    again = [
        shipment(f"s{i}", f"d{i}") for i in range(10)
    ]  # equal, not the same objects
    with pytest.raises(InconsistentPageError, match="repeats items"):
        plan.judge(2, models_page(again, 2, total=30))
    assert plan.items_yielded == 10


def test_models_an_exact_repeat_within_the_window_is_dropped_with_a_warning() -> None:
    items = [shipment(f"s{i}", f"d{i}", note=f"n{i}") for i in range(40)]
    plan = plan_of(page_size=10, start_page=1)
    plan.judge(1, models_page(items[:10], 1, total=40))
    plan.judge(2, models_page(items[10:20], 2, total=40))
    # Equal copies of an item of page 1 and one of page 2, then new ones.
    again = [shipment(f"s{i}", f"d{i}", note=f"n{i}") for i in (5, 15)]
    verdict = plan.judge(3, models_page(again + items[20:28], 3, total=40))
    assert list(verdict.items) == items[20:28]
    assert verdict.kept == tuple(range(2, 10))
    assert any("2 items already yielded" in w for w in verdict.warnings)


def test_a_repeat_within_a_page_is_dropped() -> None:
    page = models_page([shipment("s0"), shipment("s1"), shipment("s0")], 1, total=3)
    verdict = plan_of(page_size=10, start_page=1).judge(1, page)
    assert list(verdict.items) == [shipment("s0"), shipment("s1")]
    assert verdict.kept == (0, 1)


def test_an_empty_page_before_the_end_is_an_error() -> None:
    rows = records(30)
    plan = plan_of(page_size=10, start_page=1)
    plan.judge(1, page_of(rows, 1, 10))
    empty = page_of(rows, 2, 10)
    empty.data = []
    with pytest.raises(InconsistentPageError, match="empty"):
        plan.judge(2, empty)


def test_an_empty_last_page_whose_total_promises_items_is_an_error() -> None:
    rows = records(25)
    plan = plan_of(page_size=10, start_page=1)
    plan.judge(1, page_of(rows, 1, 10))
    plan.judge(2, page_of(rows, 2, 10))
    with pytest.raises(
        InconsistentPageError, match="page 3 is empty although totalRecords is 25"
    ):
        plan.judge(3, page_of([], 3, 10, total=25))
    assert plan.next_page_info() == 3  # resume where it failed


def test_an_empty_page_of_a_shrunk_set_stops_with_a_warning() -> None:
    rows = records(30)
    plan = plan_of(page_size=10, start_page=1)
    plan.judge(1, page_of(rows, 1, 10))
    verdict = plan.judge(2, page_of(rows[:10], 2, 10, total=10))
    assert verdict.last
    assert verdict.items == ()
    assert any("shrank" in w for w in verdict.warnings)
    assert plan.next_page_info() is None


def test_a_changing_total_keeps_the_plan_and_warns_once() -> None:
    rows = records(60)
    plan = plan_of(page_size=10, start_page=1)
    plan.judge(1, page_of(rows[:30], 1, 10))
    first = plan.judge(2, page_of(rows, 2, 10))
    second = plan.judge(3, page_of(rows, 3, 10, total=61))
    assert any("totalRecords changed from 30 to 60" in w for w in first.warnings)
    assert second.warnings == ()  # once per kind
    assert second.last
    assert plan.next_page_info() is None


def test_next_links_are_neither_followed_nor_checked() -> None:
    # Pages go by number: a link elsewhere, backwards, missing or past the end changes
    # nothing and draws no warning.
    rows = records(30)
    plan = plan_of(page_size=10, start_page=1)
    links = [
        "https://evil.example/steal?pageNumber=1",
        None,
        f"{BASE}/shipments?pageNumber=9",
    ]
    for number, link in enumerate(links, start=1):
        page = page_of(rows, number, 10)
        page.next_ = link
        verdict = plan.judge(number, page)
        assert list(verdict.items) == rows[(number - 1) * 10 : number * 10]
        assert verdict.warnings == ()
    assert verdict.last


def test_an_empty_page_before_the_promised_end_is_an_error_even_without_a_next_link() -> (
    None
):
    rows = records(30)
    plan = plan_of(page_size=10, start_page=1)
    page = page_of(rows, 1, 10)
    page.next_ = None
    plan.judge(1, page)
    with pytest.raises(
        InconsistentPageError, match="page 2 is empty although totalRecords is 30"
    ):
        plan.judge(2, page_of([], 2, 10, total=30))
    assert plan.next_page_info() == 2  # resume where it failed


def test_more_items_than_the_page_total_allows_are_ignored_and_end_iteration() -> None:
    rows = records(30)
    plan = plan_of(page_size=10, start_page=1)
    plan.judge(1, page_of(rows, 1, 10))
    page = page_of(rows, 2, 10, total=13)  # the count allows 3 on page 2
    verdict = plan.judge(2, page)
    assert list(verdict.items) == rows[10:13]
    assert verdict.last
    assert any("allows 3" in w for w in verdict.warnings)


def test_a_last_page_with_junk_beyond_the_total_is_cut() -> None:
    rows = records(3)
    plan = plan_of(page_size=50, start_page=1)
    page = page_of(rows, 1, 50, total=1)
    verdict = plan.judge(1, page)
    assert list(verdict.items) == rows[:1]
    assert verdict.warnings


# -- repeats: recognised by the record's key ---------------------------------------------


def test_the_default_key_is_the_id_the_model_declares() -> None:
    assert (list_shipments.ID_ATTRIBUTE, list_devices.ID_ATTRIBUTE) == (
        "shipment_id",
        "device_id",
    )
    assert shipment_key(shipment("s1", "d1")) == "s1"
    assert id_key(list_devices.ID_ATTRIBUTE, Device(device_id="d9")) == "d9"
    assert shipment_key(Shipment()) is None  # no id sent: never taken for a repeat
    assert shipment_key({"id": 1}) is None  # not a generated model
    assert shipment_key(shipment("s1", nested={"a": 1})) == shipment_key(
        shipment("s1", "d2")
    )
    # An id is a string or an integer; anything else is no id (True is no 1).
    assert shipment_key(SimpleNamespace(shipment_id=7)) == 7
    for odd in (True, 1.0, None, ["s1"]):
        assert shipment_key(SimpleNamespace(shipment_id=odd)) is None
    assert id_key(None, shipment("s1")) is None  # an endpoint whose records have no id


def test_a_record_with_the_id_of_one_yielded_is_a_repeat_whatever_its_fields() -> None:
    plan = RecordingPlan(page_size=10, start_page=1)
    first = [shipment(f"s{i}", f"d{i}") for i in range(10)]
    plan.judge(1, models_page(first, 1, total=20))
    changed = shipment("s3", "other", note="edited since")
    later = [changed] + [shipment(f"s{i}") for i in range(10, 19)]
    verdict = plan.judge(2, models_page(later, 2, total=20))
    assert [item.shipment_id for item in verdict.items] == [
        f"s{i}" for i in range(10, 19)
    ]
    assert verdict.kept == tuple(range(1, 10))
    assert any("1 items already yielded" in w for w in verdict.warnings)


def test_records_without_a_key_are_never_dropped() -> None:
    plan = RecordingPlan(page_size=10, start_page=1)
    anonymous = [Shipment() for _ in range(10)]
    assert len(plan.judge(1, models_page(anonymous, 1, total=20)).items) == 10
    assert len(plan.judge(2, models_page(anonymous, 2, total=20)).items) == 10


def test_a_plan_given_no_key_takes_no_record_for_a_repeat() -> None:
    plan = PagePlan(PageOptions(page_size=10), warn=pytest.fail)
    same = [shipment("s1", "d1")] * 10
    assert plan.accept(1, models_page(same, 1, total=20)) == list(range(10))
    assert plan.accept(2, models_page(same, 2, total=20)) == list(range(10))


def test_a_key_function_of_the_caller_decides_what_a_repeat_is() -> None:
    plan = RecordingPlan(page_size=10, start_page=1, key=lambda s: s.devices[0])
    plan.judge(1, models_page([shipment("s1", "d1")], 1, total=20))
    # Another id, the same first device: a repeat by this key.
    with pytest.raises(InconsistentPageError, match="repeats items"):
        plan.judge(2, models_page([shipment("s2", "d1")], 2, total=20))


def test_the_plan_remembers_the_keys_of_the_last_pages_only() -> None:
    pages = REPEAT_WINDOW_PAGES * 3
    rows = records(10 * pages)
    plan = plan_of(page_size=10, start_page=1)
    for number in range(1, pages + 1):
        plan.judge(number, page_of(rows, number, 10))
    assert len(plan._recent) == 10 * REPEAT_WINDOW_PAGES
    assert rows[-1]["id"] in plan._recent
    assert rows[0]["id"] not in plan._recent


def test_a_repeat_on_a_page_within_the_window_is_dropped() -> None:
    rows = records(10 * REPEAT_WINDOW_PAGES + 10)
    plan = plan_of(page_size=10, start_page=1)
    for number in range(1, REPEAT_WINDOW_PAGES + 1):
        plan.judge(number, page_of(rows, number, 10))
    last = page_of(rows, REPEAT_WINDOW_PAGES + 1, 10)
    last.data = [
        rows[0],
        *last.data[1:],
    ]  # a record of the first page, still remembered
    verdict = plan.judge(REPEAT_WINDOW_PAGES + 1, last)
    assert len(verdict.items) == 9
