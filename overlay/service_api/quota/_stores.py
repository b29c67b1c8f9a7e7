"""What the shared limiter and the token stores have in common: their error and Redis."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from service_api._errors import ConfigurationError

if TYPE_CHECKING:
    import redis

#: Seconds a Redis command may take before the store counts as unreachable.
STORE_TIMEOUT = 2.0


class StoreError(OSError):
    """A shared rate or token store that cannot be used: unreachable, unwritable, corrupt.

    Raised when a store is set up (a bad URL, an unwritable SQLite path, a Redis server
    that does not answer); once running, a failing store is replaced by the in-process
    fallback with one warning instead.

    Example::

        try:
            client = service_api.Client(rate_store="redis://10.0.0.5:6379/0")
        except service_api.quota.StoreError as exc:
            print("no shared budget:", exc)
    """


@contextlib.contextmanager
def store_errors(
    errors: type[BaseException] | tuple[type[BaseException], ...], message: str
) -> Iterator[None]:
    """``errors`` raised inside become a :class:`StoreError`: ``message``, then the
    error's own words (an ``OSError``'s without the path, which ``message`` names)."""
    try:
        yield
    except errors as exc:
        raise StoreError(f"{message}: {getattr(exc, 'strerror', None) or exc}") from None


def redis_location(url: str) -> str:
    """``host:port/db`` of a Redis URL, without its password (for messages)."""
    parts = urlsplit(url)
    return f"{parts.hostname}:{parts.port or 6379}{parts.path or '/0'}"


def redis_connection(url: str, variable: str) -> redis.Redis:
    """A Redis client for ``url`` that has answered a ping, with short timeouts; without
    the redis package, a :class:`~service_api.ConfigurationError` naming ``variable``."""
    try:
        import redis
    except ImportError:
        message = "a redis:// store needs the redis package: pip install 'service-api[redis]'"
        raise ConfigurationError(message, variable) from None
    # The message of a connection error names host and port, never the password.
    errors = (redis.RedisError, ValueError)
    with store_errors(errors, f"cannot reach Redis at {redis_location(url)}"):
        connection = redis.Redis.from_url(
            url, socket_connect_timeout=STORE_TIMEOUT, socket_timeout=STORE_TIMEOUT
        )
        connection.ping()
    return connection
