"""Requests per second the mock serves for a 50-record page over loopback.

The mock runs in its own process (``python -m service_api_mock``), so the load generator
does not share its interpreter; a pool of keep-alive connections asks for page 1 of
``/shipments`` with ``pageSize=50`` as fast as the mock answers, for a fixed time.

Example::

    .venv/bin/python bench/mock_throughput.py --seconds 10 --concurrency 16
"""

from __future__ import annotations

import argparse
import asyncio
import subprocess
import sys
import time
from typing import NamedTuple

import httpx
import psutil  # type: ignore[import-untyped]  # no stubs installed

FORM = {
    "client_id": (None, "demo-client"),
    "client_secret": (None, "demo-secret"),
    "grant_type": (None, "client_credentials"),
}


def start_mock() -> tuple[subprocess.Popen[str], str]:
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "service_api_mock",
            "--port",
            "0",
            "--log-level",
            "warning",
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None
    base_url = process.stdout.readline().split()[-1]
    deadline = time.monotonic() + 10
    while True:
        try:
            httpx.get(f"{base_url}/devices")
            return process, base_url
        except httpx.ConnectError:
            if time.monotonic() > deadline:
                process.kill()
                raise
            time.sleep(0.02)


class Served(NamedTuple):
    """What a load got: full pages, anything else, over how many seconds."""

    ok: int
    failed: int
    seconds: float


async def load(base_url: str, seconds: float, concurrency: int) -> Served:
    """Ask for page 1 on ``concurrency`` connections at once for ``seconds``."""
    limits = httpx.Limits(
        max_connections=concurrency, max_keepalive_connections=concurrency
    )
    async with httpx.AsyncClient(limits=limits, timeout=30) as client:
        answer = await client.post(f"{base_url}/authenticate", files=FORM)
        token = answer.json()["access_token"]
        headers = {"authorization": f"Bearer {token}", "x-service-account-id": "acct-1"}
        url = f"{base_url}/shipments?pageSize=50&pageNumber=1"
        outcomes = {"ok": 0, "failed": 0}
        started = time.perf_counter()
        stop = started + seconds

        async def worker() -> None:
            while time.perf_counter() < stop:
                response = await client.get(url, headers=headers)
                full = (
                    response.status_code == 200 and len(response.json()["data"]) == 50
                )
                outcomes["ok" if full else "failed"] += 1

        await asyncio.gather(*(worker() for _ in range(concurrency)))
        return Served(**outcomes, seconds=time.perf_counter() - started)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--seconds", type=float, default=10.0, help="how long to load the mock"
    )
    parser.add_argument(
        "--concurrency", type=int, default=16, help="requests in flight"
    )
    args = parser.parse_args()
    process, base_url = start_mock()
    try:
        # CPU seconds the mock's process spends, which a loaded machine does not inflate
        # the way it inflates wall-clock time.
        mock_process = psutil.Process(process.pid)
        before = mock_process.cpu_times()
        served = asyncio.run(load(base_url, args.seconds, args.concurrency))
        after = mock_process.cpu_times()
        cpu = (after.user - before.user) + (after.system - before.system)
    finally:
        process.terminate()
        process.wait(timeout=10)
        if process.stdout is not None:
            process.stdout.close()
    requests = served.ok + served.failed
    per_cpu_second = requests / cpu if cpu else float("inf")
    print(
        "mock throughput, 50-record page over loopback: "
        f"{served.ok / served.seconds:.0f} requests/s ({served.ok} ok, {served.failed} "
        f"failed in {served.seconds:.1f} s, concurrency {args.concurrency}); "
        f"mock CPU {cpu / max(requests, 1) * 1000:.2f} ms per request, "
        f"i.e. {per_cpu_second:.0f} requests per CPU-second; "
        f"load average {psutil.getloadavg()[0]:.1f} on {psutil.cpu_count()} CPUs"
    )
    return 1 if served.failed else 0


if __name__ == "__main__":
    sys.exit(main())
