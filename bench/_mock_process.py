"""The mock as a separate process, so that the client's CPU time is measured apart from it.

Example::

    with MockProcess() as mock:
        mock.reset(records=500, token_ttl=3)
        mock.counts()["authenticate"]
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from types import TracebackType
from typing import IO, Any

import httpx
import psutil  # type: ignore[import-untyped]  # no stubs installed

from service_api import Client
from service_api_mock import DEMO_ACCOUNTS, DEMO_CLIENT_ID, DEMO_CLIENT_SECRET

__all__ = ["ACCOUNT", "CLIENT_ID", "CLIENT_SECRET", "TLS", "MockProcess", "mock_client"]

CLIENT_ID = DEMO_CLIENT_ID
CLIENT_SECRET = DEMO_CLIENT_SECRET
ACCOUNT = DEMO_ACCOUNTS[0]

TLS = httpx.create_ssl_context()
"""One TLS context for every client: the mock speaks plain HTTP, and building a context
(loading the CA bundle) costs a few hundred milliseconds per client on a busy machine."""

_REPO = Path(__file__).resolve().parent.parent
_STARTUP_TIMEOUT = 30.0
# Building 200,000 records takes the mock tens of seconds on the first request after a
# reset; the control calls that trigger it must outwait that.
_DATASET_TIMEOUT = 300.0


_LISTENING = re.compile(r"listening on (http://\S+/public/v3)")


class MockProcess:
    """``python -m service_api_mock`` in a subprocess on a free loopback port, configured
    through its control API (``/__mock__/reset``, ``/faults``, ``/counts``).

    Example::

        with MockProcess() as mock:
            print(mock.base_url)  # http://127.0.0.1:<port>/public/v3
    """

    def __init__(self) -> None:
        self.base_url = ""
        """The public API's base address, such as ``http://127.0.0.1:<port>/public/v3``."""
        self.root_url = ""
        self._process: subprocess.Popen[bytes] | None = None
        self._control: httpx.Client | None = None
        self._announce: IO[str] | None = None

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
        """Start the mock, learn its port from what it prints, wait until it answers."""
        # --port 0: the mock binds a free port itself and prints where it listens.
        # Warning level: one log line per request would cost the mock CPU we measure.
        command = [
            sys.executable,
            "-m",
            "service_api_mock",
            "--host",
            "127.0.0.1",
            "--port",
            "0",
            "--log-level",
            "warning",
        ]
        # A file, not a pipe: nobody has to keep draining it while the benchmark runs.
        self._announce = tempfile.TemporaryFile(mode="w+")  # noqa: SIM115 -- closed in stop()
        self._process = subprocess.Popen(
            command,
            cwd=_REPO,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
            stdout=self._announce,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + _STARTUP_TIMEOUT
        while True:
            if self._process.poll() is not None:
                raise RuntimeError(
                    f"the mock exited with status {self._process.returncode}: {' '.join(command)}"
                )
            if self.base_url == "":
                self._learn_address()
            if self._control is not None:
                try:
                    self._control.get("/counts", timeout=1.0).raise_for_status()
                    return
                except httpx.TransportError:
                    pass
            if time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(
                    f"the mock did not answer within {_STARTUP_TIMEOUT} s"
                )
            time.sleep(0.05)

    def _learn_address(self) -> None:
        """The mock's address, once it has printed where it listens."""
        match = _LISTENING.search(self._read_announce())
        if match is None:
            return
        self.base_url = match.group(1)
        self.root_url = self.base_url.removesuffix("/public/v3")
        self._control = httpx.Client(
            base_url=f"{self.root_url}/__mock__", timeout=_DATASET_TIMEOUT
        )

    def _started_control(self) -> httpx.Client:
        if self._control is None:
            raise RuntimeError(
                "the mock is not running: use MockProcess as a context manager"
            )
        return self._control

    def _read_announce(self) -> str:
        assert self._announce is not None
        self._announce.seek(0)
        return self._announce.read()

    def stop(self) -> None:
        """Stop the mock (SIGTERM, then SIGKILL after a grace period)."""
        if self._control is not None:
            self._control.close()
        if self._announce is not None:
            self._announce.close()
        process = self._process
        self._process = None
        if process is None or process.poll() is not None:
            return
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)

    def reset(self, *, accounts: Sequence[str] = (ACCOUNT,), **overrides: Any) -> None:
        """Forget tokens, counters and data; apply config overrides; build the shipments
        of each of ``accounts``.

        The first page of each account is fetched once so that its data set is built
        here, outside any timed region (the mock builds an account's records on its
        first request: seconds at 50,000).
        """
        self._started_control().post("/reset", json=overrides).raise_for_status()
        self.prime(accounts)

    def set_faults(self, **changes: Any) -> None:
        """Change latency and fault settings without forgetting tokens or data."""
        self._started_control().post("/faults", json=changes).raise_for_status()

    def counts(self) -> dict[str, dict[str, int]]:
        """Requests per operation and status, as the mock counted them."""
        response = self._started_control().get("/counts")
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
        response = self._started_control().post(
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

    def prime(self, accounts: Sequence[str] = (ACCOUNT,)) -> None:
        """Fetch one page of shipments per account so that the mock builds their data
        sets now."""
        token = self.fetch_token()
        for account in accounts:
            response = self._started_control().get(
                f"{self.base_url}/shipments",
                params={"pageNumber": 1, "pageSize": 1},
                headers={
                    "Authorization": f"Bearer {token}",
                    "x-service-account-id": account,
                },
            )
            response.raise_for_status()


def mock_client(mock: MockProcess, **options: Any) -> Client:
    """A :class:`service_api.Client` of the mock's first demo account, with ``options``.

    Example::

        with mock_client(mock, refresh_skew=1.0) as client:
            client.shipments.list(max_items=1)
    """
    return Client(
        mock.base_url,
        CLIENT_ID,
        CLIENT_SECRET,
        ACCOUNT,
        httpx_args={"verify": TLS},
        **options,
    )
