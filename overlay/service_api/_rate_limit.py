"""A client-side request rate limit shared by threads, tasks and event loops.

A limiter only says how long a request must wait (under a threading lock, so it works
the same from any thread or event loop); the sync and async transports do the waiting
with ``time.sleep`` or ``asyncio.sleep``, and tell the limiter what the service answered
so that an adaptive limiter can learn the quota.
"""

from __future__ import annotations

import collections
import threading
import time
from collections.abc import Callable
from typing import Protocol


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
    """Spaces requests so that at most ``per_minute`` start in any minute.

    It is a token bucket of capacity ``burst`` refilled at ``per_minute / 60``
    per second, written as the generic cell rate algorithm: each call reserves
    the next free slot and returns how long to wait for it.

    Example::

        limiter = RateLimiter(90)
        time.sleep(limiter.reserve())   # then send
    """

    def __init__(
        self,
        per_minute: float,
        *,
        burst: int = 1,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if not per_minute > 0:
            raise ValueError("rate_limit must be a positive number of requests per minute")
        if burst < 1:
            raise ValueError("burst must be at least 1")
        self.per_minute = float(per_minute)
        self.burst = burst
        self._interval = 60.0 / self.per_minute
        self._clock = clock
        self._lock = threading.Lock()
        self._theoretical_arrival: float | None = None

    def __repr__(self) -> str:
        return f"RateLimiter(per_minute={self.per_minute:g}, burst={self.burst})"

    def try_acquire(self) -> float:
        """Take the slot for one request if it is free now (return ``0.0``); otherwise
        return the seconds until it frees, without taking it."""
        with self._lock:
            now = self._clock()
            arrival = now if self._theoretical_arrival is None else self._theoretical_arrival
            arrival = max(arrival, now)
            allowed_at = arrival - (self.burst - 1) * self._interval
            if allowed_at > now:
                return allowed_at - now
            self._theoretical_arrival = arrival + self._interval
            return 0.0

    def observe(self, status_code: int, retry_after: float | None) -> None:
        """A fixed limit learns nothing from answers."""


class AdaptiveRateLimiter:
    """Learns the service's quota from its 429 answers, as botocore's ``adaptive`` mode.

    It sends freely until the first 429. From then on it spaces requests to a rate it
    adjusts with CUBIC (the TCP congestion algorithm botocore uses): each 429 cuts the
    rate to ``beta`` times what was being sent, and every good answer lets it grow back
    along a cubic curve that is flat near the rate of the last 429 (so a long export
    settles just under the real limit) and climbs faster beyond it (so a raised quota
    is found again). A 429's ``Retry-After`` also holds every request of the limiter
    back until it has passed, whatever thread or event loop sends it.

    Rates are in requests per second inside, per minute at the edges, like the quota.
    ``scale`` is CUBIC's constant relative to the rate: after a cut the rate is back at
    its old value after ``((1 - beta) / scale) ** (1/3)`` seconds (about 20 s by default,
    a third of a per-minute quota's window).

    Example::

        limiter = AdaptiveRateLimiter()
        limiter.observe(429, retry_after=2.0)   # learn: slow down, and wait 2 s
        limiter.try_acquire()                    # 2.0: hold this request back
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
        self._max_rate = None if max_per_minute is None else max_per_minute / 60.0
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
        self._k = self._time_to_recover()
        self._held_until = now
        self._goodput = _Goodput()

    def __repr__(self) -> str:
        rate = f"{self.per_minute:.1f}/min" if self._enabled else "unlimited"
        return f"AdaptiveRateLimiter(rate={rate})"

    @property
    def per_minute(self) -> float | None:
        """The rate it currently allows, or ``None`` before the first 429."""
        with self._lock:
            return self._rate * 60.0 if self._enabled else None

    def try_acquire(self) -> float:
        """``0.0`` and one token taken, or the seconds until a token (or Retry-After) frees."""
        with self._lock:
            now = self._clock()
            if now < self._held_until:
                return self._held_until - now
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
        """Cut the rate on 429 (and hold back for its Retry-After); grow it on success."""
        with self._lock:
            now = self._clock()
            self._goodput.record(now, accepted=status_code < 400)
            measured = self._goodput.rate(now)
            if status_code == 429:
                if retry_after is not None and retry_after > 0:
                    self._held_until = max(self._held_until, now + retry_after)
                sending = measured if not self._enabled else min(measured, self._rate)
                self._last_max_rate = max(sending, self._min_rate)
                self._k = self._time_to_recover()
                self._last_throttle = now
                self._enabled = True
                self._set_rate(now, self._last_max_rate * self._beta)
            elif status_code < 400 and self._enabled:
                t = now - self._last_throttle - self._k
                cubic = self._last_max_rate * (1.0 + self._scale * t**3)
                # Never more than twice what is actually sent: an idle spell must not
                # grant a rate nobody has tried.
                self._set_rate(now, min(cubic, 2.0 * max(measured, self._rate / 2.0)))

    def _time_to_recover(self) -> float:
        # CUBIC's K: seconds of growth from rate * beta back to rate. The cubic is scaled
        # to the rate, so K is the same at 10 or 10,000 requests per minute.
        return float(((1.0 - self._beta) / self._scale) ** (1.0 / 3.0))

    def _bounded(self, rate: float) -> float:
        rate = max(rate, self._min_rate)
        return rate if self._max_rate is None else min(rate, self._max_rate)

    def _refill(self, now: float) -> None:
        capacity = max(1.0, self._rate)  # at most one second's worth of burst
        self._tokens = min(capacity, self._tokens + (now - self._refilled_at) * self._rate)
        self._refilled_at = now

    def _set_rate(self, now: float, rate: float) -> None:
        self._refill(now)
        self._rate = self._bounded(rate)


class _Goodput:
    """Requests per second the service accepted over the last ``horizon`` seconds.

    botocore measures the send rate over half a second; against a per-minute window
    quota that sees a burst, not what the window lets through. Accepted answers over a
    minute, the waits a 429 imposed included, are the share of the quota this process
    really gets: the rate to cut from.
    """

    def __init__(self, horizon: float = 60.0) -> None:
        self._horizon = horizon
        self._accepted: collections.deque[float] = collections.deque()
        self._first: float | None = None

    def record(self, now: float, *, accepted: bool) -> None:
        if self._first is None:
            self._first = now
        if accepted:
            self._accepted.append(now)

    def rate(self, now: float) -> float:
        while self._accepted and self._accepted[0] <= now - self._horizon:
            self._accepted.popleft()
        if self._first is None:
            return 0.0
        # At least a second: a burst of three answers in 3 ms is not 1,000 per second.
        span = max(1.0, min(self._horizon, now - self._first))
        return len(self._accepted) / span
