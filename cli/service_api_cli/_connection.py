"""The settings of the client every command uses, resolved once, and the client built
from them.

Each setting is its flag, else its variable (``--base-url`` / ``SERVICE_API_BASE_URL``,
``--client-id``, ``--client-secret``; ``--rate-limit``, ``--rate-store``,
``--token-store`` / ``SERVICE_API_RATE_LIMIT``, ...): :func:`resolve_connection` reads
them, checks what the command line can check itself (a base URL, a rate, a store's
scheme, a proxy), asks for a missing secret on a terminal, and returns a frozen
:class:`Connection`. ``--proxy URL`` and ``--retries N`` are passed on only when given,
so that without them the library's defaults hold (its retry budget, the environment's
``HTTP_PROXY``, ``HTTPS_PROXY``, ``ALL_PROXY`` and ``NO_PROXY``). Whatever is refused is
a usage error, exit code 2, in one line that names the flag or the variable it came from
and never holds a password.
"""

import argparse
import contextlib
import getpass
import math
import os
import re
import sys
from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import urlsplit

import attrs
import httpx

import service_api
from service_api_cli._exit_codes import UsageError, say
from service_api_client import drift

PROXY_SCHEMES = ("http", "https", "socks5", "socks5h")

# The variables the library reads too, each with the flag that wins over it.
FLAGS = {
    "SERVICE_API_BASE_URL": "--base-url",
    "SERVICE_API_CLIENT_ID": "--client-id",
    "SERVICE_API_CLIENT_SECRET": "--client-secret",
}
ENV_CLIENT_SECRET = "SERVICE_API_CLIENT_SECRET"  # noqa: S105 -- a variable name
# The list form (acct-1,acct-2) is the command line's own.
ENV_ACCOUNT_ID = "SERVICE_API_ACCOUNT_ID"
ENV_RATE_LIMIT = "SERVICE_API_RATE_LIMIT"
ENV_RATE_STORE = "SERVICE_API_RATE_STORE"
ENV_TOKEN_STORE = "SERVICE_API_TOKEN_STORE"  # noqa: S105 -- a variable name, not a secret


@attrs.frozen
class Connection:
    """The client's settings, resolved: each from its flag, else its variable;
    ``options`` are the other keyword arguments of :class:`service_api.Client`, only
    those given.

    Example::

        connection = resolve_connection(build_parser().parse_args(["--retries", "3", "token"]))
        connection.options   # {"max_retries": 3}
    """

    base_url: str
    client_id: str
    client_secret: str = attrs.field(repr=False)
    options: Mapping[str, Any]


def _flag_or_variable(args: argparse.Namespace, flag: str) -> tuple[str | None, str]:
    # The flag wins; empty or blank counts as unset. The second item names where the
    # value came from, for the message when it is refused. Each flag's variable is its
    # name after SERVICE_API_ (--rate-limit: SERVICE_API_RATE_LIMIT).
    name = flag[2:].replace("-", "_")
    given = getattr(args, name)
    if given is not None:
        return (given.strip() or None), flag
    variable = f"SERVICE_API_{name.upper()}"
    return (os.environ.get(variable, "").strip() or None), variable


def _required(args: argparse.Namespace, variable: str) -> tuple[str, str]:
    flag = FLAGS[variable]
    value, source = _flag_or_variable(args, flag)
    if value is None:
        words = flag[2:].replace("-", " ")
        raise UsageError(f"no {words}: pass {flag} or set {variable}")
    return value, source


def _secret(args: argparse.Namespace) -> str:
    secret, _ = _flag_or_variable(args, "--client-secret")
    if args.client_secret:
        say(
            "warning: --client-secret on the command line is kept in your shell "
            f"history; prefer {ENV_CLIENT_SECRET} or the prompt"
        )
    if secret is None and sys.stdin.isatty():
        secret = getpass.getpass("Client secret: ").strip() or None
    if secret is None:
        raise UsageError(
            f"no client secret: set {ENV_CLIENT_SECRET}, or type it when asked on a "
            "terminal (or pass --client-secret)"
        )
    return secret


def _shared(args: argparse.Namespace) -> dict[str, Any]:
    # The request budget and the token shared with other processes, where given.
    options: dict[str, Any] = {}
    rate, source = _flag_or_variable(args, "--rate-limit")
    if rate is not None:
        options["rate_limit"] = parse_rate_limit(rate, source)
    for name, local in (("rate_store", "sqlite"), ("token_store", "file")):
        url, source = _flag_or_variable(args, f"--{name.replace('_', '-')}")
        if url is not None:
            options[name] = check_store(url, source, local)
    return options


def resolve_connection(args: argparse.Namespace) -> Connection:
    """The client's settings from the flags and ``SERVICE_API_*``, checked: a missing
    secret is asked for on a terminal (once, for every client of the run).

    Example::

        resolve_connection(build_parser().parse_args(["--retries", "3", "token"]))
    """
    base_url, source = _required(args, "SERVICE_API_BASE_URL")
    check_base_url(base_url, source)
    client_id, _ = _required(args, "SERVICE_API_CLIENT_ID")
    options = _shared(args)
    if args.proxy is not None:
        options["proxy"] = check_proxy(args.proxy)
    if args.retries is not None:
        options["max_retries"] = args.retries
    return Connection(base_url, client_id, _secret(args), options=options)


def check_base_url(url: str, source: str) -> str:
    """``url`` if the client can use it as its base URL, else a :class:`UsageError`
    naming ``source`` and echoing the URL without credentials.

    Example::

        >>> check_base_url("https://api.example.com/public/v3", "--base-url")
        'https://api.example.com/public/v3'
    """
    # An absolute http(s) URL with a host; no user:password@ either (the base URL is
    # quoted in messages and logs), no query, no fragment. The library checks the rest.
    if not re.fullmatch(r"(?i)https?://[^/?#@\s]+(/[^?#@]*)?", url):
        raise UsageError(
            f"{source} {shown_url(url)!r} is not a usable base URL: it must be an "
            "absolute http(s) URL such as https://api.example.com/public/v3, with no "
            "query, fragment or user:password@"
        )
    return url


def parse_rate_limit(text: str, source: str = "--rate-limit") -> float | str:
    """Requests per minute (a positive number) or ``"adaptive"``; else a :class:`UsageError`
    naming ``source`` (the flag or the variable the text came from).

    Example::

        >>> parse_rate_limit("90")
        90.0
        >>> parse_rate_limit("Adaptive")
        'adaptive'
    """
    if text.strip().lower() == "adaptive":
        return "adaptive"
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value > 0):
        raise UsageError(
            f"{source} must be a positive number of requests per minute or 'adaptive', "
            f"got {text[:40]!r}"
        )
    return value


def check_store(url: str, source: str, local: str) -> str:
    """``url`` if its scheme is ``local`` (``sqlite`` or ``file``, a store on this host)
    or ``redis`` / ``rediss``, else a :class:`UsageError` naming ``source`` and the
    scheme only (the URL may hold a password). Whether the store can be used is the
    library's to find out, when the client is built.

    Example::

        >>> check_store("sqlite:///var/tmp/quota.db", "--rate-store", "sqlite")
        'sqlite:///var/tmp/quota.db'
    """
    try:
        scheme = urlsplit(url).scheme.lower()
    except ValueError:
        scheme = ""
    if scheme not in (local, "redis", "rediss"):
        got = f"a {scheme}: URL" if scheme else "no URL scheme"
        raise UsageError(
            f"{source} must be {local}:///PATH or redis://HOST:PORT/DB (rediss:// for TLS), "
            f"got {got}"
        )
    return url


def shown_url(url: str) -> str:
    """A URL as it may be printed: what comes before ``@`` (a user and password) and a
    query or fragment are replaced by ``***``.

    Example::

        >>> shown_url("redis://:s3cret@10.0.0.5:6379/0")
        'redis://***@10.0.0.5:6379/0'
        >>> shown_url("https://me:pw@api.example.com/public/v3?key=k")
        'https://***@api.example.com/public/v3?***'
        >>> shown_url("sqlite:///var/tmp/quota.db")
        'sqlite:///var/tmp/quota.db'
    """
    url = re.sub(r"^(\w[\w+.-]*://)[^/?#]*@", r"\1***@", url)
    return re.sub(r"([?#]).*", r"\1***", url, flags=re.DOTALL)


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


def _without_secrets(text: str, options: Mapping[str, Any]) -> str:
    # The library's messages name a Redis store by host:port/db only; this is the belt
    # to those braces, for whatever a driver's error might quote. One line, too.
    for name in ("proxy", "rate_store", "token_store"):
        with contextlib.suppress(ValueError):
            if password := urlsplit(options.get(name, "")).password:
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
    accounts = [a.strip() for value in values for a in value.split(",")]
    accounts = list(dict.fromkeys(a for a in accounts if a))
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


def make_client(connection: Connection) -> service_api.Client:
    """The :class:`service_api.Client` of ``connection``, with no account (each command
    takes a child per account); whatever the library refuses is a :class:`UsageError`
    naming the flag and the variable of the setting.

    Example::

        with make_client(resolve_connection(args)) as client:
            ...
    """
    options = connection.options
    try:
        if observed := os.environ.get("SERVICE_API_OBSERVE", "").strip():
            from service_api_speccheck import Observer  # the spec extra's

            options = {**options, "observe": Observer(observed)}
        return service_api.Client(
            connection.base_url,
            connection.client_id,
            connection.client_secret,
            None,
            **options,
        )
    except service_api.ConfigurationError as exc:
        # The library names its argument ("rate_limit= needs the [quota] extra"); the
        # command line names its flag and variable.
        name = exc.variable.removeprefix("SERVICE_API_").lower().replace("_", "-")
        text = re.sub(r"^\w+= ", "", str(exc))
        message = f"--{name} / {exc.variable}: {text}"
        raise UsageError(_without_secrets(message, options)) from None
    except (ValueError, TypeError, OSError) as exc:
        # The library checks what it is given; its message never holds the secret. An
        # OSError is a store it cannot use (StoreError: unreachable Redis, a SQLite file
        # in a missing or read-only directory, a token file that is not one).
        what = "unusable store" if isinstance(exc, OSError) else "invalid setting"
        raise UsageError(_without_secrets(f"{what}: {exc}", options)) from None


def say_drift(client: service_api.Client | None) -> None:
    """The last line of ``list`` and ``load``: where the answers differed from the spec
    (``client.drift``), if they did.

    Example::

        say_drift(client)  # service-api: the answers differed from the spec at 1 place: ...
    """
    if client is not None and (line := drift.summary(client.drift)):
        say(line)
