"""``make demo``'s driver: a mock on a free port, the real command, a summary, nothing left."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest

from service_api_cli._demo import main


def test_demo_exports_two_accounts_and_stops_the_mock(
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
    assert text.rstrip().endswith("demo: mock stopped")
    records = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["account"] for r in records] == ["acct-1"] * 30 + ["acct-2"] * 30
    left = [
        t
        for t in set(threading.enumerate()) - before
        if t.name.startswith("service-api")
    ]
    assert not left
