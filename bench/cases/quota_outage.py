"""Case 7b: the shared quota's Redis store stopped mid-run and started again, empty.

The worker processes of case 7 export their accounts on a budget shared through Redis,
fixed (0.95 of the quota) or learned; the server stops once a quarter of the pages are
served and starts again, empty, at half. Each process should go on alone at its share,
warn once, and rejoin: few 429s, nothing lost.

Example::

    with MockProcess() as mock:
        result = run(mock, SMOKE)
"""

from __future__ import annotations

import time
from concurrent.futures import Future
from typing import Any

from .._mock_process import MockProcess
from .._quota_runs import (
    Options,
    QuotaRuns,
    WhileRunning,
    quota_runs,
    row_targets,
)
from .._sizes import Sizes

__all__ = ["run"]


def _stop_and_restart(runs: QuotaRuns) -> WhileRunning:
    """What to do while the workers run: stop Redis a quarter into the pages the mock
    serves, start it again, empty, on the same port at half."""
    redis = runs.redis
    assert redis is not None

    def stop_and_restart(futures: list[Future[dict[str, Any]]]) -> None:
        # The mock counts since its last reset: this variant's, a moment ago.
        served_before = runs.mock.count("listShipments", 200)

        def wait_for(share: float) -> None:
            served = runs.mock.count("listShipments", 200) - served_before
            while served < share * runs.pages and not all(f.done() for f in futures):
                time.sleep(0.05)
                served = runs.mock.count("listShipments", 200) - served_before

        wait_for(0.25)
        redis.stop()
        wait_for(0.5)
        redis.start()

    return stop_and_restart


def run(mock: MockProcess, sizes: Sizes) -> dict[str, Any]:
    """Throughput as a fraction of the quota, 429s and whether every record arrived
    exactly once, for the fixed and the learned budget shared through Redis, with the
    server stopped a quarter in and back, empty, at half."""
    rows: list[dict[str, Any]] = []
    targets: list[dict[str, Any]] = []
    fixed = 0.95 * sizes.quota_per_minute
    with quota_runs(mock, sizes) as runs:
        variants: dict[str, Options] = {
            "shared Redis, stopped mid-run": {"rate_limit": fixed},
            "learned, Redis stopped mid-run": {"rate_limit": "adaptive"},
        }
        for name, options in variants.items():
            if runs.redis is None:
                rows.append({"variant": name, "skipped": "redis-server not installed"})
                continue
            row = runs.variant(
                name,
                {**options, "rate_store": runs.redis.url},
                while_running=_stop_and_restart(runs),
            )
            rows.append(row)
            targets += row_targets(row, most_429=3.0, least_of_q=None)
    return {
        "quota_per_minute": sizes.quota_per_minute,
        "quota_window_s": sizes.quota_window,
        "processes": sizes.quota_processes,
        "records_per_account": sizes.quota_records,
        "fixed_per_process": fixed,
        "max_retries": sizes.quota_max_retries,
        "rows": rows,
        "targets": targets,
    }
