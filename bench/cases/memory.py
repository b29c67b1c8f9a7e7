"""Case 3: memory. Peak RSS growth of a fresh process iterating N records at concurrency
8, with ``paginate`` and, for reference, with raw httpx fetching the same pages as far
ahead.

The reference shows what the allocator does on its own: glibc's heap creeps up with
the number of ~70 KB bodies allocated and freed, whoever allocates them.

Example::

    with MockProcess() as mock:
        result = run(mock, SMOKE)
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from .._measure import target
from .._mock_process import MockProcess
from .._sizes import Sizes

__all__ = ["run"]

_REPO = Path(__file__).resolve().parents[2]


def _probe(mock: MockProcess, records: int, *, concurrency: int, variant: str) -> Any:
    """One iteration in a fresh process (:mod:`bench._memory_probe`): what it printed."""
    command = [
        sys.executable,
        "-m",
        "bench._memory_probe",
        mock.base_url,
        str(records),
        str(concurrency),
        variant,
    ]
    completed = subprocess.run(
        command, cwd=_REPO, capture_output=True, text=True, check=True, timeout=600
    )
    row = json.loads(completed.stdout.strip().splitlines()[-1])
    if row["items"] != records:
        raise RuntimeError(f"{variant} saw {row['items']} of {records} records")
    return row


def run(mock: MockProcess, sizes: Sizes) -> dict[str, Any]:
    """Growth of the peak RSS at each size, and how much it grows with the size beyond
    what raw httpx's grows."""
    rows = []
    for records in sizes.memory_records:
        mock.reset(records=records)
        for variant in ("paginate", "raw_httpx"):
            concurrency = sizes.memory_concurrency
            rows.append(_probe(mock, records, concurrency=concurrency, variant=variant))

    def growth(variant: str) -> list[float]:
        return [row["growth_mb"] for row in rows if row["variant"] == variant]

    ours = growth("paginate")
    floor = growth("raw_httpx")
    largest = max(ours)
    flatness = ours[-1] - ours[0]
    beyond_floor = flatness - (floor[-1] - floor[0])
    return {
        "concurrency": sizes.memory_concurrency,
        "rows": rows,
        "growth_with_n_mb": {"paginate": flatness, "raw_httpx": floor[-1] - floor[0]},
        "targets": [
            target(
                "peak RSS growth at most 30 MB (largest N)",
                largest,
                limit="<= 30 MB",
                met=largest <= 30,
            ),
            target(
                "flat in N: growth(largest N) - growth(smallest N), beyond raw httpx's",
                beyond_floor,
                limit="<= 5 MB",
                met=beyond_floor <= 5,
            ),
        ],
    }
