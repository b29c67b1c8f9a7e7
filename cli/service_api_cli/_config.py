"""Where the connection settings come from: flags first, then the environment.

The client secret gets special care: given as a flag it draws a warning (it lands in
the shell history); missing, it is prompted for without echo when stdin is a terminal,
and missing without a terminal it is a usage error rather than a hang.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import attrs
import httpx

from service_api_cli._exit_codes import UsageError

__all__ = [
    "ENV_ACCOUNT_ID",
    "ENV_BASE_URL",
    "ENV_CLIENT_ID",
    "ENV_CLIENT_SECRET",
    "SECRET_ON_COMMAND_LINE_WARNING",
    "Settings",
    "check_base_url",
    "resolve_accounts",
    "resolve_settings",
]

ENV_BASE_URL = "SERVICE_API_BASE_URL"
ENV_CLIENT_ID = "SERVICE_API_CLIENT_ID"
ENV_CLIENT_SECRET = "SERVICE_API_CLIENT_SECRET"  # noqa: S105 -- a variable name, not a secret
ENV_ACCOUNT_ID = "SERVICE_API_ACCOUNT_ID"

SECRET_ON_COMMAND_LINE_WARNING = (
    "warning: --client-secret on the command line is kept in your shell history; "
    f"prefer {ENV_CLIENT_SECRET} or the prompt"
)


@attrs.frozen
class Settings:
    """How to reach the service; the secret never shows in ``repr``."""

    base_url: str
    client_id: str
    client_secret: str = attrs.field(repr=False)


def _pick(flag: str | None, environ: Mapping[str, str], name: str) -> str | None:
    if flag:
        return flag
    value = environ.get(name, "").strip()
    return value or None


def resolve_settings(
    *,
    base_url: str | None,
    client_id: str | None,
    client_secret: str | None,
    environ: Mapping[str, str],
    stdin_is_tty: bool,
    prompt: Callable[[str], str],
    warn: Callable[[str], None],
) -> Settings:
    """Merge flags and environment into :class:`Settings`, prompting for a missing secret.

    Example::

        resolve_settings(base_url=None, client_id=None, client_secret=None,
                         environ=os.environ, stdin_is_tty=sys.stdin.isatty(),
                         prompt=getpass.getpass, warn=print_to_stderr)
    """
    url = _pick(base_url, environ, ENV_BASE_URL)
    if url is None:
        raise UsageError(f"no base URL: pass --base-url or set {ENV_BASE_URL}")
    check_base_url(url)
    cid = _pick(client_id, environ, ENV_CLIENT_ID)
    if cid is None:
        raise UsageError(f"no client ID: pass --client-id or set {ENV_CLIENT_ID}")
    if client_secret:
        warn(SECRET_ON_COMMAND_LINE_WARNING)
    secret = _pick(client_secret, environ, ENV_CLIENT_SECRET)
    if secret is None:
        if not stdin_is_tty:
            raise UsageError(
                f"no client secret: set {ENV_CLIENT_SECRET} "
                "(or run from a terminal to be prompted for it)"
            )
        secret = prompt(f"Client secret for {cid}: ")
        if not secret:
            raise UsageError("no client secret given")
    return Settings(base_url=url, client_id=cid, client_secret=secret)


def check_base_url(url: str) -> None:
    """Raise :class:`UsageError` unless ``url`` can be the API's base URL.

    Every request path is appended to it, so a query or a fragment would end up in the
    middle of each URL; user:password in it would be printed in resume commands.

    Example::

        check_base_url("https://api.example.com/public/v3")
    """
    if not url.startswith(("http://", "https://")):
        raise UsageError(f"base URL must start with http:// or https://, got {url!r}")
    try:
        parsed = httpx.URL(url)
    except httpx.InvalidURL as exc:
        raise UsageError(f"base URL {url!r} is not a valid URL ({exc})") from None
    if not parsed.host:
        raise UsageError(f"base URL {url!r} has no host")
    if parsed.userinfo:
        raise UsageError("base URL must not hold a user name or password")
    if parsed.query or "?" in url:
        raise UsageError(f"base URL {url!r} must not have a query (?...)")
    if parsed.fragment or "#" in url:
        raise UsageError(f"base URL {url!r} must not have a fragment (#...)")


def _account_list(values: Sequence[str]) -> list[str]:
    # An account ID never holds a comma: it separates several in one value.
    parts = (part.strip() for value in values for part in value.split(","))
    return list(dict.fromkeys(part for part in parts if part))


def resolve_accounts(flags: Sequence[str] | None, environ: Mapping[str, str]) -> list[str]:
    """The accounts to act for: every ``--account`` in order, else those of
    ``SERVICE_API_ACCOUNT_ID``; either may be a comma-separated list. Duplicates dropped.

    Example::

        >>> resolve_accounts(["acct-1", "acct-2,acct-1"], {})
        ['acct-1', 'acct-2']
        >>> resolve_accounts(None, {"SERVICE_API_ACCOUNT_ID": "acct-1, acct-2"})
        ['acct-1', 'acct-2']
    """
    accounts = _account_list(flags or ())
    if not accounts:
        accounts = _account_list([environ.get(ENV_ACCOUNT_ID, "")])
        if not accounts:
            raise UsageError(
                f"no account: pass --account ID (repeatable) or set {ENV_ACCOUNT_ID} "
                "(comma-separated)"
            )
    for account in accounts:
        # It travels in a header: control characters would be refused there anyway.
        if not account.isprintable():
            raise UsageError(f"account {account!r} holds characters a header cannot carry")
    return accounts
