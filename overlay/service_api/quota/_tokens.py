"""Where processes of one integration share their bearer token.

A token store lets N worker processes (cron jobs, Celery or Airflow tasks) of one
integration authenticate about once per token lifetime instead of N times: the client
reads a token another process stored before fetching its own, and stores each token it
fetches. Only one process refreshes at a time (the store's lock, checked again once held).
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import math
import os
import stat
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

from filelock import FileLock

from service_api._protocols import StoredToken
from service_api.quota._stores import StoreError, redis_connection, redis_location, store_errors

# A stored record is well under a kilobyte; a store holding more is not read whole.
_MAX_RECORD = 64 * 1024


def _digest(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()[:24]


def _encode(token: StoredToken, key: str) -> bytes:
    return json.dumps({"key": _digest(key), **dataclasses.asdict(token)}).encode()


def _decode(data: bytes, key: str, where: str) -> StoredToken | None:
    # Never quote the content in a message: it may hold a token.
    try:
        record = json.loads(data)
        token = StoredToken(record["access_token"], float(record["expires_at"]))
        has_token = isinstance(token.access_token, str) and token.access_token
        if not has_token or not math.isfinite(token.expires_at):
            raise ValueError("not a token")
    except (ValueError, TypeError, KeyError, OverflowError):
        raise StoreError(f"the token store {where} holds something that is not a token") from None
    # Another integration's token is not ours to use.
    return token if record.get("key") == _digest(key) else None


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
        self.path, self._key, self._lock_timeout = Path(path), key, lock_timeout
        self._where = repr(str(self.path))
        if not self.path.parent.is_dir():
            raise StoreError(f"the token file's directory {str(self.path.parent)!r} does not exist")

    def __repr__(self) -> str:
        return f"FileTokenStore({self._where})"

    def load(self) -> StoredToken | None:
        """The stored token, ``None`` if there is none; :class:`StoreError` if unusable."""
        with store_errors(OSError, f"cannot read the token file {self._where}"):
            try:
                with self.path.open("rb") as file:
                    mode, data = os.fstat(file.fileno()).st_mode, file.read(_MAX_RECORD)
            except FileNotFoundError:
                return None
        if mode & (stat.S_IRWXG | stat.S_IRWXO):
            raise StoreError(f"the token file {self._where} is open to other users; not used")
        return _decode(data, self._key, self._where)

    def save(self, token: StoredToken) -> None:
        """Write ``token`` to a new private file and rename it over the old one."""
        temporary = self.path.with_name(f".{self.path.name}.{os.getpid()}.{threading.get_ident()}")
        flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC
        with store_errors(OSError, f"cannot write the token file {self._where}"):
            try:
                with os.fdopen(os.open(temporary, flags, 0o600), "wb") as file:
                    os.fchmod(file.fileno(), 0o600)  # O_CREAT's mode spares an existing file
                    file.write(_encode(token, self._key))
                    file.flush()
                    os.fsync(file.fileno())
                os.replace(temporary, self.path)
            finally:
                temporary.unlink(missing_ok=True)  # gone once renamed

    @contextlib.contextmanager
    def lock(self) -> Iterator[None]:
        """Hold the ``.lock`` file beside the token (waits at most ``lock_timeout``)."""
        file_lock = FileLock(f"{self.path}.lock", timeout=self._lock_timeout, thread_local=False)
        with store_errors(OSError, f"cannot lock the token file {self._where}"):
            file_lock.acquire()  # a timeout is an OSError too
        try:
            yield
        finally:
            file_lock.release()


class RedisTokenStore:
    """The integration's token in Redis, for processes on several machines.

    The token is kept under a key that expires with it; refreshing is serialised by a
    Redis lock (redis-py's ``Lock``, released by a token of its own, with a timeout so
    a crashed holder cannot block the others for long). Built by :func:`token_store`.
    """

    def __init__(self, url: str, *, key: str, lock_timeout: float = 30.0) -> None:
        self._redis = redis_connection(url, "SERVICE_API_TOKEN_STORE")
        self._name = f"service-api:token:{_digest(key)}"
        self._key = key
        self._where = redis_location(url)
        self._lock_timeout = lock_timeout

    def __repr__(self) -> str:
        return f"RedisTokenStore({self._where!r})"

    def _failing(self, doing: str) -> contextlib.AbstractContextManager[None]:
        import redis

        return store_errors(redis.RedisError, f"cannot {doing} in Redis at {self._where}")

    def load(self) -> StoredToken | None:
        """The stored token, ``None`` if there is none; :class:`StoreError` if unusable."""
        with self._failing("read the token"):
            data = self._redis.get(self._name)
        assert data is None or isinstance(data, bytes)
        return None if data is None else _decode(data, self._key, f"in Redis at {self._where}")

    def save(self, token: StoredToken) -> None:
        """Store ``token`` until it expires."""
        ttl = math.ceil(token.expires_at - time.time())
        with self._failing("store the token"):
            if ttl > 0:
                self._redis.set(self._name, _encode(token, self._key), ex=ttl)

    @contextlib.contextmanager
    def lock(self) -> Iterator[None]:
        """Hold the integration's refresh lock in Redis (waits at most ``lock_timeout``)."""
        wait = self._lock_timeout
        with self._failing("lock the token"):
            lock = self._redis.lock(
                f"{self._name}:lock", timeout=wait, blocking_timeout=wait, thread_local=False
            )
            if not lock.acquire():
                raise StoreError(f"the token lock in Redis at {self._where} stayed taken")
        try:
            yield
        finally:
            with contextlib.suppress(OSError), self._failing("unlock"):  # expired meanwhile
                lock.release()


def token_store(url: str, *, key: str) -> FileTokenStore | RedisTokenStore:
    """The token store ``url`` names: ``file:///path`` (one host) or ``redis://...``.

    ``key`` is the integration (its client ID). Raises :class:`StoreError` when the
    store cannot be used, ``ValueError`` for another kind of URL.

    Example::

        store = token_store("file:///var/tmp/service-api.token", key="my-client")
    """
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    if scheme == "file":
        if parts.netloc not in ("", "localhost") or not parts.path or parts.query:
            raise ValueError("a token file is named file:///absolute/path")
        return FileTokenStore(parts.path, key=key)
    if scheme in ("redis", "rediss"):
        return RedisTokenStore(url, key=key)
    raise ValueError(
        f"token_store must be a file:///path or redis://host:port/db URL, not {scheme or url!r}"
    )
