"""What the two quota cases (7 and 7b) share: worker processes of one integration that
export one account each, under the mock's quota, with the pacing a variant sets.

Example::

    with quota_runs(mock, SMOKE) as runs:
        row = runs.variant("shared SQLite", {"rate_limit": 95, "rate_store": url})
"""

from __future__ import annotations

import contextlib
import math
import multiprocessing
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass
from multiprocessing.managers import SyncManager
from pathlib import Path
from typing import Any

from service_api import Client, RetryPolicy, paginate
from service_api_client.api.shipments import list_shipments

from ._measure import count_delta, target
from ._mock_process import CLIENT_ID, CLIENT_SECRET, MockProcess
from ._redis_server import RedisServer
from ._sizes import Sizes

__all__ = [
    "Options",
    "QuotaRuns",
    "WhileRunning",
    "export_worker",
    "quota_runs",
    "row_targets",
]

#: The keyword arguments a variant gives ``Client`` (its pacing).
Options = dict[str, Any]
#: What a variant does while its workers run (given their futures), if anything.
WhileRunning = Callable[[list[Future[dict[str, Any]]]], None]


def export_worker(
    base_url: str, account: str, options: Options, *, max_retries: int, start: Any
) -> dict[str, Any]:
    """One worker process: export every shipment of ``account``; what it got, and when.

    Module-level so that ``spawn`` can import it; ``start`` is a manager's barrier so
    that every worker begins at once, each in its own process.
    """
    policy = RetryPolicy(max_retries=max_retries, max_retry_after=120.0)
    ids: list[str] = []
    error = None
    with Client(
        base_url, CLIENT_ID, CLIENT_SECRET, account, retry=policy, **options
    ) as client:
        start.wait(timeout=120)
        started = time.time()
        try:
            ids = [str(s.shipment_id) for s in paginate(list_shipments, client)]
        except Exception as exc:  # counted and reported: a lost export is a result here
            error = type(exc).__name__
        ended = time.time()
    return {
        "account": account,
        "records": len(ids),
        "unique": len(set(ids)),
        "started": started,
        "ended": ended,
        "error": error,
    }


@dataclass
class QuotaRuns:
    """The setting of the quota cases: the mock, the sizes, one worker process per
    account (spawned once), a manager for their barriers, a scratch directory and, when
    installed, a Redis server."""

    mock: MockProcess
    sizes: Sizes
    pool: ProcessPoolExecutor
    manager: SyncManager
    workdir: Path
    redis: RedisServer | None

    @property
    def accounts(self) -> list[str]:
        """One account per worker process."""
        return [f"acct-{i + 1}" for i in range(self.sizes.quota_processes)]

    @property
    def pages(self) -> int:
        """The pages of every account's export, all together."""
        return len(self.accounts) * math.ceil(self.sizes.quota_records / 50)

    def variant(
        self, name: str, options: Options, *, while_running: WhileRunning | None = None
    ) -> dict[str, Any]:
        """Every worker exports its account at once, paced as ``options`` say, from an
        empty store; the row of the results."""
        clients = {CLIENT_ID: [CLIENT_SECRET, self.accounts]}
        # Reset without the quota (the reset fetches a page), then switch it on.
        self.mock.reset(
            records=self.sizes.quota_records, clients=clients, accounts=self.accounts
        )
        self.mock.set_faults(
            rate_limit=self.sizes.quota_per_minute, rate_window=self.sizes.quota_window
        )
        if self.redis is not None:  # every variant learns from nothing
            self.redis.flush()
        before = self.mock.counts()
        start = self.manager.Barrier(len(self.accounts))
        futures = [
            self.pool.submit(
                export_worker,
                self.mock.base_url,
                account,
                options,
                max_retries=self.sizes.quota_max_retries,
                start=start,
            )
            for account in self.accounts
        ]
        if while_running is not None:
            while_running(futures)
        workers = [future.result(timeout=1800) for future in futures]
        after = self.mock.counts()
        return self._row(name, options, workers, served=_served(before, after))

    def _row(
        self,
        name: str,
        options: Options,
        workers: list[dict[str, Any]],
        *,
        served: dict[str, int],
    ) -> dict[str, Any]:
        wall = max(w["ended"] for w in workers) - min(w["started"] for w in workers)
        expected = self.sizes.quota_records
        lost = sum(abs(expected - w["unique"]) for w in workers)
        duplicated = sum(w["records"] - w["unique"] for w in workers)
        per_minute = served["accepted"] / wall * 60.0
        return {
            "variant": name,
            "options": {k: v for k, v in options.items() if k != "rate_store"},
            "wall_s": wall,
            **served,
            "percent_429": 100.0 * served["refused_429"] / max(served["requests"], 1),
            "accepted_per_minute": per_minute,
            "fraction_of_q": per_minute / self.sizes.quota_per_minute,
            "records": sum(w["records"] for w in workers),
            "lost_or_duplicated": lost + duplicated,
            "errors": [w["error"] for w in workers if w["error"]],
        }


def _served(
    before: dict[str, dict[str, int]], after: dict[str, dict[str, int]]
) -> dict[str, int]:
    """Requests (pages and tokens) the mock answered between two counts: all of them,
    those it accepted and those it refused with a 429."""

    def both(status: str | None) -> int:
        pages = count_delta(before, after, "listShipments", status)
        tokens = count_delta(before, after, "authenticate", status)
        return pages + tokens

    return {"requests": both(None), "accepted": both("200"), "refused_429": both("429")}


@contextlib.contextmanager
def quota_runs(mock: MockProcess, sizes: Sizes) -> Iterator[QuotaRuns]:
    """The setting of the quota cases, torn down on exit (processes, Redis, files)."""
    context = multiprocessing.get_context("spawn")
    workdir = Path(tempfile.mkdtemp(prefix="bench-quota-"))
    redis = RedisServer.installed(workdir)
    try:
        if redis is not None:
            redis.start()
        with (
            context.Manager() as manager,
            ProcessPoolExecutor(sizes.quota_processes, mp_context=context) as pool,
        ):
            yield QuotaRuns(mock, sizes, pool, manager, workdir, redis)
    finally:
        if redis is not None:
            redis.stop()
        shutil.rmtree(workdir, ignore_errors=True)


def row_targets(
    row: dict[str, Any], *, most_429: float | None, least_of_q: float | None
) -> list[dict[str, Any]]:
    """The targets of one variant's row: every record exactly once, and (unless
    ``None``) at most ``most_429`` percent of 429s and at least ``least_of_q`` of the
    quota."""
    name = row["variant"]
    lost = row["lost_or_duplicated"]
    found = [
        target(f"{name}: every record exactly once", lost, limit="0", met=lost == 0)
    ]
    if least_of_q is not None:
        fraction = row["fraction_of_q"]
        found.append(
            target(
                f"{name}: throughput / Q",
                fraction,
                limit=f">= {least_of_q:g}",
                met=fraction >= least_of_q,
            )
        )
    if most_429 is not None:
        percent = row["percent_429"]
        found.append(
            target(
                f"{name}: 429s / requests (%)",
                percent,
                limit=f"<= {most_429:g}",
                met=percent <= most_429,
            )
        )
    return found
