"""The page plan alone: no I/O, pages are plain objects handed to ``accept``."""

from __future__ import annotations

import gc
import json
import math
import weakref
from dataclasses import dataclass, field
from typing import Any

import pytest

from service_api import InconsistentPageError, InvalidResponseError
from service_api._page_plan import (
    REPEAT_WINDOW_PAGES,
    PagePlan,
    PageRequest,
    check_next_link,
    fingerprint,
    item_key,
    item_texts,
    read_envelope,
)
from service_api_client.models import Shipment, ShipmentPage
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


def page_of(
    rows: list[dict[str, int]], number: int, size: int, *, total: int | None = None
) -> FakePage:
    total = len(rows) if total is None else total
    last = math.ceil(total / size)
    link = f"{BASE}/shipments?pageSize={size}&pageNumber={number + 1}" if number < last else UNSET
    return FakePage(total, number, size, rows[(number - 1) * size : number * size], link)


def drive(plan: PagePlan, rows: list[dict[str, int]]) -> tuple[list[Any], list[str], int]:
    """Run the plan against a well-behaved server; return items, warnings, requests."""
    items: list[Any] = []
    notes: list[str] = []
    requests = 0
    while (request := plan.next_page_info()) is not None:
        requests += 1
        verdict = plan.accept(request.number, page_of(rows, request.number, request.size))
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
    plan = PagePlan(page_size=size, start_page=start, base_url=BASE, max_items=max_items)
    items, notes, requests = drive(plan, rows)
    expected = rows[(start - 1) * size :]
    if max_items is not None:
        expected = expected[:max_items]
    assert items == expected
    assert notes == []
    assert requests == expected_requests
    assert plan.items_yielded == len(expected)


def test_remaining_pages_are_known_after_the_first_page_only() -> None:
    plan = PagePlan(page_size=10, start_page=2, base_url=BASE, max_pages=3)
    assert plan.remaining_pages() == range(0)
    assert plan.next_page_info() == PageRequest(2, 10)
    plan.accept(2, page_of(records(95), 2, 10))
    assert plan.remaining_pages() == range(3, 5)


@pytest.mark.parametrize(("size", "start"), [(0, 1), (51, 1), (10, 0), (10, -3)])
def test_out_of_range_arguments_are_refused(size: int, start: int) -> None:
    with pytest.raises(ValueError, match="must be"):
        PagePlan(page_size=size, start_page=start, base_url=BASE)


def test_pages_must_be_accepted_in_order() -> None:
    plan = PagePlan(page_size=10, start_page=1, base_url=BASE)
    with pytest.raises(RuntimeError, match="out of order"):
        plan.accept(2, page_of(records(30), 2, 10))


# -- a misbehaving server, one rule at a time -------------------------------------------


@pytest.mark.parametrize(
    "broken",
    [
        FakePage(UNSET, 1, 10, []),
        FakePage(None, 1, 10, []),
        FakePage(10, "1", 10, []),
        FakePage(10, 1, True, []),
        FakePage(10, 1, 10, UNSET),
        FakePage(-1, 1, 10, []),
    ],
)
def test_a_missing_or_mistyped_envelope_field_is_an_invalid_response(broken: FakePage) -> None:
    plan = PagePlan(page_size=10, start_page=1, base_url=BASE)
    with pytest.raises(InvalidResponseError, match="page 1"):
        plan.accept(1, broken)
    assert plan.next_page_info() == PageRequest(1, 10)  # resume where it failed


def test_another_page_number_than_asked_is_an_error() -> None:
    plan = PagePlan(page_size=10, start_page=2, base_url=BASE)
    with pytest.raises(InconsistentPageError, match="asked for page 2") as info:
        plan.accept(2, page_of(records(30), 1, 10))
    assert info.value.page_number == 2


def test_another_page_size_than_asked_is_an_error() -> None:
    plan = PagePlan(page_size=10, start_page=1, base_url=BASE)
    page = page_of(records(30), 1, 10)
    page.page_size = 20
    with pytest.raises(InconsistentPageError, match="pageSize 10"):
        plan.accept(1, page)


def test_data_longer_than_page_size_is_cut_with_a_warning() -> None:
    rows = records(30)
    plan = PagePlan(page_size=10, start_page=1, base_url=BASE)
    page = page_of(rows, 1, 10)
    page.data = rows[:12]
    verdict = plan.accept(1, page)
    assert list(verdict.items) == rows[:10]
    assert any("more than pageSize" in w for w in verdict.warnings)


def test_a_page_served_twice_is_an_error_and_never_yielded_twice() -> None:
    rows = records(30)
    plan = PagePlan(page_size=10, start_page=1, base_url=BASE)
    plan.accept(1, page_of(rows, 1, 10))
    again = page_of(rows, 1, 10)
    again.page_number = 2
    with pytest.raises(InconsistentPageError, match="repeats items"):
        plan.accept(2, again)
    assert plan.items_yielded == 10


def test_partly_repeated_items_are_dropped_with_a_warning() -> None:
    rows = records(30)
    plan = PagePlan(page_size=10, start_page=1, base_url=BASE)
    plan.accept(1, page_of(rows, 1, 10))
    shifted = page_of(rows, 2, 10)
    shifted.data = rows[7:17]  # three records slid over from page 1
    verdict = plan.accept(2, shifted)
    assert list(verdict.items) == rows[10:17]
    assert any("3 items already yielded" in w for w in verdict.warnings)


def shipment(shipment_id: str, *devices: str, **extra: Any) -> Shipment:
    item = Shipment(shipment_id=shipment_id, devices=list(devices))
    item.additional_properties.update(extra)
    return item


def models_page(items: list[Any], number: int, *, total: int, size: int = 10) -> FakePage:
    link = f"{BASE}/shipments?pageSize={size}&pageNumber={number + 1}"
    return FakePage(total, number, size, items, link if number * size < total else UNSET)


def test_models_a_page_served_twice_is_an_error() -> None:
    items = [shipment(f"s{i}", f"d{i}") for i in range(30)]
    plan = PagePlan(page_size=10, start_page=1, base_url=BASE)
    plan.accept(1, models_page(items[:10], 1, total=30))
    again = [shipment(f"s{i}", f"d{i}") for i in range(10)]  # equal, not the same objects
    with pytest.raises(InconsistentPageError, match="repeats items"):
        plan.accept(2, models_page(again, 2, total=30))
    assert plan.items_yielded == 10


def test_models_an_exact_repeat_within_the_window_is_dropped_with_a_warning() -> None:
    items = [shipment(f"s{i}", f"d{i}", note=f"n{i}") for i in range(40)]
    plan = PagePlan(page_size=10, start_page=1, base_url=BASE)
    plan.accept(1, models_page(items[:10], 1, total=40))
    plan.accept(2, models_page(items[10:20], 2, total=40))
    # Equal copies of an item of page 1 and one of page 2, then new ones.
    again = [shipment(f"s{i}", f"d{i}", note=f"n{i}") for i in (5, 15)]
    verdict = plan.accept(3, models_page(again + items[20:28], 3, total=40))
    assert list(verdict.items) == items[20:28]
    assert verdict.kept == tuple(range(2, 10))
    assert any("2 items already yielded" in w for w in verdict.warnings)


def test_models_sharing_a_key_but_not_equal_are_both_yielded() -> None:
    a, b = shipment("s1", "d1"), shipment("s1", "d2")  # only the nested list differs
    assert item_key(a) == item_key(b)
    plan = PagePlan(page_size=10, start_page=1, base_url=BASE)
    first = plan.accept(1, models_page([a, b], 1, total=13))
    assert list(first.items) == [a, b]
    assert first.warnings == ()
    # Again on the next page, with the same keys as the whole first page: still kept.
    c, d = shipment("s1", "d3"), shipment("s1", "d4")
    second = plan.accept(2, models_page([c, d, a], 2, total=13))
    assert list(second.items) == [c, d]
    assert second.kept == (0, 1)
    assert any("1 items already yielded" in w for w in second.warnings)


def test_a_repeat_within_a_page_is_dropped() -> None:
    page = models_page([shipment("s0"), shipment("s1"), shipment("s0")], 1, total=3)
    verdict = PagePlan(page_size=10, start_page=1, base_url=BASE).accept(1, page)
    assert list(verdict.items) == [shipment("s0"), shipment("s1")]
    assert verdict.kept == (0, 1)


def test_models_a_page_served_again_beyond_the_window_is_an_error() -> None:
    pages = REPEAT_WINDOW_PAGES + 3
    items = [shipment(f"s{i}", f"d{i}") for i in range(10 * pages)]
    plan = PagePlan(page_size=10, start_page=1, base_url=BASE)
    for number in range(1, pages):
        plan.accept(
            number, models_page(items[(number - 1) * 10 : number * 10], number, total=10 * pages)
        )
    replay = [shipment(f"s{i}", f"d{i}") for i in range(10)]
    with pytest.raises(InconsistentPageError, match="repeats items"):
        plan.accept(pages, models_page(replay, pages, total=10 * pages))
    assert plan.items_yielded == 10 * (pages - 1)


def test_the_item_key_holds_top_level_scalars_only() -> None:
    assert item_key(shipment("s1", "d1")) == item_key(shipment("s1", "d2", "d3"))
    assert item_key(shipment("s1", nested={"a": 1})) == item_key(shipment("s1", nested=[2]))
    assert item_key(shipment("s1")) != item_key(shipment("s2"))
    # Undeclared scalars count, by name, whatever order they came in.
    assert item_key(shipment("s1", a=1, b="x")) == item_key(shipment("s1", b="x", a=1))
    assert item_key(shipment("s1", a=1)) != item_key(shipment("s1", a=2))
    assert item_key(shipment("s1", a=1)) != item_key(shipment("s1", b=1))
    # Other items: their own hash, or their fingerprint when unhashable.
    assert item_key(("a", 1)) == hash(("a", 1))
    assert item_key({"id": 1, "a": [1]}) == item_key({"id": 1, "a": [1]})
    assert item_key({"id": 1}) != item_key({"id": 2})


def test_item_texts_are_the_items_as_sent() -> None:
    body = (
        b'{"totalRecords": 2, "data": [ {"id": 1, "at": "2026-01-01T00:00:00Z"} ,\n'
        b'{"s": "],{\\""}]}'
    )
    texts = item_texts(body)
    assert texts == ['{"id": 1, "at": "2026-01-01T00:00:00Z"}', '{"s": "],{\\""}']
    assert [json.loads(t) for t in texts] == json.loads(body)["data"]


def test_item_texts_follow_json_loads_on_odd_envelopes() -> None:
    assert item_texts(b'{"pageNumber": 1}') == []
    assert item_texts(b"{}") == []
    assert item_texts(b'{"data": []}') == []
    # The last "data" counts, as with json.loads; one nested in another field does not.
    assert item_texts(b'{"data": [1], "x": {"data": [2]}, "data": [3, 4]}') == ["3", "4"]
    assert item_texts('{"data": ["\u00e9"]}'.encode("utf-16")) == ['"\u00e9"']


@pytest.mark.parametrize(
    "body",
    [b"<html>", b"[1, 2]", b"{1: 2}", b'{"data": [1,]}', b'{"data": [1}', b'{"data" [1]}', b""],
)
def test_item_texts_reject_what_is_not_a_page(body: bytes) -> None:
    with pytest.raises(json.JSONDecodeError):
        item_texts(body)


def test_a_trusted_next_link_still_has_its_page_number_checked() -> None:
    rows = records(40)
    plan = PagePlan(page_size=10, start_page=1, base_url=BASE)
    plan.accept(1, page_of(rows, 1, 10))  # its link passes the full check
    page = page_of(rows, 2, 10)
    page.next_ = f"{BASE}/shipments?pageSize=10&pageNumber=1"
    verdict = plan.accept(2, page)
    assert any("pageNumber=1, expected 3" in w for w in verdict.warnings)
    page = page_of(rows, 3, 10)
    page.next_ = f"{BASE}/shipments?pageSize=10&pageNumber=4&pageNumber=1"
    assert plan.accept(3, page).warnings == ()  # repeated names: the full check decides


def test_an_empty_page_before_the_end_is_an_error() -> None:
    rows = records(30)
    plan = PagePlan(page_size=10, start_page=1, base_url=BASE)
    plan.accept(1, page_of(rows, 1, 10))
    empty = page_of(rows, 2, 10)
    empty.data = []
    with pytest.raises(InconsistentPageError, match="empty"):
        plan.accept(2, empty)


def test_an_empty_page_of_a_shrunk_set_stops_with_a_warning() -> None:
    rows = records(30)
    plan = PagePlan(page_size=10, start_page=1, base_url=BASE)
    plan.accept(1, page_of(rows, 1, 10))
    verdict = plan.accept(2, page_of(rows[:10], 2, 10, total=10))
    assert verdict.last
    assert verdict.items == ()
    assert any("shrank" in w for w in verdict.warnings)
    assert plan.next_page_info() is None


def test_a_changing_total_keeps_the_plan_and_warns_once() -> None:
    rows = records(60)
    plan = PagePlan(page_size=10, start_page=1, base_url=BASE)
    plan.accept(1, page_of(rows[:30], 1, 10))
    first = plan.accept(2, page_of(rows, 2, 10))
    second = plan.accept(3, page_of(rows, 3, 10, total=61))
    assert any("totalRecords changed from 30 to 60" in w for w in first.warnings)
    assert second.warnings == ()  # once per kind
    assert second.last
    assert plan.next_page_info() is None


def test_no_next_link_before_the_planned_end_goes_on_by_number_with_a_warning() -> None:
    rows = records(30)
    plan = PagePlan(page_size=10, start_page=1, base_url=BASE)
    page = page_of(rows, 1, 10)
    page.next_ = None
    verdict = plan.accept(1, page)
    assert not verdict.last
    assert any("no next link" in w for w in verdict.warnings)
    assert plan.next_page_info() == PageRequest(2, 10)


def test_an_empty_page_after_a_missing_next_link_ends_without_an_error() -> None:
    rows = records(30)
    plan = PagePlan(page_size=10, start_page=1, base_url=BASE)
    page = page_of(rows, 1, 10)
    page.next_ = None
    plan.accept(1, page)
    verdict = plan.accept(2, page_of([], 2, 10, total=30))
    assert verdict.last
    assert verdict.items == ()
    assert any("missing next link" in w for w in verdict.warnings)
    assert plan.next_page_info() is None


def test_a_page_served_again_beyond_the_item_window_is_still_recognised() -> None:
    pages = REPEAT_WINDOW_PAGES + 3
    rows = records(10 * pages)
    plan = PagePlan(page_size=10, start_page=1, base_url=BASE)
    for number in range(1, pages):
        plan.accept(number, page_of(rows, number, 10))
    replay = page_of(rows, 1, 10)
    replay.page_number = pages
    with pytest.raises(InconsistentPageError, match="repeats items"):
        plan.accept(pages, replay)


def test_remembered_items_stay_within_the_window() -> None:
    pages = REPEAT_WINDOW_PAGES * 3
    rows = records(10 * pages)
    plan = PagePlan(page_size=10, start_page=1, base_url=BASE)
    for number in range(1, pages + 1):
        plan.accept(number, page_of(rows, number, 10))
    assert sum(plan._seen.values()) == 10 * REPEAT_WINDOW_PAGES
    assert len(plan._recent) == REPEAT_WINDOW_PAGES
    # Pages that left the window keep one mark each, and nothing else.
    assert len(plan._page_marks) == pages - REPEAT_WINDOW_PAGES


def test_a_next_link_past_the_planned_end_is_not_followed() -> None:
    rows = records(20)
    plan = PagePlan(page_size=10, start_page=2, base_url=BASE)
    page = page_of(rows, 2, 10)
    page.next_ = f"{BASE}/shipments?pageSize=10&pageNumber=3"
    verdict = plan.accept(2, page)
    assert verdict.last
    assert any("beyond" in w for w in verdict.warnings)


@pytest.mark.parametrize(
    ("link", "problem"),
    [
        (f"{BASE}/shipments?pageSize=10&pageNumber=3", None),
        ("http://api.example.test/public/v3/shipments?pageSize=10&pageNumber=3", None),
        ("/public/v3/shipments?pageNumber=3", None),
        ("https://evil.example/public/v3/shipments?pageNumber=3", "another origin"),
        ("https://api.example.test:8443/public/v3/shipments?pageNumber=3", "another origin"),
        ("ftp://api.example.test/public/v3/shipments", "another origin"),
        ("https://api.example.test/other/shipments?pageNumber=3", "outside the API path"),
        ("https://api.example.test/public/v30/shipments?pageNumber=3", "outside the API path"),
        (f"{BASE}/shipments?pageSize=10&pageNumber=1", "pageNumber=1, expected 3"),
        (f"{BASE}/shipments?pageSize=20&pageNumber=3", "pageSize=20, expected 10"),
        ("http://[::1", "unparsable"),
    ],
)
def test_next_links_are_checked_never_trusted(link: str, problem: str | None) -> None:
    found = check_next_link(link, base_url=BASE, request=PageRequest(2, 10))
    if problem is None:
        assert found is None
    else:
        assert found is not None
        assert problem in found


def test_a_downgraded_scheme_under_an_http_base_is_not_an_upgrade() -> None:
    found = check_next_link(
        "https://api.example.test/public/v3/shipments",
        base_url="http://api.example.test/public/v3",
        request=PageRequest(1, 10),
    )
    assert found is not None


def test_a_bad_next_link_is_reported_and_iteration_goes_on_by_page_number() -> None:
    rows = records(30)
    plan = PagePlan(page_size=10, start_page=1, base_url=BASE)
    page = page_of(rows, 1, 10)
    page.next_ = "https://evil.example/steal?pageNumber=1"
    verdict = plan.accept(1, page)
    assert not verdict.last
    assert any("another origin" in w for w in verdict.warnings)
    assert plan.next_page_info() == PageRequest(2, 10)


def test_envelope_reading_treats_null_and_empty_links_as_absent() -> None:
    for link in (None, UNSET, ""):
        env = read_envelope(FakePage(1, 1, 10, [1], link), page_number=1)
        assert env.next_link is None


def test_fingerprints_tell_items_apart_and_match_equal_ones() -> None:
    assert fingerprint({"id": 1, "a": [1, 2]}) == fingerprint({"id": 1, "a": [1, 2]})
    assert fingerprint({"id": 1}) != fingerprint({"id": 2})
    assert fingerprint({"id": True}) != fingerprint({"id": 1})
    unpicklable = {"f": lambda: None}
    assert fingerprint(unpicklable) == fingerprint(unpicklable)


def test_more_items_than_the_page_total_allows_are_ignored_and_end_iteration() -> None:
    rows = records(30)
    plan = PagePlan(page_size=10, start_page=1, base_url=BASE)
    plan.accept(1, page_of(rows, 1, 10))
    page = page_of(rows, 2, 10, total=13)  # the count allows 3 on page 2
    verdict = plan.accept(2, page)
    assert list(verdict.items) == rows[10:13]
    assert verdict.last
    assert any("allows 3" in w for w in verdict.warnings)


def test_a_last_page_with_junk_beyond_the_total_is_cut() -> None:
    rows = records(3)
    plan = PagePlan(page_size=50, start_page=1, base_url=BASE)
    page = page_of(rows, 1, 50, total=1)
    verdict = plan.accept(1, page)
    assert list(verdict.items) == rows[:1]
    assert verdict.warnings


# -- pages given with their body: the window keeps bodies, not models ---------------------


def body_page(rows: list[dict[str, Any]], number: int, *, total: int) -> tuple[ShipmentPage, bytes]:
    """A parsed page and the body it was parsed from, as the drivers hand them over."""
    doc: dict[str, Any] = {"totalRecords": total, "pageNumber": number, "pageSize": 10}
    doc["data"] = rows
    if number * 10 < total:
        doc["next"] = f"{BASE}/shipments?pageSize=10&pageNumber={number + 1}"
    content = json.dumps(doc).encode()
    return ShipmentPage.from_dict(json.loads(content)), content


def rows_of(ids: range, **extra: Any) -> list[dict[str, Any]]:
    return [{"shipmentId": f"s{i}", "devices": [f"d{i}"], **extra} for i in ids]


def test_a_page_given_with_its_body_is_remembered_without_its_models() -> None:
    plan = PagePlan(page_size=10, start_page=1, base_url=BASE)
    model, content = body_page(rows_of(range(10)), 1, total=30)
    alive = [weakref.ref(item) for item in model.data]
    plan.accept(1, model, content)
    del model
    gc.collect()
    assert all(ref() is None for ref in alive)
    # Records slid over from page 1 are still recognised, from its body.
    model, content = body_page(rows_of(range(7, 17)), 2, total=30)
    verdict = plan.accept(2, model, content)
    assert [item.shipment_id for item in verdict.items] == [f"s{i}" for i in range(10, 17)]
    assert verdict.kept == tuple(range(3, 10))
    assert any("3 items already yielded" in w for w in verdict.warnings)


def test_with_bodies_items_sharing_a_key_but_not_equal_are_both_yielded() -> None:
    plan = PagePlan(page_size=10, start_page=1, base_url=BASE)
    first = rows_of(range(10))
    plan.accept(1, *body_page(first, 1, total=20))
    # Same top-level scalars as s0..s2, other nested values: other records.
    changed = [{**row, "devices": ["other"]} for row in first[:3]]
    verdict = plan.accept(2, *body_page(changed + rows_of(range(10, 17)), 2, total=20))
    assert len(verdict.items) == 10
    assert verdict.warnings == ()


def test_with_bodies_a_page_served_twice_is_an_error() -> None:
    plan = PagePlan(page_size=10, start_page=1, base_url=BASE)
    plan.accept(1, *body_page(rows_of(range(10)), 1, total=30))
    with pytest.raises(InconsistentPageError, match="repeats items"):
        plan.accept(2, *body_page(rows_of(range(10)), 2, total=30))
