"""The request budget: a fixed rate counted by pyrate-limiter (in this process or in a
shared store), or a rate learnt from the service's 429 answers.

A limiter only says how long a request must wait (under a threading lock, so it works
the same from any thread or event loop); the sync and async transports do the waiting.
"""

from __future__ import annotations

import collections
import contextlib
import logging
import math
import threading
import time
import weakref
from collections.abc import Callable

from pyrate_limiter import Decision, Rate, RateItem, StateBucket

from service_api._protocols import RequestLimiter
from service_api.quota._stores import RateStore, shared_rate_store

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
        self._enabled = False
        self._rate = self._last_max_rate = max(1.0, self._min_rate)
        self._tokens = 1.0
        self._refilled_at = self._last_throttle = clock()
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
                self._set_rate(now, self._last_max_rate * self.BETA)
            elif status_code < 400 and self._enabled:
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
        shared = None if store is None else shared_rate_store(store, per_minute, key, window)
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


def _memory_store(per_minute: float, name: str) -> RateStore:
    # Timestamps in microseconds (pyrate-limiter reads them as milliseconds): a wait
    # rounded up to a whole unit would slow a sender that waits it out by up to a
    # millisecond a request.
    interval = max(1, round(60_000_000 / per_minute))
    return StateBucket([Rate(1, interval)]), contextlib.nullcontext(), name, (), 1_000_000


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
