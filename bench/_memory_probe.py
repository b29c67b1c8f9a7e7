"""Peak memory of one paginated iteration, measured in a fresh process.

Run by the memory case as
``python -m bench._memory_probe BASE_URL RECORDS CONCURRENCY [VARIANT]``; prints one JSON
object. A fresh process per run keeps earlier runs' heap out of it. ``VARIANT`` is
``paginate`` (the default) or ``raw_httpx``: the same pages, as many threads and as
far ahead, with plain httpx and JSON dicts, to show what the allocator alone does.

Example::

    python -m bench._memory_probe http://127.0.0.1:8099/public/v3 20000 8 raw_httpx
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import httpx
import psutil  # type: ignore[import-untyped]  # no stubs installed

from service_api import Client, paginate
from service_api_client.api.shipments import list_shipments

from . import _raw_httpx as raw
from ._mock_process import ACCOUNT, CLIENT_ID, CLIENT_SECRET, TLS

__all__ = ["main"]

_MB = 1024 * 1024


def _high_water_mark() -> int:
    """The kernel's peak RSS of this process (``VmHWM``), a check on the sampling.

    ``ru_maxrss`` would not do: Linux carries it over ``exec`` from the parent, so a
    child of a large process starts with the parent's peak.
    """
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


class _Memory:
    """The RSS of this process at the start of a run, its highest sample, at the end,
    and the wall time between start and end."""

    def __init__(self) -> None:
        self._process = psutil.Process()
        self.start_rss = 0
        self.peak_rss = 0
        self.end_rss = 0
        self.wall_s = 0.0
        self._wall0 = 0.0

    def start(self) -> None:
        self.start_rss = self._process.memory_info().rss
        self.peak_rss = self.start_rss
        self._wall0 = time.perf_counter()

    def sample(self) -> None:
        # Once a page: RSS only moves when pages arrive.
        self.peak_rss = max(self.peak_rss, self._process.memory_info().rss)

    def end(self) -> None:
        self.wall_s = time.perf_counter() - self._wall0
        self.end_rss = self._process.memory_info().rss


def _paginate(base_url: str, concurrency: int, memory: _Memory) -> int:
    with Client(
        base_url, CLIENT_ID, CLIENT_SECRET, ACCOUNT, httpx_args={"verify": TLS}
    ) as client:
        # "Start" is a client ready to work: modules imported, no connection open.
        memory.start()
        seen = 0
        for item in paginate(list_shipments, client, concurrency=concurrency):
            seen += 1 if item.shipment_id else 0
            if seen % 50 == 0:
                memory.sample()
        memory.end()
    return seen


def _raw_httpx(base_url: str, concurrency: int, memory: _Memory) -> int:
    with httpx.Client(verify=TLS) as http:
        memory.start()
        seen = raw.iterate_pages_ahead(
            http,
            base_url,
            page_size=50,
            concurrency=concurrency,
            on_page=memory.sample,
        )
        memory.end()
    return seen


def main(argv: Sequence[str] | None = None) -> None:
    """Iterate every record once and print start, peak and end RSS in MB."""
    args = list(argv if argv is not None else sys.argv[1:])
    base_url = args[0]
    records = int(args[1])
    concurrency = int(args[2])
    variant = args[3] if len(args) > 3 else "paginate"
    variants = {"paginate": _paginate, "raw_httpx": _raw_httpx}
    if variant not in variants:
        raise SystemExit(f"unknown variant {variant!r}")
    memory = _Memory()
    seen = variants[variant](base_url, concurrency, memory)
    high_water = _high_water_mark()
    peak = max(memory.peak_rss, memory.end_rss)
    result = {
        "variant": variant,
        "records": records,
        "items": seen,
        "concurrency": concurrency,
        "wall_s": memory.wall_s,
        "rss_start_mb": memory.start_rss / _MB,
        "rss_peak_mb": peak / _MB,
        "rss_end_mb": memory.end_rss / _MB,
        "high_water_mb": high_water / _MB,
        "growth_mb": (max(peak, high_water) - memory.start_rss) / _MB,
    }
    print(json.dumps(result))


if __name__ == "__main__":
    main()
