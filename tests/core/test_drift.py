"""Drift in production: while it runs, the client notices where the answers differ from
the spec it was generated from, says each place once at WARNING, hands it once to
``on_drift`` and lists it in ``client.drift``; the iteration goes on.

The service is an ``httpx.MockTransport`` that answers pages of a list endpoint of the
generated registry (the first one that needs no argument), and changes shape after the
first page: a field the spec does not declare, and a value of another type in a field
the spec types as a string (both read from the item model's field table).
"""

from __future__ import annotations

import asyncio
import copy
import json
import logging
from typing import Any, cast

import attrs
import httpx
import pytest

import service_api
from service_api_client.api import LIST_ENDPOINTS
from service_api_client.drift import (
    MAX_PLACES,
    OTHER_PLACES,
    PLACE_LENGTH,
    SAMPLE_EVERY,
    SAMPLED,
    Drift,
    DriftLog,
)
from service_api_client.records import INTEGER, STRING, Field, Record, enum
from service_api_client.types import UNSET

BASE_URL = "http://127.0.0.1:9/public/v3"
PAGE_SIZE = 5
PAGES = 4


def _plain(item: type[Record]) -> bool:
    """Whether a record of ``item`` can be made of strings alone: it has a field the
    spec types as a plain string, and every field it requires is one."""
    fields = item._FIELDS
    return any(f.kind == STRING for f in fields) and all(
        f.kind == STRING for f in fields if f.required
    )


ENDPOINT = next(
    entry
    for entry in LIST_ENDPOINTS.values()
    if not any(p.required for p in entry.parameters) and _plain(entry.item_model)
)
ITEM = ENDPOINT.item_model
# A field the spec types as a string alone: an integer there is drift.
TEXT_FIELD = next(f.name for f in ITEM._FIELDS if f.kind == STRING)
# The fields every record carries, as the spec says them (strings), so that only the
# drift made on purpose is drift.
REQUIRED = [f.name for f in ITEM._FIELDS if f.required and f.name != TEXT_FIELD]
UNDECLARED = "~undeclared"


def record(number: int, drifted: bool) -> dict[str, Any]:
    """A record of page ``number``: as the spec says, or drifted."""
    base = {name: f"{name}-{number}" for name in REQUIRED}
    if not drifted:
        return {**base, TEXT_FIELD: f"r-{number}"}
    return {**base, TEXT_FIELD: number, UNDECLARED: "new"}


def service(
    changed_after: int = 1, status: int = 200, headers: dict[str, str] | None = None
) -> httpx.MockTransport:
    """Pages of records, drifted after page ``changed_after``, with ``headers``."""

    def handle(request: httpx.Request) -> httpx.Response:
        if request.url.path.endswith("/authenticate"):
            token = {"access_token": "tk", "token_type": "Bearer", "expires_in": "3600"}
            return httpx.Response(200, json=token)
        number = int(request.url.params.get("pageNumber", "1"))
        body = {
            "totalRecords": PAGE_SIZE * PAGES,
            "pageNumber": number,
            "pageSize": PAGE_SIZE,
            "data": [
                record(PAGE_SIZE * (number - 1) + n, number > changed_after)
                for n in range(PAGE_SIZE)
            ],
        }
        return httpx.Response(
            status, content=json.dumps(body).encode(), headers=headers
        )

    return httpx.MockTransport(handle)


def client(transport: httpx.MockTransport, **options: Any) -> service_api.Client:
    return service_api.Client(
        BASE_URL,
        "c",
        "a-secret",
        "acct-1",
        httpx_args={"transport": transport},
        **options,
    )


def drift_lines(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [
        r.getMessage()
        for r in caplog.records
        if r.name == "service_api" and r.levelno == logging.WARNING
    ]


def test_a_shape_changed_mid_iteration_is_said_once_per_place_and_the_pager_goes_on(
    caplog: pytest.LogCaptureFixture,
) -> None:
    seen: list[Drift] = []
    caplog.set_level(logging.WARNING, logger="service_api")
    with client(service(), on_drift=seen.append) as api:
        pager = service_api.paginate(ENDPOINT.module, api, page_size=PAGE_SIZE)
        items = []
        for item in pager:
            items.append(item)
            if len(items) == PAGE_SIZE:  # the first page: as the spec says
                assert api.drift == []
                assert drift_lines(caplog) == []
        found = {d.place: d for d in api.drift}
    assert len(items) == PAGE_SIZE * PAGES  # every record, none refused
    assert items[-1][UNDECLARED] == "new"  # kept as sent
    assert items[-1][TEXT_FIELD] == PAGE_SIZE * PAGES - 1
    text_place = f"{ITEM.__name__}.{TEXT_FIELD}"
    new_place = f"{ITEM.__name__}.{UNDECLARED}"
    assert set(found) == {text_place, new_place}
    drifted = PAGE_SIZE * (PAGES - 1)
    assert found[text_place].count == found[new_place].count == drifted
    assert found[text_place].seen == "an integer where the spec says a string"
    assert found[new_place].seen == "a field the spec does not declare (a string)"
    # Each place once in the log, named, with the next step; once to the callback.
    lines = drift_lines(caplog)
    assert len(lines) == 2, lines
    for place in (text_place, new_place):
        (line,) = [line for line in lines if f" {place}: " in line]
        assert line.endswith("next: service-api spec check"), line
    assert sorted(d.place for d in seen) == sorted([text_place, new_place])
    assert all(d.count == 1 for d in seen)


def test_async_iteration_notices_drift_too() -> None:
    async def main() -> tuple[list[Any], set[str]]:
        async with client(service(changed_after=0)) as api:
            items = [
                item
                async for item in service_api.paginate(
                    ENDPOINT.module, api, page_size=PAGE_SIZE, concurrency=2
                )
            ]
            return items, {d.place for d in api.drift}

    items, places = asyncio.run(main())
    assert len(items) == PAGE_SIZE * PAGES
    assert f"{ITEM.__name__}.{UNDECLARED}" in places


def test_clients_made_from_one_share_its_drift_and_check_drift_false_turns_it_off(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with client(service(changed_after=0)) as api:
        other = api.with_account("acct-2")
        list(service_api.paginate(ENDPOINT.module, other, page_size=PAGE_SIZE))
        assert {d.place for d in api.drift} == {d.place for d in other.drift} != set()
    caplog.clear()
    with client(service(changed_after=0), check_drift=False) as quiet:
        items = list(service_api.paginate(ENDPOINT.module, quiet, page_size=PAGE_SIZE))
        assert quiet.drift == []
    assert len(items) == PAGE_SIZE * PAGES
    assert drift_lines(caplog) == []


def test_a_status_the_spec_does_not_declare_is_drift(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING, logger="service_api")
    with client(service(status=203)) as api:
        with pytest.raises(service_api.ServiceApiError):
            list(service_api.paginate(ENDPOINT.module, api, page_size=PAGE_SIZE))
        (drift,) = api.drift
    name = ENDPOINT.module.__name__.rpartition(".")[2]
    assert (drift.place, drift.seen) == (
        f"{name} 203",
        "a status the spec does not declare",
    )
    assert any(f"{name} 203" in line for line in drift_lines(caplog))


def test_answers_are_sampled_after_the_first_ones() -> None:
    log = DriftLog()
    answer = httpx.Response(200, request=httpx.Request("GET", BASE_URL))
    taken = 0
    for _ in range(SAMPLED + 10 * SAMPLE_EVERY):
        with log.answer("op", answer, range(200, 201)):
            ITEM.from_dict({UNDECLARED: 1})
        taken += bool(log.findings)
        log._places.clear()
    assert taken == SAMPLED + 10


def test_a_header_the_answer_does_not_declare_is_drift() -> None:
    # X-Unrelated: not a header the client acts on or reports.
    transport = service(headers={"X-Trace-Id": "t-1", "X-Unrelated": "1"})
    declared = ENDPOINT.module.ANSWER_HEADERS
    with client(transport) as api:
        list(service_api.paginate(ENDPOINT.module, api, page_size=PAGE_SIZE))
        places = {d.place: d.seen for d in api.drift}
    name = ENDPOINT.module.__name__.rpartition(".")[2]
    assert "x-trace-id" not in declared["200"]
    assert places[f"{name} 200 header x-trace-id"] == (
        "a header the spec does not declare"
    )
    assert not [place for place in places if "x-unrelated" in place]


def test_a_callback_that_raises_is_logged_not_raised(
    caplog: pytest.LogCaptureFixture,
) -> None:
    def broken(drift: Drift) -> None:
        raise RuntimeError("callback bug")

    with client(service(changed_after=0), on_drift=broken) as api:
        items = list(service_api.paginate(ENDPOINT.module, api, page_size=PAGE_SIZE))
    assert len(items) == PAGE_SIZE * PAGES
    assert any("on_drift failed" in r.getMessage() for r in caplog.records)


# -- tolerant records: the base class of the generated models --------------------------


@attrs.define(repr=False)
class Parcel(Record):
    """A record whose spec requires ``parcelId`` and ``status`` (an enum)."""

    parcel_id: str
    status: str
    weight: int | Any = None
    additional_properties: dict[str, Any] = attrs.field(init=False, factory=dict)
    _order: tuple[str, ...] = attrs.field(init=False, default=(), eq=False)
    _sent: dict[str, tuple[Any, Any]] | None = attrs.field(init=False, default=None)


Parcel._declare(
    Field("parcelId", "parcel_id", STRING, required=True),
    Field("status", "status", enum("Open", "Closed"), required=True),
    Field("weight", "weight", INTEGER),
)


@attrs.define(repr=False)
class StrictPage(Record):
    """A page envelope: its required fields are the pager's."""

    page_number: int
    additional_properties: dict[str, Any] = attrs.field(init=False, factory=dict)
    _order: tuple[str, ...] = attrs.field(init=False, default=(), eq=False)
    _sent: dict[str, tuple[Any, Any]] | None = attrs.field(init=False, default=None)


StrictPage._declare(
    Field("pageNumber", "page_number", INTEGER, required=True), strict=True
)


def test_a_required_field_left_out_or_a_new_enum_value_is_kept_and_told() -> None:
    log = DriftLog()
    with log.listening():
        parcel = Parcel.from_dict({"status": "Lost", "colour": "red"})
    # UNSET, though typed as the spec says: the field is required.
    assert cast(object, parcel.parcel_id) is UNSET
    assert "parcelId" not in parcel
    assert parcel["status"] == "Lost"  # kept as sent
    assert parcel["colour"] == "red"
    assert parcel.to_dict() == {"status": "Lost", "colour": "red"}
    assert {(d.place, d.seen) for d in log.findings} == {
        ("Parcel.parcelId", "a required field left out"),
        ("Parcel.status", "a value outside its enum: 'Lost'"),
        ("Parcel.colour", "a field the spec does not declare (a string)"),
    }
    # Outside any client: read the same, told to nobody.
    assert Parcel.from_dict({"status": "Lost"})["status"] == "Lost"
    # A copy keeps all of it, the order the fields came in included.
    again = copy.copy(parcel)
    assert list(again.keys()) == ["status", "colour"]
    assert again == parcel
    assert again.to_dict() == parcel.to_dict()


def test_a_page_envelope_still_requires_its_fields() -> None:
    with pytest.raises(KeyError, match="pageNumber"):
        StrictPage.from_dict({"data": []})
    with pytest.raises(TypeError, match=r"StrictPage\.pageNumber: a string where"):
        StrictPage.from_dict({"pageNumber": "1"})
    assert StrictPage.from_dict({"pageNumber": 2, "more": 1})["more"] == 1


def test_places_are_bounded_whatever_the_service_sends(
    caplog: pytest.LogCaptureFixture,
) -> None:
    # A service that sends a new key in every record: memory and log stay bounded.
    log = DriftLog()
    with caplog.at_level(logging.WARNING, logger="service_api"):
        for n in range(3 * MAX_PLACES):
            log.add(f"Shipment.key{n}", "a field the spec does not declare")
        log.add("Shipment." + "x" * 500, "a field the spec does not declare")
    places = [d.place for d in log.findings]
    assert len(places) == MAX_PLACES + 1
    assert places[-1] == OTHER_PLACES
    assert log.findings[-1].count == 2 * MAX_PLACES + 1
    assert len(caplog.records) == MAX_PLACES + 1
    cut = DriftLog()
    cut.add("Shipment." + "x" * 500, "a field the spec does not declare")
    assert len(cut.findings[0].place) == PLACE_LENGTH
