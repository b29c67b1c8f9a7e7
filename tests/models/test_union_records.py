"""A field or an item that is a ``oneOf``/``anyOf`` of records is read as one of them:
the record its discriminator names, else the one whose declared fields fit it best;
and only the chosen record's drift is told.

The records here are written by hand, as the generator writes them (an attrs class on
``records.Record`` and its field table), so that the rule is tested whatever the spec.
"""

from __future__ import annotations

from typing import Any

import pytest
from attrs import define, field

from service_api_client import records
from service_api_client.drift import DriftLog
from service_api_client.types import UNSET, Unset


@define(repr=False)
class Book(records.Record):
    """A record whose ``kind`` is ``"book"``."""

    kind: str | Unset = UNSET
    title: str | Unset = UNSET
    pages: int | Unset = UNSET
    additional_properties: dict[str, Any] = field(init=False, factory=dict)
    _order: tuple[str, ...] = field(init=False, default=(), eq=False)
    _sent: dict[str, tuple[Any, Any]] | None = field(init=False, default=None, eq=False)


@define(repr=False)
class Link(records.Record):
    """A record whose ``kind`` is ``"link"``."""

    kind: str | Unset = UNSET
    url: str | Unset = UNSET
    additional_properties: dict[str, Any] = field(init=False, factory=dict)
    _order: tuple[str, ...] = field(init=False, default=(), eq=False)
    _sent: dict[str, tuple[Any, Any]] | None = field(init=False, default=None, eq=False)


Book._declare(
    records.Field("kind", "kind", records.enum("book"), required=True),
    records.Field("title", "title", records.STRING),
    records.Field("pages", "pages", records.INTEGER),
)
Link._declare(
    records.Field("kind", "kind", records.enum("link"), required=True),
    records.Field("url", "url", records.STRING, required=True),
)

TOLD = records.union(
    records.model(Book), records.model(Link), on="kind", mapping={"book": 0, "link": 1}
)
UNTOLD = records.union(records.model(Book), records.model(Link))


def read(kind: records.Kind, value: Any) -> tuple[Any, list[str]]:
    """``value`` read as ``kind`` by a client listening for drift: what it became and
    the places of the drift told."""
    log = DriftLog()
    with log.listening():
        assert kind.read is not None
        parsed = kind.read(value)
    return parsed, [drift.place for drift in log.findings]


def test_the_discriminator_names_the_record_even_where_another_fits() -> None:
    # Every field of Book is optional but kind: a link with a title fits Book no worse.
    parsed, told = read(TOLD, {"kind": "link", "url": "https://x", "title": "t"})
    assert type(parsed) is Link, parsed
    assert parsed.url == "https://x"
    assert told == ["Link.title"], told


def test_a_record_the_discriminator_names_keeps_its_drift_and_only_its_own() -> None:
    parsed, told = read(TOLD, {"kind": "book", "pages": "many"})
    assert type(parsed) is Book
    assert parsed.pages is UNSET
    assert parsed["pages"] == "many"
    assert told == ["Book.pages"], told


@pytest.mark.parametrize(
    "kind", [TOLD, UNTOLD], ids=["unknown value", "no discriminator"]
)
def test_without_a_known_value_the_record_that_fits_best_is_chosen(
    kind: records.Kind,
) -> None:
    # Book is first, but only Link reads this with no drift.
    parsed, told = read(kind, {"kind": "link", "url": "https://x"})
    assert type(parsed) is Link, parsed
    assert told == []
    # Fits neither without drift: the one with the fewest (Link: one, Book: two).
    parsed, told = read(kind, {"kind": "video", "url": "https://x"})
    assert type(parsed) is Link, parsed
    assert told == ["Link.kind"], told


def test_a_discriminator_that_is_no_string_names_no_record() -> None:
    parsed, told = read(TOLD, {"kind": ["link"]})
    assert type(parsed) is Book, parsed  # Book tells kind; Link kind and url: Book
    assert told == ["Book.kind"], told


def test_a_union_of_records_in_a_list_reads_each_item_as_its_own_record() -> None:
    items = records.list_of(TOLD)
    parsed, told = read(
        items, [{"kind": "book", "title": "t"}, {"kind": "link", "url": "u"}]
    )
    assert [type(item) for item in parsed] == [Book, Link]
    assert told == []


def test_no_drift_is_told_outside_a_listening_client_and_values_are_kept() -> None:
    assert TOLD.read is not None
    parsed = TOLD.read({"kind": "link", "url": 3})
    assert type(parsed) is Link
    assert parsed["url"] == 3
    assert TOLD.read("text") is records.MISS  # no object: no record reads it
