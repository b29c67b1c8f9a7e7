"""The benchmark cases, one module each; every case is a function ``run(mock, sizes)``
that returns a JSON-ready dict with its figures and its targets.

Every case runs against one mock process (see :mod:`bench._mock_process`), reset to
the size it needs. Compared variants run once to warm up, then alternate (in a
rotating order) over the repetitions, so drift on a shared machine hits all alike.

Example::

    with MockProcess() as mock:
        result = CASES["sequential"](mock, SMOKE)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .._mock_process import MockProcess
from .._sizes import Sizes
from . import (
    latency,
    load,
    memory,
    mock_throughput,
    overhead,
    quota,
    quota_outage,
    sequential,
    tokens,
)

__all__ = ["CASES"]

CASES: dict[str, Callable[[MockProcess, Sizes], dict[str, Any]]] = {
    "sequential": sequential.run,
    "latency": latency.run,
    "memory": memory.run,
    "tokens": tokens.run,
    "overhead": overhead.run,
    "mock_throughput": mock_throughput.run,
    "quota": quota.run,
    "quota_outage": quota_outage.run,
    "load": load.run,
}
"""Case name to function, in the order of the docs' performance page (1 to 7, 7b, 8)."""
