"""``--rate-limit``, ``--rate-store`` and ``--token-store`` (and their ``SERVICE_API_*``
variables): they reach the client of every command, the flag wins, and a value the
client cannot use is a usage error (exit code 2) that never prints a store's password."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pytest
from cli_process import assert_no_credentials, cli_env, run_cli, start_cli

from service_api_cli import main
from service_api_cli._app import build_parser
from service_api_cli._connection import (
    ENV_RATE_LIMIT,
    ENV_RATE_STORE,
    ENV_TOKEN_STORE,
    Connection,
    make_client,
    parse_rate_limit,
    resolve_connection,
    shown_url,
)
from service_api_cli._exit_codes import UsageError
from service_api_mock import DEMO_CLIENT_ID, DEMO_CLIENT_SECRET, RunningMock

LIST = ["list", "shipments", "--account", "acct-1", "--page-size", "2"]
# A port nothing listens on: the connection is refused at once.
REDIS_WITH_PASSWORD = "redis://:hunter2-redis-pw@127.0.0.1:1/0"


def _parse(*argv: str) -> argparse.Namespace:
    return build_parser().parse_args([*argv, "token"])


def _connection(*argv: str) -> Connection:
    return resolve_connection(_parse(*argv))


# --- the options reach the client --------------------------------------------------------


def test_two_processes_share_a_sqlite_rate_store(
    mock: RunningMock, tmp_path: Path
) -> None:
    mock.service.reset(records=5)
    store = tmp_path / "q.db"
    argv = ["--rate-limit", "600", "--rate-store", f"sqlite://{store}", *LIST]
    env = cli_env(mock.base_url)
    children = [start_cli(argv, env) for _ in range(2)]
    outputs = [child.communicate(timeout=60) for child in children]
    for child, (out, err) in zip(children, outputs, strict=True):
        assert child.returncode == 0, err
        assert len(out.splitlines()) == 5
    assert store.is_file()
    assert store.stat().st_size > 0  # the bucket's table was written


def test_a_token_store_spares_the_second_run_its_token(
    mock: RunningMock, tmp_path: Path
) -> None:
    mock.service.reset(records=3)
    store = tmp_path / "t.json"
    env = cli_env(mock.base_url)
    for _ in range(2):
        done = run_cli(["--token-store", f"file://{store}", *LIST], env)
        assert done.returncode == 0, done.stderr
        assert len(done.stdout.splitlines()) == 3
        assert_no_credentials(mock, done.stdout, done.stderr)
    assert mock.service.count("authenticate") == 1
    assert store.is_file()


def test_without_a_token_store_each_run_fetches_its_token(mock: RunningMock) -> None:
    # The baseline of the test above: two runs, two tokens.
    mock.service.reset(records=1)
    for _ in range(2):
        done = run_cli(LIST, cli_env(mock.base_url))
        assert done.returncode == 0, done.stderr
    assert mock.service.count("authenticate") == 2


def test_the_variables_are_read(mock: RunningMock, tmp_path: Path) -> None:
    mock.service.reset(records=1)
    rate_store, token_store = tmp_path / "env-q.db", tmp_path / "env-t.json"
    env = cli_env(
        mock.base_url,
        **{
            ENV_RATE_LIMIT: "600",
            ENV_RATE_STORE: f"sqlite://{rate_store}",
            ENV_TOKEN_STORE: f"file://{token_store}",
        },
    )
    for _ in range(2):
        done = run_cli(LIST, env)
        assert done.returncode == 0, done.stderr
    assert rate_store.is_file()
    assert token_store.is_file()
    assert mock.service.count("authenticate") == 1


def test_the_flag_wins_over_the_variable(mock: RunningMock, tmp_path: Path) -> None:
    mock.service.reset(records=1)
    from_flag, from_variable = tmp_path / "flag.db", tmp_path / "variable.db"
    env = cli_env(
        mock.base_url,
        **{ENV_RATE_LIMIT: "not-a-rate", ENV_RATE_STORE: f"sqlite://{from_variable}"},
    )
    done = run_cli(
        ["--rate-limit", "600", "--rate-store", f"sqlite://{from_flag}", *LIST], env
    )
    assert done.returncode == 0, done.stderr
    assert from_flag.is_file()
    assert not from_variable.exists()


@pytest.mark.usefixtures("settings_env")
def test_the_connection_reads_flags_then_the_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(ENV_RATE_LIMIT, " adaptive ")
    monkeypatch.setenv(ENV_RATE_STORE, "redis://127.0.0.1:6379/0")
    monkeypatch.setenv(ENV_TOKEN_STORE, "")  # empty: unset
    assert _connection().options == {
        "rate_limit": "adaptive",
        "rate_store": "redis://127.0.0.1:6379/0",
    }
    flags = _connection("--rate-limit", "90", "--rate-store", "sqlite:///q.db")
    assert flags.options == {"rate_limit": 90.0, "rate_store": "sqlite:///q.db"}
    for name in (ENV_RATE_LIMIT, ENV_RATE_STORE):
        monkeypatch.delenv(name)
    assert _connection().options == {}


def test_shown_url_hides_a_store_s_user_and_password() -> None:
    assert shown_url(REDIS_WITH_PASSWORD) == "redis://***@127.0.0.1:1/0"
    assert shown_url("redis://me:pw@host:6379/2") == "redis://***@host:6379/2"
    assert shown_url("file:///var/tmp/t.json") == "file:///var/tmp/t.json"


@pytest.mark.parametrize(
    ("text", "value"), [("90", 90.0), ("0.5", 0.5), ("ADAPTIVE", "adaptive")]
)
def test_parse_rate_limit_takes_a_rate_or_adaptive(
    text: str, value: float | str
) -> None:
    assert parse_rate_limit(text) == value


# --- bad values are usage errors ---------------------------------------------------------


@pytest.fixture
def settings_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for name in (ENV_RATE_LIMIT, ENV_RATE_STORE, ENV_TOKEN_STORE):
        monkeypatch.delenv(name, raising=False)
    # Nothing listens there: a command that got as far as a request would fail with 5.
    monkeypatch.setenv("SERVICE_API_BASE_URL", "http://127.0.0.1:1/public/v3")
    monkeypatch.setenv("SERVICE_API_CLIENT_ID", DEMO_CLIENT_ID)
    monkeypatch.setenv("SERVICE_API_CLIENT_SECRET", DEMO_CLIENT_SECRET)
    monkeypatch.chdir(tmp_path)  # where load would put its database


def _usage_error(capsys: pytest.CaptureFixture[str], argv: list[str]) -> str:
    assert main(argv) == 2
    captured = capsys.readouterr()
    errors = [line for line in captured.err.splitlines() if "error:" in line]
    assert len(errors) == 1, captured.err
    assert "Traceback" not in captured.err
    assert "hunter2" not in captured.err + captured.out
    return errors[0]


COMMANDS = [
    pytest.param(["token"], id="token"),
    pytest.param(LIST, id="list"),
    pytest.param(
        ["load", "shipments", "--account", "acct-1", "--pipelines-dir", "p"], id="load"
    ),
]


@pytest.mark.parametrize("command", COMMANDS)
@pytest.mark.parametrize(
    ("options", "message"),
    [
        (["--rate-limit", "fast"], "--rate-limit must be a positive number"),
        (["--rate-limit", "0"], "--rate-limit must be a positive number"),
        (["--rate-limit", "-5"], "--rate-limit must be a positive number"),
        (["--rate-limit", "nan"], "--rate-limit must be a positive number"),
        (
            ["--rate-store", "ftp://host/q"],
            "--rate-store must be sqlite:///PATH or redis://",
        ),
        (["--rate-store", "q.db"], "got no URL scheme"),
        (
            ["--token-store", "http://:hunter2@host/t"],
            "--token-store must be file:///PATH or redis://",
        ),
        (["--rate-store", REDIS_WITH_PASSWORD], "cannot reach Redis at 127.0.0.1:1/0"),
        (["--token-store", REDIS_WITH_PASSWORD], "cannot reach Redis at 127.0.0.1:1/0"),
        (["--rate-store", "sqlite:///no/such/directory/q.db"], "does not exist"),
    ],
)
@pytest.mark.usefixtures("settings_env")
def test_a_bad_value_is_a_usage_error(
    capsys: pytest.CaptureFixture[str],
    command: list[str],
    options: list[str],
    message: str,
) -> None:
    assert message in _usage_error(capsys, [*options, *command])


@pytest.mark.usefixtures("settings_env")
def test_a_bad_variable_is_a_usage_error_naming_it(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(ENV_RATE_LIMIT, "fast")
    assert f"{ENV_RATE_LIMIT} must be a positive number" in _usage_error(
        capsys, ["token"]
    )
    monkeypatch.delenv(ENV_RATE_LIMIT)
    monkeypatch.setenv(ENV_TOKEN_STORE, REDIS_WITH_PASSWORD)
    assert "cannot reach Redis" in _usage_error(capsys, ["token"])


@pytest.mark.usefixtures("settings_env")
def test_a_file_that_is_not_a_database_is_a_usage_error(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    junk = tmp_path / "junk.db"
    junk.write_bytes(b"not a database, not at all" * 100)
    line = _usage_error(capsys, ["--rate-store", f"sqlite://{junk}", "token"])
    assert "unusable store" in line


def test_parse_rate_limit_names_where_the_value_came_from() -> None:
    with pytest.raises(UsageError, match=ENV_RATE_LIMIT):
        parse_rate_limit("inf", ENV_RATE_LIMIT)


# --- help ----------------------------------------------------------------------------------


def test_help_lists_the_options_and_the_variables(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["--help"])
    assert exit_info.value.code == 0
    text = capsys.readouterr().out
    for name in ("--rate-limit", "--rate-store", "--token-store"):
        assert name in text
    environment = text.split("environment:", 1)[1]
    for variable in (ENV_RATE_LIMIT, ENV_RATE_STORE, ENV_TOKEN_STORE):
        assert variable in environment


def test_a_quota_flag_without_the_extra_is_a_usage_error_naming_the_pip_command(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # An interpreter without pyrate-limiter: service_api.quota cannot be imported.
    import service_api

    monkeypatch.setitem(sys.modules, "pyrate_limiter", None)
    for name in [n for n in sys.modules if n.startswith("service_api.quota")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.delattr(service_api, "quota", raising=False)
    monkeypatch.setenv("SERVICE_API_BASE_URL", "http://127.0.0.1:9/public/v3")
    monkeypatch.setenv("SERVICE_API_CLIENT_ID", DEMO_CLIENT_ID)
    monkeypatch.setenv("SERVICE_API_CLIENT_SECRET", DEMO_CLIENT_SECRET)
    # The command line's flag and variable, not the library's argument (rate_limit=).
    with pytest.raises(
        UsageError,
        match=r"^--rate-limit / SERVICE_API_RATE_LIMIT: needs the \[quota\] extra: "
        r"pip install 'service-api\[quota\]'",
    ):
        make_client(_connection("--rate-limit", "90"))
    with pytest.raises(
        UsageError, match=r"pip install 'service-api\[redis\]'"
    ) as caught:
        make_client(_connection("--token-store", REDIS_WITH_PASSWORD))
    assert "hunter2" not in str(caught.value)
