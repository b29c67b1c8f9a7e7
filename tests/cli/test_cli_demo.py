"""``make demo``'s driver: a mock on a free port, the real commands (an export of two
accounts, a load of both endpoints into DuckDB), the rows counted per account, a summary,
nothing left running."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest

pytest.importorskip(
    "dlt", reason="dlt is not installed: pip install 'service-api[dlt]'"
)
pytest.importorskip(
    "duckdb", reason="duckdb is not installed: pip install 'service-api[dlt]'"
)

from service_api_cli._demo import DATABASE_NAME, main


def test_demo_exports_and_loads_two_accounts_and_stops_the_mock(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "demo" / "shipments.jsonl"
    before = set(threading.enumerate())  # the session's own mock may be running
    assert main(["--records", "30", "--output", str(out)]) == 0
    text, said = capfd.readouterr()
    assert (
        "demo: $ service-api list shipments --account acct-1 --account acct-2" in text
    )
    # The commands' own summaries, as a user running them sees them.
    assert "exported 60 records (2 pages) to " in said
    assert "[acct-1: 30 records, 1 page; acct-2: 30 records, 1 page]" in said
    records = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["account"] for r in records] == ["acct-1"] * 30 + ["acct-2"] * 30
    # The load, counted in SQL per table and account.
    lines = text.splitlines()
    counted = [line.split()[1:] for line in lines if line.startswith("demo:   ")]
    assert counted == [
        ["devices", "acct-1", "30"],
        ["devices", "acct-2", "30"],
        ["shipments", "acct-1", "30"],
        ["shipments", "acct-2", "30"],
    ]
    assert (out.parent / DATABASE_NAME).is_file()
    # dlt's state beside the DuckDB file it belongs to.
    assert (out.parent / f"{DATABASE_NAME}.dlt").is_dir()
    assert lines[-1] == "demo: mock stopped"
    left = [
        t
        for t in set(threading.enumerate()) - before
        if t.name.startswith("service-api")
    ]
    assert not left
