"""Settings once: the command line resolves them (flags first, then ``SERVICE_API_*``)
into the job's connection, asks for a missing secret on a terminal, and speaks of its
flags and variables, never of the library's arguments."""

from __future__ import annotations

import getpass
import io

import pytest

from service_api_cli._app import build_parser
from service_api_cli._connection import (
    Connection,
    make_client,
    resolve_accounts,
    resolve_connection,
)
from service_api_cli._exit_codes import UsageError

ENV = {
    "SERVICE_API_BASE_URL": "http://env.example/public/v3",
    "SERVICE_API_CLIENT_ID": "env-client",
    "SERVICE_API_CLIENT_SECRET": "env-secret-value",
}


@pytest.fixture(autouse=True)
def environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name, value in ENV.items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("SERVICE_API_ACCOUNT_ID", raising=False)
    monkeypatch.setattr("sys.stdin", io.StringIO())  # not a terminal


def _connection(*argv: str) -> Connection:
    return resolve_connection(build_parser().parse_args([*argv, "token"]))


def _client_repr(*argv: str) -> str:
    with make_client(_connection(*argv)) as client:
        return repr(client)


def test_environment_fills_in_what_flags_leave_out() -> None:
    shown = _client_repr("--client-id", "flag-client")
    assert "base_url='http://env.example/public/v3'" in shown
    assert "client_id='flag-client'" in shown
    assert "account_id=None" in shown  # each command takes a child per account


def test_secret_on_the_command_line_works_but_draws_a_warning(
    capsys: pytest.CaptureFixture[str],
) -> None:
    _client_repr("--client-secret", "flag-secret-value")
    warning = capsys.readouterr().err
    assert (
        "--client-secret on the command line is kept in your shell history" in warning
    )
    assert "flag-secret-value" not in warning


def test_missing_secret_is_prompted_for_on_a_terminal(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("SERVICE_API_CLIENT_SECRET")
    monkeypatch.setattr("sys.stdin.isatty", lambda: True)
    asked: list[str] = []

    def prompt(text: str) -> str:
        asked.append(text)
        return "typed-secret"

    monkeypatch.setattr(getpass, "getpass", prompt)
    connection = _connection()
    assert asked == ["Client secret: "]  # once, for every client of the run
    assert connection.client_secret == "typed-secret"
    assert "typed-secret" not in repr(connection)


def test_an_empty_answer_to_the_prompt_is_a_usage_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("SERVICE_API_CLIENT_SECRET")
    monkeypatch.setattr("sys.stdin.isatty", lambda: True)
    monkeypatch.setattr(getpass, "getpass", lambda text: "")
    with pytest.raises(UsageError, match="no client secret: set SERVICE_API_CLIENT"):
        _client_repr()


@pytest.mark.parametrize(
    ("variable", "flag"),
    [
        ("SERVICE_API_BASE_URL", "--base-url"),
        ("SERVICE_API_CLIENT_ID", "--client-id"),
        ("SERVICE_API_CLIENT_SECRET", "--client-secret"),
    ],
)
def test_a_missing_setting_names_its_variable_and_its_flag(
    monkeypatch: pytest.MonkeyPatch, variable: str, flag: str
) -> None:
    monkeypatch.setenv(variable, " ")  # blank counts as unset
    with pytest.raises(UsageError) as refused:
        _client_repr()
    message = str(refused.value)
    assert variable in message
    assert flag in message
    # The command line's words, not the library's (client_secret=).
    assert "=" not in message
    assert "_secret" not in message.replace(variable, "")


@pytest.mark.parametrize(
    "url",
    [
        "api.example.com/public/v3",
        "https://api.example.com/public/v3?debug=1",
        "https://api.example.com/public/v3#x",
        "https:///public/v3",
    ],
)
def test_a_bad_base_url_names_where_it_came_from(
    monkeypatch: pytest.MonkeyPatch, url: str
) -> None:
    with pytest.raises(UsageError, match=r"^--base-url '.*' is not a usable base URL"):
        _client_repr("--base-url", url)
    monkeypatch.setenv("SERVICE_API_BASE_URL", url)
    with pytest.raises(UsageError, match=r"^SERVICE_API_BASE_URL '"):
        _client_repr()


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("http://me:pa55w0rd@api.example.com/public/v3", "http://***@api.example.com"),
        ("https://api.example.com/public/v3?key=s3cr3t", "/public/v3?***"),
        ("ftp://api.example.com/public/v3", "ftp://api.example.com/public/v3"),
    ],
)
def test_a_refused_base_url_is_echoed_without_credentials(url: str, shown: str) -> None:
    with pytest.raises(UsageError) as refused:
        _client_repr("--base-url", url)
    message = str(refused.value)
    assert shown in message
    assert "pa55w0rd" not in message
    assert "s3cr3t" not in message
    assert "me:" not in message
    assert "base_url" not in message  # the library's word


def test_accounts_from_flags_keep_order_and_drop_duplicates() -> None:
    assert resolve_accounts(["acct-2", "acct-1", "acct-2"]) == ["acct-2", "acct-1"]


def test_accounts_may_be_comma_separated_in_flags_and_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert resolve_accounts(["acct-1,acct-2", " acct-3 ,acct-1"]) == [
        "acct-1",
        "acct-2",
        "acct-3",
    ]
    monkeypatch.setenv("SERVICE_API_ACCOUNT_ID", "acct-2, acct-1,,")
    assert resolve_accounts(None) == ["acct-2", "acct-1"]


def test_no_account_at_all_is_a_usage_error_naming_flag_and_variable() -> None:
    with pytest.raises(UsageError, match=r"--account ID .* SERVICE_API_ACCOUNT_ID"):
        resolve_accounts(None)


def test_an_account_with_control_characters_is_a_usage_error() -> None:
    with pytest.raises(UsageError, match="header"):
        resolve_accounts(["acct\n1"])
