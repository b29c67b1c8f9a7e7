"""How requests travel: ``--proxy``, the environment's proxies, ``--retries``, and settings
the client cannot use (exit code 2, before any request)."""

from __future__ import annotations

import io
import sys
from typing import Any

import pytest
from cli_process import assert_no_credentials, cli_env, run_cli
from recording_proxy import recording_proxy

import service_api
from service_api_cli import main
from service_api_cli._app import build_parser
from service_api_cli._connection import make_client, resolve_connection, shown_url
from service_api_cli._exit_codes import UsageError
from service_api_mock import DEMO_CLIENT_ID, DEMO_CLIENT_SECRET, RunningMock


def test_proxy_flag_carries_every_request_of_an_export(mock: RunningMock) -> None:
    mock.service.reset(records=5)
    with recording_proxy() as proxy:
        done = run_cli(
            [
                "--proxy",
                proxy.url,
                "list",
                "shipments",
                "--account",
                "acct-1",
                "--page-size",
                "2",
            ],
            cli_env(mock.base_url),
        )
    assert done.returncode == 0, done.stderr
    assert len(done.stdout.splitlines()) == 5
    assert [(method, url.split("?")[0]) for method, url in proxy.seen] == [
        ("POST", f"{mock.base_url}/authenticate"),
        ("GET", f"{mock.base_url}/shipments"),
        ("GET", f"{mock.base_url}/shipments"),
        ("GET", f"{mock.base_url}/shipments"),
    ]
    assert mock.service.count() == len(proxy.seen)  # nothing went around the proxy


def test_proxy_flag_carries_the_token_request(mock: RunningMock) -> None:
    with recording_proxy() as proxy:
        done = run_cli(["--proxy", proxy.url, "token"], cli_env(mock.base_url))
    assert done.returncode == 0, done.stderr
    assert proxy.seen == [("POST", f"{mock.base_url}/authenticate")]


@pytest.mark.parametrize(("no_proxy", "through_proxy"), [("", 1), ("127.0.0.1", 0)])
def test_the_environment_s_proxy_and_no_proxy_are_honoured(
    mock: RunningMock, no_proxy: str, through_proxy: int
) -> None:
    with recording_proxy() as proxy:
        env = cli_env(mock.base_url, HTTP_PROXY=proxy.url, NO_PROXY=no_proxy)
        done = run_cli(["token"], env)
    assert done.returncode == 0, done.stderr
    assert len(proxy.seen) == through_proxy
    assert mock.service.count("authenticate") == 1


def test_a_proxy_password_is_never_printed(mock: RunningMock) -> None:
    # Every answer is a 503: the export fails at once, the retry waited out is said.
    mock.service.set_faults(fault_rate=1.0, retry_after=0.0)
    with recording_proxy() as proxy:
        with_password = proxy.url.replace("http://", "http://me:pr0xy-pa55@")
        done = run_cli(
            [
                "--proxy",
                with_password,
                "--retries",
                "1",
                "list",
                "shipments",
                "--account",
                "a",
            ],
            cli_env(mock.base_url),
        )
    assert done.returncode == 5, done.stderr
    assert "retry 1 of 1" in done.stderr
    assert "pr0xy-pa55" not in done.stderr


def test_shown_url_hides_a_proxy_s_user_and_password() -> None:
    assert shown_url("http://me:secret@proxy:3128") == "http://***@proxy:3128"
    assert shown_url("http://proxy:3128") == "http://proxy:3128"


@pytest.mark.parametrize("proxy", ["ftp://proxy:21", "proxy:3128", "http://"])
def test_an_unusable_proxy_is_a_usage_error(mock: RunningMock, proxy: str) -> None:
    argv = ["--proxy", proxy, "list", "shipments", "--account", "a"]
    done = run_cli(argv, cli_env(mock.base_url))
    assert done.returncode == 2, done.stderr
    assert "--proxy" in done.stderr
    assert mock.service.count() == 0


def test_retries_sets_how_often_a_failed_request_is_sent_again(
    mock: RunningMock,
) -> None:
    sent = {}
    for retries in (0, 3):
        mock.service.reset()
        mock.service.set_faults(fault_rate=1.0, retry_after=0.0)
        done = run_cli(
            ["--retries", str(retries), "list", "shipments", "--account", "acct-1"],
            cli_env(mock.base_url),
        )
        assert done.returncode == 5, done.stderr
        sent[retries] = mock.service.count()
    assert sent[0] < sent[3]


def test_each_option_reaches_the_client_only_when_given(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("SERVICE_API_BASE_URL", "http://127.0.0.1:9/public/v3")
    monkeypatch.setenv("SERVICE_API_CLIENT_ID", DEMO_CLIENT_ID)
    monkeypatch.setenv("SERVICE_API_CLIENT_SECRET", DEMO_CLIENT_SECRET)
    for name in ("RATE_LIMIT", "RATE_STORE", "TOKEN_STORE"):
        monkeypatch.delenv(f"SERVICE_API_{name}", raising=False)
    calls: list[dict[str, Any]] = []

    def fake_client(*args: Any, **kwargs: Any) -> object:
        calls.append(kwargs)
        return object()

    monkeypatch.setattr(service_api, "Client", fake_client)
    for argv in (
        [],
        ["--retries", "4", "--proxy", "http://127.0.0.1:3"],
        ["--rate-limit", "adaptive", "--rate-store", "sqlite:///q.db"],
        ["--token-store", "file:///t.json"],
    ):
        make_client(resolve_connection(build_parser().parse_args([*argv, "token"])))
    assert calls == [
        {},
        {"max_retries": 4, "proxy": "http://127.0.0.1:3"},
        {"rate_limit": "adaptive", "rate_store": "sqlite:///q.db"},
        {"token_store": "file:///t.json"},
    ]


def test_a_setting_the_client_refuses_is_a_usage_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def refusing_client(*args: Any, **kwargs: Any) -> object:
        raise ValueError("rate_limit must be positive")

    monkeypatch.setattr(service_api, "Client", refusing_client)
    monkeypatch.setenv("SERVICE_API_BASE_URL", "http://127.0.0.1:9/public/v3")
    monkeypatch.setenv("SERVICE_API_CLIENT_ID", DEMO_CLIENT_ID)
    monkeypatch.setenv("SERVICE_API_CLIENT_SECRET", DEMO_CLIENT_SECRET)
    connection = resolve_connection(build_parser().parse_args(["token"]))
    with pytest.raises(
        UsageError, match="invalid setting: rate_limit must be positive"
    ):
        make_client(connection)


@pytest.mark.parametrize(
    ("environment", "message"),
    [
        ({"SERVICE_API_BASE_URL": "{url}?x=1"}, "SERVICE_API_BASE_URL '"),
        ({"SERVICE_API_BASE_URL": "{url}#top"}, "SERVICE_API_BASE_URL '"),
        ({"SERVICE_API_BASE_URL": "http:///public/v3"}, "SERVICE_API_BASE_URL '"),
        ({"SERVICE_API_BASE_URL": "ftp://127.0.0.1/v3"}, "SERVICE_API_BASE_URL '"),
        (
            {"SERVICE_API_ACCOUNT_ID": "acct-1,acct\n2"},
            "characters a header cannot carry",
        ),
        ({"SERVICE_API_ACCOUNT_ID": " , "}, "no account"),
    ],
)
def test_settings_errors_exit_2_before_any_request(
    mock: RunningMock,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    environment: dict[str, str],
    message: str,
) -> None:
    monkeypatch.setenv("SERVICE_API_BASE_URL", mock.base_url)
    monkeypatch.setenv("SERVICE_API_CLIENT_ID", DEMO_CLIENT_ID)
    monkeypatch.setenv("SERVICE_API_CLIENT_SECRET", DEMO_CLIENT_SECRET)
    for name, value in environment.items():
        monkeypatch.setenv(name, value.format(url=mock.base_url))
    monkeypatch.setattr(sys, "stdin", io.StringIO())
    argv = ["list", "shipments"]
    if "SERVICE_API_ACCOUNT_ID" not in environment:
        argv += ["--account", "acct-1"]
    assert main(argv) == 2
    err = capsys.readouterr().err
    (error,) = [line for line in err.splitlines() if "error:" in line]
    assert message in error
    assert mock.service.count() == 0


def test_accounts_from_the_environment_are_a_comma_separated_list(
    mock: RunningMock,
) -> None:
    mock.service.reset(records=3)
    done = run_cli(
        ["list", "devices"],
        cli_env(mock.base_url, SERVICE_API_ACCOUNT_ID="acct-1, acct-2,"),
    )
    assert done.returncode == 0, done.stderr
    assert "acct-1: 3 records, 1 page; acct-2: 3 records, 1 page" in done.stderr
    assert_no_credentials(mock, done.stderr)


def test_account_flags_take_comma_separated_lists_too(mock: RunningMock) -> None:
    mock.service.reset(records=3)
    argv = ["list", "devices", "--account", "acct-1,acct-2", "--account", "acct-1"]
    done = run_cli(argv, cli_env(mock.base_url))
    assert done.returncode == 0, done.stderr
    assert "acct-1: 3 records, 1 page; acct-2: 3 records, 1 page]" in done.stderr
