"""The spec check's figures: ``python -m bench.spec_check [--runs N]``.

1. A full check of today's spec against the mock (its own process, demo data): the
   requests it used (counted by the check and by the mock) and its wall time, the median
   of ``--runs`` runs, each with a client of its own (its token request included).
2. Recall and precision over the tests' true specs (``tests/speccheck/planted.py``):
   each plant alone, then all of them at once (one of each target). Recall: differences
   found of those planted; precision: the patch's changes that were planted (a change
   nobody planted is a patch that was not wanted).

Prints the figures as JSON. A benchmark, not a test: nothing is asserted.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import service_api
from service_api import testing
from service_api_mock import DEMO_CLIENT_ID, DEMO_CLIENT_SECRET
from service_api_speccheck import Report, check_spec

from ._mock_process import MockProcess

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "speccheck"))
from planted import PLANTS, Plant, dump, edits, serving, specs  # noqa: E402


def _check(base_url: str, spec: Path) -> tuple[Report, float]:
    started = time.perf_counter()
    with service_api.Client(
        base_url, DEMO_CLIENT_ID, DEMO_CLIENT_SECRET, "acct-1"
    ) as client:
        report = check_spec(spec, client)
    return report, time.perf_counter() - started


def _total(counts: dict[str, dict[str, int]]) -> int:
    return sum(n for by_status in counts.values() for n in by_status.values())


def full_check(runs: int, folder: Path) -> dict[str, Any]:
    """Requests and wall time of a full check of openapi.yaml against the mock."""
    spec = Path(shutil.copy(ROOT / "openapi.yaml", folder / "openapi.yaml"))
    times = []
    requests = set()
    counted = set()
    with MockProcess() as mock:
        for _ in range(runs):
            mock.reset()  # it primes the data set with a token and a page of its own
            primed = _total(mock.counts())
            report, seconds = _check(mock.base_url, spec)
            times.append(seconds)
            requests.add(report.observed["requests"])
            counted.add(_total(mock.counts()) - primed)
    return {
        "requests": sorted(requests),
        "requests_counted_by_the_mock": sorted(counted),
        "wall_seconds_median": round(statistics.median(times), 3),
        "wall_seconds_min": round(min(times), 3),
        "runs": runs,
    }


def _learned(
    plants: list[Plant], served: Any, base_url: str, folder: Path
) -> tuple[int, int, int, int]:
    """(planted, found, changes made, changes planted) for a check of ``plants``."""
    true, checked = specs(plants)
    faults = {k: v for plant in plants for k, v in plant.faults.items()}
    variants = [plant.variant for plant in plants if plant.variant]
    served.serve(dump(true, folder / "true.yaml"), faults, variants)
    with testing.no_retry_sleep():
        report, _ = _check(base_url, dump(checked, folder / "openapi.yaml"))
    found = {(f.kind, f.where) for f in report.findings}
    made = edits(report.edits)
    wanted = {edit for p in plants for edit in p.edits}
    hits = sum(set(p.findings) <= found for p in plants)
    return len(plants), hits, len(made), len(made & wanted)


def recall_precision(folder: Path) -> dict[str, Any]:
    """Recall and precision over every plant alone and all of them at once."""
    together = list({plant.target: plant for plant in PLANTS.values()}.values())
    cases = [[plant] for plant in PLANTS.values()] + [together]
    totals = [0, 0, 0, 0]
    with serving() as (served, base_url):
        for index, plants in enumerate(cases):
            case = folder / f"case{index}"
            case.mkdir()
            for position, value in enumerate(_learned(plants, served, base_url, case)):
                totals[position] += value
    planted, found, made, wanted = totals
    return {
        "specs": len(cases),
        "differences_planted": planted,
        "found": found,
        "recall": round(found / planted, 4),
        "changes": made,
        "changes_planted": wanted,
        "precision": round(wanted / made, 4) if made else 1.0,
    }


def main() -> None:
    """Print the figures as JSON."""
    parser = argparse.ArgumentParser(prog="python -m bench.spec_check")
    parser.add_argument("--runs", type=int, default=5, help="full checks timed")
    runs = parser.parse_args().runs
    with tempfile.TemporaryDirectory() as temporary:
        folder = Path(temporary)
        figures = {"full_check": full_check(runs, folder), **recall_precision(folder)}
    print(json.dumps(figures, indent=2))


if __name__ == "__main__":
    main()
