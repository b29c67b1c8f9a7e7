"""Writers for exported records: JSON Lines, CSV and a terminal table.

Every writer takes one page of records at a time and writes each record whole, then
flushes, so an interrupted export leaves a file that ends on a complete record. The
records are the API's JSON objects as sent (``Page.raw_items``), for every format: CSV and
table cells hold the values JSON Lines writes (a date-time keeps the API's spelling).

CSV and streaming: a CSV header must list every column before the first row, but the
columns (the union of the flattened keys, in first-seen order) are only known once the
last record has arrived. The CSV writer therefore works in two passes: flattened rows are
spooled to a temporary file as pages arrive (memory stays flat however big the export),
and the header and the rows are written to the output when the export ends, including
when it ends early on an error or Ctrl-C. The table format holds every record in memory
and shows top-level fields only (nested ones as JSON); it is meant for a quick look
(with ``--max-items``).
"""

from __future__ import annotations

import csv
import json
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from typing import IO, Any, Protocol

from rich.console import Console
from rich.table import Table

from service_api_cli._formats import FORMATS

__all__ = [
    "FORMATS",
    "CsvWriter",
    "JsonlWriter",
    "RecordWriter",
    "TableWriter",
    "flatten_record",
    "make_writer",
    "tag_records",
]


Scalar = str | int | float | bool | None


def flatten_record(record: Mapping[str, Any], prefix: str = "") -> dict[str, Scalar]:
    """Flatten nested objects and lists into dotted keys, in the record's own order.

    Lists are indexed (``shipmentLegs.0.mode``); an empty object or list keeps its key with
    an empty JSON value so that the column still exists.

    Example::

        >>> flatten_record({"id": 1, "legs": [{"to": {"city": "Oslo"}}], "tags": []})
        {'id': 1, 'legs.0.to.city': 'Oslo', 'tags': '[]'}
    """
    out: dict[str, Scalar] = {}
    for key, value in record.items():
        _flatten_into(out, f"{prefix}{key}", value)
    return out


def _flatten_into(out: dict[str, Scalar], key: str, value: Any) -> None:
    if isinstance(value, Mapping):
        if not value:
            out[key] = "{}"
        for sub, item in value.items():
            _flatten_into(out, f"{key}.{sub}", item)
    elif isinstance(value, list | tuple):
        if not value:
            out[key] = "[]"
        for index, item in enumerate(value):
            _flatten_into(out, f"{key}.{index}", item)
    elif value is None or isinstance(value, str | int | float | bool):
        out[key] = value
    else:
        out[key] = str(value)


class RecordWriter(Protocol):
    """Receives the records of an export one page at a time."""

    def write_page(self, records: Sequence[Mapping[str, Any]]) -> None:
        """Write every record of one page, whole, and flush."""

    def close(self) -> None:
        """Finish the output (header, table); called also after an error or Ctrl-C."""


class JsonlWriter:
    """One JSON object per line, exactly the fields the API sent (undeclared ones too).

    Example::

        writer = JsonlWriter(sys.stdout)
        writer.write_page([{"shipmentId": "s-1"}])
    """

    def __init__(self, stream: IO[str]) -> None:
        self._stream = stream

    def write_page(self, records: Sequence[Mapping[str, Any]]) -> None:
        """Write one line per record, then flush."""
        for record in records:
            # One write per record: the line is serialised before any byte goes out.
            self._stream.write(json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n")
        self._stream.flush()

    def close(self) -> None:
        """Flush; the stream stays open (it may be stdout)."""
        self._stream.flush()


class CsvWriter:
    """CSV with dotted columns; the header is the union of keys in first-seen order.

    Rows are spooled to a temporary file and copied out on :meth:`close` (see the module
    docstring for why).

    Example::

        writer = CsvWriter(open("out.csv", "w", newline=""))
        writer.write_page([{"id": 1, "to": {"city": "Oslo"}}])
        writer.close()
    """

    def __init__(self, stream: IO[str]) -> None:
        self._stream = stream
        self._columns: dict[str, None] = {}
        self._spool: IO[str] | None = None
        self._closed = False

    def write_page(self, records: Sequence[Mapping[str, Any]]) -> None:
        """Flatten the records and spool them."""
        if self._spool is None:
            self._spool = tempfile.TemporaryFile("w+", encoding="utf-8")  # noqa: SIM115 -- closed in close()
        for record in records:
            flat = flatten_record(record)
            self._columns.update(dict.fromkeys(flat))
            self._spool.write(json.dumps(flat, ensure_ascii=False) + "\n")
        self._spool.flush()

    def close(self) -> None:
        """Write the header and every spooled row to the output."""
        if self._closed:
            return
        self._closed = True
        if self._spool is None:
            return
        try:
            if self._columns:
                writer = csv.DictWriter(self._stream, fieldnames=list(self._columns))
                writer.writeheader()
                self._spool.seek(0)
                for line in self._spool:
                    writer.writerow(_csv_row(json.loads(line)))
            self._stream.flush()
        finally:
            self._spool.close()


def _csv_row(flat: Mapping[str, Scalar]) -> dict[str, Scalar]:
    # Booleans as JSON spells them, so that "true"/"false" round-trip the way JSONL does.
    return {k: (json.dumps(v) if isinstance(v, bool) else v) for k, v in flat.items()}


class TableWriter:
    """A rich table on the terminal, drawn once the export ends; holds every record.

    One column per top-level field (first-seen order); nested objects and lists are shown
    as compact JSON, since dozens of dotted columns do not fit a terminal (use CSV for them).

    Example::

        writer = TableWriter(Console())
        writer.write_page([{"id": 1}])
        writer.close()
    """

    def __init__(self, console: Console) -> None:
        self._console = console
        self._rows: list[dict[str, Scalar]] = []
        self._columns: dict[str, None] = {}
        self._closed = False

    def write_page(self, records: Sequence[Mapping[str, Any]]) -> None:
        """Keep the records for the table."""
        for record in records:
            row: dict[str, Scalar] = {
                key: (
                    json.dumps(value, ensure_ascii=False, separators=(",", ":"))
                    if isinstance(value, Mapping | list)
                    else value
                )
                for key, value in record.items()
            }
            self._columns.update(dict.fromkeys(row))
            self._rows.append(row)

    def close(self) -> None:
        """Draw the table."""
        if self._closed:
            return
        self._closed = True
        table = Table(*self._columns)
        for row in self._rows:
            table.add_row(*(_cell(row.get(c)) for c in self._columns))
        self._console.print(table)


def _cell(value: Scalar) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return json.dumps(value)
    return str(value)


def make_writer(fmt: str, stream: IO[str]) -> RecordWriter:
    """The writer for ``fmt`` (one of :data:`FORMATS`) over ``stream``.

    Example::

        writer = make_writer("jsonl", sys.stdout)
    """
    if fmt == "jsonl":
        return JsonlWriter(stream)
    if fmt == "csv":
        return CsvWriter(stream)
    if fmt == "table":
        return TableWriter(Console(file=stream, soft_wrap=False))
    raise ValueError(f"unknown format {fmt!r} (known: {', '.join(FORMATS)})")


def tag_records(records: Iterable[Mapping[str, Any]], account: str) -> list[dict[str, Any]]:
    """Records with an ``account`` field holding the account they came from, put first.

    Only used when one run exports several accounts; the tag replaces a field of the
    same name, should the API ever send one, so the column always means the same thing.

    Example::

        >>> tag_records([{"id": 1}], "acct-1")
        [{'account': 'acct-1', 'id': 1}]
    """
    return [
        {"account": account, **{k: v for k, v in record.items() if k != "account"}}
        for record in records
    ]
