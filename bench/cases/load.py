"""Case 8: loading into DuckDB. ``service-api load shipments`` for two accounts, beside
the floor (``service-api list`` to JSONL, then DuckDB's ``read_json_auto``) and dlt's
``rest_api`` source configured by hand for this API, each loading twice into its own
DuckDB file in a fresh process per run: wall time, peak RSS (the kernel's high-water
mark), rows.

Example::

    with MockProcess() as mock:
        result = run(mock, SMOKE)
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from .._load_probe import CONTENDERS, DATABASE
from .._measure import rotated, target
from .._mock_process import MockProcess
from .._sizes import Sizes

__all__ = ["run"]

_REPO = Path(__file__).resolve().parents[2]


def _rows_loaded(database: Path) -> int:
    import duckdb

    with duckdb.connect(str(database), read_only=True) as connection:
        row = connection.execute("select count(*) from raw.shipments").fetchone()
    return int(row[0]) if row else 0


def _load_once(
    mock: MockProcess, contender: str, *, work: Path, accounts: list[str]
) -> dict[str, Any]:
    """One load in a fresh process (:mod:`bench._load_probe`): what it printed, and the
    rows the database then holds."""
    command = [
        sys.executable,
        "-m",
        "bench._load_probe",
        contender,
        mock.base_url,
        str(work),
        *accounts,
    ]
    completed = subprocess.run(
        command, cwd=_REPO, capture_output=True, text=True, check=False, timeout=1800
    )
    if completed.returncode != 0:
        raise RuntimeError(f"{contender} failed: {completed.stderr[-2000:]}")
    row: dict[str, Any] = json.loads(completed.stdout.strip().splitlines()[-1])
    row["rows"] = _rows_loaded(work / DATABASE)
    return row


def _runs(mock: MockProcess, sizes: Sizes) -> list[dict[str, Any]]:
    """Each contender loads each size twice, in an order rotated from size to size."""
    accounts = list(sizes.load_accounts)
    rows = []
    with tempfile.TemporaryDirectory(prefix="bench-load-") as scratch:
        for size, records in enumerate(sizes.load_records):
            mock.reset(records=records, accounts=accounts)
            for contender in rotated(CONTENDERS, size):
                work = Path(scratch) / f"{contender}-{records}"
                for run_number in (1, 2):
                    row = _load_once(mock, contender, work=work, accounts=accounts)
                    row.update(records=records * len(accounts), run=run_number)
                    rows.append(row)
    return rows


def _first_load(rows: list[dict[str, Any]], contender: str, records: int) -> Any:
    """The first of ``contender``'s two loads of ``records`` (all accounts)."""
    return next(
        row
        for row in rows
        if row["contender"] == contender
        and row["records"] == records
        and row["run"] == 1
    )


def _targets(
    rows: list[dict[str, Any]], sizes: Sizes, *, ratio: float
) -> list[dict[str, Any]]:
    loads = [r for r in rows if r["contender"] == "service_api"]
    peak = max(r["peak_rss_mb"] for r in loads)
    smallest = min(sizes.load_records) * len(sizes.load_accounts)
    growth = peak - max(r["peak_rss_mb"] for r in loads if r["records"] == smallest)
    exact = all(r["rows"] == r["records"] for r in loads)
    return [
        target(
            "load / floor, largest size (first load)",
            ratio,
            limit="<= 2.0 (stretch 1.5)",
            met=ratio <= 2.0,
        ),
        target(
            "peak RSS of the load, largest size (MB)",
            peak,
            limit="<= 400 MB",
            met=peak <= 400,
        ),
        target(
            "peak RSS, largest minus smallest size (MB)",
            growth,
            limit="<= 50 MB",
            met=growth <= 50,
        ),
        target(
            "rows = records after a first and a second load",
            float(exact),
            limit="1 (true)",
            met=exact,
        ),
    ]


def run(mock: MockProcess, sizes: Sizes) -> dict[str, Any]:
    """The rows of every load, the load's ratios to the floor at the largest size (wall
    and CPU time), and the targets."""
    rows = _runs(mock, sizes)
    largest = max(sizes.load_records) * len(sizes.load_accounts)
    ours = _first_load(rows, "service_api", largest)
    floor = _first_load(rows, "floor", largest)
    ratio = ours["wall_s"] / floor["wall_s"]
    return {
        "accounts": list(sizes.load_accounts),
        "rows": rows,
        "ratio_to_floor": ratio,
        "cpu_ratio_to_floor": ours["cpu_s"] / floor["cpu_s"],
        "targets": _targets(rows, sizes, ratio=ratio),
    }
