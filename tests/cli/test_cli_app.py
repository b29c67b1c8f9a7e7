"""The command's front door, in process: help, version, usage errors, settings."""

from __future__ import annotations

import ast
import io
import json
import logging
import re
import sys
import warnings
from pathlib import Path

import pytest

import service_api
import service_api_cli
from service_api_cli import main
from service_api_cli._app import _logging_to_stderr, build_parser
from service_api_cli._exit_codes import describe_error
from service_api_cli._formats import FORMAT_BY_EXTENSION
from service_api_mock import DEMO_CLIENT_ID, DEMO_CLIENT_SECRET, RunningMock


@pytest.fixture
def env(monkeypatch: pytest.MonkeyPatch, mock: RunningMock) -> RunningMock:
    monkeypatch.setenv("SERVICE_API_BASE_URL", mock.base_url)
    monkeypatch.setenv("SERVICE_API_CLIENT_ID", DEMO_CLIENT_ID)
    monkeypatch.setenv("SERVICE_API_CLIENT_SECRET", DEMO_CLIENT_SECRET)
    monkeypatch.delenv("SERVICE_API_ACCOUNT_ID", raising=False)
    monkeypatch.setattr(sys, "stdin", io.StringIO())  # not a terminal
    return mock


@pytest.mark.parametrize("command", [[], ["list"], ["token"]])
def test_help_has_examples_and_exit_codes(
    command: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exited:
        main([*command, "--help"])
    assert exited.value.code == 0
    text = capsys.readouterr().out
    assert "examples:" in text
    assert "exit codes:" in text
    assert "130  interrupted" in text


def test_mock_help_has_our_examples_then_the_mocks_options(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["mock", "--help"]) == 0
    text = capsys.readouterr().out
    assert text.index("service-api mock --port 8080") < text.index("--fault-rate F")


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["--version"])
    assert capsys.readouterr().out.startswith("service-api ")


@pytest.mark.usefixtures("env")
@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["list", "parcels", "--account", "a"], "unknown endpoint 'parcels'"),
        (
            ["list", "shipments", "--account", "a", "--param", "colour=red"],
            "no parameter",
        ),
        (
            ["list", "shipments", "--account", "a", "--param", "page_size=9"],
            "--page-size",
        ),
        (["list", "shipments"], "no account"),
        (
            ["list", "shipments", "--account", "a", "-o", "no/such/x.csv"],
            "does not exist",
        ),
    ],
)
def test_usage_errors_are_one_line_and_exit_2(
    args: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(args) == 2
    err = capsys.readouterr().err
    errors = [line for line in err.splitlines() if "error:" in line]
    assert len(errors) == 1
    assert message in errors[0]


@pytest.mark.usefixtures("env")
@pytest.mark.parametrize(
    ("args", "command"),
    [
        (["list", "shipments", "--bogus"], "list"),
        (["list", "parcels", "--account", "a"], "list"),
        (["list", "shipments", "--page-size", "0"], "list"),
        (["load", "shipments", "--bogus"], "load"),
        (["load", "shipments", "--page-size", "51"], "load"),
        (["token", "--bogus"], "token"),
        (["--base-url", "ftp://x", "token"], "token"),
    ],
)
def test_a_usage_error_of_a_command_shows_that_command_s_usage_only(
    args: list[str], command: str, capsys: pytest.CaptureFixture[str]
) -> None:
    try:
        code = main(args)
    except SystemExit as exited:  # argparse's own usage errors
        code = int(str(exited.code))
    assert code == 2
    err = capsys.readouterr().err
    assert err.startswith(f"usage: service-api {command} ")
    assert "COMMAND ..." not in err  # not the main usage
    assert err.count("usage:") == 1


@pytest.mark.parametrize("command", [[], ["list"], ["load"], ["token"]])
def test_each_help_says_a_default_once(
    command: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit):
        main([*command, "--help"])
    text = capsys.readouterr().out.split("\n\n", 2)[2]  # after usage and description
    # One entry per option: a line that starts with the flag, and its continuation.
    entries = re.split(r"\n  (?=-)", text.split("examples:")[0])
    assert len(entries) >= 3  # the options were found
    for entry in entries:
        assert entry.count("default") <= 1, entry


def test_bad_option_values_are_refused_by_the_parser(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["list", "shipments", "--page-size", "0"])
    assert exited.value.code == 2
    assert "must be at least 1" in capsys.readouterr().err


def test_missing_secret_without_a_terminal_is_a_usage_error(
    env: RunningMock,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.delenv("SERVICE_API_CLIENT_SECRET")
    assert main(["list", "shipments", "--account", "acct-1"]) == 2
    error = capsys.readouterr().err
    assert "SERVICE_API_CLIENT_SECRET" in error
    assert "--client-secret" in error
    assert env.service.count() == 0  # refused before any request


def test_secret_on_the_command_line_works_and_draws_a_warning(
    env: RunningMock,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.delenv("SERVICE_API_CLIENT_SECRET")
    argv = [
        "--client-secret",
        DEMO_CLIENT_SECRET,
        "list",
        "shipments",
        "--account",
        "acct-1",
        "--max-items",
        "3",
    ]
    assert main(argv) == 0
    out, err = capsys.readouterr()
    assert len([json.loads(line) for line in out.splitlines()]) == 3
    assert "shell history" in err
    assert DEMO_CLIENT_SECRET not in err


def test_flags_win_over_the_environment(
    env: RunningMock,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("SERVICE_API_BASE_URL", "http://127.0.0.1:9/nowhere")
    monkeypatch.setenv("SERVICE_API_ACCOUNT_ID", "acct-3")
    argv = [
        "--base-url",
        env.base_url,
        "list",
        "devices",
        "--account",
        "acct-2",
        "--max-items",
        "1",
    ]
    assert main(argv) == 0
    assert "acct-2: 1 record" in capsys.readouterr().err


def test_describe_error_names_the_failed_page_and_its_cause() -> None:
    failed = service_api.ServerError("503 Service Unavailable", status_code=503)
    failed.at_page(4, items_yielded=150)
    assert describe_error(failed) == "page 4 failed: 503 Service Unavailable"
    assert describe_error(RuntimeError()) == "RuntimeError"


def test_list_help_shows_the_defaults(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["list", "--help"])
    text = " ".join(capsys.readouterr().out.split())  # argparse wraps lines
    assert "records per page (default: the endpoint's, as the spec states it)" in text
    assert "(order is kept; default: 1)" in text
    assert "Run the same command again" in text
    assert "--restart" in text
    assert "--start-page" not in text  # resuming is rerunning the command
    # The epilog names every extension that picks a format.
    for extension in FORMAT_BY_EXTENSION:
        assert extension in text
    # Flags without a meaningful default say nothing rather than "None" or "False".
    assert "(default: None)" not in text
    assert "(default: False)" not in text


def test_main_help_lists_proxy_retries_and_the_proxy_environment(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit):
        main(["--help"])
    text = capsys.readouterr().out
    assert "--proxy URL" in text
    assert "--retries N" in text
    assert "NO_PROXY" in text


@pytest.mark.parametrize("debug", [False, True])
def test_a_pagination_warning_is_one_line_without_the_library_s_path(
    debug: bool, capsys: pytest.CaptureFixture[str]
) -> None:
    with _logging_to_stderr(debug=debug, quiet=False), warnings.catch_warnings():
        warnings.simplefilter("always")
        warnings.warn(
            "page 3 repeated 2 items", service_api.PaginationWarning, stacklevel=1
        )
        warnings.warn("something else", DeprecationWarning, stacklevel=1)
    lines = capsys.readouterr().err.splitlines()
    if debug:
        assert lines[0].startswith("service-api: warning: page 3 repeated 2 items (")
        assert "test_cli_app.py:" in lines[0]
    else:
        assert lines == [
            "service-api: warning: page 3 repeated 2 items",
            "service-api: warning: DeprecationWarning: something else",
        ]


@pytest.mark.parametrize("quiet", [False, True])
def test_each_retry_is_one_line_unless_quiet(
    quiet: bool, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("SERVICE_API_LOG", raising=False)
    client = logging.getLogger("service_api")
    with _logging_to_stderr(debug=False, quiet=quiet):
        retry = "retrying %s %s after %s in %.2f s (retry %d of %d)"
        client.info(retry, "GET", "/public/v3/shipments", "ServerError", 0.5, 1, 8)
        client.info("bearer token for %s, valid %d s", "demo-client", 3600)
    lines = capsys.readouterr().err.splitlines()
    shown = (
        "service-api: retrying GET /public/v3/shipments after ServerError"
        " in 0.50 s (retry 1 of 8)"
    )
    assert lines == ([] if quiet else [shown])


def _package_imports() -> dict[str, set[str]]:
    package = Path(service_api_cli.__file__).parent
    graph: dict[str, set[str]] = {}
    for path in package.glob("*.py"):
        imported: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
            elif isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            else:
                continue
            imported |= {
                n.split(".")[1] for n in names if n.startswith("service_api_cli.")
            }
        graph[path.stem] = imported - {path.stem}
    return graph


def test_no_module_of_the_command_imports_one_that_imports_it_back() -> None:
    graph = _package_imports()
    # __init__ re-exports main; every other edge must go one way only.
    graph.pop("__init__")
    graph.pop("__main__")

    def reaches(start: str, goal: str, seen: set[str]) -> bool:
        for nxt in graph.get(start, ()):
            if nxt == goal or (nxt not in seen and reaches(nxt, goal, seen | {nxt})):
                return True
        return False

    cycles = sorted(m for m in graph if reaches(m, m, {m}))
    assert cycles == []
    # The cycle there was: _commands imported describe_error from _app.
    assert reaches("_app", "_commands", set())
    assert not reaches("_commands", "_app", set())


def test_the_command_uses_only_public_names_of_the_library() -> None:
    package = Path(service_api_cli.__file__).parent
    private = []
    for path in package.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith(
                "service_api"
            ):
                names = [f"{node.module}.{a.name}" for a in node.names]
            elif isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
                names = [f"{node.value.id}.{node.attr}"]
            else:
                continue
            for name in names:
                parts = name.split(".")
                if parts[0] == "service_api" and any(
                    p.startswith("_") for p in parts[1:]
                ):
                    private.append(f"{path.name}: {name}")
    assert private == []


@pytest.mark.parametrize(
    "argv", [["-q", "list", "x"], ["list", "x", "-q"], ["load", "x", "--quiet"]]
)
def test_quiet_goes_before_or_after_the_command(argv: list[str]) -> None:
    assert build_parser().parse_args(argv).quiet is True
    assert (
        build_parser().parse_args([a for a in argv if "q" not in a[:3]]).quiet is False
    )
