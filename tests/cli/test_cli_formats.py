"""The output format: ``--format``, else the extension of ``--output``; contradictions are
usage errors."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest
from cli_process import cli_env, read_jsonl, run_cli

from service_api_cli._exit_codes import UsageError
from service_api_cli._formats import choose_format
from service_api_mock import RunningMock


@pytest.mark.parametrize(
    ("explicit", "output", "chosen"),
    [
        (None, None, "jsonl"),
        (None, "-", "jsonl"),
        (None, "out.csv", "csv"),
        (None, "OUT.CSV", "csv"),
        (None, "out.jsonl", "jsonl"),
        (None, "out.ndjson", "jsonl"),
        (None, "out.txt", "jsonl"),
        (None, "out", "jsonl"),
        ("csv", "out.txt", "csv"),
        ("csv", None, "csv"),
        ("jsonl", "out.json", "jsonl"),
        ("table", "out.txt", "table"),
        ("csv", "out.csv", "csv"),
    ],
)
def test_the_format_follows_the_flag_then_the_extension(
    explicit: str | None, output: str | None, chosen: str
) -> None:
    assert choose_format(explicit, output) == chosen


@pytest.mark.parametrize(
    ("explicit", "output", "message"),
    [
        ("jsonl", "out.csv", "--format jsonl contradicts --output 'out.csv'"),
        ("csv", "out.jsonl", "--format csv contradicts"),
        ("table", "out.ndjson", "--format table contradicts"),
        (None, "out.json", "name the file .jsonl or pass --format jsonl"),
    ],
)
def test_a_contradiction_is_a_usage_error(
    explicit: str | None, output: str, message: str
) -> None:
    with pytest.raises(UsageError, match=message):
        choose_format(explicit, output)


def test_a_csv_file_name_writes_csv(mock: RunningMock, tmp_path: Path) -> None:
    mock.service.reset(records=3)
    out = tmp_path / "devices.csv"
    done = run_cli(
        ["list", "devices", "--account", "acct-1", "-o", str(out)],
        cli_env(mock.base_url),
    )
    assert done.returncode == 0, done.stderr
    with out.open(newline="", encoding="utf-8") as stream:
        rows = list(csv.DictReader(stream))
    assert [row["deviceId"] for row in rows] == [
        d["deviceId"] for d in mock.service.dataset("devices", "acct-1")
    ]


def test_a_json_file_name_with_format_jsonl_writes_json_lines(
    mock: RunningMock, tmp_path: Path
) -> None:
    mock.service.reset(records=3)
    out = tmp_path / "devices.json"
    argv = [
        "list",
        "devices",
        "--account",
        "acct-1",
        "--format",
        "jsonl",
        "-o",
        str(out),
    ]
    done = run_cli(argv, cli_env(mock.base_url))
    assert done.returncode == 0, done.stderr
    assert read_jsonl(out) == mock.service.dataset("devices", "acct-1")


def test_a_contradiction_exits_2_before_any_request(
    mock: RunningMock, tmp_path: Path
) -> None:
    out = tmp_path / "devices.csv"
    argv = [
        "list",
        "devices",
        "--account",
        "acct-1",
        "--format",
        "jsonl",
        "-o",
        str(out),
    ]
    done = run_cli(argv, cli_env(mock.base_url))
    assert done.returncode == 2
    assert "contradicts" in done.stderr
    assert mock.service.count() == 0
    assert not out.exists()
