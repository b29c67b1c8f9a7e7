"""Where processes share state: the URLs of stores, their errors, and the token stores.

A store is named by URL: ``sqlite:///path`` or ``file:///path`` (one host) or
``redis://host:port/db`` (several machines). A message about a store names its path or
host and port, never a password.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import math
import os
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, TypeAlias
from urllib.parse import urlsplit

from filelock import FileLock

from service_api._errors import ConfigurationError
from service_api._protocols import StoredToken

if TYPE_CHECKING:
    import redis

#: Seconds a Redis command may take before the store counts as unreachable.
STORE_TIMEOUT = 2.0
Errors: TypeAlias = tuple[type[BaseException], ...]


class StoreError(OSError):
    """A shared rate or token store that cannot be used: unreachable, unwritable, corrupt.

    Raised when a store is set up (a bad URL, an unwritable SQLite path, a Redis server
    that does not answer); once running, a failing store costs one warning instead:
    a rate store's processes each go on at their share until it is back, a token
    store's client fetches its own tokens.

    Example::

        try:
            client = service_api.Client(rate_store="redis://10.0.0.5:6379/0")
        except service_api.quota.StoreError as exc:
            print("no shared budget:", exc)
    """


@contextlib.contextmanager
def store_errors(errors: Errors, message: str) -> Iterator[None]:
    """``errors`` raised inside become a :class:`StoreError`: ``message``, then the
    error's own words (an ``OSError``'s without the path, which ``message`` names)."""
    try:
        yield
    except errors as exc:
        raise StoreError(
            f"{message}: {getattr(exc, 'strerror', None) or exc}"
        ) from None


def digest(key: str) -> str:
    """A fixed-length, SQL- and Redis-safe name for the integration ``key``."""
    return hashlib.sha256(key.encode()).hexdigest()[:24]


def store_path(url: str, option: str, scheme: str) -> str | None:
    """The path of a ``scheme:///path`` URL, ``None`` for a ``redis://`` one; another URL
    is a ``ValueError`` (that never quotes it: a Redis URL may hold a password)."""
    parts = urlsplit(url)
    if parts.scheme.lower() in ("redis", "rediss"):
        return None
    local = parts.netloc in ("", "localhost") and parts.path and not parts.query
    if parts.scheme.lower() != scheme or not local or parts.fragment:
        raise ValueError(
            f"{option} must be {scheme}:///absolute/path or redis://host:port/db"
        )
    return parts.path


def in_existing_directory(path: str | os.PathLike[str], what: str) -> Path:
    """``path``, or a :class:`StoreError` if its directory does not exist."""
    found = Path(path)
    if not found.parent.is_dir():
        raise StoreError(f"the {what}'s directory {str(found.parent)!r} does not exist")
    return found


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
        raise ConfigurationError(
            "a redis:// store needs the redis package: pip install 'service-api[redis]'",
            variable,
        ) from None
    # The message of a connection error names host and port, never the password.
    message = f"cannot reach Redis at {redis_location(url)}"
    with store_errors((redis.RedisError, ValueError), message):
        connection = redis.Redis.from_url(
            url, socket_connect_timeout=STORE_TIMEOUT, socket_timeout=STORE_TIMEOUT
        )
        connection.ping()
    return connection


def _encode(token: StoredToken, key: str) -> bytes:
    return json.dumps({"key": digest(key), **dataclasses.asdict(token)}).encode()


def _decode(data: bytes | str, key: str, where: str) -> StoredToken | None:
    # Never quote the content in a message: it may hold a token.
    try:
        record = json.loads(data)
        token = StoredToken(record["access_token"], float(record["expires_at"]))
        if not (
            isinstance(token.access_token, str)
            and token.access_token
            and math.isfinite(token.expires_at)
        ):
            raise ValueError("not a token")
    except (ValueError, TypeError, KeyError, OverflowError):
        raise StoreError(
            f"the token store {where} holds something that is not a token"
        ) from None
    # Another integration's token is not ours to use.
    return token if record.get("key") == digest(key) else None


class FileTokenStore:
    """The integration's token in a file only its owner may read (0600), for one host.

    The file is replaced atomically (written beside it, then renamed), so a reader
    never sees half a token; a ``.lock`` file beside it (``filelock``) lets one process
    at a time refresh. A file others could read is not trusted (it is replaced with a
    private one at the next refresh). ``key`` is the integration (its client ID): a
    file written for another integration is ignored.

    Example::

        store = FileTokenStore("/var/tmp/service-api.token", key="my-client")
        client = service_api.Client(token_store=store)
    """

    def __init__(
        self, path: str | os.PathLike[str], *, key: str, lock_timeout: float = 30.0
    ) -> None:
        self.path = in_existing_directory(path, "token file")
        self._key = key
        self._where = repr(str(self.path))
        self._lock_timeout = lock_timeout

    def __repr__(self) -> str:
        return f"FileTokenStore({self._where})"

    def load(self) -> StoredToken | None:
        """The stored token, ``None`` if there is none; :class:`StoreError` if unusable."""
        with store_errors((OSError,), f"cannot read the token file {self._where}"):
            try:
                with self.path.open("rb") as file:
                    mode = os.fstat(file.fileno()).st_mode
                    data = file.read()
            except FileNotFoundError:
                return None
        if mode & 0o077:  # the group or others may use it
            raise StoreError(
                f"the token file {self._where} is open to other users; not used"
            )
        return _decode(data, self._key, self._where)

    def save(self, token: StoredToken) -> None:
        """Write ``token`` to a new private file (mkstemp's 0600) and rename it over the
        old one."""
        with store_errors((OSError,), f"cannot write the token file {self._where}"):
            fd, temporary = tempfile.mkstemp(
                prefix=f".{self.path.name}.", dir=self.path.parent
            )
            try:
                with os.fdopen(fd, "wb") as file:
                    file.write(_encode(token, self._key))
                    file.flush()
                    os.fsync(file.fileno())
                os.replace(temporary, self.path)
            finally:
                Path(temporary).unlink(missing_ok=True)  # gone once renamed

    @contextlib.contextmanager
    def lock(self) -> Iterator[None]:
        """Hold the ``.lock`` file beside the token (waits at most ``lock_timeout``)."""
        file_lock = FileLock(
            f"{self.path}.lock", timeout=self._lock_timeout, thread_local=False
        )
        with store_errors((OSError,), f"cannot lock the token file {self._where}"):
            held = file_lock.acquire()  # a timeout is an OSError too
        with held:
            yield


class RedisTokenStore:
    """The integration's token in Redis, for processes on several machines.

    The token is kept under a key that expires with it; refreshing is serialised by a
    Redis lock (redis-py's ``Lock``, released by a token of its own, with a timeout so
    a crashed holder cannot block the others for long). Built by :func:`token_store`.
    """

    def __init__(self, url: str, *, key: str, lock_timeout: float = 30.0) -> None:
        self._redis = redis_connection(url, "SERVICE_API_TOKEN_STORE")
        self._name = f"service-api:token:{digest(key)}"
        self._key = key
        self._where = redis_location(url)
        self._lock_timeout = lock_timeout

    def __repr__(self) -> str:
        return f"RedisTokenStore({self._where!r})"

    def _failing(self, doing: str) -> contextlib.AbstractContextManager[None]:
        import redis

        return store_errors(
            (redis.RedisError,), f"cannot {doing} in Redis at {self._where}"
        )

    def load(self) -> StoredToken | None:
        """The stored token, ``None`` if there is none; :class:`StoreError` if unusable."""
        with self._failing("read the token"):
            data = self._redis.get(self._name)
        return (
            None
            if data is None
            else _decode(data, self._key, f"in Redis at {self._where}")
        )

    def save(self, token: StoredToken) -> None:
        """Store ``token`` until it expires."""
        ttl = math.ceil(token.expires_at - time.time())
        with self._failing("store the token"):
            if ttl > 0:
                self._redis.set(self._name, _encode(token, self._key), ex=ttl)

    @contextlib.contextmanager
    def lock(self) -> Iterator[None]:
        """Hold the integration's refresh lock in Redis (waits at most ``lock_timeout``)."""
        from redis.exceptions import LockNotOwnedError

        wait = self._lock_timeout
        lock = self._redis.lock(
            f"{self._name}:lock",
            timeout=wait,
            blocking_timeout=wait,
            thread_local=False,
        )
        # A lock that expired meanwhile is not an error: the refresh is done.
        with (
            self._failing("lock the token"),
            contextlib.suppress(LockNotOwnedError),
            lock,
        ):
            yield


def token_store(url: str, *, key: str) -> FileTokenStore | RedisTokenStore:
    """The token store ``url`` names: ``file:///path`` (one host) or ``redis://...``.

    ``key`` is the integration (its client ID). Raises :class:`StoreError` when the
    store cannot be used, ``ValueError`` for another kind of URL.

    Example::

        store = token_store("file:///var/tmp/service-api.token", key="my-client")
    """
    path = store_path(url, "token_store", "file")
    return (
        RedisTokenStore(url, key=key) if path is None else FileTokenStore(path, key=key)
    )
