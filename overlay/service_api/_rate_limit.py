"""A client-side request rate limit shared by threads, tasks and event loops.

A limiter only says how long a request must wait (under a threading lock, so it works
the same from any thread or event loop); the sync and async transports do the waiting
with ``time.sleep`` or ``asyncio.sleep``, and tell the limiter what the service answered
so that an adaptive limiter can learn the quota.
"""

from __future__ import annotations

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
