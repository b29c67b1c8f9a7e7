"""A request rate learnt from the service's 429 answers, in one process."""

from __future__ import annotations

import collections
import math
import threading
import time
from collections.abc import Callable


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
