"""Case 1: sequential iteration. Raw httpx over dicts, generated pages looped by hand,
``paginate`` with ``for`` and with ``async for`` (the variant still called ``apaginate``,
so that results compare across runs), and ``paginate`` with no drift check
(``Client(check_drift=False)``): what noticing drift from the spec costs.

Example::

    with MockProcess() as mock:
        result = run(mock, SMOKE)
"""

from __future__ import annotations

import asyncio
import functools
import math
import statistics
import timeit
from collections.abc import Callable
from typing import Any

import httpx

from service_api import paginate
from service_api_client.api.shipments import list_shipments
from service_api_client.models import ShipmentPage
from service_api_client.types import Unset

from .. import _raw_httpx as raw
from .._measure import Sample, alternate, ameasure, measure, per_item, target
from .._mock_process import TLS, MockProcess, mock_client
from .._sizes import Sizes

__all__ = ["run"]

#: A variant: all the records (``None``) or the first pages only, as a timed sample.
Runner = Callable[[int | None], Sample]


def _raw_httpx(mock: MockProcess, size: int) -> Runner:
    def run(pages: int | None = None) -> Sample:
        with httpx.Client(verify=TLS) as http:
            return measure(
                lambda: raw.iterate_pages(
                    http, mock.base_url, page_size=size, max_pages=pages
                )
            )

    return run


def _by_hand(mock: MockProcess, size: int) -> Runner:
    def run(pages: int | None = None) -> Sample:
        def loop() -> int:
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
                last = isinstance(page.next_, Unset) or not page.next_
                if last or number == pages:
                    return seen
                number += 1

        with mock_client(mock) as client:
            return measure(loop)

    return run


def _paginate(mock: MockProcess, size: int, check_drift: bool = True) -> Runner:
    def run(pages: int | None = None) -> Sample:
        limit = None if pages is None else pages * size

        def loop() -> int:
            seen = 0
            items = paginate(list_shipments, client, page_size=size, max_items=limit)
            for item in items:
                seen += 1 if item.shipment_id else 0
            return seen

        with mock_client(mock, check_drift=check_drift) as client:
            return measure(loop)

    return run


def _apaginate(mock: MockProcess, size: int) -> Runner:
    def run(pages: int | None = None) -> Sample:
        limit = None if pages is None else pages * size

        async def main() -> Sample:
            async with mock_client(mock) as client:

                async def loop() -> int:
                    seen = 0
                    items = paginate(
                        list_shipments, client, page_size=size, max_items=limit
                    )
                    async for item in items:
                        seen += 1 if item.shipment_id else 0
                    return seen

                return await ameasure(loop)

        return asyncio.run(main())

    return run


def _ratios(samples: dict[str, list[Sample]]) -> dict[str, float]:
    """Paired ratios: each round runs every variant once, back to back, so the ratio
    within a round cancels the machine's slower spells; the median of those ratios."""
    found = {}
    pairs = [
        ("paginate", "generated_by_hand"),
        ("apaginate", "generated_by_hand"),
        ("generated_by_hand", "raw_httpx"),
        ("paginate", "raw_httpx"),
        ("paginate", "paginate_unchecked"),
    ]
    for a, b in pairs:
        rounds = list(zip(samples[a], samples[b], strict=True))
        for key in ("wall_s", "cpu_s"):
            ratio = statistics.median(x[key] / y[key] for x, y in rounds)
            found[f"{a}/{b} {key[:-2]}"] = float(ratio)
    return found


def _model_cost(mock: MockProcess, size: int, loops: int) -> float:
    """Microseconds per record of ``ShipmentPage.from_dict`` alone, on a real page."""
    with httpx.Client(verify=TLS) as http:
        token = raw.fetch_token(http, mock.base_url)
        body = raw.get_page(http, mock.base_url, token, 1, size)
    timer = timeit.Timer(lambda: ShipmentPage.from_dict(body))
    best = min(timer.repeat(repeat=5, number=loops)) / loops
    return best / len(body["data"]) * 1e6


def _samples(mock: MockProcess, sizes: Sizes) -> tuple[dict[str, list[Sample]], int]:
    """Every variant's runs, and the pages the mock served for them."""
    size = sizes.page_size
    runners = {
        "raw_httpx": _raw_httpx(mock, size),
        "generated_by_hand": _by_hand(mock, size),
        "paginate": _paginate(mock, size),
        "apaginate": _apaginate(mock, size),
        "paginate_unchecked": _paginate(mock, size, check_drift=False),
    }
    # Warming up needs a few pages, not the whole set: that would double the case's time.
    warm_pages = max(1, min(sizes.sequential_records // size, 20))
    shorter = {
        name: functools.partial(run, warm_pages) for name, run in runners.items()
    }
    samples = alternate(
        {name: functools.partial(run, None) for name, run in runners.items()},
        sizes.repetitions,
        warm_up=shorter if sizes.warmup else None,
    )
    # Every run also authenticates once: count that as a page too.
    pages = math.ceil(sizes.sequential_records / size)
    served = sizes.repetitions * len(samples) * (pages + 1)
    if sizes.warmup:
        served += len(samples) * (warm_pages + 1)
    return samples, served


def run(mock: MockProcess, sizes: Sizes) -> dict[str, Any]:
    """Wall and CPU time per record of each variant, their paired ratios, and what the
    typed models cost."""
    mock.reset(records=sizes.sequential_records)
    mock_cpu0 = mock.cpu_seconds()
    samples, served = _samples(mock, sizes)
    mock_cpu = mock.cpu_seconds() - mock_cpu0
    variants = {name: per_item(runs) for name, runs in samples.items()}
    for name, result in variants.items():
        if result["items"] != sizes.sequential_records:
            raise RuntimeError(f"{name} saw {result['items']} records")
    ratios = _ratios(samples)
    by_hand_minus_raw = (
        variants["generated_by_hand"]["cpu_us_per_item"]
        - variants["raw_httpx"]["cpu_us_per_item"]
    )
    model_cost = _model_cost(mock, sizes.page_size, sizes.model_cost_loops)
    c_over_b = ratios["paginate/generated_by_hand wall"]
    drift_cost = ratios["paginate/paginate_unchecked cpu"]
    return {
        "records": sizes.sequential_records,
        "pages": math.ceil(sizes.sequential_records / sizes.page_size),
        "page_size": sizes.page_size,
        "repetitions": sizes.repetitions,
        "variants": variants,
        "ratios": ratios,
        "typed_model_cost": {
            "cpu_us_per_record_by_hand_minus_raw": by_hand_minus_raw,
            "from_dict_us_per_record": model_cost,
        },
        "mock_cpu_ms_per_page": mock_cpu / served * 1e3,
        "targets": [
            target(
                "paginate within 1.10x of generated pages by hand (wall)",
                c_over_b,
                limit="<= 1.10",
                met=c_over_b <= 1.10,
            ),
            target(
                "drift check within 1.05x of paginate without it (cpu)",
                drift_cost,
                limit="<= 1.05",
                met=drift_cost <= 1.05,
            ),
        ],
    }
