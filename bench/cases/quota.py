"""Case 7: worker processes of one integration export their accounts under the mock's
quota, paced in each way the client offers; then /authenticate calls with and without a
shared token.

Example::

    with MockProcess() as mock:
        result = run(mock, SMOKE)
"""

from __future__ import annotations

import multiprocessing
from concurrent.futures import ProcessPoolExecutor
from typing import Any

from service_api import Client
from service_api_client.api.shipments import list_shipments
from service_api_client.models import ShipmentPage

from .._measure import count_delta, target
from .._mock_process import ACCOUNT, CLIENT_ID, CLIENT_SECRET, MockProcess
from .._quota_runs import Options, QuotaRuns, quota_runs, row_targets
from .._sizes import Sizes

__all__ = ["run", "token_worker"]


def _variants(runs: QuotaRuns) -> dict[str, Options | None]:
    """Each way of pacing, by name; ``None``: it needs the Redis server, not installed."""
    fixed = 0.95 * runs.sizes.quota_per_minute  # the known quota less 5 %
    sqlite = f"sqlite://{runs.workdir}"
    variants: dict[str, Options | None] = {
        "no limiter": {"rate_limit": None},
        "fixed per process": {"rate_limit": fixed},
        "shared SQLite": {"rate_limit": fixed, "rate_store": f"{sqlite}/quota.db"},
        "shared Redis": None,
        "adaptive": {"rate_limit": "adaptive"},
        "learned, shared SQLite": {
            "rate_limit": "adaptive",
            "rate_store": f"{sqlite}/learned.db",
        },
        "learned, shared Redis": None,
    }
    if runs.redis is not None:
        variants["shared Redis"] = {"rate_limit": fixed, "rate_store": runs.redis.url}
        variants["learned, shared Redis"] = {
            "rate_limit": "adaptive",
            "rate_store": runs.redis.url,
        }
    return variants


def token_worker(base_url: str, options: Options, start: Any) -> int:
    """One worker process of the shared-token runs: list one page after the others
    start (module-level, so that ``spawn`` can import it)."""
    with Client(base_url, CLIENT_ID, CLIENT_SECRET, ACCOUNT, **options) as client:
        start.wait(timeout=120)
        page = list_shipments.sync(client=client, page_size=1)
        assert isinstance(page, ShipmentPage)
        return len(page.data)


def _token_rows(runs: QuotaRuns) -> list[dict[str, Any]]:
    """/authenticate calls when every process lists one page at once, with no token
    store, a file and Redis."""
    context = multiprocessing.get_context("spawn")
    rows = []
    for count in runs.sizes.quota_token_processes:
        stores = {"none": None, "file": f"file://{runs.workdir}/token-{count}.json"}
        if runs.redis is not None:
            stores["Redis"] = runs.redis.url
        with ProcessPoolExecutor(count, mp_context=context) as pool:
            for name, store in stores.items():
                clients = {CLIENT_ID: [CLIENT_SECRET, runs.accounts]}
                runs.mock.reset(records=50, clients=clients)
                if runs.redis is not None:
                    runs.redis.flush()
                before = runs.mock.counts()
                start = runs.manager.Barrier(count)
                options = {"rate_limit": None, "token_store": store}
                pages = [
                    pool.submit(token_worker, runs.mock.base_url, options, start)
                    for _ in range(count)
                ]
                listed = [future.result(timeout=600) for future in pages]
                after = runs.mock.counts()
                authenticate = count_delta(before, after, "authenticate")
                rows.append(
                    {
                        "processes": count,
                        "token_store": name,
                        "authenticate_calls": authenticate,
                        "pages_listed": sum(1 for n in listed if n == 1),
                    }
                )
    return rows


def _targets(
    rows: list[dict[str, Any]], token_rows: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    found = []
    for row in rows:
        name = row["variant"]
        if "skipped" in row:
            continue
        if name in ("shared SQLite", "shared Redis", "adaptive"):
            found += row_targets(row, most_429=1.0, least_of_q=0.9)
        elif name.startswith("learned"):  # from nothing: the first burst costs
            found += row_targets(row, most_429=2.0, least_of_q=0.9)
        else:
            found += row_targets(row, most_429=None, least_of_q=None)
    for row in token_rows:
        if row["token_store"] == "none":  # noqa: S105 -- a store's name, not a password
            continue
        calls = row["authenticate_calls"]
        name = (
            f"{row['processes']} processes, {row['token_store']} token: /authenticate"
        )
        found.append(target(name, calls, limit="1", met=calls == 1))
    return found


def run(mock: MockProcess, sizes: Sizes) -> dict[str, Any]:
    """Throughput as a fraction of the quota, 429s and whether every record arrived
    exactly once, for each way of pacing: none, a fixed limit per process, one shared
    through SQLite or Redis, adaptive in each process, learned once and shared through
    SQLite or Redis. Then /authenticate calls with and without a shared token."""
    rows: list[dict[str, Any]] = []
    with quota_runs(mock, sizes) as runs:
        for name, options in _variants(runs).items():
            if options is None:
                rows.append({"variant": name, "skipped": "redis-server not installed"})
            else:
                rows.append(runs.variant(name, options))
        token_rows = _token_rows(runs)
    return {
        "quota_per_minute": sizes.quota_per_minute,
        "quota_window_s": sizes.quota_window,
        "processes": sizes.quota_processes,
        "records_per_account": sizes.quota_records,
        "fixed_per_process": 0.95 * sizes.quota_per_minute,
        "max_retries": sizes.quota_max_retries,
        "rows": rows,
        "token_rows": token_rows,
        "targets": _targets(rows, token_rows),
    }
