"""How big each benchmark case is: :data:`FULL` is what the issues ask, :data:`SMOKE` a
check, in a few seconds, that the harness still works.

Example::

    SMOKE.sequential_records  # 120
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["FULL", "SMOKE", "Sizes"]


@dataclass(frozen=True)
class Sizes:
    """The size of every case, in one place (``run.py`` picks :data:`FULL` or :data:`SMOKE`)."""

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
    # Cases 7 and 7b: Q per minute counted over a window scaled down in time (24 per 6 s),
    # so that 4 x 3,000 records (240 pages) take about a minute at Q.
    quota_per_minute: int = 240
    quota_window: float = 6.0
    quota_records: int = 3000
    quota_processes: int = 4
    quota_token_processes: tuple[int, ...] = (4, 16)
    quota_max_retries: int = 10
    # Case 8: records per account, each size loaded twice by each contender.
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
    load_records=(100,),  # one size: the harness runs, the growth is not measured
)
