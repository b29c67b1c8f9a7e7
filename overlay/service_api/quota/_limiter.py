"""A fixed request rate, counted by pyrate-limiter in this process or in a shared store.

A limiter only says how long a request must wait (under a threading lock, so it works
the same from any thread or event loop); the sync and async transports do the waiting.
"""

from __future__ import annotations

import contextlib
import logging
import math
import sqlite3
import threading
import time
import weakref
from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import TypeAlias

from pyrate_limiter import AbstractBucket, Decision, Rate, RateItem, SQLiteBucket, StateBucket

from service_api._protocols import RequestLimiter
from service_api.quota._adaptive import AdaptiveRateLimiter
from service_api.quota._stores import (
    STORE_TIMEOUT,
    digest,
    in_existing_directory,
    redis_connection,
    redis_location,
    store_errors,
    store_path,
)

logger = logging.getLogger("service_api")

# A store: its bucket, the lock held from reading the clock to writing the entry, its name
# for messages, the errors it fails with, and the units of its timestamps (per second).
_Store: TypeAlias = tuple[
    AbstractBucket, AbstractContextManager[object], str, tuple[type[BaseException], ...], int
]


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
    :data:`STORE_TIMEOUT` seconds to answer); a bad rate or URL a ``ValueError``.

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
        shared = None if store is None else _shared_store(store, per_minute, key, window)
        self._bucket, self._store_lock, self._store, self._errors, self._ticks = (
            shared or _memory_store(per_minute, "in-process")
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
                self._bucket, self._store_lock, self._store, self._errors, self._ticks = (
                    _memory_store(self.per_minute, "in-process fallback")
                )
                return self.try_acquire()
            # At least one unit: a zero would make the caller ask again at once.
            return 0.0 if decision.allowed else max(decision.retry_after_ms or 0, 1) / self._ticks

    def observe(self, status_code: int, retry_after: float | None) -> None:
        """A fixed rate learns nothing from answers (the retry waits out a 429)."""

    def close(self) -> None:
        """Close the store's connection."""
        with self._lock, contextlib.suppress(*self._errors):
            self._bucket.close()


def _memory_store(per_minute: float, name: str) -> _Store:
    # Timestamps in microseconds (pyrate-limiter reads them as milliseconds): a wait
    # rounded up to a whole unit would slow a sender that waits it out by up to a
    # millisecond a request.
    interval = max(1, round(60_000_000 / per_minute))
    return StateBucket([Rate(1, interval)]), contextlib.nullcontext(), name, (), 1_000_000


def _shared_store(url: str, per_minute: float, key: str, window: float) -> _Store:
    # A whole number of requests per window, the window stretched to keep the rate.
    limit = max(1, round(per_minute * window / 60.0))
    rates = [Rate(limit, max(1, math.ceil(limit * 60_000 / per_minute)))]
    if (path := store_path(url, "rate_store", "sqlite")) is None:
        return _redis_store(url, rates, f"service-api:rate:{digest(key)}")
    file = str(in_existing_directory(path, "rate store"))
    errors = (sqlite3.Error, OSError)  # filelock's Timeout is an OSError
    with store_errors(errors, f"cannot use {file!r} as a rate store"):
        bucket = SQLiteBucket.init_from_file(rates, f"rate_{digest(key)}", file, use_file_lock=True)
        bucket.count()  # reads the table: a file that is not a database fails here
    return bucket, bucket.lock, f"sqlite:{file}", errors, 1000


def _redis_store(url: str, rates: list[Rate], name: str) -> _Store:
    connection = redis_connection(url, "SERVICE_API_RATE_STORE")
    import redis
    from pyrate_limiter import RedisBucket

    with store_errors(redis.RedisError, f"cannot use Redis at {redis_location(url)}"):
        bucket = RedisBucket.init(rates, connection, name)
    lock = connection.lock(f"{name}:lock", timeout=STORE_TIMEOUT, blocking_timeout=STORE_TIMEOUT)
    return bucket, lock, f"redis:{redis_location(url)}", (redis.RedisError,), 1000


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
