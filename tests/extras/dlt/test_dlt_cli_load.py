"""``service-api load`` as users run it: a child process against the mock over loopback,
DuckDB written in ``tmp_path`` (the working directory of the child), checked with SQL."""

from __future__ import annotations

import dataclasses
import io
import os
import pty
import re
import select
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip(
    "dlt", reason="dlt is not installed: pip install 'service-api[dlt]'"
)
pytest.importorskip(
    "duckdb", reason="duckdb is not installed: pip install 'service-api[dlt]'"
)

import duckdb
from dlt.common.normalizers.naming import snake_case

from service_api_client.api import LIST_ENDPOINTS
from service_api_mock import DEMO_CLIENT_ID, DEMO_CLIENT_SECRET, RunningMock

LOAD = [sys.executable, "-m", "service_api_cli", "load"]


def child_env(mock: RunningMock, **env: str) -> dict[str, str]:
    environment = {
        k: v for k, v in os.environ.items() if not k.startswith("SERVICE_API_")
    }
    environment.update(
        SERVICE_API_BASE_URL=mock.base_url,
        SERVICE_API_CLIENT_ID=DEMO_CLIENT_ID,
        SERVICE_API_CLIENT_SECRET=DEMO_CLIENT_SECRET,
        RUNTIME__DLTHUB_TELEMETRY="false",
    )
    environment.update(env)
    return environment


def start_load(args: list[str], mock: RunningMock, cwd: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [*LOAD, *args, "--pipelines-dir", str(cwd / "pipelines")],
        cwd=cwd,
        env=child_env(mock),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        # Ctrl-C reaches the child as in a terminal, even when the test run was started
        # with SIGINT ignored (a background job of a shell), which it would inherit.
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )


def wait_for(condition: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + 60
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.02)


def without_drift(stderr: str) -> str:
    """``stderr`` without the lines that say where the answers differed from the spec
    (the mock sends fields the spec does not declare)."""
    return "".join(
        line
        for line in stderr.splitlines(keepends=True)
        if " from the spec at " not in line
    )


def run_load(
    args: list[str],
    mock: RunningMock,
    cwd: Path,
    *,
    pipelines: bool = True,
    environment: dict[str, str] | None = None,
    **env: str,
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [
            *LOAD,
            *args,
            *(["--pipelines-dir", str(cwd / "pipelines")] if pipelines else []),
        ],
        cwd=cwd,
        env=child_env(mock, **env) if environment is None else environment,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def counts(database: Path, table: str) -> list[tuple[Any, ...]]:
    id_field = LIST_ENDPOINTS[table].id_field
    assert id_field is not None, f"{table} has no identifier field"
    column = snake_case.NamingConvention().normalize_identifier(
        id_field
    )  # dlt's own rule
    # Names from the generated registry, not from input.
    statement = f"select account, count(*), count(distinct {column}) from raw.{table}"  # noqa: S608
    statement += " group by account order by account"
    with duckdb.connect(str(database), read_only=True) as connection:
        rows: list[tuple[Any, ...]] = connection.execute(statement).fetchall()
    return rows


TWO_ACCOUNTS = ["--account", "acct-1", "--account", "acct-2"]
RESUME = "run the same command again to resume (rows are merged, never duplicated)"


def test_load_two_endpoints_for_two_accounts_into_duckdb(
    mock: RunningMock, tmp_path: Path
) -> None:
    mock.service.reset(records=70)
    done = run_load(["shipments", "devices", *TWO_ACCOUNTS], mock, tmp_path)
    assert done.returncode == 0, done.stderr
    assert (
        "service-api: loaded shipments: 140 rows, 140 new, 0 already there (+"
        in done.stderr
    )
    assert (
        "devices: 140 rows, 140 new, 0 already there into duckdb dataset raw in "
        in done.stderr
    )
    assert "nothing new" not in done.stderr
    database = tmp_path / "service_api.duckdb"
    assert counts(database, "shipments") == [("acct-1", 70, 70), ("acct-2", 70, 70)]
    assert counts(database, "devices") == [("acct-1", 70, 70), ("acct-2", 70, 70)]

    mock.service.update_record("devices", "acct-1", 0, {"battery": 2.0})
    again = run_load(["devices", *TWO_ACCOUNTS], mock, tmp_path)
    assert again.returncode == 0, again.stderr
    assert "loaded devices: 140 rows, 0 new, 140 already there into" in again.stderr
    assert without_drift(again.stderr).rstrip().endswith("; nothing new was added")
    assert counts(database, "devices") == [("acct-1", 70, 70), ("acct-2", 70, 70)]
    device_id = mock.service.dataset("devices", "acct-1")[0]["deviceId"]
    with duckdb.connect(str(database), read_only=True) as connection:
        battery = connection.execute(
            "select battery from raw.devices where device_id = ?", [device_id]
        ).fetchall()
    assert battery == [(2.0,)]


def test_an_account_refused_keeps_the_others_and_exits_4(
    mock: RunningMock, tmp_path: Path
) -> None:
    # acct-3 belongs to another integration: 403, which a rerun cannot cure.
    mock.service.reset(records=60)
    done = run_load(
        ["devices", "--account", "acct-1", "--account", "acct-3"], mock, tmp_path
    )
    assert done.returncode == 4, done.stderr
    lines = without_drift(done.stderr).splitlines()
    assert lines[0].startswith("service-api: error: acct-3: page 1 failed: 403")
    assert lines[0].endswith("; loading the others")
    assert lines[1].startswith(
        "service-api: loaded devices: 60 rows, 60 new, 0 already there"
    )
    assert len(lines) == 2
    assert "resume" not in done.stderr
    assert counts(tmp_path / "service_api.duckdb", "devices") == [("acct-1", 60, 60)]


def test_the_only_account_refused_is_said_once_and_nothing_is_created(
    mock: RunningMock, tmp_path: Path
) -> None:
    done = run_load(["devices", "--account", "acct-3"], mock, tmp_path)
    assert done.returncode == 4, done.stderr
    (line,) = done.stderr.splitlines()
    assert line.startswith("service-api: error: acct-3: page 1 failed: 403")
    assert "the others" not in line
    assert list(tmp_path.iterdir()) == []


def test_ctrl_c_says_how_to_resume_and_the_rerun_completes(
    mock: RunningMock, tmp_path: Path
) -> None:
    # Slow pages, so that Ctrl-C lands while a page is awaited, as it mostly does.
    mock.service.reset(records=150, latency_ms=150)
    child = start_load(["shipments", *TWO_ACCOUNTS], mock, tmp_path)
    try:
        # One page of one record per account checks them first; then the load's own.
        wait_for(
            lambda: mock.service.count("listShipments", 200) >= 4, "two pages loaded"
        )
        child.send_signal(signal.SIGINT)
        _, stderr = child.communicate(timeout=120)
    finally:
        if child.poll() is None:
            child.kill()
            child.communicate()
    assert child.returncode == 130, stderr
    # What happened first, then what was loaded before it, then how to go on.
    lines = without_drift(stderr).splitlines()
    assert lines[0] == "service-api: interrupted"
    assert lines[1].startswith("service-api: loaded shipments: ")
    assert lines[2] == f"service-api: {RESUME}"

    mock.service.set_faults(latency_ms=0)
    resumed = run_load(["shipments", *TWO_ACCOUNTS], mock, tmp_path)
    assert resumed.returncode == 0, resumed.stderr
    assert counts(tmp_path / "service_api.duckdb", "shipments") == [
        ("acct-1", 150, 150),
        ("acct-2", 150, 150),
    ]


def test_a_wrong_secret_is_said_before_anything_is_created(
    mock: RunningMock, tmp_path: Path
) -> None:
    done = run_load(
        ["shipments", "--account", "acct-1"],
        mock,
        tmp_path,
        SERVICE_API_CLIENT_SECRET="nope",
    )
    assert done.returncode == 3, done.stderr
    (line,) = done.stderr.splitlines()
    assert line.startswith("service-api: error: ")
    assert "refused the client credentials" in line
    assert sorted(p.name for p in tmp_path.iterdir()) == []  # no database, no pipeline


def test_an_unreachable_service_is_said_with_each_retry_and_creates_nothing(
    mock: RunningMock, tmp_path: Path
) -> None:
    with socket.socket() as unused:
        unused.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{unused.getsockname()[1]}/public/v3"
        done = subprocess.run(
            [*LOAD[:-1], "--retries", "2", "load", "shipments", "--account", "acct-1"],
            cwd=tmp_path,
            env=child_env(mock, SERVICE_API_BASE_URL=url),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
    assert done.returncode == 5, done.stderr
    lines = done.stderr.splitlines()
    assert all("after ApiConnectionError in " in line for line in lines[:-1])
    assert "(retry 2 of 2)" in lines[-2]
    assert lines[-1].startswith("service-api: error: ")
    assert "resume" not in done.stderr
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["parcels", "--account", "acct-1"],
            f"unknown endpoint 'parcels' (known: {', '.join(LIST_ENDPOINTS)})",
        ),
        (["shipments"], "no account: pass --account ID"),
        (
            ["shipments", "--account", "acct-1", "--page-size", "51"],
            "argument --page-size: must be at most 50, got 51",
        ),
    ],
)
def test_usage_errors_end_with_one_line_and_code_2(
    mock: RunningMock, tmp_path: Path, args: list[str], message: str
) -> None:
    done = run_load(args, mock, tmp_path, SERVICE_API_ACCOUNT_ID="")
    assert done.returncode == 2
    (error,) = [line for line in done.stderr.splitlines() if "error:" in line]
    assert f"error: {message}" in error
    assert done.stderr.startswith("usage: service-api load ")  # the command's usage
    assert "Traceback" not in done.stderr
    assert list(tmp_path.iterdir()) == []


def test_help_names_the_extra_the_resume_and_where_the_state_goes(
    mock: RunningMock, tmp_path: Path
) -> None:
    done = run_load(["--help"], mock, tmp_path)
    assert done.returncode == 0
    assert "pip install 'service-api[dlt]'" in done.stdout
    assert "run the same" in done.stdout
    # Where the state goes (test_without_pipelines_dir_...).
    shown = " ".join(done.stdout.split())
    assert "beside the DuckDB file, in FILE.dlt/" in shown
    assert "(service_api.duckdb.dlt/)" in shown


@pytest.mark.parametrize("database", ["service_api.duckdb", "sub/other.duckdb"])
def test_without_pipelines_dir_the_state_goes_beside_the_duckdb_file(
    mock: RunningMock, tmp_path: Path, database: str
) -> None:
    mock.service.reset(records=10)
    home = tmp_path / "home"
    home.mkdir()
    (tmp_path / "sub").mkdir()
    env = child_env(mock, HOME=str(home))
    if "/" in database:  # else dlt's default: PIPELINE-NAME.duckdb
        env["DESTINATION__DUCKDB__CREDENTIALS"] = database
    for _ in range(2):
        done = run_load(
            ["devices", "--account", "acct-1"],
            mock,
            tmp_path,
            pipelines=False,
            environment=env,
        )
        assert done.returncode == 0, done.stderr
    assert (tmp_path / database).is_file()
    state = tmp_path / f"{database}.dlt" / "service_api"
    assert (state / "state.json").is_file()
    assert not (tmp_path / ".dlt-pipelines").exists()
    assert list(home.iterdir()) == []  # not in dlt's own place either
    # Loaded packages keep no copy of the rows: the folder stays small.
    assert not [p for p in state.rglob("*.jsonl") if "completed_jobs" in str(p)]
    assert counts(tmp_path / database, "devices") == [("acct-1", 10, 10)]


def test_another_destination_keeps_its_state_in_dlt_s_own_place(
    mock: RunningMock, tmp_path: Path
) -> None:
    mock.service.reset(records=10)
    # dlt's own place: DLT_DATA_DIR/pipelines when set (else ~/.dlt, /var/dlt for root).
    done = run_load(
        ["devices", "--account", "acct-1", "--destination", "filesystem"],
        mock,
        tmp_path,
        pipelines=False,
        DLT_DATA_DIR=str(tmp_path / "dlt-data"),
        DESTINATION__FILESYSTEM__BUCKET_URL=(tmp_path / "files").as_uri(),
    )
    assert done.returncode == 0, done.stderr
    assert "service-api: loaded devices: 10 rows" in done.stderr
    state = tmp_path / "dlt-data" / "pipelines" / "service_api" / "state.json"
    assert state.is_file()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["dlt-data", "files"]


def test_a_missing_duckdb_folder_is_said_before_anything_is_asked(
    mock: RunningMock, tmp_path: Path
) -> None:
    database = tmp_path / "missing" / "x.duckdb"
    done = run_load(
        ["devices", "--account", "acct-1"],
        mock,
        tmp_path,
        pipelines=False,
        DESTINATION__DUCKDB__CREDENTIALS=str(database),
    )
    assert done.returncode == 2, done.stderr
    (error,) = [line for line in done.stderr.splitlines() if "error:" in line]
    assert error == (
        f"service-api: error: the folder {str(database.parent)!r} does not exist "
        f"(for the DuckDB file {str(database)!r})"
    )
    assert mock.service.count() == 0
    assert list(tmp_path.iterdir()) == []


def test_from_loads_exported_files_without_credentials_and_twice_adds_nothing(
    mock: RunningMock, tmp_path: Path
) -> None:
    mock.service.reset(records=70)
    export_env = child_env(mock)
    exported = []
    for account, tag in (("acct-1", []), ("acct-2", ["--tag-account"])):
        path = tmp_path / f"{account}.jsonl"
        subprocess.run(
            [
                sys.executable,
                "-m",
                "service_api_cli",
                "list",
                "shipments",
                "--account",
                account,
                *tag,
                "--output",
                str(path),
            ],
            env=export_env,
            check=True,
            capture_output=True,
            timeout=120,
        )
        exported += ["--from", str(path)]
    # No base URL, no client ID, no secret: nothing is asked of the API.
    offline = {k: v for k, v in export_env.items() if not k.startswith("SERVICE_API_")}
    before = mock.service.counts()
    for new in (140, 0):
        done = run_load(
            ["shipments", *exported, "--account", "acct-1"],
            mock,
            tmp_path,
            environment=offline,
        )
        assert done.returncode == 0, done.stderr
        there = 140 - new
        assert (
            f"loaded shipments: 140 rows, {new} new, {there} already there (+"
            in done.stderr
        )
        assert ("nothing new was added" in done.stderr) == (new == 0)
        assert counts(tmp_path / "service_api.duckdb", "shipments") == [
            ("acct-1", 70, 70),
            ("acct-2", 70, 70),
        ]
    assert mock.service.counts() == before


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["shipments", "devices", "--from", "x.jsonl"],
            "--from loads files of one endpoint",
        ),
        (
            ["shipments", "--from", "absent.jsonl"],
            "--from 'absent.jsonl': no such file",
        ),
        (
            ["shipments", "--from", "x.jsonl", "--account", "a", "--account", "b"],
            "--from takes at most one --account",
        ),
    ],
)
def test_from_usage_errors(
    mock: RunningMock, tmp_path: Path, args: list[str], message: str
) -> None:
    (tmp_path / "x.jsonl").write_text("")
    done = run_load(args, mock, tmp_path, SERVICE_API_ACCOUNT_ID="")
    assert done.returncode == 2, done.stderr
    assert f"service-api: error: {message}" in done.stderr


def test_help_gives_each_default_once(mock: RunningMock, tmp_path: Path) -> None:
    shown = " ".join(run_load(["--help"], mock, tmp_path).stdout.split())
    assert "(order is kept; default: 4)" in shown
    assert "(default: duckdb, a local file)" in shown
    assert "(default: duckdb, a local file) (default: duckdb)" not in shown


def test_progress_on_a_terminal(mock: RunningMock, tmp_path: Path) -> None:
    mock.service.reset(records=120, latency_ms=20)
    controller, terminal = pty.openpty()
    try:
        child = subprocess.Popen(
            [
                *LOAD,
                "shipments",
                "--account",
                "acct-1",
                "--pipelines-dir",
                str(tmp_path / "p"),
            ],
            cwd=tmp_path,
            env=child_env(mock, TERM="xterm-256color", COLUMNS="120"),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=terminal,
        )
        os.close(terminal)
        screen = b""
        # Drain the terminal until the child closes it, so that it never blocks on a write.
        while select.select([controller], [], [], 60)[0]:
            try:
                chunk = os.read(controller, 65536)
            except OSError:  # EIO: the child closed its end
                break
            if not chunk:
                break
            screen += chunk
        assert child.wait(timeout=60) == 0
    finally:
        os.close(controller)
    text = screen.decode("utf-8", errors="replace")
    assert "\x1b[" in text  # drawn with terminal control codes
    assert "starting dlt" in text  # never a silent screen while dlt loads
    # The step and what it counted so far: rows per table, then jobs.
    assert re.search(r"Extract: [^\r]*shipments 120", text), text
    assert "Load: Jobs" in text
    assert "loaded shipments: 120 rows, 120 new" in text


@pytest.fixture
def keyless_devices(monkeypatch: pytest.MonkeyPatch) -> None:
    """The registry as `make` writes it for a spec whose devices have no single ...Id
    field: the command line and the dlt source read the same entry."""
    import service_api.dlt._source
    from service_api_cli import _job

    entry = dataclasses.replace(LIST_ENDPOINTS["devices"], id_field=None)
    registry = {**LIST_ENDPOINTS, "devices": entry}
    monkeypatch.setattr(_job, "LIST_ENDPOINTS", registry)
    monkeypatch.setattr(service_api.dlt._source, "LIST_ENDPOINTS", registry)


@pytest.mark.usefixtures("keyless_devices")
def test_records_without_an_id_field_replace_their_table_or_merge_on_the_key_named(
    mock: RunningMock,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    from service_api_cli import main

    mock.service.reset(records=30)
    for name, value in child_env(mock).items():
        monkeypatch.setenv(name, value)
    monkeypatch.setattr(sys, "stdin", io.StringIO())  # not a terminal
    monkeypatch.chdir(tmp_path)
    load = ["load", "devices", "shipments", "--account", "acct-1"]
    # Nothing to merge on: each load replaces the table, beside the merged shipments.
    for new in (30, 0):
        assert main([*load, "--pipelines-dir", "state"]) == 0
        err = capsys.readouterr().err
        assert "loaded devices: 30 rows, the table replaced" in err
        assert f"shipments: 30 rows, {new} new" in err
    assert counts(tmp_path / "service_api.duckdb", "devices") == [("acct-1", 30, 30)]

    # Merged on the key given: a second load adds no row.
    keyed = ["load", "devices", "--account", "acct-1", "--pipeline-name", "keyed"]
    for new in (30, 0):
        assert main([*keyed, "--primary-key", "deviceId"]) == 0
        assert f"loaded devices: 30 rows, {new} new" in capsys.readouterr().err
    assert counts(tmp_path / "keyed.duckdb", "devices") == [("acct-1", 30, 30)]

    exported = tmp_path / "devices.jsonl"
    assert main(["list", "devices", "--account", "acct-2", "-o", str(exported)]) == 0
    from_file = ["load", "devices", "--from", str(exported), "--account", "acct-2"]
    from_file += ["--pipeline-name", "keyed"]
    for _ in range(2):
        assert main([*from_file, "--primary-key", "deviceId"]) == 0
    assert counts(tmp_path / "keyed.duckdb", "devices") == [
        ("acct-1", 30, 30),
        ("acct-2", 30, 30),
    ]
