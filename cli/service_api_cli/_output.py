"""How exported records are written: JSON Lines, CSV or a terminal table.

Every record is first kept as the API sent it, one JSON object per line (a page at a
time, see :mod:`service_api_cli._export`); :func:`render` turns those records into the
format asked for once the export ends. JSON Lines is written as is. A CSV header must
list every column before the first row, and the columns (the union of the flattened
keys, in first-seen order) are only known once the last record is in, so a CSV takes two
passes over the kept records: memory stays flat however big the export. The table holds
every record in memory and shows top-level fields only (nested ones as JSON): it is for
a quick look (with ``--max-items``).
"""

import csv
import json
from collections.abc import Callable, Iterable, Mapping
from typing import IO, Any

from service_api_cli._formats import FORMATS

Scalar = str | int | float | bool | None
#: Gives the records afresh each time it is called (a CSV reads them twice).
Records = Callable[[], Iterable[Mapping[str, Any]]]


def jsonl_line(record: Mapping[str, Any]) -> str:
    """One record as a line of JSON Lines, compact, non-ASCII kept as is.

    Example::

        >>> jsonl_line({"shipmentId": "s-1", "city": "Tromsø"})
        '{"shipmentId":"s-1","city":"Tromsø"}\\n'
    """
    return json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n"


def tagged(record: Mapping[str, Any], account: str) -> dict[str, Any]:
    """The record with an ``account`` field first, naming the account it came from.

    Written when one run exports several accounts (or with ``--tag-account``); the tag
    replaces a field of the same name, should the API ever send one, so the column
    always means the same thing.

    Example::

        >>> tagged({"id": 1, "account": "x"}, "acct-1")
        {'account': 'acct-1', 'id': 1}
    """
    # The union sets the tag's value and keeps its place, first.
    return {"account": account, **record} | {"account": account}


def flatten_record(record: Mapping[Any, Any], prefix: str = "") -> dict[str, Scalar]:
    """Flatten nested objects and lists into dotted keys, in the record's own order.

    Lists are indexed (``shipmentLegs.0.mode``); an empty object or list keeps its key with
    an empty JSON value so that the column still exists.

    Example::

        >>> flatten_record({"id": 1, "legs": [{"to": {"city": "Oslo"}}], "tags": []})
        {'id': 1, 'legs.0.to.city': 'Oslo', 'tags': '[]'}
    """
    out: dict[str, Scalar] = {}
    for key, value in record.items():
        name = f"{prefix}{key}"
        # A list's items are named by their index, as an object's by their key.
        items = dict(enumerate(value)) if isinstance(value, list) else value
        if isinstance(items, Mapping) and items:
            out.update(flatten_record(items, f"{name}."))
        elif isinstance(value, Mapping | list):
            out[name] = json.dumps(value)  # "{}" or "[]": the column still exists
        else:
            out[name] = value
    return out


def _csv(records: Records, stream: IO[str]) -> None:
    columns: dict[str, None] = {}
    for record in records():
        columns.update(dict.fromkeys(flatten_record(record)))
    if not columns:
        return
    writer = csv.DictWriter(stream, fieldnames=list(columns))
    writer.writeheader()
    for record in records():
        writer.writerow({k: _cell(v) for k, v in flatten_record(record).items()})


def _cell(value: Any) -> str:
    # Nested values as compact JSON, nothing for null, booleans as JSON spells them (so
    # that "true"/"false" read the same as in JSON Lines).
    if isinstance(value, Mapping | list | bool):
        return json.dumps(value, separators=(",", ":"))
    return "" if value is None else str(value)


def _table(records: Records, stream: IO[str]) -> None:
    from rich.console import Console  # the command line's extra, imported when drawn
    from rich.table import Table

    rows = list(records())
    columns = list(dict.fromkeys(key for row in rows for key in row))
    table = Table(*columns)
    for row in rows:
        table.add_row(*(_cell(row.get(column)) for column in columns))
    Console(file=stream, soft_wrap=False).print(table)


def render(fmt: str, records: Records, stream: IO[str]) -> None:
    """Write ``records`` to ``stream`` in ``fmt`` (one of :data:`FORMATS`).

    Example::

        render("csv", lambda: [{"id": 1, "to": {"city": "Oslo"}}], sys.stdout)
    """
    if fmt == "csv":
        _csv(records, stream)
    elif fmt == "table":
        _table(records, stream)
    elif fmt == "jsonl":
        stream.writelines(jsonl_line(record) for record in records())
    else:
        raise ValueError(f"unknown format {fmt!r} (known: {', '.join(FORMATS)})")
    stream.flush()
