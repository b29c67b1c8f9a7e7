"""The client-side rate limiter: decisions only, on an injected clock."""

import pytest

from service_api._rate_limit import RateLimiter


class FakeClock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_requests_are_spaced_to_the_rate() -> None:
    clock = FakeClock()
    limiter = RateLimiter(60, clock=clock)
    assert limiter.try_acquire() == 0.0
    assert limiter.try_acquire() == 1.0  # not taken: asking again still waits
    clock.now += 0.25
    assert limiter.try_acquire() == 0.75
    clock.now += 0.75
    assert [limiter.try_acquire(), limiter.try_acquire()] == [0.0, 1.0]


def test_idle_time_is_not_saved_up_beyond_the_burst() -> None:
    clock = FakeClock()
    limiter = RateLimiter(120, burst=2, clock=clock)
    assert limiter.try_acquire() == 0.0
    clock.now += 60
    assert [limiter.try_acquire() for _ in range(3)] == [0.0, 0.0, 0.5]


def test_invalid_rates_are_refused() -> None:
    with pytest.raises(ValueError, match="positive"):
        RateLimiter(0)
    with pytest.raises(ValueError, match="burst"):
        RateLimiter(10, burst=0)
