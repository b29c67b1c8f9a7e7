"""The seven benchmark cases; each returns a JSON-ready dict with its figures and targets.

Every case runs against one mock process (see :mod:`bench._mock_process`), reset to
the size it needs. Compared variants run once to warm up, then alternate (in a
rotating order) over the repetitions, so drift on a shared machine hits all alike.

Example::

    with MockProcess() as mock:
        result = sequential(mock, SMOKE)
"""

from __future__ import annotations

import asyncio
import functools
import itertools
import json
import math
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import timeit
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import psutil  # type: ignore[import-untyped]  # no stubs installed

from service_api import Client, paginate
from service_api_client import AuthenticatedClient
from service_api_client.api.shipments import list_shipments
from service_api_client.models import ShipmentPage
from service_api_client.types import Unset

from . import _raw_httpx as raw
from ._measure import Sample, ameasure, measure, summary
from ._mock_process import ACCOUNT, CLIENT_ID, CLIENT_SECRET, MockProcess
from .mock_throughput import load as throughput_load

__all__ = [
    "FULL",
    "SMOKE",
    "TLS",
    "Sizes",
    "latency",
    "load",
    "memory",
    "mock_throughput",
    "overhead",
    "quota",
    "quota_worker",
    "sequential",
    "token_worker",
    "tokens",
]

_REPO = Path(__file__).resolve().parent.parent

TLS = httpx.create_ssl_context()
"""One TLS context for every client: the mock speaks plain HTTP, and building a context
(loading the CA bundle) costs a few hundred milliseconds per client on a busy machine."""


@dataclass(frozen=True)
class Sizes:
    """How big each case is; :data:`FULL` is what the issue asks, :data:`SMOKE` a quick check."""

    page_size: int = 50
    sequential_records: int = 20_000
    repetitions: int = 5
    latency_ms: float = 50.0
    latency_records: int = 10_000
    latency_repetitions: int = 2
    concurrencies: tuple[int, ...] = (1, 2, 4, 8, 16)
    memory_records: tuple[int, ...] = (20_000, 200_000)
    memory_concurrency: int = 8
    token_seconds: float = 30.0
    token_ttl: float = 3.0
    refresh_skew: float = 1.0
    token_workers: tuple[int, ...] = (1, 16, 64)
    overhead_calls: int = 300
    # Many short rounds: a per-call difference of tens of µs drowns in a noisy neighbour's
    # burst unless the variants alternate often.
    overhead_repetitions: int = 9
    throughput_seconds: float = 3.0
    throughput_connections: tuple[int, ...] = (1, 8)
    warmup: bool = True
    model_cost_loops: int = 20
    # case 7: Q per minute counted over a window scaled down in time (24 per 6 s), so
    # that 4 x 3,000 records (240 pages) take about a minute at Q.
    quota_per_minute: int = 240
    quota_window: float = 6.0
    quota_records: int = 3000
    quota_processes: int = 4
    quota_token_processes: tuple[int, ...] = (4, 16)
    quota_max_retries: int = 10
    # case 8: records per account, each size loaded twice by each contender.
    load_records: tuple[int, ...] = (10_000, 50_000)
    load_accounts: tuple[str, ...] = ("acct-1", "acct-2")


FULL = Sizes()
SMOKE = Sizes(
    sequential_records=120,
    repetitions=1,
    latency_ms=5.0,
    latency_records=150,
    latency_repetitions=1,
    concurrencies=(1, 2),
    memory_records=(100, 200),
    token_seconds=0.3,
    token_workers=(1, 4),
    overhead_calls=10,
    overhead_repetitions=1,
    throughput_seconds=0.2,
    warmup=False,
    model_cost_loops=2,
    quota_per_minute=6000,
    quota_window=1.0,
    quota_records=100,
    quota_processes=2,
    quota_token_processes=(2,),
    load_records=(100, 200),
)


def _client(mock: MockProcess, **kwargs: Any) -> Client:
    return Client(
        mock.base_url,
        CLIENT_ID,
        CLIENT_SECRET,
        ACCOUNT,
        httpx_args={"verify": TLS},
        **kwargs,
    )


def _rotated(names: Sequence[str], shift: int) -> list[str]:
    shift %= len(names)
    return [*names[shift:], *names[:shift]]


def _alternate(
    variants: dict[str, Callable[[], Sample]],
    sizes: Sizes,
    repetitions: int,
    warm_up: dict[str, Callable[[], Sample]] | None = None,
) -> dict[str, list[Sample]]:
    """One warm-up run of each variant (or of its shorter ``warm_up`` twin), then
    ``repetitions`` rounds in rotating order."""
    names = list(variants)
    if sizes.warmup:
        for name in names:
            (warm_up or variants)[name]()
    samples: dict[str, list[Sample]] = {name: [] for name in names}
    for round_ in range(repetitions):
        for name in _rotated(names, round_):
            samples[name].append(variants[name]())
    return samples


def _per_item(samples: list[Sample]) -> dict[str, Any]:
    items = samples[0]["items"]
    wall = summary([s["wall_s"] for s in samples])
    cpu = summary([s["cpu_s"] for s in samples])
    return {
        "items": items,
        "wall_s": wall,
        "cpu_s": cpu,
        "wall_us_per_item": wall["median"] / items * 1e6,
        "cpu_us_per_item": cpu["median"] / items * 1e6,
    }


def _target(name: str, measured: float, limit: str, met: bool) -> dict[str, Any]:
    return {"target": name, "measured": measured, "limit": limit, "met": met}


# ---- case 1: sequential iteration ----------------------------------------------------


def sequential(mock: MockProcess, sizes: Sizes) -> dict[str, Any]:
    """Raw httpx over dicts vs generated pages by hand vs ``paginate`` with ``for`` vs with
    ``async for`` (the variant still called ``apaginate``, so results compare across runs)."""
    mock.reset(records=sizes.sequential_records)
    size = sizes.page_size

    def raw_httpx(pages: int | None = None) -> Sample:
        with httpx.Client(verify=TLS) as http:
            return measure(
                lambda: raw.iterate_pages(
                    http, mock.base_url, page_size=size, max_pages=pages
                )
            )

    def by_hand(pages: int | None = None) -> Sample:
        def run() -> int:
            seen = 0
            number = 1
            while True:
                response = list_shipments.sync_detailed(
                    client=client, page_number=number, page_size=size
                )
                page = response.parsed
                assert isinstance(page, ShipmentPage)
                for item in page.data:
                    seen += 1 if item.shipment_id else 0
                if isinstance(page.next_, Unset) or not page.next_ or number == pages:
                    return seen
                number += 1

        with _client(mock) as client:
            return measure(run)

    def sync_paginate(pages: int | None = None) -> Sample:
        limit = None if pages is None else pages * size

        def run() -> int:
            seen = 0
            for item in paginate(
                list_shipments, client, page_size=size, max_items=limit
            ):
                seen += 1 if item.shipment_id else 0
            return seen

        with _client(mock) as client:
            return measure(run)

    def async_paginate(pages: int | None = None) -> Sample:
        limit = None if pages is None else pages * size

        async def main() -> Sample:
            async with _client(mock) as client:

                async def run() -> int:
                    seen = 0
                    async for item in paginate(
                        list_shipments, client, page_size=size, max_items=limit
                    ):
                        seen += 1 if item.shipment_id else 0
                    return seen

                return await ameasure(run)

        return asyncio.run(main())

    runners: dict[str, Callable[[int | None], Sample]] = {
        "raw_httpx": raw_httpx,
        "generated_by_hand": by_hand,
        "paginate": sync_paginate,
        "apaginate": async_paginate,
    }
    # Warming up needs a few pages, not the whole set: that would double the case's time.
    warm_pages = max(1, min(sizes.sequential_records // size, 20))
    mock_cpu0 = mock.cpu_seconds()
    samples = _alternate(
        {name: functools.partial(run, None) for name, run in runners.items()},
        sizes,
        sizes.repetitions,
        warm_up={
            name: functools.partial(run, warm_pages) for name, run in runners.items()
        },
    )
    mock_cpu = mock.cpu_seconds() - mock_cpu0
    pages = math.ceil(sizes.sequential_records / size)
    # Every run also authenticates once: count that as a page too.
    served = sizes.repetitions * len(samples) * (pages + 1)
    if sizes.warmup:
        served += len(samples) * (warm_pages + 1)
    variants = {name: _per_item(runs_) for name, runs_ in samples.items()}
    for name, result in variants.items():
        if result["items"] != sizes.sequential_records:
            raise RuntimeError(f"{name} saw {result['items']} records")

    def ratio(a: str, b: str, key: str) -> float:
        # Paired: each round runs every variant once, back to back, so the ratio within
        # a round cancels the machine's slower spells; the median of those ratios.
        pairs = zip(samples[a], samples[b], strict=True)
        return float(statistics.median(x[key] / y[key] for x, y in pairs))  # type: ignore[literal-required]

    ratios = {
        f"{a}/{b} {key[:-2]}": ratio(a, b, key)
        for a, b in (
            ("paginate", "generated_by_hand"),
            ("apaginate", "generated_by_hand"),
            ("generated_by_hand", "raw_httpx"),
            ("paginate", "raw_httpx"),
        )
        for key in ("wall_s", "cpu_s")
    }
    model_cost = _model_cost(mock, size, sizes.model_cost_loops)
    c_over_b = ratios["paginate/generated_by_hand wall"]
    return {
        "records": sizes.sequential_records,
        "pages": pages,
        "page_size": size,
        "repetitions": sizes.repetitions,
        "variants": variants,
        "ratios": ratios,
        "typed_model_cost": {
            "cpu_us_per_record_by_hand_minus_raw": (
                variants["generated_by_hand"]["cpu_us_per_item"]
                - variants["raw_httpx"]["cpu_us_per_item"]
            ),
            "from_dict_us_per_record": model_cost,
        },
        "mock_cpu_ms_per_page": mock_cpu / served * 1e3,
        "targets": [
            _target(
                "paginate within 1.10x of generated pages by hand (wall)",
                c_over_b,
                "<= 1.10",
                c_over_b <= 1.10,
            )
        ],
    }


def _model_cost(mock: MockProcess, size: int, loops: int) -> float:
    """Microseconds per record of ``ShipmentPage.from_dict`` alone, on a real page."""
    with httpx.Client(verify=TLS) as http:
        token = raw.fetch_token(http, mock.base_url)
        body = raw.get_page(http, mock.base_url, token, 1, size)
    timer = timeit.Timer(lambda: ShipmentPage.from_dict(body))
    best = min(timer.repeat(repeat=5, number=loops)) / loops
    return best / len(body["data"]) * 1e6


# ---- case 2: latency-bound, concurrency ------------------------------------------------


def latency(mock: MockProcess, sizes: Sizes) -> dict[str, Any]:
    """``paginate`` with ``for`` / ``async for`` at several concurrencies against the ideal
    time."""
    mock.reset(records=sizes.latency_records)
    mock.set_faults(latency_ms=sizes.latency_ms)
    pages = math.ceil(sizes.latency_records / sizes.page_size)
    seconds = sizes.latency_ms / 1000.0

    def sync_run(k: int) -> Sample:
        with _client(mock) as client:
            return measure(
                lambda: sum(
                    1
                    for _ in paginate(
                        list_shipments, client, page_size=sizes.page_size, concurrency=k
                    )
                )
            )

    def async_run(k: int) -> Sample:
        async def main() -> Sample:
            async with _client(mock) as client:

                async def run() -> int:
                    seen = 0
                    async for _ in paginate(
                        list_shipments, client, page_size=sizes.page_size, concurrency=k
                    ):
                        seen += 1
                    return seen

                return await ameasure(run)

        return asyncio.run(main())

    def generated_threads(k: int) -> Sample:
        # The generated client as one would thread it by hand: no checks, no repeat
        # window, each worker parsing its own page.
        def run() -> int:
            def fetch(number: int) -> ShipmentPage:
                response = list_shipments.sync_detailed(
                    client=client, page_number=number, page_size=sizes.page_size
                )
                assert isinstance(response.parsed, ShipmentPage)
                return response.parsed

            first = fetch(1)
            rest = raw.in_order(
                fetch, range(2, math.ceil(first.total_records / sizes.page_size) + 1), k
            )
            return sum(len(page.data) for page in itertools.chain([first], rest))

        with _client(mock) as client:
            return measure(run)

    def raw_threads(k: int) -> Sample:
        with httpx.Client(verify=TLS) as http:
            return measure(
                lambda: raw.iterate_pages_ahead(
                    http, mock.base_url, page_size=sizes.page_size, concurrency=k
                )
            )

    modes: dict[str, Callable[[int], Sample]] = {"sync": sync_run, "async": async_run}
    # Floors at k = 8 only (the k of the targets): what threads reach over the generated
    # client by hand, and over raw httpx and dicts, with the same pages in flight.
    floors: dict[str, Callable[[int], Sample]] = {
        "generated by hand, threads": generated_threads,
        "raw httpx, threads": raw_threads,
    }
    floor_k = 8 if 8 in sizes.concurrencies else max(sizes.concurrencies)
    variants: dict[str, Callable[[], Sample]] = {
        f"{mode} k={k}": functools.partial(run, k)
        for k in sizes.concurrencies
        for mode, run in modes.items()
    }
    variants |= {
        f"{mode} k={floor_k}": functools.partial(run, floor_k)
        for mode, run in floors.items()
    }
    # A full warm-up round at k=1 would cost pages x latency per mode: warm up at the
    # highest concurrency only, then alternate everything.
    top = max(sizes.concurrencies)
    if sizes.warmup:
        for mode in modes:
            variants[f"{mode} k={top}"]()
        for mode in floors:
            variants[f"{mode} k={floor_k}"]()
    samples: dict[str, list[Sample]] = {name: [] for name in variants}
    names = list(variants)
    for round_ in range(sizes.latency_repetitions):
        for name in _rotated(names, round_ * 2):
            samples[name].append(variants[name]())
    mock.set_faults(latency_ms=0.0)

    rows: dict[str, dict[str, Any]] = {}
    for mode in [*modes, *floors]:
        # The floors are compared with sync paginate at k = 1.
        base_mode = mode if mode in modes else "sync"
        base = (
            summary([s["wall_s"] for s in samples[f"{base_mode} k=1"]])["median"]
            if 1 in sizes.concurrencies
            else math.nan
        )
        for k in sizes.concurrencies if mode in modes else [floor_k]:
            runs = samples[f"{mode} k={k}"]
            walls = [s["wall_s"] for s in runs]
            if any(s["items"] != sizes.latency_records for s in runs):
                raise RuntimeError(f"{mode} k={k} saw the wrong number of records")
            stats = summary(walls)
            ideal = math.ceil(pages / k) * seconds
            rows[f"{mode} k={k}"] = {
                "mode": mode,
                "concurrency": k,
                "wall_s": stats,
                "cpu_s": summary([s["cpu_s"] for s in samples[f"{mode} k={k}"]]),
                "ideal_s": ideal,
                "client_cpu_ms_per_page": summary([s["cpu_s"] for s in runs])["median"]
                / pages
                * 1e3,
                "vs_ideal": stats["median"] / ideal,
                "speedup_vs_k1": base / stats["median"],
            }
    targets = []
    if 1 in sizes.concurrencies and 8 in sizes.concurrencies:
        for mode in modes:
            row = rows[f"{mode} k=8"]
            targets.append(
                _target(
                    f"{mode} k=8 at least 6x faster than k=1",
                    row["speedup_vs_k1"],
                    ">= 6",
                    row["speedup_vs_k1"] >= 6,
                )
            )
            targets.append(
                _target(
                    f"{mode} k=8 within 1.3x of ideal",
                    row["vs_ideal"],
                    "<= 1.3",
                    row["vs_ideal"] <= 1.3,
                )
            )
    return {
        "records": sizes.latency_records,
        "pages": pages,
        "latency_ms": sizes.latency_ms,
        "repetitions": sizes.latency_repetitions,
        "note": (
            "ideal = ceil(pages / k) x latency; the one token request (also delayed) is not in "
            f"it. The two floors at k = {floor_k} fetch the same pages as far ahead on "
            "threads: the generated client looped by hand (no checks), and raw httpx over "
            "dicts; their speed-up is against sync k = 1"
        ),
        "rows": rows,
        "targets": targets,
    }


# ---- case 3: memory ------------------------------------------------------------------


def memory(mock: MockProcess, sizes: Sizes) -> dict[str, Any]:
    """Peak RSS growth of a fresh process iterating N records at concurrency 8, with
    ``paginate`` and, for reference, with raw httpx fetching the same pages as far ahead.

    The reference shows what the allocator does on its own: glibc's heap creeps up with
    the number of ~70 KB bodies allocated and freed, whoever allocates them.
    """
    rows = []
    for records in sizes.memory_records:
        mock.reset(records=records)
        for variant in ("paginate", "raw_httpx"):
            completed = subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "bench._memory_probe",
                    mock.base_url,
                    str(records),
                    str(sizes.memory_concurrency),
                    variant,
                ],
                cwd=_REPO,
                capture_output=True,
                text=True,
                check=True,
                timeout=600,
            )
            row = json.loads(completed.stdout.strip().splitlines()[-1])
            if row["items"] != records:
                raise RuntimeError(f"{variant} saw {row['items']} of {records} records")
            rows.append(row)

    def growth(variant: str) -> list[float]:
        return [row["growth_mb"] for row in rows if row["variant"] == variant]

    ours, floor = growth("paginate"), growth("raw_httpx")
    largest = max(ours)
    flatness = ours[-1] - ours[0]
    beyond_floor = flatness - (floor[-1] - floor[0])
    return {
        "concurrency": sizes.memory_concurrency,
        "rows": rows,
        "growth_with_n_mb": {"paginate": flatness, "raw_httpx": floor[-1] - floor[0]},
        "targets": [
            _target(
                "peak RSS growth at most 30 MB (largest N)",
                largest,
                "<= 30 MB",
                largest <= 30,
            ),
            _target(
                "flat in N: growth(largest N) - growth(smallest N), beyond raw httpx's",
                beyond_floor,
                "<= 5 MB",
                beyond_floor <= 5,
            ),
        ],
    }


# ---- case 4: tokens under concurrent load ---------------------------------------------


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


def _count_delta(
    before: dict[str, dict[str, int]],
    after: dict[str, dict[str, int]],
    operation: str,
    status: str | None = None,
) -> int:
    def total(counts: dict[str, dict[str, int]]) -> int:
        by = counts.get(operation, {})
        return sum(by.values()) if status is None else by.get(status, 0)

    return total(after) - total(before)


def tokens(mock: MockProcess, sizes: Sizes) -> dict[str, Any]:
    """Worker threads share one client for a while; count /authenticate and 401s."""
    mock.reset(records=100, token_ttl=sizes.token_ttl)
    expected = sizes.token_seconds / (sizes.token_ttl - sizes.refresh_skew)
    rows: list[dict[str, Any]] = []
    targets = []
    for workers in sizes.token_workers:
        before = mock.counts()
        with _client(mock, refresh_skew=sizes.refresh_skew) as client:
            wall0 = time.perf_counter()
            outcomes = _hammer_with_threads(client, workers, sizes.token_seconds)
            wall = time.perf_counter() - wall0
        after = mock.counts()
        calls = sum(outcomes.values())
        failures = calls - outcomes.get("200", 0)
        authenticate = _count_delta(before, after, "authenticate")
        rows.append(
            {
                "workers": workers,
                "seconds": wall,
                "calls": calls,
                "calls_per_s": calls / wall,
                "authenticate_calls": authenticate,
                "expected_authenticate": expected,
                "server_401s": _count_delta(before, after, "listShipments", "401"),
                "caller_outcomes": dict(outcomes),
                "caller_401s": outcomes.get("401", 0),
                "caller_failures": failures,
            }
        )
        ratio = authenticate / expected
        targets.append(
            _target(
                f"{workers} workers: /authenticate calls / expected ({expected:.1f})",
                ratio,
                "0.8 .. 1.25",
                0.8 <= ratio <= 1.25,
            )
        )
        targets.append(
            _target(
                f"{workers} workers: 401s or other failures reaching the caller",
                failures,
                "0",
                failures == 0,
            )
        )
    return {
        "seconds": sizes.token_seconds,
        "token_ttl_s": sizes.token_ttl,
        "refresh_skew_s": sizes.refresh_skew,
        "expected_authenticate": expected,
        "note": "workers are threads sharing one sync Client; each call lists one record",
        "rows": rows,
        "targets": targets,
    }


# ---- case 5: per-call overhead --------------------------------------------------------


def overhead(mock: MockProcess, sizes: Sizes) -> dict[str, Any]:
    """One small page per call: raw httpx, generated client with a fixed token, the overlay."""
    mock.reset(records=100)
    calls = sizes.overhead_calls

    def timed_calls(call: Callable[[], object]) -> Sample:
        def run() -> int:
            for _ in range(calls):
                call()
            return calls

        return measure(run)

    def raw_httpx() -> Sample:
        with httpx.Client(verify=TLS) as http:
            token = raw.fetch_token(http, mock.base_url)
            return timed_calls(lambda: raw.get_page(http, mock.base_url, token, 1, 1))

    def generated() -> Sample:
        with httpx.Client(verify=TLS) as http:
            token = raw.fetch_token(http, mock.base_url)
        with AuthenticatedClient(
            base_url=mock.base_url,
            token=token,
            headers={"x-service-account-id": ACCOUNT},
            verify_ssl=TLS,
        ) as client:
            return timed_calls(
                lambda: list_shipments.sync_detailed(client=client, page_size=1)
            )

    def overlay() -> Sample:
        with _client(mock) as client:
            list_shipments.sync_detailed(
                client=client, page_size=1
            )  # the token, outside
            return timed_calls(
                lambda: list_shipments.sync_detailed(client=client, page_size=1)
            )

    async def araw() -> Sample:
        async with httpx.AsyncClient(verify=TLS) as http:
            token = await raw.afetch_token(http, mock.base_url)

            async def run() -> int:
                for _ in range(calls):
                    await raw.aget_page(http, mock.base_url, token, 1, 1)
                return calls

            return await ameasure(run)

    async def aoverlay() -> Sample:
        async with _client(mock) as client:
            await list_shipments.asyncio_detailed(client=client, page_size=1)

            async def run() -> int:
                for _ in range(calls):
                    await list_shipments.asyncio_detailed(client=client, page_size=1)
                return calls

            return await ameasure(run)

    samples = _alternate(
        {
            "raw_httpx": raw_httpx,
            "generated_fixed_token": generated,
            "overlay": overlay,
            "raw_httpx_async": lambda: asyncio.run(araw()),
            "overlay_async": lambda: asyncio.run(aoverlay()),
        },
        sizes,
        sizes.overhead_repetitions,
    )
    variants = {}
    for name, runs in samples.items():
        result = _per_item(runs)
        variants[name] = {
            "calls": calls,
            "wall_us_per_call": result["wall_us_per_item"],
            "cpu_us_per_call": result["cpu_us_per_item"],
            "wall_s": result["wall_s"],
            "cpu_s": result["cpu_s"],
        }

    def diff(a: str, b: str, key: str) -> float:
        value: float = variants[a][key] - variants[b][key]
        return value

    return {
        "page_size": 1,
        "calls_per_run": calls,
        "repetitions": sizes.overhead_repetitions,
        "variants": variants,
        "overhead_us": {
            "overlay - raw (sync, cpu)": diff(
                "overlay", "raw_httpx", "cpu_us_per_call"
            ),
            "overlay - raw (sync, wall)": diff(
                "overlay", "raw_httpx", "wall_us_per_call"
            ),
            "generated - raw (sync, cpu)": diff(
                "generated_fixed_token", "raw_httpx", "cpu_us_per_call"
            ),
            "overlay - generated (sync, cpu)": diff(
                "overlay", "generated_fixed_token", "cpu_us_per_call"
            ),
            "overlay - raw (async, cpu)": diff(
                "overlay_async", "raw_httpx_async", "cpu_us_per_call"
            ),
            "overlay - raw (async, wall)": diff(
                "overlay_async", "raw_httpx_async", "wall_us_per_call"
            ),
        },
        "targets": [],
    }


# ---- case 6: the mock's own throughput ------------------------------------------------


def mock_throughput(mock: MockProcess, sizes: Sizes) -> dict[str, Any]:
    """Requests per second the mock serves for a 50-record page, and its CPU per request.

    The load itself is :func:`bench.mock_throughput.load`; this adds the mock's CPU time.
    """
    mock.reset(records=1000)
    server = psutil.Process(mock.pid)
    rows = []
    for connections in sizes.throughput_connections:
        cpu0 = sum(server.cpu_times()[:2])
        ok, failed, wall = asyncio.run(
            throughput_load(mock.base_url, sizes.throughput_seconds, connections)
        )
        cpu = sum(server.cpu_times()[:2]) - cpu0
        rows.append(
            {
                "connections": connections,
                "requests": ok,
                "failed": failed,
                "requests_per_s": ok / wall,
                "mock_cpu_ms_per_request": cpu / max(ok, 1) * 1e3,
                "mock_cpu_utilisation": cpu / wall,
                # What one core could serve if the mock were the only limit.
                "mock_cpu_bound_requests_per_s": ok / cpu if cpu > 0 else math.inf,
            }
        )
    return {"page_size": 50, "rows": rows, "targets": []}


# ---- case 7: the quota shared by worker processes ------------------------------------


def _redis_for_bench(
    directory: Path, port: int = 0
) -> tuple[subprocess.Popen[bytes] | None, str | None]:
    """A throw-away ``redis-server`` on a free loopback port (or ``port``), or why there is
    none."""
    import shutil
    import socket

    executable = shutil.which("redis-server")
    if executable is None:
        return None, None
    if not port:
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            port = sock.getsockname()[1]
    process = subprocess.Popen(
        [
            executable,
            "--bind",
            "127.0.0.1",
            "--port",
            str(port),
            "--save",
            "",
            "--appendonly",
            "no",
            "--dir",
            str(directory),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"redis://127.0.0.1:{port}/0"
    import redis

    deadline = time.monotonic() + 10
    while True:
        try:
            with redis.Redis.from_url(url, socket_connect_timeout=0.2) as connection:
                connection.ping()
            return process, url
        except redis.ConnectionError:
            if time.monotonic() > deadline or process.poll() is not None:
                process.kill()
                process.wait()
                return None, None
            time.sleep(0.02)


def _stop_and_restart(
    process: subprocess.Popen[bytes] | None,
    url: str | None,
    workdir: Path,
    mock: MockProcess,
    pages: int,
    futures: list[Any],
) -> subprocess.Popen[bytes] | None:
    """Stop the shared Redis a quarter into the run (pages the mock served), start it
    again, empty, on the same port half-way: the processes go on alone at their share,
    then rejoin."""
    assert process is not None
    assert url is not None

    served_before = mock.count("listShipments", 200)  # the mock counts since it started

    def served(share: float) -> None:
        while mock.count("listShipments", 200) - served_before < share * pages:
            if all(f.done() for f in futures):
                return
            time.sleep(0.05)

    served(0.25)
    process.terminate()
    process.wait(timeout=10)
    served(0.5)
    restarted, _ = _redis_for_bench(workdir, int(url.rsplit(":", 1)[1].split("/")[0]))
    return restarted


def quota_worker(
    base_url: str, account: str, options: dict[str, Any], max_retries: int, start: Any
) -> dict[str, Any]:
    """One worker process: export every shipment of ``account``; what it got, and when.

    Module-level so that ``spawn`` can import it; ``start`` is a manager's barrier so
    that every worker begins at once, each in its own process.
    """
    from service_api import RetryPolicy

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


def token_worker(base_url: str, options: dict[str, Any], start: Any) -> int:
    """One worker process of the shared-token runs: list one page after the others start."""
    with Client(base_url, CLIENT_ID, CLIENT_SECRET, ACCOUNT, **options) as client:
        start.wait(timeout=120)
        page = list_shipments.sync(client=client, page_size=1)
        assert isinstance(page, ShipmentPage)
        return len(page.data)


def quota(mock: MockProcess, sizes: Sizes) -> dict[str, Any]:
    """Worker processes of one integration export their accounts under the mock's quota.

    For each way of pacing (none, a fixed limit per process, one shared through SQLite
    or Redis, adaptive in each process, learned once and shared through SQLite or Redis,
    and that with Redis stopped a quarter into the run and back, empty, a quarter
    later): throughput as a fraction of the quota, 429s, and whether every
    record arrived exactly once. Then /authenticate calls with and without a shared token.
    """
    import multiprocessing
    import tempfile
    from concurrent.futures import ProcessPoolExecutor

    processes = sizes.quota_processes
    accounts = [f"acct-{i + 1}" for i in range(processes)]
    q = sizes.quota_per_minute
    fixed = 0.95 * q  # what each process is told: the known quota less 5 %
    context = multiprocessing.get_context("spawn")
    workdir = Path(tempfile.mkdtemp(prefix="bench-quota-"))
    redis_process, redis_url = _redis_for_bench(workdir)
    variants: dict[str, dict[str, Any] | None] = {
        "no limiter": {"rate_limit": None},
        "fixed per process": {"rate_limit": fixed},
        "shared SQLite": {
            "rate_limit": fixed,
            "rate_store": f"sqlite://{workdir}/quota.db",
        },
        "shared Redis": (
            {"rate_limit": fixed, "rate_store": redis_url}
            if redis_url is not None
            else None
        ),
        "adaptive": {"rate_limit": "adaptive"},
        "learned, shared SQLite": {
            "rate_limit": "adaptive",
            "rate_store": f"sqlite://{workdir}/learned.db",
        },
        "learned, shared Redis": (
            {"rate_limit": "adaptive", "rate_store": redis_url}
            if redis_url is not None
            else None
        ),
        "learned, Redis stopped mid-run": (
            {"rate_limit": "adaptive", "rate_store": redis_url}
            if redis_url is not None
            else None
        ),
    }
    rows: list[dict[str, Any]] = []
    token_rows: list[dict[str, Any]] = []
    clients = {CLIENT_ID: [CLIENT_SECRET, accounts]}
    try:
        with context.Manager() as manager:
            with ProcessPoolExecutor(processes, mp_context=context) as pool:
                for name, options in variants.items():
                    if options is None:
                        rows.append(
                            {"variant": name, "skipped": "redis-server not installed"}
                        )
                        continue
                    # Reset without the quota (the reset fetches a page), then switch it on.
                    mock.reset(
                        records=sizes.quota_records, clients=clients, accounts=accounts
                    )
                    mock.set_faults(rate_limit=q, rate_window=sizes.quota_window)
                    if redis_url is not None:  # every variant learns from nothing
                        import redis

                        with redis.Redis.from_url(redis_url) as connection:
                            connection.flushdb()
                    before = mock.counts()
                    start = manager.Barrier(processes)
                    futures = [
                        pool.submit(
                            quota_worker,
                            mock.base_url,
                            account,
                            options,
                            sizes.quota_max_retries,
                            start,
                        )
                        for account in accounts
                    ]
                    if name.endswith("stopped mid-run"):
                        total_pages = processes * math.ceil(sizes.quota_records / 50)
                        redis_process = _stop_and_restart(
                            redis_process,
                            redis_url,
                            workdir,
                            mock,
                            total_pages,
                            futures,
                        )
                    workers = [f.result(timeout=1800) for f in futures]
                    after = mock.counts()
                    rows.append(
                        _quota_row(name, options, workers, before, after, sizes)
                    )
            for count in sizes.quota_token_processes:
                with ProcessPoolExecutor(count, mp_context=context) as pool:
                    stores = {
                        "none": None,
                        "file": f"file://{workdir}/token-{count}.json",
                    }
                    if redis_url is not None:
                        stores["Redis"] = redis_url
                    for store_name, store in stores.items():
                        mock.reset(records=50, clients=clients)
                        if store is not None and store.startswith("redis"):
                            import redis

                            with redis.Redis.from_url(store) as connection:
                                connection.flushdb()
                        before = mock.counts()
                        start = manager.Barrier(count)
                        options = {"rate_limit": None, "token_store": store}
                        pages = [
                            pool.submit(token_worker, mock.base_url, options, start)
                            for _ in range(count)
                        ]
                        listed = [f.result(timeout=600) for f in pages]
                        after = mock.counts()
                        token_rows.append(
                            {
                                "processes": count,
                                "token_store": store_name,
                                "authenticate_calls": _count_delta(
                                    before, after, "authenticate"
                                ),
                                "pages_listed": sum(1 for n in listed if n == 1),
                            }
                        )
    finally:
        if redis_process is not None:
            redis_process.terminate()
            redis_process.wait(timeout=10)
        import shutil

        shutil.rmtree(workdir, ignore_errors=True)
    targets = []
    for row in rows:
        if "skipped" in row:
            continue
        targets.append(
            _target(
                f"{row['variant']}: every record exactly once",
                row["lost_or_duplicated"],
                "0",
                row["lost_or_duplicated"] == 0,
            )
        )
        if row["variant"] in ("shared SQLite", "shared Redis", "adaptive"):
            targets.append(
                _target(
                    f"{row['variant']}: throughput / Q",
                    row["fraction_of_q"],
                    ">= 0.9",
                    row["fraction_of_q"] >= 0.9,
                )
            )
            targets.append(
                _target(
                    f"{row['variant']}: 429s / requests (%)",
                    row["percent_429"],
                    "<= 1",
                    row["percent_429"] <= 1.0,
                )
            )
        elif row["variant"].startswith(
            "learned"
        ):  # from nothing: the first burst costs
            most = 3.0 if row["variant"].endswith("mid-run") else 2.0
            if not row["variant"].endswith("mid-run"):
                targets.append(
                    _target(
                        f"{row['variant']}: throughput / Q",
                        row["fraction_of_q"],
                        ">= 0.9",
                        row["fraction_of_q"] >= 0.9,
                    )
                )
            targets.append(
                _target(
                    f"{row['variant']}: 429s / requests (%)",
                    row["percent_429"],
                    f"<= {most:g}",
                    row["percent_429"] <= most,
                )
            )
    for row in token_rows:
        if row["token_store"] != "none":  # noqa: S105 -- a store's name, not a password
            targets.append(
                _target(
                    f"{row['processes']} processes, {row['token_store']} token: /authenticate",
                    row["authenticate_calls"],
                    "1",
                    row["authenticate_calls"] == 1,
                )
            )
    return {
        "quota_per_minute": q,
        "quota_window_s": sizes.quota_window,
        "processes": processes,
        "records_per_account": sizes.quota_records,
        "fixed_per_process": fixed,
        "max_retries": sizes.quota_max_retries,
        "rows": rows,
        "token_rows": token_rows,
        "targets": targets,
    }


def _quota_row(
    name: str,
    options: dict[str, Any],
    workers: list[dict[str, Any]],
    before: dict[str, dict[str, int]],
    after: dict[str, dict[str, int]],
    sizes: Sizes,
) -> dict[str, Any]:
    wall = max(w["ended"] for w in workers) - min(w["started"] for w in workers)
    accepted = _count_delta(before, after, "listShipments", "200") + _count_delta(
        before, after, "authenticate", "200"
    )
    requests = _count_delta(before, after, "listShipments") + _count_delta(
        before, after, "authenticate"
    )
    refused = _count_delta(before, after, "listShipments", "429") + _count_delta(
        before, after, "authenticate", "429"
    )
    lost = sum(
        abs(sizes.quota_records - w["unique"]) + (w["records"] - w["unique"])
        for w in workers
    )
    return {
        "variant": name,
        "options": {k: v for k, v in options.items() if k != "rate_store"},
        "wall_s": wall,
        "requests": requests,
        "accepted": accepted,
        "refused_429": refused,
        "percent_429": 100.0 * refused / max(requests, 1),
        "accepted_per_minute": accepted / wall * 60.0,
        "fraction_of_q": accepted / wall * 60.0 / sizes.quota_per_minute,
        "records": sum(w["records"] for w in workers),
        "lost_or_duplicated": lost,
        "errors": [w["error"] for w in workers if w["error"]],
    }


# ---- case 8: loading into DuckDB ------------------------------------------------------


def _load_rows(database: Path) -> int:
    import duckdb

    with duckdb.connect(str(database), read_only=True) as connection:
        row = connection.execute("select count(*) from raw.shipments").fetchone()
    return int(row[0]) if row else 0


def load(mock: MockProcess, sizes: Sizes) -> dict[str, Any]:
    """``service-api load shipments`` for two accounts, beside the floor (``service-api
    list`` to JSONL, then DuckDB's ``read_json_auto``) and dlt's ``rest_api`` source
    configured by hand for this API, each loading twice into its own DuckDB file in a
    fresh process per run: wall time, peak RSS (the kernel's high-water mark), rows.
    """
    from ._load_probe import CONTENDERS, DATABASE

    accounts = list(sizes.load_accounts)
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="bench-load-") as scratch:
        for size, records in enumerate(sizes.load_records):
            mock.reset(records=records, accounts=accounts)
            for contender in _rotated(CONTENDERS, size):
                work = Path(scratch) / f"{contender}-{records}"
                for run in (1, 2):
                    completed = subprocess.run(
                        [
                            sys.executable,
                            "-m",
                            "bench._load_probe",
                            contender,
                            mock.base_url,
                            str(work),
                            *accounts,
                        ],
                        cwd=_REPO,
                        capture_output=True,
                        text=True,
                        check=False,
                        timeout=1800,
                    )
                    if completed.returncode != 0:
                        raise RuntimeError(
                            f"{contender} failed: {completed.stderr[-2000:]}"
                        )
                    row = json.loads(completed.stdout.strip().splitlines()[-1])
                    expected = records * len(accounts)
                    row.update(
                        records=expected, run=run, rows=_load_rows(work / DATABASE)
                    )
                    rows.append(row)

    def first(contender: str, records: int) -> dict[str, Any]:
        total = records * len(accounts)
        return next(
            r
            for r in rows
            if r["contender"] == contender and r["records"] == total and r["run"] == 1
        )

    small, large = min(sizes.load_records), max(sizes.load_records)
    ours, floor = first("service_api", large), first("floor", large)
    ratio = ours["wall_s"] / floor["wall_s"]
    cpu_ratio = ours["cpu_s"] / floor["cpu_s"]
    peak = max(r["peak_rss_mb"] for r in rows if r["contender"] == "service_api")
    growth = peak - max(
        r["peak_rss_mb"]
        for r in rows
        if r["contender"] == "service_api" and r["records"] == small * len(accounts)
    )
    exact = all(
        r["rows"] == r["records"] for r in rows if r["contender"] == "service_api"
    )
    return {
        "accounts": accounts,
        "rows": rows,
        "ratio_to_floor": ratio,
        "cpu_ratio_to_floor": cpu_ratio,
        "targets": [
            _target(
                "load / floor, largest size (first load)",
                ratio,
                "<= 2.0 (stretch 1.5)",
                ratio <= 2.0,
            ),
            _target(
                "peak RSS of the load, largest size (MB)",
                peak,
                "<= 400 MB",
                peak <= 400,
            ),
            _target(
                "peak RSS, largest minus smallest size (MB)",
                growth,
                "<= 50 MB",
                growth <= 50,
            ),
            _target(
                "rows = records after a first and a second load",
                float(exact),
                "1 (true)",
                exact,
            ),
        ],
    }
