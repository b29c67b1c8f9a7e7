"""Ctrl-C stops the mock however it was started: one line, exit status 0, no traceback.

Each way a user starts it runs as a child process in a process group of its own, on a
free loopback port (``--port 0``); Ctrl-C is SIGINT sent to that whole group, as a
terminal sends it to the foreground job.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
START_TIMEOUT = 30.0

# The four ways to start the mock the README and the docs give, from the repository's root.
WAYS = {
    "make mock": ["make", "mock", "PORT=0"],
    "service-api-mock": [str(BIN / "service-api-mock"), "--port", "0"],
    "python -m service_api_mock": [
        sys.executable,
        "-m",
        "service_api_mock",
        "--port",
        "0",
    ],
    "service-api mock": [str(BIN / "service-api"), "mock", "--port", "0"],
}


def _as_in_a_terminal() -> None:
    # A test run started as a background job of a shell has SIGINT ignored, which a
    # child would inherit: restore the default, as in a terminal.
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _user_environment() -> dict[str, str]:
    # Under `make test`, make's variables would turn the inner make into a sub-make
    # (which prints "Entering directory" lines and joins the outer jobserver).
    inner = ("MAKEFLAGS", "MFLAGS", "MAKELEVEL", "MAKEOVERRIDES")
    return {k: v for k, v in os.environ.items() if k not in inner}


def _wait_until_listening(port: int) -> None:
    # Once the port accepts connections, uvicorn has its signal handlers in place.
    deadline = time.monotonic() + START_TIMEOUT
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.02)


@pytest.mark.parametrize("way", list(WAYS))
def test_ctrl_c_stops_the_mock_with_one_line(way: str) -> None:
    argv = WAYS[way]
    if way == "make mock" and shutil.which("make") is None:
        pytest.skip("make is not installed (an optional tool for this test)")
    with subprocess.Popen(
        argv,
        cwd=ROOT,
        env=_user_environment(),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        preexec_fn=_as_in_a_terminal,
    ) as process:
        assert process.stdout is not None
        before: list[str] = []
        try:
            # make first echoes its recipe; then the mock announces where it listens.
            while not before or "control API" not in before[-1]:
                line = process.stdout.readline()
                assert line, f"{way} ended before it listened: {before}"
                before.append(line)
            listening = next(
                x for x in before if " listening on http://127.0.0.1:" in x
            )
            port = int(listening.rsplit(":", 1)[1].split("/")[0])
            _wait_until_listening(port)
        finally:
            os.killpg(process.pid, signal.SIGINT)
            after, stderr = process.communicate(timeout=30)
    assert after.splitlines() == ["service-api mock stopped"]
    assert stderr == ""  # no traceback, no log line, no "make: *** ... Error"
    if way == "make mock":
        # GNU make, interrupted itself, waits for its child and then ends by the same
        # signal, which a shell reports as 130; having seen its child exit 0, it adds
        # no error line (checked above).
        assert process.returncode == -signal.SIGINT
    else:
        assert process.returncode == 0
