"""Wall time of ``paginate`` / ``apaginate`` at several concurrencies against the ideal.

The mock runs in its own process with a fixed latency per request; the ideal time of
``concurrency = k`` is ``ceil(pages / k) * latency``: every round of k pages costs one
latency, nothing else. Not a test: ``python -m bench.pagination_concurrency``.

Example::

    from bench.pagination_concurrency import measure_concurrency

    for row in measure_concurrency(records=2_000, latency_ms=20, concurrencies=(1, 4)):
        print(row.twin, row.concurrency, row.seconds, row.ratio_to_ideal)
"""

from __future__ import annotations

import argparse
import asyncio
import math
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass

import httpx

from service_api import Client, apaginate, paginate
from service_api_client.api.shipments import list_shipments

from ._mock_process import ACCOUNT, CLIENT_ID, CLIENT_SECRET, MockProcess

__all__ = ["ConcurrencyResult", "measure_concurrency"]


@dataclass(frozen=True)
class ConcurrencyResult:
    """One timed iteration over every record."""

    twin: str  # "sync" (threads), "async" (tasks) or "raw" (plain httpx, the floor)
    concurrency: int
    pages: int
    items: int
    seconds: float
    ideal_seconds: float
    ratio_to_ideal: float
    speedup: float  # over concurrency 1 of the same twin


def _sync_run(base_url: str, page_size: int, concurrency: int) -> int:
    with Client(base_url, CLIENT_ID, CLIENT_SECRET, ACCOUNT) as client:
        return sum(
            1
            for _ in paginate(list_shipments, client, page_size=page_size, concurrency=concurrency)
        )


def _raw_run(base_url: str, token: str, page_size: int, concurrency: int, pages: int) -> int:
    """The floor: plain httpx and ``json()``, pages on ``concurrency`` threads; no
    models, no checks. What is left above it is the client's and the models' CPU time."""
    headers = {"Authorization": f"Bearer {token}", "x-service-account-id": ACCOUNT}
    with httpx.Client(base_url=base_url, headers=headers) as http:

        def fetch(number: int) -> int:
            response = http.get("/shipments", params={"pageNumber": number, "pageSize": page_size})
            response.raise_for_status()
            return len(response.json()["data"])

        with ThreadPoolExecutor(max_workers=concurrency) as pool:
            return sum(pool.map(fetch, range(1, pages + 1)))


async def _async_run(base_url: str, page_size: int, concurrency: int) -> int:
    async with Client(base_url, CLIENT_ID, CLIENT_SECRET, ACCOUNT) as client:
        count = 0
        async for _ in apaginate(
            list_shipments, client, page_size=page_size, concurrency=concurrency
        ):
            count += 1
        return count


def measure_concurrency(
    *,
    records: int = 10_000,
    latency_ms: float = 50.0,
    page_size: int = 50,
    concurrencies: Sequence[int] = (1, 4, 8),
    twins: Sequence[str] = ("sync", "async", "raw"),
) -> list[ConcurrencyResult]:
    """Time a full iteration per twin and concurrency; the token fetch is done before
    the clock starts (one warm-up page), so only paging is timed."""
    pages = math.ceil(records / page_size)
    results: list[ConcurrencyResult] = []
    with MockProcess() as mock:
        mock.reset(records=records)
        mock.set_faults(latency_ms=latency_ms)
        token = mock.fetch_token()
        for twin in twins:
            base: float | None = None
            for k in concurrencies:
                started = time.perf_counter()
                if twin == "sync":
                    items = _sync_run(mock.base_url, page_size, k)
                elif twin == "raw":
                    items = _raw_run(mock.base_url, token, page_size, k, pages)
                else:
                    items = asyncio.run(_async_run(mock.base_url, page_size, k))
                seconds = time.perf_counter() - started
                if items != records:
                    raise RuntimeError(f"{twin} k={k}: {items} items, expected {records}")
                ideal = math.ceil(pages / k) * latency_ms / 1000
                base = seconds if base is None else base
                results.append(
                    ConcurrencyResult(
                        twin=twin,
                        concurrency=k,
                        pages=pages,
                        items=items,
                        seconds=round(seconds, 3),
                        ideal_seconds=round(ideal, 3),
                        ratio_to_ideal=round(seconds / ideal, 3),
                        speedup=round(base / seconds, 2),
                    )
                )
    return results


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=10_000)
    parser.add_argument("--latency-ms", type=float, default=50.0)
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 4, 8])
    args = parser.parse_args()
    rows = measure_concurrency(
        records=args.records, latency_ms=args.latency_ms, concurrencies=args.concurrency
    )
    print(
        f"{'twin':6} {'k':>3} {'pages':>6} {'seconds':>8} {'ideal':>7} {'ratio':>6} {'speedup':>7}"
    )
    for row in rows:
        r = asdict(row)
        print(
            f"{r['twin']:6} {r['concurrency']:>3} {r['pages']:>6} {r['seconds']:>8.2f} "
            f"{r['ideal_seconds']:>7.2f} {r['ratio_to_ideal']:>6.2f} {r['speedup']:>7.2f}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
