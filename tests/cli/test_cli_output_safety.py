"""A failed ``service-api list -o FILE`` leaves FILE's previous bytes as they were: wrong
secret, closed port, Ctrl-C and a full disk, for JSON Lines and CSV, keeping the whole pages
fetched beside it for the rerun; the command runs as a child process against the mock over
loopback HTTP."""

from __future__ import annotations

import csv
import io
import json
import os
import resource
import signal
import socket
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from cli_process import (
    assert_no_credentials,
    cli_env,
    kept_folder,
    kept_state,
    partial_lines,
    read_jsonl,
    run_cli,
    start_cli,
    wait_for,
    without_drift,
)

from service_api_mock import RunningMock

PREVIOUS = {
    "jsonl": b'{"shipmentId":"yesterday-1"}\n{"shipmentId":"yesterday-2"}\n',
    "csv": b"shipmentId\r\nyesterday-1\r\nyesterday-2\r\n",
}
# Far below one page of shipments (about 1 KiB each), far above the previous file.
FILE_SIZE_LIMIT = 8192
# One page of 50 shipments fits (about 60 KiB), the second is torn.
ONE_PAGE_AND_A_BIT = 100_000


def previous_file(tmp_path: Path, fmt: str) -> Path:
    path = tmp_path / f"shipments.{fmt}"
    path.write_bytes(PREVIOUS[fmt])
    return path


def assert_untouched(path: Path, fmt: str, *, kept: bool = False) -> None:
    assert path.read_bytes() == PREVIOUS[fmt]
    # Nothing else beside it, but the kept pages of a run that fetched some.
    names = sorted(p.name for p in path.parent.iterdir())
    assert names == sorted([path.name, *([kept_folder(path).name] if kept else [])])


def export_argv(out: Path, *extra: str) -> list[str]:
    return ["list", "shipments", "--account", "acct-1", "-o", str(out), *extra]


@pytest.mark.parametrize("fmt", ["jsonl", "csv"])
def test_wrong_secret(mock: RunningMock, tmp_path: Path, fmt: str) -> None:
    out = previous_file(tmp_path, fmt)
    done = run_cli(
        export_argv(out), cli_env(mock.base_url, SERVICE_API_CLIENT_SECRET="nope-x")
    )
    assert done.returncode == 3, done.stderr
    assert_untouched(out, fmt)
    assert f"{out} was left as it was: no page was kept" in done.stderr
    assert "run the same command" not in done.stderr
    assert_no_credentials(mock, done.stderr)


@pytest.mark.parametrize("fmt", ["jsonl", "csv"])
def test_closed_port(tmp_path: Path, fmt: str) -> None:
    out = previous_file(tmp_path, fmt)
    with socket.socket() as unused:
        unused.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{unused.getsockname()[1]}/public/v3"
        done = run_cli(["--retries", "1", *export_argv(out)], cli_env(url))
    assert done.returncode == 5, done.stderr
    assert_untouched(out, fmt)
    # The retry waited out is said; nothing was fetched, so no word of resuming.
    assert "after ApiConnectionError in " in done.stderr
    assert "(retry 1 of 1)" in done.stderr
    assert f"{out} was left as it was: no page was kept" in done.stderr
    assert "run the same command" not in done.stderr


@pytest.mark.parametrize("fmt", ["jsonl", "csv"])
def test_ctrl_c(mock: RunningMock, tmp_path: Path, fmt: str) -> None:
    mock.service.reset(records=200)
    mock.service.set_faults(latency_ms=30)
    out = previous_file(tmp_path, fmt)
    child = start_cli(export_argv(out, "--page-size", "10"), cli_env(mock.base_url))
    wait_for(
        lambda: mock.service.count("listShipments", 200) >= 3, "three pages served"
    )
    child.send_signal(signal.SIGINT)
    _, stderr = child.communicate(timeout=60)
    assert child.returncode == 130, stderr
    assert_untouched(out, fmt, kept=True)
    # The error line first, then what was done, then what became of the file and how on.
    lines = without_drift(stderr).splitlines()
    assert lines[0] == "service-api: interrupted"
    assert lines[1].startswith("service-api: stopped after ")
    assert "was left as it was; the " in lines[2]
    assert "records fetched are kept beside it in" in lines[2]
    assert lines[3] == (
        "service-api: run the same command again to fetch only the rest (--restart starts over)"
    )
    assert len(lines) == 4
    # The same command writes the whole file, in its format, each record once.
    mock.service.set_faults(latency_ms=0)
    done = run_cli(export_argv(out, "--page-size", "10"), cli_env(mock.base_url))
    assert done.returncode == 0, done.stderr
    ids = [r["shipmentId"] for r in mock.service.dataset("shipments", "acct-1")]
    if fmt == "csv":
        assert [
            row["shipmentId"] for row in csv.DictReader(io.StringIO(out.read_text()))
        ] == ids
    else:
        assert [r["shipmentId"] for r in read_jsonl(out)] == ids


def file_size_limit(limit: int) -> Callable[[], None]:
    """Run in the child only: writes beyond ``limit`` bytes fail with EFBIG (Python
    ignores SIGXFSZ), as they would on a full disk."""

    def limit_file_size() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return limit_file_size


@pytest.mark.parametrize("fmt", ["jsonl", "csv"])
def test_disk_full(mock: RunningMock, tmp_path: Path, fmt: str) -> None:
    mock.service.reset(records=120)
    out = previous_file(tmp_path, fmt)
    limited = file_size_limit(FILE_SIZE_LIMIT)
    done = run_cli(export_argv(out), cli_env(mock.base_url), preexec_fn=limited)
    assert done.returncode == 1, done.stderr
    assert "error: cannot write the output: File too large" in done.stderr
    assert "Traceback" not in done.stderr
    assert_untouched(out, fmt)


@pytest.mark.parametrize(
    ("page_size", "limit"), [(2, FILE_SIZE_LIMIT), (50, ONE_PAGE_AND_A_BIT)]
)
def test_disk_full_keeps_whole_pages_and_the_rerun_completes_the_file(
    mock: RunningMock, tmp_path: Path, page_size: int, limit: int
) -> None:
    mock.service.reset(records=120)
    out = previous_file(tmp_path, "jsonl")
    argv = export_argv(out, "--page-size", str(page_size))
    done = run_cli(argv, cli_env(mock.base_url), preexec_fn=file_size_limit(limit))
    assert done.returncode == 1, done.stderr
    assert_untouched(out, "jsonl", kept=True)
    state = kept_state(out)["accounts"]["acct-1"]
    dataset = mock.service.dataset("shipments", "acct-1")
    assert state["pages"] >= 1
    assert state["records"] == state["pages"] * page_size
    assert "run the same command again" in done.stderr
    # With room again the same command completes the file exactly.
    finished = run_cli(argv, cli_env(mock.base_url))
    assert finished.returncode == 0, finished.stderr
    assert read_jsonl(out) == dataset


def test_success_replaces_the_previous_file(mock: RunningMock, tmp_path: Path) -> None:
    mock.service.reset(records=7)
    mock.service.set_faults(latency_ms=20)
    out = previous_file(tmp_path, "jsonl")
    child = start_cli(export_argv(out, "--page-size", "2"), cli_env(mock.base_url))
    wait_for(lambda: partial_lines(out) >= 2, "a page in the temporary file")
    # Readers of the file see yesterday's export until the new one is complete.
    assert out.read_bytes() == PREVIOUS["jsonl"]
    _, stderr = child.communicate(timeout=60)
    assert child.returncode == 0, stderr
    assert read_jsonl(out) == mock.service.dataset("shipments", "acct-1")
    assert [p.name for p in tmp_path.iterdir()] == [out.name]


def test_a_missing_output_folder_is_named_before_any_request(
    mock: RunningMock, tmp_path: Path
) -> None:
    before = mock.service.count("authenticate")
    done = run_cli(
        export_argv(tmp_path / "nowhere" / "out.jsonl"), cli_env(mock.base_url)
    )
    assert done.returncode == 2, done.stderr
    assert f"the folder '{tmp_path / 'nowhere'}' does not exist" in done.stderr
    assert "temporary" not in done.stderr
    assert mock.service.count("authenticate") == before
    assert list(tmp_path.iterdir()) == []


def test_a_fifo_is_written_directly(mock: RunningMock, tmp_path: Path) -> None:
    mock.service.reset(records=7)
    fifo = tmp_path / "pipe.jsonl"
    os.mkfifo(fifo)
    with subprocess.Popen(
        ["cat", str(fifo)], stdout=subprocess.PIPE, text=True
    ) as reader:
        done = run_cli(export_argv(fifo, "--page-size", "3"), cli_env(mock.base_url))
        received, _ = reader.communicate(timeout=60)
    assert done.returncode == 0, done.stderr
    assert [json.loads(line) for line in received.splitlines()] == mock.service.dataset(
        "shipments", "acct-1"
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        fifo.name
    ]  # nothing kept beside it
