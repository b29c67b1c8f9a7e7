"""Case 4: tokens under concurrent load. Worker threads share one client for a while;
the mock counts /authenticate calls and 401s, the workers what reached them.

Example::

    with MockProcess() as mock:
        result = run(mock, SMOKE)
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from typing import Any

from service_api import Client
from service_api_client.api.shipments import list_shipments

from .._measure import count_delta, target
from .._mock_process import MockProcess, mock_client
from .._sizes import Sizes

__all__ = ["run"]


def _hammer_with_threads(client: Client, workers: int, seconds: float) -> Counter[str]:
    """``workers`` threads call the endpoint until the deadline; count what they saw."""
    outcomes: Counter[str] = Counter()
    lock = threading.Lock()
    deadline = time.perf_counter() + seconds

    def work() -> None:
        local: Counter[str] = Counter()
        while time.perf_counter() < deadline:
            try:
                response = list_shipments.sync_detailed(client=client, page_size=1)
                local[str(int(response.status_code))] += 1
            except Exception as exc:  # every failure that reaches the caller is counted
                local[type(exc).__name__] += 1
        with lock:
            outcomes.update(local)

    threads = [threading.Thread(target=work) for _ in range(workers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return outcomes


def _row(mock: MockProcess, sizes: Sizes, workers: int) -> dict[str, Any]:
    """``workers`` threads on one client for ``sizes.token_seconds``."""
    before = mock.counts()
    with mock_client(mock, refresh_skew=sizes.refresh_skew) as client:
        wall0 = time.perf_counter()
        outcomes = _hammer_with_threads(client, workers, sizes.token_seconds)
        wall = time.perf_counter() - wall0
    after = mock.counts()
    calls = sum(outcomes.values())
    return {
        "workers": workers,
        "seconds": wall,
        "calls": calls,
        "calls_per_s": calls / wall,
        "authenticate_calls": count_delta(before, after, "authenticate"),
        "expected_authenticate": sizes.token_seconds
        / (sizes.token_ttl - sizes.refresh_skew),
        "server_401s": count_delta(before, after, "listShipments", "401"),
        "caller_outcomes": dict(outcomes),
        "caller_401s": outcomes.get("401", 0),
        "caller_failures": calls - outcomes.get("200", 0),
    }


def _targets(row: dict[str, Any]) -> list[dict[str, Any]]:
    workers = row["workers"]
    expected = row["expected_authenticate"]
    ratio = row["authenticate_calls"] / expected
    failures = row["caller_failures"]
    return [
        target(
            f"{workers} workers: /authenticate calls / expected ({expected:.1f})",
            ratio,
            limit="0.8 .. 1.25",
            met=0.8 <= ratio <= 1.25,
        ),
        target(
            f"{workers} workers: 401s or other failures reaching the caller",
            failures,
            limit="0",
            met=failures == 0,
        ),
    ]


def run(mock: MockProcess, sizes: Sizes) -> dict[str, Any]:
    """/authenticate calls against those a token's lifetime asks, for each number of
    threads, and the failures that reached them."""
    mock.reset(records=100, token_ttl=sizes.token_ttl)
    rows = [_row(mock, sizes, workers) for workers in sizes.token_workers]
    return {
        "seconds": sizes.token_seconds,
        "token_ttl_s": sizes.token_ttl,
        "refresh_skew_s": sizes.refresh_skew,
        "expected_authenticate": sizes.token_seconds
        / (sizes.token_ttl - sizes.refresh_skew),
        "note": "workers are threads sharing one sync Client; each call lists one record",
        "rows": rows,
        "targets": [found for row in rows for found in _targets(row)],
    }
