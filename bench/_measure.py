"""Timing a run and summarising repeated runs with the standard ``statistics`` module.

Example::

    sample = measure(lambda: sum(range(10**6)))
    summary([0.9, 1.0, 1.2])["median"]  # 1.0
"""

from __future__ import annotations

import gc
import statistics
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import TypedDict

__all__ = ["Sample", "Summary", "ameasure", "measure", "summary"]


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
    wall0, cpu0 = time.perf_counter(), time.process_time()
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
    wall0, cpu0 = time.perf_counter(), time.process_time()
    items = await run()
    return Sample(
        wall_s=time.perf_counter() - wall0,
        cpu_s=time.process_time() - cpu0,
        items=items,
    )


def summary(values: Sequence[float]) -> Summary:
    """Median, min, max and quartiles of ``values`` (at least one)."""
    if len(values) >= 2:
        q1, _, q3 = statistics.quantiles(values, n=4, method="inclusive")
    else:
        q1 = q3 = values[0]
    return Summary(
        n=len(values),
        median=statistics.median(values),
        min=min(values),
        max=max(values),
        q1=q1,
        q3=q3,
    )
