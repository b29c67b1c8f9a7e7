"""The mock as a separate process, so that the client's CPU time is measured apart from it.

Example::

    with MockProcess() as mock:
        mock.reset(records=500, token_ttl=3)
        mock.counts()["authenticate"]
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path
from types import TracebackType
from typing import Any

import httpx
import psutil  # type: ignore[import-untyped]  # no stubs installed

from service_api_mock import DEMO_ACCOUNTS, DEMO_CLIENT_ID, DEMO_CLIENT_SECRET

__all__ = ["ACCOUNT", "CLIENT_ID", "CLIENT_SECRET", "MockProcess"]

CLIENT_ID = DEMO_CLIENT_ID
CLIENT_SECRET = DEMO_CLIENT_SECRET
ACCOUNT = DEMO_ACCOUNTS[0]

_REPO = Path(__file__).resolve().parent.parent
_STARTUP_TIMEOUT = 30.0
# Building 200,000 records takes the mock tens of seconds on the first request after a
# reset; the control calls that trigger it must outwait that.
_DATASET_TIMEOUT = 300.0


def _free_port() -> int:
    # The port is released before the mock binds it; on loopback in a benchmark run
    # nothing else races for it, and this keeps us independent of how the mock logs.
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


class MockProcess:
    """The mock in a subprocess on a free loopback port, configured through its control API.

    Example::

        with MockProcess() as mock:
            print(mock.base_url)  # http://127.0.0.1:<port>/public/v3
    """

    def __init__(self) -> None:
        self.port = _free_port()
        self.root_url = f"http://127.0.0.1:{self.port}"
        self.base_url = f"{self.root_url}/public/v3"
        self._process: subprocess.Popen[bytes] | None = None
        self._control = httpx.Client(base_url=f"{self.root_url}/__mock__", timeout=_DATASET_TIMEOUT)

    def __enter__(self) -> MockProcess:
        self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    @property
    def pid(self) -> int:
        """Process id of the mock, for reading its CPU time with psutil."""
        assert self._process is not None
        return self._process.pid

    def cpu_seconds(self) -> float:
        """User plus system CPU seconds the mock process has used so far."""
        times = psutil.Process(self.pid).cpu_times()
        return float(times.user + times.system)

    def start(self) -> None:
        """Start the mock and wait, with a deadline, until its control API answers."""
        # The mock's application, served so that Nagle's algorithm is off: see
        # bench/_serve_mock.py for why not ``python -m service_api_mock`` itself.
        command = [sys.executable, "-m", "bench._serve_mock", "--port", str(self.port)]
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        self._process = subprocess.Popen(
            command,
            cwd=_REPO,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + _STARTUP_TIMEOUT
        while True:
            if self._process.poll() is not None:
                raise RuntimeError(
                    f"the mock exited with status {self._process.returncode}: {' '.join(command)}"
                )
            try:
                self._control.get("/counts", timeout=1.0).raise_for_status()
                return
            except httpx.TransportError as exc:
                if time.monotonic() > deadline:
                    self.stop()
                    raise RuntimeError(
                        f"the mock did not answer within {_STARTUP_TIMEOUT} s"
                    ) from exc
                time.sleep(0.05)

    def stop(self) -> None:
        """Stop the mock (SIGTERM, then SIGKILL after a grace period)."""
        self._control.close()
        process, self._process = self._process, None
        if process is None or process.poll() is not None:
            return
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)

    def reset(self, **overrides: Any) -> None:
        """Forget tokens, counters and data; apply config overrides; build the data set.

        The first page is fetched once so that the data set is built here, outside
        any timed region.
        """
        self._control.post("/reset", json=overrides).raise_for_status()
        self.prime()

    def set_faults(self, **changes: Any) -> None:
        """Change latency and fault settings without forgetting tokens or data."""
        self._control.post("/faults", json=changes).raise_for_status()

    def counts(self) -> dict[str, dict[str, int]]:
        """Requests per operation and status, as the mock counted them."""
        response = self._control.get("/counts")
        response.raise_for_status()
        counts: dict[str, dict[str, int]] = response.json()
        return counts

    def count(self, operation: str, status: int | None = None) -> int:
        """Requests of one operation, optionally of one status only."""
        by_status = self.counts().get(operation, {})
        if status is None:
            return sum(by_status.values())
        return by_status.get(str(status), 0)

    def fetch_token(self) -> str:
        """A bearer token, fetched with plain httpx."""
        response = self._control.post(
            f"{self.base_url}/authenticate",
            files={
                "client_id": (None, CLIENT_ID),
                "client_secret": (None, CLIENT_SECRET),
                "grant_type": (None, "client_credentials"),
            },
        )
        response.raise_for_status()
        token: str = response.json()["access_token"]
        return token

    def prime(self) -> None:
        """Fetch one page so that the mock builds its data set now."""
        response = self._control.get(
            f"{self.base_url}/shipments",
            params={"pageNumber": 1, "pageSize": 1},
            headers={
                "Authorization": f"Bearer {self.fetch_token()}",
                "x-service-account-id": ACCOUNT,
            },
        )
        response.raise_for_status()
