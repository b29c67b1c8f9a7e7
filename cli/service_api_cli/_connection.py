"""The library client every command uses, built in one place from the connection flags.

The settings are the library's: ``--base-url``, ``--client-id`` and ``--client-secret`` go
to :class:`service_api.Client` as given, which reads ``SERVICE_API_*`` for what is left out
and checks the base URL, naming the variable of what it refuses (the message here adds
the flag). ``--proxy URL`` and ``--retries N`` are passed on only when given, so that
without them the library's defaults hold (its retry budget, the environment's
``HTTP_PROXY``, ``HTTPS_PROXY``, ``ALL_PROXY`` and ``NO_PROXY``). ``--rate-limit``,
``--rate-store`` and ``--token-store`` (or ``SERVICE_API_RATE_LIMIT``,
``SERVICE_API_RATE_STORE``, ``SERVICE_API_TOKEN_STORE``; the flag wins) become the
client's ``rate_limit``, ``rate_store`` and ``token_store``. Whatever the library refuses
is a usage error, exit code 2, in one line that never holds a password.
"""

from __future__ import annotations

import argparse
import contextlib
import getpass
import math
import os
import sys
from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import urlsplit

import httpx

import service_api
from service_api_cli._exit_codes import UsageError

__all__ = [
    "ENV_ACCOUNT_ID",
    "ENV_RATE_LIMIT",
    "ENV_RATE_STORE",
    "ENV_TOKEN_STORE",
    "check_proxy",
    "check_store",
    "client_arguments",
    "make_client",
    "parse_rate_limit",
    "resolve_accounts",
    "shown_url",
]

PROXY_SCHEMES = ("http", "https", "socks5", "socks5h")
RATE_STORE_SCHEMES = ("sqlite", "redis", "rediss")
TOKEN_STORE_SCHEMES = ("file", "redis", "rediss")

# Read by the library (service_api.Client); named here for the flags and the help.
FLAGS = {
    "SERVICE_API_BASE_URL": "--base-url",
    "SERVICE_API_CLIENT_ID": "--client-id",
    "SERVICE_API_CLIENT_SECRET": "--client-secret",
}
ENV_CLIENT_SECRET = "SERVICE_API_CLIENT_SECRET"  # noqa: S105 -- a variable name, not a secret
# The list form (acct-1,acct-2) is the command line's own.
ENV_ACCOUNT_ID = "SERVICE_API_ACCOUNT_ID"
ENV_RATE_LIMIT = "SERVICE_API_RATE_LIMIT"
ENV_RATE_STORE = "SERVICE_API_RATE_STORE"
ENV_TOKEN_STORE = "SERVICE_API_TOKEN_STORE"  # noqa: S105 -- a variable name, not a secret
ADAPTIVE = "adaptive"
SECRET_ON_COMMAND_LINE_WARNING = (
    "service-api: warning: --client-secret on the command line is kept in your shell "
    f"history; prefer {ENV_CLIENT_SECRET} or the prompt"
)


def _flag_or_variable(
    args: argparse.Namespace, name: str, variable: str
) -> tuple[str | None, str]:
    # The flag wins; an empty or blank variable counts as unset. The second item names
    # where the value came from, for the message when it is refused.
    flag = getattr(args, name, None)
    if flag is not None:
        return flag.strip(), f"--{name.replace('_', '-')}"
    value = os.environ.get(variable, "").strip()
    return (value or None), variable


def client_arguments(args: argparse.Namespace) -> dict[str, Any]:
    """The keyword arguments of :class:`service_api.Client` that the flags (and, for the
    shared budget and token, ``SERVICE_API_*``) give, checked; only those given.

    Example::

        client_arguments(build_parser().parse_args(["--retries", "3", "token"]))
    """
    arguments: dict[str, Any] = {}
    if args.proxy is not None:
        arguments["proxy"] = check_proxy(args.proxy)
    if args.retries is not None:
        arguments["max_retries"] = args.retries
    rate, source = _flag_or_variable(args, "rate_limit", ENV_RATE_LIMIT)
    if rate is not None:
        arguments["rate_limit"] = parse_rate_limit(rate, source)
    for name, variable, schemes in (
        ("rate_store", ENV_RATE_STORE, RATE_STORE_SCHEMES),
        ("token_store", ENV_TOKEN_STORE, TOKEN_STORE_SCHEMES),
    ):
        url, source = _flag_or_variable(args, name, variable)
        if url is not None:
            arguments[name] = check_store(url, source, schemes)
    return arguments


def parse_rate_limit(text: str, source: str = "--rate-limit") -> float | str:
    """Requests per minute (a positive number) or ``"adaptive"``; else a :class:`UsageError`
    naming ``source`` (the flag or the variable the text came from).

    Example::

        >>> parse_rate_limit("90")
        90.0
        >>> parse_rate_limit("Adaptive")
        'adaptive'
    """
    if text.strip().lower() == ADAPTIVE:
        return ADAPTIVE
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value > 0):
        raise UsageError(
            f"{source} must be a positive number of requests per minute or {ADAPTIVE!r}, "
            f"got {text[:40]!r}"
        )
    return value


def check_store(url: str, source: str, schemes: tuple[str, ...]) -> str:
    """``url`` if its scheme is one of ``schemes``, else a :class:`UsageError` naming
    ``source`` and the scheme only (the URL may hold a password). Whether the store can
    be used is the library's to find out, when the client is built.

    Example::

        >>> check_store("sqlite:///var/tmp/quota.db", "--rate-store", RATE_STORE_SCHEMES)
        'sqlite:///var/tmp/quota.db'
    """
    try:
        scheme = urlsplit(url).scheme.lower()
    except ValueError:
        scheme = ""
    if scheme not in schemes:
        local = "sqlite:///PATH" if "sqlite" in schemes else "file:///PATH"
        got = f"a {scheme}: URL" if scheme else "no URL scheme"
        raise UsageError(
            f"{source} must be {local} or redis://HOST:PORT/DB (rediss:// for TLS), got {got}"
        )
    return url


def shown_url(url: str) -> str:
    """A store or proxy URL as it may be printed: a password in it is replaced by ``***``.

    Example::

        >>> shown_url("redis://:s3cret@10.0.0.5:6379/0")
        'redis://:***@10.0.0.5:6379/0'
        >>> shown_url("http://me:pa55@proxy:3128")
        'http://me:***@proxy:3128'
        >>> shown_url("sqlite:///var/tmp/quota.db")
        'sqlite:///var/tmp/quota.db'
    """
    try:
        parts = urlsplit(url)
        password = parts.password
    except ValueError:
        return "<invalid URL>"
    if not password:
        return url
    user, _, host = parts.netloc.rpartition("@")
    name = user.partition(":")[0]
    return parts._replace(netloc=f"{name}:***@{host}").geturl()


def check_proxy(url: str) -> str:
    """``url`` if it is a usable proxy URL, else a :class:`UsageError` (its password unsaid).

    Example::

        >>> check_proxy("http://127.0.0.1:3128")
        'http://127.0.0.1:3128'
    """
    try:
        parsed = httpx.URL(url)
    except (httpx.InvalidURL, TypeError):
        raise UsageError("--proxy is not a valid URL") from None
    if parsed.scheme not in PROXY_SCHEMES or not parsed.host:
        raise UsageError(
            f"--proxy {shown_url(url)!r} must be {'/'.join(PROXY_SCHEMES)}://HOST[:PORT]"
        )
    return url


def _without_secrets(text: str, arguments: Mapping[str, Any]) -> str:
    # The library's messages name a Redis store by host:port/db only; this is the belt
    # to those braces, for whatever a driver's error might quote. One line, too.
    for url in filter(
        None, (arguments.get(n) for n in ("proxy", "rate_store", "token_store"))
    ):
        text = text.replace(url, shown_url(url))
        with contextlib.suppress(ValueError):
            if password := urlsplit(url).password:
                text = text.replace(password, "***")
    return " ".join(text.split())


def resolve_accounts(flags: Sequence[str] | None) -> list[str]:
    """The accounts to act for: every ``--account`` in order, else those of
    ``SERVICE_API_ACCOUNT_ID``; either may be a comma-separated list. Duplicates dropped.

    Example::

        >>> resolve_accounts(["acct-1", "acct-2,acct-1"])
        ['acct-1', 'acct-2']
    """
    values = flags or [os.environ.get(ENV_ACCOUNT_ID, "")]
    # An account ID never holds a comma: it separates several in one value.
    accounts = list(
        dict.fromkeys(a.strip() for v in values for a in v.split(",") if a.strip())
    )
    if not accounts:
        raise UsageError(
            f"no account: pass --account ID (repeatable) or set {ENV_ACCOUNT_ID}"
        )
    for account in accounts:
        if not account.isprintable():  # it travels in a header
            raise UsageError(
                f"account {account!r} holds characters a header cannot carry"
            )
    return accounts


def make_client(args: argparse.Namespace) -> service_api.Client:
    """The :class:`service_api.Client` of the flags, with no account (each command takes a
    child per account): what a flag leaves out the library reads from ``SERVICE_API_*``.
    A missing secret is prompted for on a terminal; whatever the library refuses is a
    :class:`UsageError` naming the flag or the variable.

    Example::

        with make_client(build_parser().parse_args(["token"])) as client:
            ...
    """
    arguments = client_arguments(args)
    if args.client_secret:
        print(SECRET_ON_COMMAND_LINE_WARNING, file=sys.stderr)
    try:
        try:
            return service_api.Client(
                args.base_url, args.client_id, args.client_secret, None, **arguments
            )
        except service_api.ConfigurationError as exc:
            if (
                exc.variable != ENV_CLIENT_SECRET
                or args.client_secret
                or not sys.stdin.isatty()
            ):
                raise
            args.client_secret = getpass.getpass("Client secret: ") or None
            if args.client_secret is None:
                raise UsageError("no client secret given") from None
            return service_api.Client(
                args.base_url, args.client_id, args.client_secret, None, **arguments
            )
    except service_api.ConfigurationError as exc:
        flag = FLAGS.get(exc.variable)
        given = flag is not None and getattr(args, flag[2:].replace("-", "_"), None)
        message = (
            f"{flag}: {exc}"
            if given
            else f"{exc}" + (f" (or pass {flag})" if flag else "")
        )
        raise UsageError(_without_secrets(message, arguments)) from None
    except (ValueError, TypeError) as exc:
        # The library checks what it is given; its message never holds the secret.
        raise UsageError(
            f"invalid setting: {_without_secrets(str(exc), arguments)}"
        ) from None
    except OSError as exc:
        # A store the library cannot use (StoreError: unreachable Redis, a SQLite file in
        # a missing or read-only directory, a token file that is not one).
        raise UsageError(
            f"unusable store: {_without_secrets(str(exc), arguments)}"
        ) from None
