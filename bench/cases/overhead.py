"""Case 5: per-call overhead. One small page per call: raw httpx, the generated client
with a fixed token, the overlay; sync and async.

Example::

    with MockProcess() as mock:
        result = run(mock, SMOKE)
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import httpx

from service_api_client import AuthenticatedClient
from service_api_client.api.shipments import list_shipments

from .. import _raw_httpx as raw
from .._measure import Sample, alternate, ameasure, measure, per_item
from .._mock_process import ACCOUNT, TLS, MockProcess, mock_client
from .._sizes import Sizes

__all__ = ["run"]


def _sync_variants(mock: MockProcess, calls: int) -> dict[str, Callable[[], Sample]]:
    def timed_calls(call: Callable[[], object]) -> Sample:
        def loop() -> int:
            for _ in range(calls):
                call()
            return calls

        return measure(loop)

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
        with mock_client(mock) as client:
            # The token, fetched outside the timed calls.
            list_shipments.sync_detailed(client=client, page_size=1)
            return timed_calls(
                lambda: list_shipments.sync_detailed(client=client, page_size=1)
            )

    return {
        "raw_httpx": raw_httpx,
        "generated_fixed_token": generated,
        "overlay": overlay,
    }


def _async_variants(mock: MockProcess, calls: int) -> dict[str, Callable[[], Sample]]:
    async def araw() -> Sample:
        async with httpx.AsyncClient(verify=TLS) as http:
            token = await raw.afetch_token(http, mock.base_url)

            async def loop() -> int:
                for _ in range(calls):
                    await raw.aget_page(http, mock.base_url, token, 1, 1)
                return calls

            return await ameasure(loop)

    async def aoverlay() -> Sample:
        async with mock_client(mock) as client:
            await list_shipments.asyncio_detailed(client=client, page_size=1)

            async def loop() -> int:
                for _ in range(calls):
                    await list_shipments.asyncio_detailed(client=client, page_size=1)
                return calls

            return await ameasure(loop)

    return {
        "raw_httpx_async": lambda: asyncio.run(araw()),
        "overlay_async": lambda: asyncio.run(aoverlay()),
    }


def run(mock: MockProcess, sizes: Sizes) -> dict[str, Any]:
    """Microseconds of wall and CPU time per call of each variant, and the differences
    between them."""
    mock.reset(records=100)
    calls = sizes.overhead_calls
    variants = _sync_variants(mock, calls) | _async_variants(mock, calls)
    samples = alternate(
        variants,
        sizes.overhead_repetitions,
        warm_up=variants if sizes.warmup else None,
    )
    results = {}
    for name, runs in samples.items():
        result = per_item(runs)
        results[name] = {
            "calls": calls,
            "wall_us_per_call": result["wall_us_per_item"],
            "cpu_us_per_call": result["cpu_us_per_item"],
            "wall_s": result["wall_s"],
            "cpu_s": result["cpu_s"],
        }

    def diff(a: str, b: str, key: str) -> float:
        value: float = results[a][key] - results[b][key]
        return value

    differences = {
        "overlay - raw (sync, cpu)": ("overlay", "raw_httpx", "cpu"),
        "overlay - raw (sync, wall)": ("overlay", "raw_httpx", "wall"),
        "generated - raw (sync, cpu)": ("generated_fixed_token", "raw_httpx", "cpu"),
        "overlay - generated (sync, cpu)": ("overlay", "generated_fixed_token", "cpu"),
        "overlay - raw (async, cpu)": ("overlay_async", "raw_httpx_async", "cpu"),
        "overlay - raw (async, wall)": ("overlay_async", "raw_httpx_async", "wall"),
    }
    return {
        "page_size": 1,
        "calls_per_run": calls,
        "repetitions": sizes.overhead_repetitions,
        "variants": results,
        "overhead_us": {
            name: diff(a, b, f"{clock}_us_per_call")
            for name, (a, b, clock) in differences.items()
        },
        "targets": [],
    }
