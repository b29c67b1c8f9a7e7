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
from ._mock_process import ACCOUNT, CLIENT_ID, CLIENT_SECRET

TLS = (
    httpx.create_ssl_context()
)  # the mock speaks plain HTTP; one context, no CA reload

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


def main(argv: Sequence[str] | None = None) -> None:
    """Iterate every record once and print start, peak and end RSS in MB."""
    args = list(argv if argv is not None else sys.argv[1:])
    base_url, records, concurrency = args[:3]
    variant = args[3] if len(args) > 3 else "paginate"
    if variant not in ("paginate", "raw_httpx"):
        raise SystemExit(f"unknown variant {variant!r}")
    process = psutil.Process()
    peak = 0

    def sample() -> None:
        # Once a page: RSS only moves when pages arrive.
        nonlocal peak
        peak = max(peak, process.memory_info().rss)

    if variant == "paginate":
        with Client(
            base_url, CLIENT_ID, CLIENT_SECRET, ACCOUNT, httpx_args={"verify": TLS}
        ) as client:
            # "Start" is a client ready to work: modules imported, no connection open.
            start = peak = process.memory_info().rss
            wall0 = time.perf_counter()
            seen = 0
            for item in paginate(list_shipments, client, concurrency=int(concurrency)):
                seen += 1 if item.shipment_id else 0
                if seen % 50 == 0:
                    sample()
            wall = time.perf_counter() - wall0
            end = process.memory_info().rss
    else:
        with httpx.Client(verify=TLS) as http:
            start = peak = process.memory_info().rss
            wall0 = time.perf_counter()
            seen = raw.iterate_pages_ahead(
                http,
                base_url,
                page_size=50,
                concurrency=int(concurrency),
                on_page=sample,
            )
            wall = time.perf_counter() - wall0
            end = process.memory_info().rss
    high_water = _high_water_mark()
    result = {
        "variant": variant,
        "records": int(records),
        "items": seen,
        "concurrency": int(concurrency),
        "wall_s": wall,
        "rss_start_mb": start / _MB,
        "rss_peak_mb": max(peak, end) / _MB,
        "rss_end_mb": end / _MB,
        "high_water_mb": high_water / _MB,
        "growth_mb": (max(peak, end, high_water) - start) / _MB,
    }
    print(json.dumps(result))


if __name__ == "__main__":
    main()
