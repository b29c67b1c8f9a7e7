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


async def load(
    base_url: str, seconds: float, concurrency: int
) -> tuple[int, int, float]:
    limits = httpx.Limits(
        max_connections=concurrency, max_keepalive_connections=concurrency
    )
    async with httpx.AsyncClient(limits=limits, timeout=30) as client:
        token = (await client.post(f"{base_url}/authenticate", files=FORM)).json()[
            "access_token"
        ]
        headers = {"authorization": f"Bearer {token}", "x-service-account-id": "acct-1"}
        url = f"{base_url}/shipments?pageSize=50&pageNumber=1"
        ok = failed = 0
        started = time.perf_counter()
        stop = started + seconds

        async def worker() -> None:
            nonlocal ok, failed
            while time.perf_counter() < stop:
                response = await client.get(url, headers=headers)
                if response.status_code == 200 and len(response.json()["data"]) == 50:
                    ok += 1
                else:
                    failed += 1

        await asyncio.gather(*(worker() for _ in range(concurrency)))
        return ok, failed, time.perf_counter() - started


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
        ok, failed, elapsed = asyncio.run(
            load(base_url, args.seconds, args.concurrency)
        )
        after = mock_process.cpu_times()
        cpu = (after.user - before.user) + (after.system - before.system)
    finally:
        process.terminate()
        process.wait(timeout=10)
        if process.stdout is not None:
            process.stdout.close()
    print(
        f"mock throughput, 50-record page over loopback: {ok / elapsed:.0f} requests/s "
        f"({ok} ok, {failed} failed in {elapsed:.1f} s, concurrency {args.concurrency}); "
        f"mock CPU {cpu / max(ok + failed, 1) * 1000:.2f} ms per request, "
        f"i.e. {(ok + failed) / cpu if cpu else float('inf'):.0f} requests per CPU-second; "
        f"load average {psutil.getloadavg()[0]:.1f} on {psutil.cpu_count()} CPUs"
    )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
