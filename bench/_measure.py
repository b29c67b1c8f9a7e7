"""Timing a run, summarising repeated runs with the standard ``statistics`` module, and
alternating the variants a case compares.

Example::

    sample = measure(lambda: sum(range(10**6)))
    summary([0.9, 1.0, 1.2])["median"]  # 1.0
"""

from __future__ import annotations

import gc
import statistics
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, TypedDict

__all__ = [
    "Sample",
    "Summary",
    "alternate",
    "ameasure",
    "count_delta",
    "measure",
    "per_item",
    "rotated",
    "summary",
    "target",
]


class Sample(TypedDict):
    """One timed run: wall seconds, this process's CPU seconds, and how many items it saw."""

    wall_s: float
    cpu_s: float
    items: int


class Summary(TypedDict):
    """Median and spread of repeated measurements (quartiles need two or more)."""

    n: int
    median: float
    min: float
    max: float
    q1: float
    q3: float


def measure(run: Callable[[], int]) -> Sample:
    """Time ``run``; ``time.process_time`` counts every thread of this process only.

    The heap is collected first, so that no run pays for the garbage of the one before.
    """
    gc.collect()
    wall0 = time.perf_counter()
    cpu0 = time.process_time()
    items = run()
    return Sample(
        wall_s=time.perf_counter() - wall0,
        cpu_s=time.process_time() - cpu0,
        items=items,
    )


async def ameasure(run: Callable[[], Awaitable[int]]) -> Sample:
    """Time the coroutine ``run()`` inside an already running event loop, after a
    collection as :func:`measure` does."""
    gc.collect()
    wall0 = time.perf_counter()
    cpu0 = time.process_time()
    items = await run()
    return Sample(
        wall_s=time.perf_counter() - wall0,
        cpu_s=time.process_time() - cpu0,
        items=items,
    )


def summary(values: Sequence[float]) -> Summary:
    """Median, min, max and quartiles of ``values`` (at least one)."""
    q1 = values[0]
    q3 = values[0]
    if len(values) >= 2:
        q1, _, q3 = statistics.quantiles(values, n=4, method="inclusive")
    return Summary(
        n=len(values),
        median=statistics.median(values),
        min=min(values),
        max=max(values),
        q1=q1,
        q3=q3,
    )


def rotated(names: Sequence[str], shift: int) -> list[str]:
    """``names`` starting at position ``shift`` (modulo their number), wrapping round."""
    shift %= len(names)
    return [*names[shift:], *names[:shift]]


def alternate(
    variants: Mapping[str, Callable[[], Sample]],
    repetitions: int,
    *,
    warm_up: Mapping[str, Callable[[], Sample]] | None,
    step: int = 1,
) -> dict[str, list[Sample]]:
    """Run each of ``warm_up`` once (a shorter twin of each variant, the variants
    themselves, or ``None``: no warm-up), then ``repetitions`` rounds of every variant,
    each round starting ``step`` further along, so that drift on a shared machine hits
    them all alike."""
    for run in (warm_up or {}).values():
        run()
    names = list(variants)
    samples: dict[str, list[Sample]] = {name: [] for name in names}
    for round_number in range(repetitions):
        for name in rotated(names, round_number * step):
            samples[name].append(variants[name]())
    return samples


def per_item(samples: list[Sample]) -> dict[str, Any]:
    """Median and spread of the wall and CPU times of ``samples``, and per item."""
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


def target(name: str, measured: float, *, limit: str, met: bool) -> dict[str, Any]:
    """One row of the results' targets table."""
    return {"target": name, "measured": measured, "limit": limit, "met": met}


def count_delta(
    before: dict[str, dict[str, int]],
    after: dict[str, dict[str, int]],
    operation: str,
    status: str | None = None,
) -> int:
    """Requests of ``operation`` (of one ``status``, or all) the mock answered between two
    of its counts."""

    def total(counts: dict[str, dict[str, int]]) -> int:
        by_status = counts.get(operation, {})
        if status is None:
            return sum(by_status.values())
        return by_status.get(status, 0)

    return total(after) - total(before)
