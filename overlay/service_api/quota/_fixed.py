"""A fixed request rate, in this process or shared through a store (pyrate-limiter)."""

from __future__ import annotations

import contextlib
import logging
import math
import sqlite3
import threading
import time
from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import TypeAlias

import httpx
from pyrate_limiter import AbstractBucket, Decision, Rate, RateItem, SQLiteBucket, StateBucket

from service_api.quota import _stores as stores

logger = logging.getLogger("service_api")
# A rate store: its bucket, the lock held from reading the clock to writing the entry, its
# name for messages and the errors it fails with. Every bucket is stamped in microseconds
# (pyrate-limiter reads them as milliseconds, its rates in the same unit): a wait rounded
# up to a whole millisecond would slow a sender that waits it out by up to a millisecond
# a request.
_RateStore: TypeAlias = tuple[AbstractBucket, AbstractContextManager[object], str, stores.Errors]


def _shared_rate_store(url: str, per_minute: float, key: str, window: float) -> _RateStore:
    # A whole number of requests per window, the window stretched to keep the rate.
    limit = max(1, round(per_minute * window / 60.0))
    rates = [Rate(limit, max(1, math.ceil(limit * 60_000_000 / per_minute)))]
    name = stores.digest(key)
    if (path := stores.store_path(url, "rate_store", "sqlite")) is not None:
        file = str(stores.in_existing_directory(path, "rate store"))
        errors = (sqlite3.Error, OSError)  # filelock's Timeout is an OSError
        with stores.store_errors(errors, f"cannot use {file!r} as a rate store"):
            bucket = SQLiteBucket.init_from_file(rates, f"rate_{name}", file, use_file_lock=True)
        return bucket, bucket.lock, f"sqlite:{file}", errors
    connection, where = (
        stores.redis_connection(url, "SERVICE_API_RATE_STORE"),
        stores.redis_location(url),
    )
    import redis
    from pyrate_limiter import RedisBucket

    name = f"service-api:rate:{name}"
    with stores.store_errors((redis.RedisError,), f"cannot use Redis at {where}"):
        shared = RedisBucket.init(rates, connection, name)
    lock = connection.lock(
        f"{name}:lock", timeout=stores.STORE_TIMEOUT, blocking_timeout=stores.STORE_TIMEOUT
    )
    return shared, lock, f"redis:{where}", (redis.RedisError,)


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

    def observe(self, response: httpx.Response) -> None:
        """A fixed rate learns nothing from answers (the retry waits out a 429)."""

    def close(self) -> None:
        """Close the store's connection."""
        with self._lock, contextlib.suppress(*self._errors):
            self._bucket.close()


def _memory_store(per_minute: float, name: str) -> _RateStore:
    interval = max(1, round(60_000_000 / per_minute))
    return StateBucket([Rate(1, interval)]), contextlib.nullcontext(), name, ()
