"""A client-side request rate limit shared by threads, tasks, event loops and processes.

A limiter only says how long a request must wait (under a threading lock, so it works
the same from any thread or event loop); the sync and async transports do the waiting
with ``time.sleep`` or ``asyncio.sleep``, and tell the limiter what the service answered
so that an adaptive limiter can learn the quota.

* :class:`RateLimiter`: a fixed rate, counted by pyrate-limiter in this process, or in
  a store every process that names it shares: a SQLite file (one host) or Redis
  (several machines); built from a URL by :func:`shared_limiter`.
* :class:`AdaptiveRateLimiter`: learns the quota from 429 answers, in one process.
"""

from __future__ import annotations

import collections
import contextlib
import hashlib
import logging
import math
import sqlite3
import threading
import time
import weakref
from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, TypeAlias
from urllib.parse import urlsplit

if TYPE_CHECKING:
    import redis
    from pyrate_limiter import AbstractBucket, Rate

    # A store: its bucket, its name for messages, the errors it fails with, and the
    # units of its timestamps (per second).
    _Store: TypeAlias = tuple[AbstractBucket, str, tuple[type[BaseException], ...], int]

logger = logging.getLogger("service_api")


class RequestLimiter(Protocol):
    """What the transports ask before every request they send and tell after each answer.

    Example::

        while (wait := limiter.try_acquire()) > 0:
            time.sleep(wait)
        response = send(request)
        limiter.observe(response.status_code, retry_after=None)
    """

    def try_acquire(self) -> float:
        """``0.0`` when a request may be sent now (its slot is taken); otherwise the
        seconds to wait before asking again."""
        ...

    def observe(self, status_code: int, retry_after: float | None) -> None:
        """Learn from one answer of the service (a 429 with its ``Retry-After``, ...)."""
        ...


class RateLimiter:
    """At most ``per_minute`` requests start in any minute, counted in a pyrate-limiter
    bucket.

    Made directly, it counts in this process: GCRA in memory (a token bucket of capacity
    ``burst`` refilled at ``per_minute / 60`` per second) on ``clock``. Made by
    :func:`shared_limiter`, it counts in a store every process naming it shares: a
    sliding window log in a SQLite file under a file lock (one host) or in Redis
    (several machines). Timestamps are then the wall clock of each process, so machines
    sharing Redis need synchronised clocks (NTP).

    If the store fails while in use, the limiter logs one warning and goes on counting
    in memory at the same rate: the export continues, only the sharing is lost.

    Example::

        limiter = RateLimiter(90)
        time.sleep(limiter.try_acquire())   # 0.0 when the slot is taken; else ask again
    """

    def __init__(
        self,
        per_minute: float,
        *,
        burst: int = 1,
        clock: Callable[[], float] = time.monotonic,
        shared: _Store | None = None,
    ) -> None:
        if not 0 < per_minute < math.inf:
            raise ValueError("rate_limit must be a positive number of requests per minute")
        if burst < 1:
            raise ValueError("burst must be at least 1")
        self.per_minute = float(per_minute)
        self._clock = clock
        self._bucket, self._store, self._errors, self._ticks = shared or _memory_store(
            per_minute, burst, "in-process"
        )
        # Reentrant: a call the failing store refused is asked again of the fallback.
        self._lock = threading.RLock()
        self._leaked_at = 0

    def __repr__(self) -> str:
        return f"RateLimiter(per_minute={self.per_minute:g}, store={self._store!r})"

    def try_acquire(self) -> float:
        """Take the slot for one request if it is free now (return ``0.0``); otherwise
        return the seconds until it frees, without taking it."""
        from pyrate_limiter import Decision, RateItem

        with self._lock:
            try:
                # The store's lock (a file lock, or a Redis lock) is held from reading the
                # clock to writing the entry: the buckets count only entries stamped up to
                # the new one, so one written late with an earlier time would let one
                # request too many into a window.
                lock = self._bucket.limiter_lock()
                with lock if isinstance(lock, AbstractContextManager) else contextlib.nullcontext():
                    now = round(self._clock() * self._ticks)
                    decision = self._bucket.put_decision(RateItem("service-api", now))
                assert isinstance(decision, Decision)  # a sync bucket
                # pyrate-limiter's Limiter drops expired entries from a background thread;
                # this limiter does it inline, every few seconds, with no thread to manage.
                if decision.allowed and now - self._leaked_at >= 5 * self._ticks:
                    self._leaked_at = now
                    self._bucket.leak(now)
            except self._errors as exc:
                logger.warning(
                    "the shared rate store %s failed (%s); limiting this process alone to %g "
                    "requests per minute from now on",
                    self._store,
                    type(exc).__name__,
                    self.per_minute,
                )
                self._clock = time.monotonic
                self._bucket, self._store, self._errors, self._ticks = _memory_store(
                    self.per_minute, 1, "in-process fallback"
                )
                return self.try_acquire()
            # At least one unit: a zero would make the caller ask again at once.
            return 0.0 if decision.allowed else max(decision.retry_after_ms or 0, 1) / self._ticks

    def observe(self, status_code: int, retry_after: float | None) -> None:
        """A fixed rate learns nothing from answers (the retry waits out a 429)."""

    def close(self) -> None:
        """Close the store's connection."""
        with self._lock:
            try:
                self._bucket.close()
            except self._errors:
                logger.debug("closing the rate store failed", exc_info=True)


def _memory_store(per_minute: float, burst: int, name: str) -> _Store:
    from pyrate_limiter import Rate, StateBucket

    # GCRA spaces requests 60 / per_minute seconds apart, ``burst`` of them at once after
    # a pause. Its timestamps are microseconds here (pyrate-limiter reads them as
    # milliseconds): a wait rounded up to a whole unit would slow the pace of a sender
    # that waits it out by up to a millisecond a request.
    interval = max(1, round(60_000_000 / per_minute))
    return StateBucket([Rate(1, interval, burst=burst)]), name, (), 1_000_000


class AdaptiveRateLimiter:
    """Learns the service's quota from its 429 answers, as botocore's ``adaptive`` mode.

    It sends freely until the first 429. From then on it spaces requests to a rate it
    adjusts with CUBIC (the TCP congestion algorithm botocore uses): each 429 cuts the
    rate to ``beta`` times what the service accepted over the last minute, and every
    good answer lets it grow back
    along a cubic curve that is flat near the rate of the last 429 (so a long export
    settles just under the real limit) and climbs faster beyond it (so a raised quota
    is found again). The rate is one for every thread and event loop using the limiter.

    Rates are in requests per second inside, per minute at the edges, like the quota.
    ``scale`` is CUBIC's constant relative to the rate: after a cut the rate is back at
    its old value after ``((1 - beta) / scale) ** (1/3)`` seconds (about 20 s by default,
    a third of a per-minute quota's window).

    Example::

        limiter = AdaptiveRateLimiter()
        limiter.observe(429, retry_after=2.0)   # learn: slow down
        limiter.try_acquire()                    # > 0 once the first token is spent
    """

    def __init__(
        self,
        *,
        initial_per_minute: float | None = None,
        min_per_minute: float = 3.0,
        max_per_minute: float | None = None,
        beta: float = 0.7,
        scale: float = 4e-5,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if not min_per_minute > 0:
            raise ValueError("min_per_minute must be positive")
        if max_per_minute is not None and not max_per_minute >= min_per_minute:
            raise ValueError("max_per_minute must be at least min_per_minute")
        if initial_per_minute is not None and not initial_per_minute > 0:
            raise ValueError("initial_per_minute must be positive")
        if not 0 < beta < 1:
            raise ValueError("beta must be within 0..1 (exclusive)")
        if not scale > 0:
            raise ValueError("scale must be positive")
        self._min_rate = min_per_minute / 60.0
        self._max_rate = math.inf if max_per_minute is None else max_per_minute / 60.0
        self._beta = beta
        self._scale = scale
        self._clock = clock
        self._lock = threading.Lock()
        now = clock()
        # Until the first 429 (or with no initial rate) the bucket lets everything pass.
        self._enabled = initial_per_minute is not None
        self._rate = self._bounded((initial_per_minute or 60.0) / 60.0)
        self._tokens = 1.0
        self._refilled_at = now
        self._last_max_rate = self._rate
        self._last_throttle = now
        # CUBIC's K: seconds of growth from rate * beta back to rate. The cubic is scaled
        # to the rate, so K is the same at 10 or 10,000 requests per minute.
        self._k = float(((1.0 - beta) / scale) ** (1.0 / 3.0))
        # Answers accepted per whole second: at most a minute's entries, whatever the rate.
        self._accepted: collections.Counter[int] = collections.Counter()
        self._first_answer = math.inf

    def __repr__(self) -> str:
        rate = f"{self.per_minute:.1f}/min" if self._enabled else "unlimited"
        return f"AdaptiveRateLimiter(rate={rate})"

    @property
    def per_minute(self) -> float | None:
        """The rate it currently allows, or ``None`` before the first 429."""
        with self._lock:
            return self._rate * 60.0 if self._enabled else None

    def try_acquire(self) -> float:
        """``0.0`` and one token taken, or the seconds until a token frees."""
        with self._lock:
            now = self._clock()
            if not self._enabled:
                return 0.0
            self._refill(now)
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
                self._enabled = True
                self._set_rate(now, self._last_max_rate * self._beta)
            elif status_code < 400 and self._enabled:
                t = now - self._last_throttle - self._k
                cubic = self._last_max_rate * (1.0 + self._scale * t**3)
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

    def _bounded(self, rate: float) -> float:
        return min(max(rate, self._min_rate), self._max_rate)

    def _refill(self, now: float) -> None:
        capacity = max(1.0, self._rate)  # at most one second's worth of burst
        self._tokens = min(capacity, self._tokens + (now - self._refilled_at) * self._rate)
        self._refilled_at = now

    def _set_rate(self, now: float, rate: float) -> None:
        self._refill(now)
        self._rate = self._bounded(rate)


class StoreError(OSError):
    """A shared rate or token store that cannot be used: unreachable, unwritable, corrupt.

    Raised when a store is set up (a bad URL, an unwritable SQLite path, a Redis server
    that does not answer); once running, a failing store is replaced by the in-process
    fallback with one warning instead.

    Example::

        try:
            limiter = shared_limiter("redis://127.0.0.1:6379/0", per_minute=90, key="my-client")
        except StoreError as exc:
            print("no shared budget:", exc)
    """


#: Seconds a Redis command may take before the store counts as unreachable.
STORE_TIMEOUT = 2.0


def shared_limiter(url: str, *, per_minute: float, key: str, window: float = 1.0) -> RateLimiter:
    """A :class:`RateLimiter` counting in the store ``url`` names, checked before it returns.

    * ``sqlite:///path/to/file.db`` (or ``sqlite:relative.db``): one host; the file and
      its ``.lock`` beside it are created if missing.
    * ``redis://host:port/db`` (``rediss://`` for TLS, ``redis://:password@...``): several
      machines; needs the ``redis`` extra (``pip install service-api[redis]``).

    The window is about ``window`` seconds holding ``per_minute * window / 60`` requests,
    so requests are spread out rather than sent as a minute's burst; any minute then
    holds at most ``per_minute`` plus one window's worth. ``key`` names the budget (the
    integration's client ID): clients of other integrations in the same store keep
    separate counts.

    Raises :class:`StoreError` when the store cannot be used (never hangs: Redis gets
    :data:`STORE_TIMEOUT` seconds), ``ValueError`` for a bad rate or an unknown scheme.

    Example::

        limiter = shared_limiter("redis://127.0.0.1:6379/0", per_minute=90, key="my-client")
    """
    from pyrate_limiter import Rate

    if not 0 < per_minute < math.inf:
        raise ValueError("rate_limit must be a positive number of requests per minute")
    if not window > 0:
        raise ValueError("window must be positive")
    scheme = urlsplit(url).scheme.lower()
    if scheme not in _STORES:
        raise ValueError(
            "rate_store must be a sqlite:///path or redis://host:port/db URL, "
            f"not {scheme or url!r}"
        )
    # A whole number of requests per window, the window stretched to keep the rate.
    limit = max(1, round(per_minute * window / 60.0))
    rate = Rate(limit, max(1, math.ceil(limit * 60_000 / per_minute)))
    # A fixed-length, SQL- and Redis-safe name for the integration (its client ID).
    name = hashlib.sha256(key.encode()).hexdigest()[:24]
    return RateLimiter(per_minute, clock=time.time, shared=_STORES[scheme](url, [rate], name))


def sqlite_path(url: str) -> Path:
    """The file a ``sqlite:`` URL names.

    Example::

        sqlite_path("sqlite:///var/tmp/quota.db")   # Path('/var/tmp/quota.db')
    """
    parts = urlsplit(url)
    if parts.netloc or not parts.path or parts.query or parts.fragment:
        raise ValueError("a SQLite store is named sqlite:///absolute/path or sqlite:relative/path")
    return Path(parts.path)


def _sqlite_store(url: str, rates: list[Rate], name: str) -> _Store:
    from filelock import Timeout
    from pyrate_limiter import SQLiteBucket

    path = sqlite_path(url)
    if not path.parent.is_dir():
        raise StoreError(f"the rate store's directory {str(path.parent)!r} does not exist")
    errors = (sqlite3.Error, OSError, Timeout)
    try:
        bucket = SQLiteBucket.init_from_file(
            rates,
            table=f"rate_{name}",
            db_path=str(path),
            create_new_table=True,
            use_file_lock=True,
        )
        bucket.count()  # reads the table: a file that is not a database fails here
    except errors as exc:
        raise StoreError(f"cannot use {str(path)!r} as a rate store: {exc}") from None
    return bucket, f"sqlite:{path}", errors, 1000


def _redis_store(url: str, rates: list[Rate], name: str) -> _Store:
    from pyrate_limiter import RedisBucket

    connection = redis_connection(url)
    import redis

    class LockedRedisBucket(RedisBucket):  # see RateLimiter.try_acquire for the lock
        def limiter_lock(self) -> object:
            key, wait = f"{self.bucket_key}:lock", STORE_TIMEOUT
            return connection.lock(key, timeout=wait, blocking_timeout=wait)

    try:
        bucket = LockedRedisBucket.init(rates, connection, f"service-api:rate:{name}")
    except redis.RedisError as exc:
        raise StoreError(f"cannot use Redis at {redis_location(url)}: {exc}") from None
    return bucket, f"redis:{redis_location(url)}", (redis.RedisError,), 1000


_STORES: dict[str, Callable[[str, list[Rate], str], _Store]] = {
    "sqlite": _sqlite_store,
    "redis": _redis_store,
    "rediss": _redis_store,
}


def redis_location(url: str) -> str:
    """``host:port/db`` of a Redis URL, without its password (for messages).

    Example::

        redis_location("redis://:s3cret@10.0.0.5:6379/2")   # '10.0.0.5:6379/2'
    """
    parts = urlsplit(url)
    return f"{parts.hostname}:{parts.port or 6379}{parts.path or '/0'}"


def redis_connection(url: str) -> redis.Redis:
    """A Redis client for ``url`` that has answered a ping, with short timeouts.

    Example::

        connection = redis_connection("redis://127.0.0.1:6379/0")
    """
    try:
        import redis
    except ImportError:
        raise StoreError(
            "a redis:// store needs the redis package: pip install 'service-api[redis]'"
        ) from None
    try:
        connection = redis.Redis.from_url(
            url, socket_connect_timeout=STORE_TIMEOUT, socket_timeout=STORE_TIMEOUT
        )
        connection.ping()
    except (redis.RedisError, ValueError) as exc:
        # The message of a connection error names host and port, never the password.
        raise StoreError(f"cannot reach Redis at {redis_location(url)}: {exc}") from None
    return connection


ADAPTIVE = "adaptive"
"""``Client(rate_limit=ADAPTIVE)``: learn the quota from 429 answers."""

DEFAULT_SHARED_PER_MINUTE = 90.0
"""The shared budget when a store is named without a rate: 90 % of the roughly 100
requests per minute per integration that public material mentions (unconfirmed)."""


# One limiter per integration and setting in a process: two ``Client`` objects of the same
# integration (a script that makes one per account, a worker that makes one per task) share
# their budget as children of one client do. Weak, so a limiter lives as long as a client.
_LIMITERS: weakref.WeakValueDictionary[tuple[str, object, str | None], RequestLimiter] = (
    weakref.WeakValueDictionary()
)
_LIMITERS_LOCK = threading.Lock()


def build_limiter(
    rate_limit: float | str | None, rate_store: str | None, *, key: str
) -> RequestLimiter | None:
    """The limiter ``Client(rate_limit=..., rate_store=...)`` asks for: the same object for
    every client of one integration (``key``) with the same settings in this process.

    * with ``rate_store``: :func:`shared_limiter` at ``rate_limit`` per minute, or at
      :data:`DEFAULT_SHARED_PER_MINUTE` when ``rate_limit`` is ``None`` or adaptive.
    * ``rate_limit="adaptive"``: :class:`AdaptiveRateLimiter`.
    * a number: that many requests per minute, in this process (:class:`RateLimiter`).

    Example::

        build_limiter(90, "sqlite:///var/tmp/quota.db", key="my-client")
    """
    if isinstance(rate_limit, str) and rate_limit != ADAPTIVE:
        raise ValueError(f"rate_limit must be a number, {ADAPTIVE!r} or None, not {rate_limit!r}")
    if rate_limit is None and rate_store is None:
        return None
    identity = (key, rate_limit, rate_store)
    with _LIMITERS_LOCK:
        limiter = _LIMITERS.get(identity)
        if limiter is None:
            # A store alone is enough to opt in: without a number, the public figure less 10 %.
            per_minute = (
                rate_limit if isinstance(rate_limit, int | float) else DEFAULT_SHARED_PER_MINUTE
            )
            if rate_store is not None:
                limiter = shared_limiter(rate_store, per_minute=per_minute, key=key)
            elif rate_limit == ADAPTIVE:
                limiter = AdaptiveRateLimiter()
            else:
                limiter = RateLimiter(per_minute)
            _LIMITERS[identity] = limiter
        return limiter
