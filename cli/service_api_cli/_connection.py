"""The library client every command uses, built in one place from the connection flags.

``--proxy URL`` and ``--retries N`` are passed on only when given, so that without them the
library's defaults hold (its retry budget, the environment's ``HTTP_PROXY``,
``HTTPS_PROXY``, ``ALL_PROXY`` and ``NO_PROXY``). ``--rate-limit``, ``--rate-store`` and
``--token-store`` (or ``SERVICE_API_RATE_LIMIT``, ``SERVICE_API_RATE_STORE``,
``SERVICE_API_TOKEN_STORE``; the flag wins) become the client's ``rate_limit``,
``rate_store`` and ``token_store``. A setting the library refuses (a ``ValueError`` or
``TypeError`` at construction, such as a quota option without the ``[quota]`` extra, whose
message names the pip command) or a store it cannot use (``service_api.quota.StoreError``,
an ``OSError``) is a usage error, exit code 2, in one line that never holds a store's
password.
"""

from __future__ import annotations

import argparse
import math
import os
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

import attrs
import httpx

import service_api
from service_api_cli._config import Settings
from service_api_cli._exit_codes import UsageError

__all__ = [
    "ENV_RATE_LIMIT",
    "ENV_RATE_STORE",
    "ENV_TOKEN_STORE",
    "PROXY_SCHEMES",
    "RATE_STORE_SCHEMES",
    "TOKEN_STORE_SCHEMES",
    "ConnectionOptions",
    "check_proxy",
    "check_store",
    "make_client",
    "options_from",
    "parse_rate_limit",
    "shown_url",
]

PROXY_SCHEMES = ("http", "https", "socks5", "socks5h")
RATE_STORE_SCHEMES = ("sqlite", "redis", "rediss")
TOKEN_STORE_SCHEMES = ("file", "redis", "rediss")

ENV_RATE_LIMIT = "SERVICE_API_RATE_LIMIT"
ENV_RATE_STORE = "SERVICE_API_RATE_STORE"
ENV_TOKEN_STORE = "SERVICE_API_TOKEN_STORE"  # noqa: S105 -- a variable name, not a secret
ADAPTIVE = "adaptive"


@attrs.frozen
class ConnectionOptions:
    """The flags that shape how requests travel; ``None`` leaves the library's default.

    Example::

        ConnectionOptions(proxy="http://proxy.internal:3128", retries=5)
        ConnectionOptions(rate_limit=90, rate_store="sqlite:///var/tmp/quota.db")
    """

    proxy: str | None = attrs.field(default=None, repr=False)  # may hold a password
    retries: int | None = None
    rate_limit: float | str | None = None  # requests per minute, or "adaptive"
    rate_store: str | None = attrs.field(default=None, repr=False)  # a Redis URL may
    token_store: str | None = attrs.field(default=None, repr=False)  # hold a password


def _flag_or_variable(
    args: argparse.Namespace, name: str, environ: Mapping[str, str], variable: str
) -> tuple[str | None, str]:
    # The flag wins; an empty or blank variable counts as unset. The second item names
    # where the value came from, for the message when it is refused.
    flag = getattr(args, name, None)
    if flag is not None:
        return flag.strip(), f"--{name.replace('_', '-')}"
    value = environ.get(variable, "").strip()
    return (value or None), variable


def options_from(
    args: argparse.Namespace, environ: Mapping[str, str] | None = None
) -> ConnectionOptions:
    """The connection options of parsed arguments and ``environ`` (default: the process
    environment), checked: ``--proxy``, ``--retries``, ``--rate-limit``, ``--rate-store``,
    ``--token-store`` (the last three also from ``SERVICE_API_*``; the flag wins).

    Example::

        options = options_from(build_parser().parse_args(["--retries", "3", "token"]))
    """
    environ = os.environ if environ is None else environ
    proxy = None if args.proxy is None else check_proxy(args.proxy)
    rate_text, rate_source = _flag_or_variable(args, "rate_limit", environ, ENV_RATE_LIMIT)
    rate_store, rate_store_source = _flag_or_variable(args, "rate_store", environ, ENV_RATE_STORE)
    token_store, token_store_source = _flag_or_variable(
        args, "token_store", environ, ENV_TOKEN_STORE
    )
    return ConnectionOptions(
        proxy=proxy,
        retries=args.retries,
        rate_limit=None if rate_text is None else parse_rate_limit(rate_text, rate_source),
        rate_store=None
        if rate_store is None
        else check_store(rate_store, rate_store_source, RATE_STORE_SCHEMES),
        token_store=None
        if token_store is None
        else check_store(token_store, token_store_source, TOKEN_STORE_SCHEMES),
    )


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


def _without_store_secrets(text: str, options: ConnectionOptions) -> str:
    # The library's messages name a Redis store by host:port/db only; this is the belt
    # to those braces, for whatever a driver's error might quote. One line, too.
    for url in (options.rate_store, options.token_store):
        if url is None:
            continue
        text = text.replace(url, shown_url(url))
        try:
            password = urlsplit(url).password
        except ValueError:
            password = None
        if password:
            text = text.replace(password, "***")
    return " ".join(text.split())


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


def _proxy_arguments(proxy: str | None) -> dict[str, Any]:
    # The one place that knows how the library takes a proxy; without --proxy nothing is
    # passed, so the library's reading of the *_PROXY environment holds.
    return {} if proxy is None else {"proxy": proxy}


def make_client(
    settings: Settings, account: str | None, options: ConnectionOptions
) -> service_api.Client:
    """A :class:`service_api.Client` for ``account``; settings it refuses are usage errors.

    Example::

        with make_client(settings, "acct-1", ConnectionOptions(retries=3)) as client:
            ...
    """
    arguments: dict[str, Any] = _proxy_arguments(options.proxy)
    if options.retries is not None:
        arguments["max_retries"] = options.retries
    # Like the retries, passed only when set, so that the library's defaults hold.
    shared = {
        "rate_limit": options.rate_limit,
        "rate_store": options.rate_store,
        "token_store": options.token_store,
    }
    arguments.update({name: value for name, value in shared.items() if value is not None})
    try:
        return service_api.Client(
            settings.base_url, settings.client_id, settings.client_secret, account, **arguments
        )
    except (ValueError, TypeError) as exc:
        # The library checks what it is given (base URL, account, options); its message
        # names the setting and never the secret.
        raise UsageError(f"invalid setting: {_without_store_secrets(str(exc), options)}") from None
    except OSError as exc:
        # A store the library cannot use (StoreError: unreachable Redis, a SQLite file in
        # a missing or read-only directory, a token file that is not one).
        raise UsageError(f"unusable store: {_without_store_secrets(str(exc), options)}") from None
