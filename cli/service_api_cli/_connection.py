"""The library client every command uses, built in one place from the connection flags.

``--proxy URL`` and ``--retries N`` are passed on only when given, so that without them the
library's defaults hold (its retry budget, the environment's ``HTTP_PROXY``,
``HTTPS_PROXY``, ``ALL_PROXY`` and ``NO_PROXY``). A setting the library refuses (a
``ValueError`` or ``TypeError`` at construction) is a usage error, exit code 2.
"""

from __future__ import annotations

import argparse
from typing import Any

import attrs
import httpx

import service_api
from service_api_cli._config import Settings
from service_api_cli._exit_codes import UsageError

__all__ = [
    "PROXY_SCHEMES",
    "ConnectionOptions",
    "check_proxy",
    "make_client",
    "options_from",
    "shown_proxy",
]

PROXY_SCHEMES = ("http", "https", "socks5", "socks5h")


@attrs.frozen
class ConnectionOptions:
    """The flags that shape how requests travel; ``None`` leaves the library's default.

    Example::

        ConnectionOptions(proxy="http://proxy.internal:3128", retries=5)
    """

    proxy: str | None = attrs.field(default=None, repr=False)  # may hold a password
    retries: int | None = None


def options_from(args: argparse.Namespace) -> ConnectionOptions:
    """The connection options of parsed arguments (``--proxy``, ``--retries``), checked.

    Example::

        options = options_from(build_parser().parse_args(["--retries", "3", "token"]))
    """
    proxy = None if args.proxy is None else check_proxy(args.proxy)
    return ConnectionOptions(proxy=proxy, retries=args.retries)


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
            f"--proxy {shown_proxy(url)!r} must be {'/'.join(PROXY_SCHEMES)}://HOST[:PORT]"
        )
    return url


def shown_proxy(url: str) -> str:
    """``url`` as it may be printed: a password in it is replaced by ``***``.

    Example::

        >>> shown_proxy("http://me:pa55@proxy:3128")
        'http://me:***@proxy:3128'
    """
    try:
        parsed = httpx.URL(url)
    except (httpx.InvalidURL, TypeError):
        return "<invalid URL>"
    if not parsed.password:
        return url
    return str(parsed.copy_with(userinfo=f"{parsed.username}:***".encode()))


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
    try:
        return service_api.Client(
            settings.base_url, settings.client_id, settings.client_secret, account, **arguments
        )
    except (ValueError, TypeError) as exc:
        # The library checks what it is given (base URL, account, options); its message
        # names the setting and never the secret.
        raise UsageError(f"invalid setting: {exc}") from None
