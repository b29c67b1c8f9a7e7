"""Running ``service-api`` as a child process, as users run it, and reading what it left."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from service_api_mock import DEMO_CLIENT_ID, DEMO_CLIENT_SECRET, RunningMock

COMMAND = [sys.executable, "-m", "service_api_cli"]
WINDOWS_OF_TIME = 30.0


def cli_env(base_url: str, **extra: str) -> dict[str, str]:
    """The environment of a child: the mock's address and the demo credentials."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("SERVICE_API_")}
    env.update(
        SERVICE_API_BASE_URL=base_url,
        SERVICE_API_CLIENT_ID=DEMO_CLIENT_ID,
        SERVICE_API_CLIENT_SECRET=DEMO_CLIENT_SECRET,
        COLUMNS="160",  # rich reads the width; a fixed one keeps outputs comparable
    )
    env.update(extra)
    return env


def run_cli(
    args: Sequence[str],
    env: Mapping[str, str],
    preexec_fn: Callable[[], None] | None = None,
) -> subprocess.CompletedProcess[str]:
    """Run the command to its end, stdin closed (not a terminal), outputs captured;
    ``preexec_fn`` runs in the child before it starts (to set a resource limit)."""
    return subprocess.run(
        [*COMMAND, *args],
        env=dict(env),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        preexec_fn=preexec_fn,
    )


def interruptible() -> None:
    """Run in a child before it starts: Ctrl-C interrupts it as in a terminal, even when
    the test run was started with SIGINT ignored (a background job of a shell), which a
    child would otherwise inherit."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def start_cli(
    args: Sequence[str], env: Mapping[str, str], **kwargs: Any
) -> subprocess.Popen[str]:
    """Start the command without waiting for it (Ctrl-C reaches it: :func:`interruptible`)."""
    options: dict[str, Any] = {
        "stdout": subprocess.PIPE,
        "stderr": subprocess.PIPE,
        "preexec_fn": interruptible,
    }
    options.update(kwargs)
    return subprocess.Popen(
        [*COMMAND, *args], env=dict(env), stdin=subprocess.DEVNULL, text=True, **options
    )


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    """Every record of a JSON Lines file; fails on a partial last line."""
    text = path.read_text(encoding="utf-8")
    assert text == "" or text.endswith("\n"), "the file does not end on a whole record"
    return [json.loads(line) for line in text.splitlines()]


def wait_for(condition: Callable[[], bool], what: str) -> None:
    """Poll ``condition`` until it holds, failing after a generous deadline."""
    deadline = time.monotonic() + WINDOWS_OF_TIME
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.02)


def line_count(path: Path) -> int:
    """Whole lines in ``path`` so far (0 before it exists)."""
    try:
        return path.read_bytes().count(b"\n")
    except FileNotFoundError:
        return 0


def kept_folder(out: Path) -> Path:
    """The hidden folder beside ``out`` where an unfinished export keeps its pages."""
    return out.parent / f".{out.name}.partial"


def partial_lines(out: Path) -> int:
    """Records kept so far beside ``out`` (0 before any), whole lines only."""
    return sum(line_count(p) for p in kept_folder(out).glob("*.jsonl"))


def kept_state(out: Path) -> dict[str, Any]:
    """The state an unfinished export left beside ``out``: where each account stands."""
    state: dict[str, Any] = json.loads(
        (kept_folder(out) / "state.json").read_text("utf-8")
    )
    return state


def assert_no_credentials(mock: RunningMock, *texts: str) -> None:
    """Neither the secret nor any issued token shows in ``texts``."""
    for text in texts:
        assert DEMO_CLIENT_SECRET not in text
        for token in mock.service.issued_tokens():
            assert token not in text


def without_drift(stderr: str) -> str:
    """``stderr`` without the lines that say where the answers differed from the spec
    (the mock sends fields the spec does not declare): the rest of what a command says,
    in its order."""
    return "".join(
        line
        for line in stderr.splitlines(keepends=True)
        if " from the spec at " not in line
    )
