"""Case 6: the mock's own throughput. Requests per second it serves for a 50-record
page, and its CPU per request; the load itself is :func:`bench.mock_throughput.load`.

Example::

    with MockProcess() as mock:
        result = run(mock, SMOKE)
"""

from __future__ import annotations

import asyncio
import math
from typing import Any

import psutil  # type: ignore[import-untyped]  # no stubs installed

from .._mock_process import MockProcess
from .._sizes import Sizes
from ..mock_throughput import load

__all__ = ["run"]


def run(mock: MockProcess, sizes: Sizes) -> dict[str, Any]:
    """One row per number of connections: requests served, the mock's CPU time."""
    mock.reset(records=1000)
    server = psutil.Process(mock.pid)
    rows = []
    for connections in sizes.throughput_connections:
        cpu0 = sum(server.cpu_times()[:2])
        served = asyncio.run(load(mock.base_url, sizes.throughput_seconds, connections))
        cpu = sum(server.cpu_times()[:2]) - cpu0
        rows.append(
            {
                "connections": connections,
                "requests": served.ok,
                "failed": served.failed,
                "requests_per_s": served.ok / served.seconds,
                "mock_cpu_ms_per_request": cpu / max(served.ok, 1) * 1e3,
                "mock_cpu_utilisation": cpu / served.seconds,
                # What one core could serve if the mock were the only limit.
                "mock_cpu_bound_requests_per_s": served.ok / cpu
                if cpu > 0
                else math.inf,
            }
        )
    return {"page_size": 50, "rows": rows, "targets": []}
