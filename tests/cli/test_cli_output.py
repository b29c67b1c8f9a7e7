"""Writers: JSON Lines as sent, CSV flattened predictably, records written whole."""

from __future__ import annotations

import csv
import io
import json

import pytest
from rich.console import Console

from service_api_cli._output import (
    CsvWriter,
    JsonlWriter,
    TableWriter,
    flatten_record,
    make_writer,
    tag_records,
)

SHIPMENT = {
    "shipmentId": "s-1",
    "shipmentLegs": [
        {"mode": "Road", "fromAddress": {"city": "Oslo", "postalCode": "0150"}},
        {"mode": "Air", "fromAddress": {"city": "Rome"}},
    ],
    "devices": [],
    "meta": {},
    "delivered": True,
    "weight": 2.5,
    "note": None,
}


def test_flatten_uses_dotted_keys_and_list_indexes_in_record_order() -> None:
    assert flatten_record(SHIPMENT) == {
        "shipmentId": "s-1",
        "shipmentLegs.0.mode": "Road",
        "shipmentLegs.0.fromAddress.city": "Oslo",
        "shipmentLegs.0.fromAddress.postalCode": "0150",
        "shipmentLegs.1.mode": "Air",
        "shipmentLegs.1.fromAddress.city": "Rome",
        "devices": "[]",
        "meta": "{}",
        "delivered": True,
        "weight": 2.5,
        "note": None,
    }


def test_jsonl_writes_each_record_as_sent_one_per_line() -> None:
    out = io.StringIO()
    writer = JsonlWriter(out)
    writer.write_page([SHIPMENT, {"shipmentId": "s-2", "undeclared": {"x": 1}}])
    writer.close()
    lines = out.getvalue().splitlines()
    assert [json.loads(line) for line in lines] == [
        SHIPMENT,
        {"shipmentId": "s-2", "undeclared": {"x": 1}},
    ]
    assert out.getvalue().endswith("\n")


def test_csv_header_is_the_union_of_keys_in_first_seen_order() -> None:
    out = io.StringIO()
    writer = CsvWriter(out)
    writer.write_page([{"id": "a", "to": {"city": "Oslo"}}])
    writer.write_page([{"id": "b", "late": True}, {"to": {"city": "Rome", "zip": "00100"}}])
    assert out.getvalue() == ""  # rows are spooled until the end
    writer.close()
    rows = list(csv.reader(io.StringIO(out.getvalue())))
    assert rows == [
        ["id", "to.city", "late", "to.zip"],
        ["a", "Oslo", "", ""],
        ["b", "", "true", ""],
        ["", "Rome", "", "00100"],
    ]


def test_csv_close_twice_writes_once_and_empty_export_writes_nothing() -> None:
    out = io.StringIO()
    writer = CsvWriter(out)
    writer.close()
    writer.close()
    assert out.getvalue() == ""


def test_table_shows_top_level_columns_with_nested_values_as_json() -> None:
    out = io.StringIO()
    writer = TableWriter(Console(file=out, width=200, color_system=None))
    writer.write_page([{"id": "a", "to": {"city": "Oslo"}, "ok": False}])
    writer.write_page([{"id": "b", "late": None}])
    writer.close()
    lines = out.getvalue().splitlines()
    header = next(line for line in lines if "id" in line)
    assert header.split() == ["┃", "id", "┃", "to", "┃", "ok", "┃", "late", "┃"]
    assert '{"city":"Oslo"}' in out.getvalue()
    assert "false" in out.getvalue()


@pytest.mark.parametrize(("fmt", "kind"), [("jsonl", JsonlWriter), ("csv", CsvWriter)])
def test_make_writer_picks_the_writer(fmt: str, kind: type) -> None:
    writer = make_writer(fmt, io.StringIO())
    assert isinstance(writer, kind)
    writer.write_page([{"id": 1}])
    writer.close()


def test_make_writer_refuses_an_unknown_format() -> None:
    with pytest.raises(ValueError, match="unknown format 'xml'"):
        make_writer("xml", io.StringIO())


def test_account_tag_comes_first_and_replaces_a_field_of_that_name() -> None:
    tagged = tag_records([{"id": 1, "account": "api-value"}], "acct-2")
    assert tagged == [{"account": "acct-2", "id": 1}]
    assert list(tagged[0]) == ["account", "id"]
