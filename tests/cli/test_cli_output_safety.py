"""A failed ``service-api list -o FILE`` leaves FILE's previous bytes as they were: wrong
secret, closed port, Ctrl-C and a full disk, for JSON Lines and CSV; the command runs as a
child process against the mock over loopback HTTP."""

from __future__ import annotations

import resource
import signal
import socket
from collections.abc import Callable
from pathlib import Path

import pytest
from cli_process import (
    assert_no_credentials,
    cli_env,
    partial_lines,
    read_jsonl,
    resume_argv,
    run_cli,
    start_cli,
    wait_for,
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


def assert_untouched(path: Path, fmt: str) -> None:
    assert path.read_bytes() == PREVIOUS[fmt]
    assert [p.name for p in path.parent.iterdir()] == [path.name]  # no temporary file left


def export_argv(out: Path, *extra: str) -> list[str]:
    return ["list", "shipments", "--account", "acct-1", "-o", str(out), *extra]


@pytest.mark.parametrize("fmt", ["jsonl", "csv"])
def test_wrong_secret(mock: RunningMock, tmp_path: Path, fmt: str) -> None:
    out = previous_file(tmp_path, fmt)
    done = run_cli(export_argv(out), cli_env(mock.base_url, SERVICE_API_CLIENT_SECRET="nope-x"))
    assert done.returncode == 3, done.stderr
    assert_untouched(out, fmt)
    assert f"{out} was left as it was" in done.stderr
    assert "resume with" not in done.stderr
    assert_no_credentials(mock, done.stderr)


@pytest.mark.parametrize("fmt", ["jsonl", "csv"])
def test_closed_port(tmp_path: Path, fmt: str) -> None:
    out = previous_file(tmp_path, fmt)
    with socket.socket() as unused:
        unused.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{unused.getsockname()[1]}/public/v3"
        done = run_cli(["--retries", "0", *export_argv(out)], cli_env(url))
    assert done.returncode == 5, done.stderr
    assert_untouched(out, fmt)


@pytest.mark.parametrize("fmt", ["jsonl", "csv"])
def test_ctrl_c(mock: RunningMock, tmp_path: Path, fmt: str) -> None:
    mock.service.reset(records=200)
    mock.service.set_faults(latency_ms=30)
    out = previous_file(tmp_path, fmt)
    child = start_cli(export_argv(out, "--page-size", "10"), cli_env(mock.base_url))
    wait_for(lambda: mock.service.count("listShipments", 200) >= 3, "three pages served")
    child.send_signal(signal.SIGINT)
    _, stderr = child.communicate(timeout=60)
    assert child.returncode == 130, stderr
    assert_untouched(out, fmt)
    # The error line first, then what was done, then what became of the file.
    lines = stderr.splitlines()
    assert lines[0] == "service-api: interrupted"
    assert lines[1].startswith("service-api: stopped after ")
    assert "was left as it was" in lines[2]


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


@pytest.mark.parametrize(("page_size", "limit"), [(2, FILE_SIZE_LIMIT), (50, ONE_PAGE_AND_A_BIT)])
def test_disk_full_with_keep_partial_keeps_whole_pages(
    mock: RunningMock, tmp_path: Path, page_size: int, limit: int
) -> None:
    mock.service.reset(records=120)
    out = previous_file(tmp_path, "jsonl")
    done = run_cli(
        export_argv(out, "--page-size", str(page_size), "--keep-partial"),
        cli_env(mock.base_url),
        preexec_fn=file_size_limit(limit),
    )
    assert done.returncode == 1, done.stderr
    kept = read_jsonl(out)  # ends on a whole record
    dataset = mock.service.dataset("shipments", "acct-1")
    assert page_size <= len(kept) < len(dataset)
    assert len(kept) % page_size == 0
    assert kept == dataset[: len(kept)]
    (resume,) = resume_argv(done.stderr)
    assert resume[resume.index("--start-page") + 1] == str(len(kept) // page_size + 1)
    # With room again the resume completes the file exactly.
    finished = run_cli(resume, cli_env(mock.base_url))
    assert finished.returncode == 0, finished.stderr
    assert read_jsonl(out) == dataset


def test_disk_full_while_appending_cuts_back_to_a_whole_page(
    mock: RunningMock, tmp_path: Path
) -> None:
    mock.service.reset(records=120)
    out = previous_file(tmp_path, "jsonl")
    done = run_cli(
        export_argv(out, "--page-size", "2", "--append"),
        cli_env(mock.base_url),
        preexec_fn=file_size_limit(FILE_SIZE_LIMIT),
    )
    assert done.returncode == 1, done.stderr
    data = out.read_bytes()
    assert data.startswith(PREVIOUS["jsonl"])
    appended = read_jsonl(out)[2:]
    assert appended == mock.service.dataset("shipments", "acct-1")[: len(appended)]
    assert len(appended) % 2 == 0
    (resume,) = resume_argv(done.stderr)
    assert resume[resume.index("--start-page") + 1] == str(len(appended) // 2 + 1)


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
    done = run_cli(export_argv(tmp_path / "nowhere" / "out.jsonl"), cli_env(mock.base_url))
    assert done.returncode == 2, done.stderr
    assert f"the folder '{tmp_path / 'nowhere'}' does not exist" in done.stderr
    assert "temporary" not in done.stderr
    assert mock.service.count("authenticate") == before
    assert list(tmp_path.iterdir()) == []
