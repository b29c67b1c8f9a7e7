"""Rendering: JSON Lines as sent, CSV flattened predictably, a table for a quick look."""

from __future__ import annotations

import csv
import io
import json
from typing import Any

import pytest

from service_api_cli._output import flatten_record, jsonl_line, render, tagged

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
    render(
        "jsonl", lambda: [SHIPMENT, {"shipmentId": "s-2", "undeclared": {"x": 1}}], out
    )
    lines = out.getvalue().splitlines()
    assert [json.loads(line) for line in lines] == [
        SHIPMENT,
        {"shipmentId": "s-2", "undeclared": {"x": 1}},
    ]
    assert out.getvalue().endswith("\n")
    assert jsonl_line({"city": "Tromsø"}) == '{"city":"Tromsø"}\n'


def test_csv_header_is_the_union_of_keys_in_first_seen_order() -> None:
    out = io.StringIO()
    records: list[dict[str, Any]] = [
        {"id": "a", "to": {"city": "Oslo"}},
        {"id": "b", "late": True},
    ]
    records.append({"to": {"city": "Rome", "zip": "00100"}})
    render("csv", lambda: iter(records), out)  # read twice: columns, then rows
    rows = list(csv.reader(io.StringIO(out.getvalue())))
    assert rows == [
        ["id", "to.city", "late", "to.zip"],
        ["a", "Oslo", "", ""],
        ["b", "", "true", ""],
        ["", "Rome", "", "00100"],
    ]


def test_an_empty_csv_export_writes_nothing() -> None:
    out = io.StringIO()
    render("csv", lambda: [], out)
    assert out.getvalue() == ""


def test_table_shows_top_level_columns_with_nested_values_as_json() -> None:
    out = io.StringIO()
    records: list[dict[str, Any]] = [{"id": "a", "to": {"city": "Oslo"}, "ok": False}]
    records.append({"id": "b", "late": None})
    render("table", lambda: records, out)
    lines = out.getvalue().splitlines()
    header = next(line for line in lines if "id" in line)
    assert header.split() == ["┃", "id", "┃", "to", "┃", "ok", "┃", "late", "┃"]
    assert '{"city":"Oslo"}' in out.getvalue()
    assert "false" in out.getvalue()


def test_render_refuses_an_unknown_format() -> None:
    with pytest.raises(ValueError, match="unknown format 'xml'"):
        render("xml", lambda: [], io.StringIO())


def test_account_tag_comes_first_and_replaces_a_field_of_that_name() -> None:
    record = tagged({"id": 1, "account": "api-value"}, "acct-2")
    assert record == {"account": "acct-2", "id": 1}
    assert list(record) == ["account", "id"]
