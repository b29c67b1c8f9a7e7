"""Settings: flags win over the environment; the secret is warned about, prompted or refused."""

from __future__ import annotations

import pytest

from service_api_cli._config import (
    SECRET_ON_COMMAND_LINE_WARNING,
    Settings,
    check_base_url,
    resolve_accounts,
    resolve_settings,
)
from service_api_cli._exit_codes import UsageError

ENV = {
    "SERVICE_API_BASE_URL": "http://env.example/public/v3",
    "SERVICE_API_CLIENT_ID": "env-client",
    "SERVICE_API_CLIENT_SECRET": "env-secret-value",
}


def _no_prompt(text: str) -> str:
    raise AssertionError("must not prompt")


def _resolve(
    environ: dict[str, str],
    *,
    stdin_is_tty: bool = False,
    prompt: object = _no_prompt,
    warnings: list[str] | None = None,
    **flags: str | None,
) -> Settings:
    sink = warnings if warnings is not None else []
    return resolve_settings(
        base_url=flags.get("base_url"),
        client_id=flags.get("client_id"),
        client_secret=flags.get("client_secret"),
        environ=environ,
        stdin_is_tty=stdin_is_tty,
        prompt=prompt,  # type: ignore[arg-type]
        warn=sink.append,
    )


def test_environment_fills_in_what_flags_leave_out() -> None:
    warnings: list[str] = []
    settings = _resolve(ENV, warnings=warnings, client_id="flag-client")
    assert settings == Settings("http://env.example/public/v3", "flag-client", "env-secret-value")
    assert warnings == []


def test_secret_on_the_command_line_wins_but_draws_a_warning() -> None:
    warnings: list[str] = []
    settings = _resolve(ENV, warnings=warnings, client_secret="flag-secret-value")
    assert settings.client_secret == "flag-secret-value"
    assert warnings == [SECRET_ON_COMMAND_LINE_WARNING]
    assert "flag-secret-value" not in warnings[0]


def test_missing_secret_is_prompted_for_on_a_terminal() -> None:
    asked: list[str] = []

    def prompt(text: str) -> str:
        asked.append(text)
        return "typed-secret"

    env = {k: v for k, v in ENV.items() if k != "SERVICE_API_CLIENT_SECRET"}
    settings = _resolve(env, stdin_is_tty=True, prompt=prompt)
    assert settings.client_secret == "typed-secret"
    assert asked == ["Client secret for env-client: "]


def test_missing_secret_without_a_terminal_is_a_usage_error() -> None:
    env = {k: v for k, v in ENV.items() if k != "SERVICE_API_CLIENT_SECRET"}
    with pytest.raises(UsageError, match="SERVICE_API_CLIENT_SECRET"):
        _resolve(env, stdin_is_tty=False)


def test_empty_answer_to_the_prompt_is_a_usage_error() -> None:
    env = {k: v for k, v in ENV.items() if k != "SERVICE_API_CLIENT_SECRET"}
    with pytest.raises(UsageError, match="no client secret"):
        _resolve(env, stdin_is_tty=True, prompt=lambda _text: "")


@pytest.mark.parametrize(
    ("missing", "message"),
    [("SERVICE_API_BASE_URL", "--base-url"), ("SERVICE_API_CLIENT_ID", "--client-id")],
)
def test_missing_base_url_or_client_id_is_a_usage_error(missing: str, message: str) -> None:
    env = {k: v for k, v in ENV.items() if k != missing}
    with pytest.raises(UsageError, match=message):
        _resolve(env)


def test_base_url_without_a_scheme_is_refused() -> None:
    with pytest.raises(UsageError, match="http"):
        _resolve(ENV, base_url="api.example.com")


def test_secret_is_not_in_the_repr_of_settings() -> None:
    assert "env-secret-value" not in repr(_resolve(ENV))


def test_accounts_from_flags_keep_order_and_drop_duplicates() -> None:
    env = {"SERVICE_API_ACCOUNT_ID": "acct-env"}
    assert resolve_accounts(["acct-2", "acct-1", "acct-2"], env) == ["acct-2", "acct-1"]


def test_account_falls_back_to_the_environment() -> None:
    assert resolve_accounts(None, {"SERVICE_API_ACCOUNT_ID": "acct-env"}) == ["acct-env"]


def test_no_account_at_all_is_a_usage_error() -> None:
    with pytest.raises(UsageError, match="--account"):
        resolve_accounts([], {})


def test_an_account_with_control_characters_is_a_usage_error() -> None:
    with pytest.raises(UsageError, match="header"):
        resolve_accounts(["acct\n1"], {})


def test_accounts_may_be_comma_separated_in_flags_and_environment() -> None:
    assert resolve_accounts(["acct-1,acct-2", " acct-3 ,acct-1"], {}) == [
        "acct-1",
        "acct-2",
        "acct-3",
    ]
    environ = {"SERVICE_API_ACCOUNT_ID": "acct-2, acct-1,,"}
    assert resolve_accounts(None, environ) == ["acct-2", "acct-1"]


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("https://api.example.com/public/v3?debug=1", "must not have a query"),
        ("https://api.example.com/public/v3?", "must not have a query"),
        ("https://api.example.com/public/v3#x", "must not have a fragment"),
        ("https://user:pw@api.example.com/public/v3", "user name or password"),
        ("https:///public/v3", "has no host"),
    ],
)
def test_a_base_url_the_client_cannot_extend_is_a_usage_error(url: str, message: str) -> None:
    with pytest.raises(UsageError, match=message):
        check_base_url(url)
    # The password in a refused URL is never repeated.
    with pytest.raises(UsageError) as refused:
        check_base_url(url)
    assert "pw" not in str(refused.value).replace("api.", "")


def test_a_plain_base_url_is_accepted() -> None:
    check_base_url("https://api.example.com/public/v3")
    check_base_url("http://127.0.0.1:8080/public/v3/")
