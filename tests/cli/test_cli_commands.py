"""``service-api`` end to end: the command runs as a child process against the mock over
loopback HTTP, as users run it (exit codes, outputs, resume, Ctrl-C, the progress bar)."""

from __future__ import annotations

import csv
import json
import os
import pty
import select
import signal
import socket
import subprocess
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest
from cli_process import (
    WINDOWS_OF_TIME,
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
from starlette.types import Receive, Scope, Send

from service_api_mock import RunningMock, serve_asgi

# -- list ---------------------------------------------------------------------------------


def test_two_accounts_export_every_record_as_sent_tagged_with_its_account(
    mock: RunningMock, tmp_path: Path
) -> None:
    mock.service.reset(records=120)
    out = tmp_path / "shipments.jsonl"
    done = run_cli(
        [
            "list",
            "shipments",
            "--account",
            "acct-1",
            "--account",
            "acct-2",
            "-o",
            str(out),
        ],
        cli_env(mock.base_url),
    )
    assert done.returncode == 0, done.stderr
    records = read_jsonl(out)
    expected = [
        {"account": account, **record}
        for account in ("acct-1", "acct-2")
        for record in mock.service.dataset("shipments", account)
    ]
    # Exactly as sent: same fields in the same order, values spelled as the API spelled
    # them (a declared date-time keeps its "Z"; a model's to_dict would write +00:00).
    assert records == expected
    assert [list(r) for r in records] == [list(r) for r in expected]
    first_leg = records[0]["shipmentLegs"][0]
    assert first_leg["shipFromDate"].endswith("Z")
    # Fields the spec does not declare are kept exactly as the mock sent them.
    assert "referenceNumber" in records[0]
    assert "status" in records[0]
    assert without_drift(done.stderr).strip().splitlines() == [
        f"service-api: exported 240 records (6 pages) to {out} in "
        + done.stderr.split(" in ", 1)[1].split("s [", 1)[0]
        + "s [acct-1: 120 records, 3 pages; acct-2: 120 records, 3 pages]"
    ]
    assert "\x1b[" not in done.stderr  # not a terminal: no bar, just the summary
    assert mock.service.count("authenticate") == 1  # one token for both accounts
    assert_no_credentials(mock, done.stdout, done.stderr, out.read_text())


def test_single_account_to_stdout_is_untagged(mock: RunningMock) -> None:
    mock.service.reset(records=7)
    done = run_cli(
        ["list", "devices", "--page-size", "3"],
        cli_env(mock.base_url, SERVICE_API_ACCOUNT_ID="acct-2"),
    )
    assert done.returncode == 0, done.stderr
    records = [json.loads(line) for line in done.stdout.splitlines()]
    assert records == mock.service.dataset("devices", "acct-2")
    assert "3 pages" in done.stderr


def test_csv_flattens_nested_fields_into_dotted_columns(
    mock: RunningMock, tmp_path: Path
) -> None:
    mock.service.reset(records=12)
    out = tmp_path / "shipments.csv"
    done = run_cli(
        # Pages fetched ahead in parallel still land in order.
        [
            "list",
            "shipments",
            "--account",
            "acct-1",
            "--format",
            "csv",
            "-o",
            str(out),
            "--page-size",
            "5",
            "--concurrency",
            "3",
        ],
        cli_env(mock.base_url),
    )
    assert done.returncode == 0, done.stderr
    with out.open(newline="", encoding="utf-8") as stream:
        rows = list(csv.DictReader(stream))
    dataset = mock.service.dataset("shipments", "acct-1")
    assert len(rows) == len(dataset)
    city = dataset[0]["shipmentLegs"][0]["fromAddress"]["locality"]
    assert rows[0]["shipmentLegs.0.fromAddress.locality"] == city
    # Cells hold the values as sent, as JSON Lines does.
    sent = dataset[0]["shipmentLegs"][0]["shipFromDate"]
    assert rows[0]["shipmentLegs.0.shipFromDate"] == sent
    assert [row["shipmentId"] for row in rows] == [r["shipmentId"] for r in dataset]
    assert "3 pages" in done.stderr


def test_table_format_and_max_items(mock: RunningMock) -> None:
    done = run_cli(
        [
            "list",
            "shipments",
            "--account",
            "acct-1",
            "--format",
            "table",
            "--max-items",
            "2",
        ],
        cli_env(mock.base_url),
    )
    assert done.returncode == 0, done.stderr
    assert "shipmentId" in done.stdout
    assert "referenceNumber" in done.stdout
    assert "exported 2 records (1 page)" in done.stderr


@pytest.mark.parametrize(
    ("args", "env", "code", "message"),
    [
        (["--account", "acct-3"], {}, 4, "403"),
        (
            ["--account", "acct-1"],
            {"SERVICE_API_CLIENT_SECRET": "wrong-secret"},
            3,
            "refused",
        ),
    ],
)
def test_failures_end_with_one_line_and_their_exit_code(
    mock: RunningMock,
    tmp_path: Path,
    args: list[str],
    env: dict[str, str],
    code: int,
    message: str,
) -> None:
    done = run_cli(["list", "shipments", *args], cli_env(mock.base_url, **env))
    assert done.returncode == code, done.stderr
    errors = [line for line in done.stderr.splitlines() if "error:" in line]
    assert len(errors) == 1
    assert message in errors[0]
    assert "Traceback" not in done.stderr
    assert_no_credentials(mock, done.stdout, done.stderr)


def test_the_error_line_comes_before_the_summary(mock: RunningMock) -> None:
    done = run_cli(["list", "shipments", "--account", "acct-3"], cli_env(mock.base_url))
    assert done.returncode == 4, done.stderr
    lines = done.stderr.splitlines()
    assert lines[0].startswith("service-api: error: acct-3: page 1 failed: ")
    assert len(lines) == 1  # nothing fetched, nothing to say about it, no resume advice


def test_a_pagination_warning_prints_as_one_line(mock: RunningMock) -> None:
    mock.service.reset(records=3)
    done = run_cli(
        ["list", "shipments", "--account", "acct-1", "--page-size", "60"],
        cli_env(mock.base_url),
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr.splitlines()[0] == (
        "service-api: warning: page_size 60 is above the service's maximum; using 50"
    )
    assert ".py" not in done.stderr
    assert "exported 3 records (1 page) to stdout" in done.stderr


def test_debug_adds_the_traceback(mock: RunningMock) -> None:
    done = run_cli(
        ["--debug", "list", "shipments", "--account", "acct-3"], cli_env(mock.base_url)
    )
    assert done.returncode == 4
    assert "Traceback" in done.stderr
    assert_no_credentials(mock, done.stdout, done.stderr)


def test_no_answer_is_an_api_error() -> None:
    # A port nobody listens on: bound, never listening, closed after the run.
    with socket.socket() as unused:
        unused.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{unused.getsockname()[1]}/public/v3"
        done = run_cli(["token"], cli_env(url))
    assert done.returncode == 5
    assert "no answer" in done.stderr
    assert "Traceback" not in done.stderr


def test_a_failure_keeps_whole_pages_and_the_same_command_fetches_only_the_rest(
    mock: RunningMock, tmp_path: Path
) -> None:
    mock.service.reset(records=100)
    mock.service.set_faults(latency_ms=30)
    out = tmp_path / "shipments.jsonl"
    env = cli_env(mock.base_url)
    argv = [
        "list",
        "shipments",
        "--account",
        "acct-1",
        "--page-size",
        "10",
        "-o",
        str(out),
    ]
    child = start_cli(argv, env)
    wait_for(lambda: partial_lines(out) >= 30, "three pages kept")
    # Every request fails from now on, beyond what the client's retries absorb.
    mock.service.set_faults(fault_rate=1.0, retry_after=0.0, latency_ms=0)
    _, stderr = child.communicate(timeout=60)
    assert child.returncode == 5, stderr
    assert not out.exists()  # FILE is written only once complete
    state = kept_state(out)["accounts"]["acct-1"]
    assert 3 <= state["pages"] < 10
    assert state["records"] == state["pages"] * 10  # whole pages only
    assert f"the {state['records']} records fetched are kept beside it" in stderr
    assert (
        without_drift(stderr)
        .rstrip()
        .endswith(
            "run the same command again to fetch only the rest (--restart starts over)"
        )
    )

    mock.service.set_faults(fault_rate=0.0)
    served = mock.service.count("listShipments", 200)
    done = run_cli(argv, env)
    assert done.returncode == 0, done.stderr
    assert read_jsonl(out) == mock.service.dataset("shipments", "acct-1")  # none twice
    assert mock.service.count("listShipments", 200) - served == 10 - state["pages"]
    assert f"({state['records']} of them kept from an earlier run)" in done.stderr
    assert not kept_folder(out).exists()


@pytest.mark.parametrize("stop", [signal.SIGINT, signal.SIGTERM])
def test_an_interrupted_export_leaves_file_as_it_was_and_the_rerun_completes_it(
    mock: RunningMock, tmp_path: Path, stop: signal.Signals
) -> None:
    mock.service.reset(records=60)
    mock.service.set_faults(latency_ms=30)
    out = tmp_path / "shipments.jsonl"
    out.write_bytes(b'{"shipmentId":"yesterday"}\n')
    env = cli_env(mock.base_url)
    two = ["--account", "acct-1", "--account", "acct-2"]
    argv = ["list", "shipments", *two, "--page-size", "10", "-o", str(out)]
    child = start_cli(argv, env)
    wait_for(lambda: partial_lines(out) >= 20, "two pages kept")
    child.send_signal(stop)
    _, stderr = child.communicate(timeout=60)
    assert child.returncode == 130, stderr
    assert "interrupted" in stderr
    assert "Traceback" not in stderr
    assert out.read_bytes() == b'{"shipmentId":"yesterday"}\n'
    assert "run the same command again" in stderr

    mock.service.set_faults(latency_ms=0)
    done = run_cli(argv, env)
    assert done.returncode == 0, done.stderr
    expected = [
        {"account": account, **record}
        for account in ("acct-1", "acct-2")
        for record in mock.service.dataset("shipments", account)
    ]
    assert read_jsonl(out) == expected


def test_a_refused_account_keeps_the_other_s_records(
    mock: RunningMock, tmp_path: Path
) -> None:
    mock.service.reset(records=30)
    out = tmp_path / "shipments.jsonl"
    env = cli_env(mock.base_url)
    argv = ["list", "shipments", "--page-size", "10", "-o", str(out), "--tag-account"]
    done = run_cli([*argv, "--account", "acct-3", "--account", "acct-1"], env)
    assert done.returncode == 4, done.stderr
    assert not out.exists()
    assert without_drift(done.stderr).startswith(
        "service-api: error: acct-3: page 1 failed: 403"
    )
    assert (
        "acct-3: 0 records, 0 pages (refused); acct-1: 30 records, 3 pages"
        in done.stderr
    )
    assert "the 30 records fetched are kept beside it" in done.stderr
    assert "run the same command without --account acct-3" in done.stderr

    served = mock.service.count("listShipments", 200)
    again = run_cli([*argv, "--account", "acct-1"], env)
    assert again.returncode == 0, again.stderr
    assert mock.service.count("listShipments", 200) == served  # nothing fetched twice
    expected = [
        {"account": "acct-1", **r} for r in mock.service.dataset("shipments", "acct-1")
    ]
    assert read_jsonl(out) == expected


def test_kept_pages_of_another_export_are_not_mixed_in(
    mock: RunningMock, tmp_path: Path
) -> None:
    mock.service.reset(records=30)
    out = tmp_path / "shipments.jsonl"
    env = cli_env(mock.base_url)
    argv = [
        "list",
        "shipments",
        "--account",
        "acct-3",
        "--account",
        "acct-1",
        "-o",
        str(out),
    ]
    assert run_cli([*argv, "--page-size", "10"], env).returncode == 4
    other = run_cli([*argv, "--page-size", "20"], env)
    assert other.returncode == 2, other.stderr
    assert "pages kept by another export (page_size 10)" in other.stderr
    assert "--restart" in other.stderr
    one = ["list", "shipments", "--account", "acct-1", "-o", str(out)]
    restarted = run_cli([*one, "--restart"], env)
    assert restarted.returncode == 0, restarted.stderr
    assert "kept from an earlier run" not in restarted.stderr
    assert len(read_jsonl(out)) == 30


def test_progress_bar_on_a_terminal(mock: RunningMock, tmp_path: Path) -> None:
    mock.service.reset(records=60)
    mock.service.set_faults(latency_ms=30)
    out = tmp_path / "shipments.jsonl"
    controller, terminal = pty.openpty()
    try:
        child = start_cli(
            [
                "list",
                "shipments",
                "--account",
                "acct-1",
                "--page-size",
                "10",
                "-o",
                str(out),
            ],
            cli_env(mock.base_url, TERM="xterm-256color"),
            stdout=subprocess.DEVNULL,
            stderr=terminal,
        )
        os.close(terminal)
        screen = b""
        deadline = time.monotonic() + WINDOWS_OF_TIME
        # Drain the terminal until the child closes it, so that it never blocks on a write.
        while time.monotonic() < deadline:
            ready, _, _ = select.select([controller], [], [], 1.0)
            if not ready:
                if child.poll() is not None:
                    break
                continue
            try:
                chunk = os.read(controller, 65536)
            except OSError:  # EIO: the child closed its end
                break
            if not chunk:
                break
            screen += chunk
        assert child.wait(timeout=30) == 0
    finally:
        os.close(controller)
    text = screen.decode("utf-8", errors="replace")
    assert "\x1b[" in text  # drawn with terminal control codes
    assert "60/60" in text
    assert "records" in text
    assert "6 pages" in text
    assert "rec/s" in text
    assert "ETA" in text
    assert "exported 60 records (6 pages)" in text


# -- token ----------------------------------------------------------------------------------


def test_token_shows_type_and_expiry_and_the_token_only_when_asked(
    mock: RunningMock,
) -> None:
    done = run_cli(["token"], cli_env(mock.base_url))
    assert done.returncode == 0, done.stderr
    assert "token_type: Bearer" in done.stdout
    assert "expires_in: 3600 s" in done.stdout
    (token,) = mock.service.issued_tokens()
    assert token not in done.stdout + done.stderr

    shown = run_cli(["token", "--show-token"], cli_env(mock.base_url))
    assert shown.returncode == 0, shown.stderr
    assert f"access_token: {mock.service.issued_tokens()[-1]}" in shown.stdout


def _token_app(
    status: int, body: bytes
) -> Callable[[Scope, Receive, Send], Awaitable[None]]:
    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        headers = [(b"content-type", b"application/json")]
        await send(
            {"type": "http.response.start", "status": status, "headers": headers}
        )
        await send({"type": "http.response.body", "body": body})

    return app


def _token_body(**fields: object) -> bytes:
    token = {
        "access_token": "unusable-answer-token",
        "token_type": "Bearer",
        "expires_in": "60",
    }
    return json.dumps(token | fields).encode()


@pytest.mark.parametrize(
    ("status", "body", "message"),
    [
        # A token no client can schedule a refresh for.
        (
            200,
            _token_body(expires_in="0"),
            "expires_in is '0', not a whole number of seconds",
        ),
        (
            200,
            _token_body(expires_in="3600.5"),
            "expires_in is '3600.5', not a whole number",
        ),
        (200, _token_body(access_token="two words"), "has no usable access_token"),
        (
            200,
            _token_body(token_type="MAC"),
            "is not a JSON object with an access_token, token",
        ),
        (
            200,
            b"<html>",
            "is not a JSON object with an access_token, token_type Bearer",
        ),
        (503, b"{}", "answered 503"),
    ],
)
def test_token_reports_an_unusable_answer_without_the_token(
    status: int, body: bytes, message: str
) -> None:
    with serve_asgi(_token_app(status, body)) as origin:
        done = run_cli(["token", "--show-token"], cli_env(f"{origin}/public/v3"))
    assert done.returncode == 5, done.stdout
    assert message in done.stderr
    assert "unusable-answer-token" not in done.stdout + done.stderr


@pytest.mark.parametrize(
    ("path", "hinted"),
    [("", True), ("/gateway", True), ("/public/v3", False), ("/gateway/api/v3", False)],
)
def test_the_version_hint_only_where_the_url_lacks_the_version(
    path: str, hinted: bool
) -> None:
    hint = "does the base URL end with /public/v3?"
    with serve_asgi(_token_app(404, b"{}")) as origin:
        token = run_cli(["token"], cli_env(f"{origin}{path}"))
        listed = run_cli(
            ["list", "shipments", "--account", "a"], cli_env(origin + path)
        )
    assert token.returncode == 5, token.stderr
    assert (
        f"answered 404; {hint}" in token.stderr if hinted else hint not in token.stderr
    )
    # The same for the library's hint on a failed list (its token request answered 404).
    assert listed.returncode == 5, listed.stderr
    assert ("/public/v3 prefix" in listed.stderr) == hinted, listed.stderr


def test_token_prints_an_integer_expires_in_too() -> None:
    with serve_asgi(_token_app(200, _token_body(expires_in=60))) as origin:
        done = run_cli(["token"], cli_env(f"{origin}/public/v3"))
    assert done.returncode == 0, done.stderr
    assert "expires_in: 60 s" in done.stdout
    assert "unusable-answer-token" not in done.stdout + done.stderr


def test_token_with_a_wrong_secret_is_an_authentication_error(
    mock: RunningMock,
) -> None:
    done = run_cli(
        ["token"], cli_env(mock.base_url, SERVICE_API_CLIENT_SECRET="wrong-secret")
    )
    assert done.returncode == 3
    assert "refused" in done.stderr
    assert "wrong-secret" not in done.stderr


# -- mock -----------------------------------------------------------------------------------


def test_mock_command_serves_the_mock_until_ctrl_c(tmp_path: Path) -> None:
    server = start_cli(
        ["mock", "--port", "0", "--records", "7", "--log-level", "warning"],
        os.environ,
    )
    try:
        assert server.stdout is not None
        first = server.stdout.readline()
        assert first.startswith("service-api mock listening on http://127.0.0.1:")
        base_url = first.split(" on ", 1)[1].strip()
        done = run_cli(["list", "shipments", "--account", "acct-1"], cli_env(base_url))
        assert done.returncode == 0, done.stderr
        assert len(done.stdout.splitlines()) == 7
    finally:
        server.send_signal(signal.SIGINT)
        _, stderr = server.communicate(timeout=30)
    assert server.returncode == 0  # a server stopped by Ctrl-C ends normally
    assert stderr == ""


def test_csv_on_standard_output_gets_what_was_fetched_after_a_failure(
    mock: RunningMock,
) -> None:
    mock.service.reset(records=30)
    argv = [
        "list",
        "shipments",
        "--account",
        "acct-1",
        "--account",
        "acct-3",
        "--format",
        "csv",
    ]
    done = run_cli(argv, cli_env(mock.base_url))
    assert done.returncode == 4, done.stderr
    rows = list(csv.DictReader(done.stdout.splitlines()))
    assert [row["account"] for row in rows] == ["acct-1"] * 30
    assert (
        "the 30 records went to stdout; a rerun starts over" not in done.stderr
    )  # 403: final
    assert "acct-3: 0 records, 0 pages (refused)" in done.stderr


def test_even_a_kill_9_loses_no_whole_page_and_writes_none_twice(
    mock: RunningMock, tmp_path: Path
) -> None:
    mock.service.reset(records=100)
    mock.service.set_faults(latency_ms=30)
    out = tmp_path / "shipments.jsonl"
    env = cli_env(mock.base_url)
    argv = [
        "list",
        "shipments",
        "--account",
        "acct-1",
        "--page-size",
        "10",
        "-o",
        str(out),
    ]
    child = start_cli(argv, env)
    wait_for(lambda: partial_lines(out) >= 30, "three pages kept")
    child.kill()  # no handler runs: what is on disk is all there is
    child.communicate(timeout=60)
    mock.service.set_faults(latency_ms=0)
    done = run_cli(argv, env)
    assert done.returncode == 0, done.stderr
    assert read_jsonl(out) == mock.service.dataset("shipments", "acct-1")
