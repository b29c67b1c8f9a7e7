"""The request budget and the token shared by processes (``pip install 'service-api[quota]'``).

The client imports this package only when it is asked for: ``Client(rate_limit=N |
"adaptive", rate_store=URL, token_store=URL)`` call :func:`limiter` and
:func:`token_store`. A ``redis://`` store needs ``pip install 'service-api[redis]'``.

* :class:`RateLimiter`: a fixed rate (pyrate-limiter), in this process or in a store
  every process that names it shares: a SQLite file (one host) or Redis (several machines).
* :class:`AdaptiveRateLimiter`: learns the quota from 429 answers, in one process.
* :class:`FileTokenStore` (and a Redis store): the integration's token, shared.
* :class:`StoreError`: a store that cannot be used.

A limiter only says how long a request must wait (under a threading lock, so it works
the same from any thread or event loop); the sync and async transports do the waiting.
A token store lets N worker processes (cron jobs, Celery or Airflow tasks) of one
integration authenticate about once per token lifetime instead of N times: the client
reads a token another process stored before fetching its own, and stores each token it
fetches. Only one process refreshes at a time (the store's lock, checked again once held).

Example::

    from service_api.quota import FileTokenStore

    store = FileTokenStore("/var/tmp/service-api.token", key="my-client")
    client = service_api.Client(token_store=store, rate_limit=90)
"""

from __future__ import annotations

import collections
import contextlib
import dataclasses
import hashlib
import json
import logging
import math
import os
import sqlite3
import tempfile
import threading
import time
import weakref
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from pathlib import Path
from typing import TYPE_CHECKING, TypeAlias
from urllib.parse import urlsplit

from filelock import FileLock
from pyrate_limiter import AbstractBucket, Decision, Rate, RateItem, SQLiteBucket, StateBucket

from service_api._errors import ConfigurationError
from service_api._protocols import RequestLimiter, StoredToken

if TYPE_CHECKING:
    import redis

__all__ = [
    "AdaptiveRateLimiter",
    "FileTokenStore",
    "RateLimiter",
    "StoreError",
    "limiter",
    "token_store",
]

#: Seconds a Redis command may take before the store counts as unreachable.
_STORE_TIMEOUT = 2.0
_Errors: TypeAlias = tuple[type[BaseException], ...]
# A rate store: its bucket, the lock held from reading the clock to writing the entry, its
# name for messages and the errors it fails with. Every bucket is stamped in microseconds
# (pyrate-limiter reads them as milliseconds, its rates in the same unit): a wait rounded
# up to a whole millisecond would slow a sender that waits it out by up to a millisecond
# a request.
_RateStore: TypeAlias = tuple[AbstractBucket, AbstractContextManager[object], str, _Errors]


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
def _store_errors(errors: _Errors, message: str) -> Iterator[None]:
    """``errors`` raised inside become a :class:`StoreError`: ``message``, then the
    error's own words (an ``OSError``'s without the path, which ``message`` names)."""
    try:
        yield
    except errors as exc:
        raise StoreError(f"{message}: {getattr(exc, 'strerror', None) or exc}") from None


def _digest(key: str) -> str:
    """A fixed-length, SQL- and Redis-safe name for the integration ``key``."""
    return hashlib.sha256(key.encode()).hexdigest()[:24]


def _store_path(url: str, option: str, scheme: str) -> str | None:
    """The path of a ``scheme:///path`` URL, ``None`` for a ``redis://`` one; another URL
    is a ``ValueError`` (that never quotes it: a Redis URL may hold a password)."""
    parts = urlsplit(url)
    if parts.scheme.lower() in ("redis", "rediss"):
        return None
    local = parts.netloc in ("", "localhost") and parts.path and not parts.query
    if parts.scheme.lower() != scheme or not local or parts.fragment:
        raise ValueError(f"{option} must be {scheme}:///absolute/path or redis://host:port/db")
    return parts.path


def _in_existing_directory(path: str | os.PathLike[str], what: str) -> Path:
    """``path``, or a :class:`StoreError` if its directory does not exist."""
    if not (path := Path(path)).parent.is_dir():
        raise StoreError(f"the {what}'s directory {str(path.parent)!r} does not exist")
    return path


def _redis_location(url: str) -> str:
    """``host:port/db`` of a Redis URL, without its password (for messages)."""
    parts = urlsplit(url)
    return f"{parts.hostname}:{parts.port or 6379}{parts.path or '/0'}"


def _redis_connection(url: str, variable: str) -> redis.Redis:
    """A Redis client for ``url`` that has answered a ping, with short timeouts; without
    the redis package, a :class:`~service_api.ConfigurationError` naming ``variable``."""
    try:
        import redis
    except ImportError:
        message = "a redis:// store needs the redis package: pip install 'service-api[redis]'"
        raise ConfigurationError(message, variable) from None
    # The message of a connection error names host and port, never the password.
    errors = (redis.RedisError, ValueError)
    with _store_errors(errors, f"cannot reach Redis at {_redis_location(url)}"):
        connection = redis.Redis.from_url(
            url, socket_connect_timeout=_STORE_TIMEOUT, socket_timeout=_STORE_TIMEOUT
        )
        connection.ping()
    return connection


def _shared_rate_store(url: str, per_minute: float, key: str, window: float) -> _RateStore:
    # A whole number of requests per window, the window stretched to keep the rate.
    limit = max(1, round(per_minute * window / 60.0))
    rates = [Rate(limit, max(1, math.ceil(limit * 60_000_000 / per_minute)))]
    name = _digest(key)
    if (path := _store_path(url, "rate_store", "sqlite")) is not None:
        file = str(_in_existing_directory(path, "rate store"))
        errors = (sqlite3.Error, OSError)  # filelock's Timeout is an OSError
        with _store_errors(errors, f"cannot use {file!r} as a rate store"):
            bucket = SQLiteBucket.init_from_file(rates, f"rate_{name}", file, use_file_lock=True)
        return bucket, bucket.lock, f"sqlite:{file}", errors
    connection, where = _redis_connection(url, "SERVICE_API_RATE_STORE"), _redis_location(url)
    import redis
    from pyrate_limiter import RedisBucket

    name = f"service-api:rate:{name}"
    with _store_errors((redis.RedisError,), f"cannot use Redis at {where}"):
        shared = RedisBucket.init(rates, connection, name)
    lock = connection.lock(f"{name}:lock", timeout=_STORE_TIMEOUT, blocking_timeout=_STORE_TIMEOUT)
    return shared, lock, f"redis:{where}", (redis.RedisError,)


def _encode(token: StoredToken, key: str) -> bytes:
    return json.dumps({"key": _digest(key), **dataclasses.asdict(token)}).encode()


def _decode(data: bytes | str, key: str, where: str) -> StoredToken | None:
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
        self.path, self._key = _in_existing_directory(path, "token file"), key
        self._where, self._lock_timeout = repr(str(self.path)), lock_timeout

    def __repr__(self) -> str:
        return f"FileTokenStore({self._where})"

    def load(self) -> StoredToken | None:
        """The stored token, ``None`` if there is none; :class:`StoreError` if unusable."""
        with _store_errors((OSError,), f"cannot read the token file {self._where}"):
            try:
                with self.path.open("rb") as file:
                    mode, data = os.fstat(file.fileno()).st_mode, file.read()
            except FileNotFoundError:
                return None
        if mode & 0o077:  # the group or others may use it
            raise StoreError(f"the token file {self._where} is open to other users; not used")
        return _decode(data, self._key, self._where)

    def save(self, token: StoredToken) -> None:
        """Write ``token`` to a new private file (mkstemp's 0600) and rename it over the
        old one."""
        with _store_errors((OSError,), f"cannot write the token file {self._where}"):
            fd, temporary = tempfile.mkstemp(prefix=f".{self.path.name}.", dir=self.path.parent)
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
        file_lock = FileLock(f"{self.path}.lock", timeout=self._lock_timeout, thread_local=False)
        with _store_errors((OSError,), f"cannot lock the token file {self._where}"):
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
        self._redis = _redis_connection(url, "SERVICE_API_TOKEN_STORE")
        self._name, self._key = f"service-api:token:{_digest(key)}", key
        self._where, self._lock_timeout = _redis_location(url), lock_timeout

    def __repr__(self) -> str:
        return f"RedisTokenStore({self._where!r})"

    def _failing(self, doing: str) -> contextlib.AbstractContextManager[None]:
        import redis

        return _store_errors((redis.RedisError,), f"cannot {doing} in Redis at {self._where}")

    def load(self) -> StoredToken | None:
        """The stored token, ``None`` if there is none; :class:`StoreError` if unusable."""
        with self._failing("read the token"):
            data = self._redis.get(self._name)
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
        from redis.exceptions import LockNotOwnedError

        wait = self._lock_timeout
        lock = self._redis.lock(
            f"{self._name}:lock", timeout=wait, blocking_timeout=wait, thread_local=False
        )
        # A lock that expired meanwhile is not an error: the refresh is done.
        with self._failing("lock the token"), contextlib.suppress(LockNotOwnedError), lock:
            yield


def token_store(url: str, *, key: str) -> FileTokenStore | RedisTokenStore:
    """The token store ``url`` names: ``file:///path`` (one host) or ``redis://...``.

    ``key`` is the integration (its client ID). Raises :class:`StoreError` when the
    store cannot be used, ``ValueError`` for another kind of URL.

    Example::

        store = token_store("file:///var/tmp/service-api.token", key="my-client")
    """
    path = _store_path(url, "token_store", "file")
    return RedisTokenStore(url, key=key) if path is None else FileTokenStore(path, key=key)


logger = logging.getLogger("service_api")


class AdaptiveRateLimiter:
    """Learns the service's quota from its 429 answers, as botocore's ``adaptive`` mode.

    It sends freely until the first 429. From then on it spaces requests to a rate it
    adjusts with CUBIC (the TCP congestion algorithm botocore uses): each 429 cuts the
    rate to :attr:`BETA` times what the service accepted over the last minute, and every
    good answer lets it grow back along a cubic curve that is flat near the rate of the
    last 429 (so a long export settles just under the real limit) and climbs faster
    beyond it (so a raised quota is found again). The rate is one for every thread and
    event loop using the limiter, and never below ``min_per_minute``.

    Example::

        limiter = AdaptiveRateLimiter()
        limiter.observe(429, retry_after=2.0)   # learn: slow down
        limiter.try_acquire()                    # > 0 once the first token is spent
    """

    #: A 429 cuts the rate to this share of what the service accepted.
    BETA = 0.7
    #: CUBIC's constant relative to the rate: after a cut the rate is back at its old
    #: value after ``((1 - BETA) / SCALE) ** (1/3)`` seconds (about 20 s, a third of a
    #: per-minute quota's window). The cubic is scaled to the rate, so this is the same
    #: at 10 or 10,000 requests per minute.
    SCALE = 4e-5
    _K = ((1.0 - BETA) / SCALE) ** (1.0 / 3.0)

    def __init__(
        self, *, min_per_minute: float = 3.0, clock: Callable[[], float] = time.monotonic
    ) -> None:
        if not min_per_minute > 0:
            raise ValueError("min_per_minute must be positive")
        self._min_rate = min_per_minute / 60.0
        self._clock = clock
        self._lock = threading.Lock()
        # Until the first 429 the bucket lets everything pass.
        self._last_throttle: float | None = None
        self._rate = self._last_max_rate = max(1.0, self._min_rate)
        self._tokens = 1.0
        self._refilled_at = clock()
        # Answers accepted per whole second: at most a minute's entries, whatever the rate.
        self._accepted: collections.Counter[int] = collections.Counter()
        self._first_answer = math.inf

    def __repr__(self) -> str:
        rate = "unlimited" if self._last_throttle is None else f"{self.per_minute:.1f}/min"
        return f"AdaptiveRateLimiter(rate={rate})"

    @property
    def per_minute(self) -> float | None:
        """The rate it currently allows, or ``None`` before the first 429."""
        with self._lock:
            return None if self._last_throttle is None else self._rate * 60.0

    def try_acquire(self) -> float:
        """``0.0`` and one token taken, or the seconds until a token frees."""
        with self._lock:
            if self._last_throttle is None:
                return 0.0
            self._refill(self._clock())
            # A rounding error short of a whole token counts as one: otherwise the
            # caller would be told to wait a few femtoseconds, again and again.
            if self._tokens >= 1.0 - 1e-9:
                self._tokens = max(0.0, self._tokens - 1.0)
                return 0.0
            return (1.0 - self._tokens) / self._rate

    def observe(self, status_code: int, retry_after: float | None) -> None:
        """Cut the rate on 429; grow it on success. ``retry_after`` is for the request
        that got it (its retry waits it out), not a pause for every request: a fault
        injected at random must not stop a whole process."""
        with self._lock:
            now = self._clock()
            measured = self._goodput(now, accepted=status_code < 400)
            if status_code == 429:
                # Cut from what the service accepted over the last minute, not from the
                # allowed rate: a first 429 after a burst then lands near the share the
                # quota really gives. 429s that keep coming whatever the pace (faults
                # injected at random) still drive it down: they look like a tiny quota.
                self._last_max_rate = max(measured, self._min_rate)
                self._last_throttle = now
                self._set_rate(now, self._last_max_rate * self.BETA)
            elif status_code < 400 and self._last_throttle is not None:
                t = now - self._last_throttle - self._K
                cubic = self._last_max_rate * (1.0 + self.SCALE * t**3)
                # Never more than twice what is actually sent: an idle spell must not
                # grant a rate nobody has tried.
                self._set_rate(now, min(cubic, 2.0 * max(measured, self._rate / 2.0)))

    def _goodput(self, now: float, *, accepted: bool) -> float:
        """Requests per second the service accepted over the last minute.

        botocore measures the send rate over half a second; against a per-minute window
        quota that sees a burst, not what the window lets through. Accepted answers over
        a minute, the waits a 429 imposed included, are the share of the quota this
        process really gets: the rate to cut from.
        """
        self._first_answer = min(self._first_answer, now)
        if accepted:
            self._accepted[math.floor(now)] += 1
        for second in [s for s in self._accepted if s + 1 <= now - 60.0]:
            del self._accepted[second]
        # At least a second: a burst of three answers in 3 ms is not 1,000 per second.
        return self._accepted.total() / max(1.0, min(60.0, now - self._first_answer))

    def _refill(self, now: float) -> None:
        capacity = max(1.0, self._rate)  # at most one second's worth of burst
        self._tokens = min(capacity, self._tokens + (now - self._refilled_at) * self._rate)
        self._refilled_at = now

    def _set_rate(self, now: float, rate: float) -> None:
        self._refill(now)
        self._rate = max(rate, self._min_rate)


class RateLimiter:
    """At most ``per_minute`` requests start in any minute, counted in a pyrate-limiter
    bucket.

    Without a ``store``, it counts in this process: GCRA in memory on ``clock``, requests
    spaced ``60 / per_minute`` seconds apart, idle time not saved up. With a ``store``
    URL, it counts where every process naming it shares the count: a sliding window log
    in a SQLite file under a file lock (``sqlite:///path``, one host) or in Redis
    (``redis://host:port/db``, several machines), on the wall clock (machines sharing
    Redis need NTP). Windows of about ``window`` seconds hold ``per_minute * window / 60``
    requests, so requests are spread rather than sent as a minute's burst; ``key`` (the
    integration's client ID) keeps other integrations' counts in the same store apart.
    A store that cannot be used is a :class:`StoreError` here (Redis gets
    2 seconds to answer); a bad rate or URL a ``ValueError``.

    If the store fails while in use, the limiter logs one warning and goes on counting
    in memory at the same rate: the export continues, only the sharing is lost.

    Example::

        limiter = RateLimiter(90, store="sqlite:///var/tmp/quota.db", key="my-client")
        time.sleep(limiter.try_acquire())   # 0.0 when the slot is taken; else ask again
    """

    def __init__(
        self,
        per_minute: float,
        *,
        store: str | None = None,
        key: str = "",
        window: float = 1.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if not 0 < per_minute < math.inf:
            raise ValueError("rate_limit must be a positive number of requests per minute")
        self.per_minute = float(per_minute)
        self._clock = clock if store is None else time.time
        shared = None if store is None else _shared_rate_store(store, per_minute, key, window)
        self._bucket, self._store_lock, self._store, self._errors = shared or _memory_store(
            per_minute, "in-process"
        )
        # Reentrant: a call the failing store refused is asked again of the fallback.
        self._lock = threading.RLock()
        self._leaked_at = 0

    def __repr__(self) -> str:
        return f"RateLimiter(per_minute={self.per_minute:g}, store={self._store!r})"

    def try_acquire(self) -> float:
        """Take the slot for one request if it is free now (return ``0.0``); otherwise
        return the seconds until it frees, without taking it."""
        with self._lock:
            try:
                # The buckets count only entries stamped up to the new one, so one written
                # late with an earlier time would let one request too many into a window.
                with self._store_lock:
                    now = round(self._clock() * 1_000_000)
                    decision = self._bucket.put_decision(RateItem("service-api", now))
                assert isinstance(decision, Decision)  # a sync bucket
                # pyrate-limiter's Limiter drops expired entries from a background thread;
                # this limiter does it inline, every few seconds, with no thread to manage.
                if decision.allowed and now - self._leaked_at >= 5_000_000:
                    self._leaked_at = now
                    self._bucket.leak(now)
            except self._errors as exc:
                logger.warning(
                    "the shared rate store %s failed (%s); %g a minute in this process alone",
                    self._store,
                    type(exc).__name__,
                    self.per_minute,
                )
                self._clock = time.monotonic
                self._bucket, self._store_lock, self._store, self._errors = _memory_store(
                    self.per_minute, "in-process fallback"
                )
                return self.try_acquire()
            # At least one unit: a zero would make the caller ask again at once.
            return 0.0 if decision.allowed else max(decision.retry_after_ms or 0, 1) / 1_000_000

    def observe(self, status_code: int, retry_after: float | None) -> None:
        """A fixed rate learns nothing from answers (the retry waits out a 429)."""

    def close(self) -> None:
        """Close the store's connection."""
        with self._lock, contextlib.suppress(*self._errors):
            self._bucket.close()


def _memory_store(per_minute: float, name: str) -> _RateStore:
    interval = max(1, round(60_000_000 / per_minute))
    return StateBucket([Rate(1, interval)]), contextlib.nullcontext(), name, ()


# One limiter per integration and setting in a process: two ``Client`` objects of the same
# integration (a script that makes one per account, a worker that makes one per task) share
# their budget as children of one client do. Weak, so a limiter lives as long as a client.
_LIMITERS = weakref.WeakValueDictionary[tuple[str, object, str | None], RequestLimiter]()
_LIMITERS_LOCK = threading.Lock()


def limiter(
    rate_limit: float | str | None, rate_store: str | None, *, key: str
) -> RequestLimiter | None:
    """The limiter ``Client(rate_limit=..., rate_store=...)`` uses: the same object for
    every client of one integration (``key``, its client ID) with the same settings in
    this process.

    * with ``rate_store``: one budget in that store at ``rate_limit`` a minute, or 90
      (the public figure of about 100, less 10 %) when it is ``None`` or adaptive;
    * ``rate_limit="adaptive"``: :class:`AdaptiveRateLimiter`;
    * a number: that many requests a minute in this process (:class:`RateLimiter`).

    Example::

        shared = limiter(90, "sqlite:///var/tmp/quota.db", key="my-client")
    """
    if isinstance(rate_limit, str) and rate_limit != "adaptive":
        raise ValueError(f"rate_limit must be a number, 'adaptive' or None, not {rate_limit!r}")
    if rate_limit is None and rate_store is None:
        return None
    with _LIMITERS_LOCK:
        if (found := _LIMITERS.get((key, rate_limit, rate_store))) is None:
            if rate_store is None and rate_limit == "adaptive":
                found = AdaptiveRateLimiter()
            else:
                per_minute = 90.0 if isinstance(rate_limit, str | None) else rate_limit
                found = RateLimiter(per_minute, store=rate_store, key=key)
            _LIMITERS[key, rate_limit, rate_store] = found
        return found
