"""The learned quota: its decisions on an injected clock, and the headers it reads."""

import httpx
import pytest

from service_api.quota import AdaptiveRateLimiter
from service_api.quota._limiters import (
    BETA,
    GROWTH,
    PROBE_EVERY,
    LearnedQuota,
    stated_quota,
)


class FakeClock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def answer(status: int = 200, **headers: str) -> httpx.Response:
    return httpx.Response(
        status, headers={k.replace("_", "-"): v for k, v in headers.items()}
    )


def burst(
    limiter: AdaptiveRateLimiter, clock: FakeClock, accepted: int, seconds: float
) -> None:
    """``accepted`` requests granted and accepted over ``seconds``."""
    for _ in range(accepted):
        assert limiter.try_acquire() == 0.0
        limiter.observe(answer())
        clock.now += seconds / accepted


def paced(limiter: AdaptiveRateLimiter, clock: FakeClock, seconds: float) -> int:
    """Send at the pace the limiter grants for ``seconds``, every answer accepted."""
    end, sent = clock.now + seconds, 0
    while clock.now < end:
        while (wait := limiter.try_acquire()) > 0:
            clock.now += wait
        limiter.observe(answer())
        sent += 1
    return sent


def learnt(clock: FakeClock) -> AdaptiveRateLimiter:
    """A limiter that met a 429 after 24 requests in 0.5 s, told to retry after 6 s."""
    limiter = AdaptiveRateLimiter(clock=clock)
    burst(limiter, clock, 24, 0.5)
    limiter.observe(answer(429, retry_after="6"))
    return limiter


def test_nothing_is_paced_until_the_first_429() -> None:
    clock = FakeClock()
    limiter = AdaptiveRateLimiter(clock=clock)
    burst(limiter, clock, 100, 1.0)
    assert limiter.per_minute is None
    assert "per_minute=None" in repr(limiter)


def test_a_429_after_a_burst_paces_at_the_burst_over_the_window_it_filled() -> None:
    clock = FakeClock()
    limiter = learnt(clock)
    # 24 over 0.5 s and a 6 s Retry-After (a whole second, rounded up by half of one on
    # average): a window of about 6 s, so 4 a second, less 3 %.
    assert limiter.per_minute == pytest.approx(BETA * 4 * 60)
    # The Retry-After pauses everything.
    assert limiter.try_acquire() == pytest.approx(6.0)
    clock.now += 6.0
    assert limiter.try_acquire() == 0.0
    assert limiter.try_acquire() == pytest.approx(1 / (BETA * 4))


def test_429s_of_requests_sent_before_the_pause_do_not_cut_again() -> None:
    clock = FakeClock()
    limiter = learnt(clock)
    rate = limiter.per_minute
    clock.now += 0.05
    limiter.observe(answer(429, retry_after="6"))
    assert limiter.per_minute == rate
    assert limiter.try_acquire() == pytest.approx(6.0)  # the later pause wins


def test_growth_is_probed_a_step_at_a_time_and_a_failed_probe_goes_back() -> None:
    clock = FakeClock()
    limiter = learnt(clock)
    learned = limiter.per_minute
    assert learned is not None
    paced(limiter, clock, 6.0 + PROBE_EVERY + 1.0)  # a whole trial without a 429
    assert limiter.per_minute == pytest.approx(learned * GROWTH)
    limiter.observe(answer(429, retry_after="1"))  # the raise was too much
    assert limiter.per_minute == pytest.approx(learned)
    clock.now += 1.0
    paced(limiter, clock, PROBE_EVERY + 1.0)  # probes are now half as frequent
    assert limiter.per_minute == pytest.approx(learned)
    paced(limiter, clock, PROBE_EVERY)
    assert limiter.per_minute == pytest.approx(learned * GROWTH)


def test_an_idle_integration_does_not_raise_its_rate() -> None:
    clock = FakeClock()
    limiter = learnt(clock)
    learned = limiter.per_minute
    clock.now += 10 * PROBE_EVERY
    for _ in range(3):
        assert limiter.try_acquire() == 0.0
        limiter.observe(answer())
        clock.now += 5.0
    assert limiter.per_minute == learned


def test_429s_whatever_the_pace_drive_the_rate_down_to_a_floor() -> None:
    clock = FakeClock()
    limiter = learnt(clock)
    for _ in range(70):  # over a minute: the accepted burst is forgotten
        while (wait := limiter.try_acquire()) > 0:
            clock.now += wait
        limiter.observe(answer(429))  # no Retry-After: a second
    assert limiter.per_minute == pytest.approx(3.0)


def test_stated_headers_set_the_rate_before_any_429() -> None:
    clock = FakeClock()
    limiter = AdaptiveRateLimiter(clock=clock)
    limiter.observe(answer(ratelimit_policy='"default";q=600;w=60'))
    assert limiter.per_minute == pytest.approx(600)
    assert [limiter.try_acquire(), limiter.try_acquire()] == [0.0, pytest.approx(0.1)]


def test_nothing_remaining_pauses_until_the_reset() -> None:
    clock = FakeClock()
    limiter = AdaptiveRateLimiter(clock=clock)
    limiter.observe(answer(ratelimit='"default";r=0;t=3'))
    assert limiter.try_acquire() == pytest.approx(3.0)
    clock.now += 3.0
    assert limiter.try_acquire() == 0.0


NOW = 1_800_000_000.0


@pytest.mark.parametrize(
    ("headers", "stated"),
    [
        ({"RateLimit-Policy": '"default";q=100;w=60'}, (100 / 60, None)),
        ({"RateLimit-Policy": "100;w=60"}, (100 / 60, None)),  # an early draft
        ({"RateLimit": '"default";r=50;t=25'}, (2.0, None)),
        ({"RateLimit": "limit=100, remaining=0, reset=7"}, (None, 7.0)),
        ({"ratelimit-remaining": "30", "ratelimit-reset": "10"}, (3.0, None)),
        (
            {
                "X-RateLimit-Limit": "5000",
                "X-RateLimit-Remaining": "120",
                "X-RateLimit-Reset": str(int(NOW) + 60),
            },
            (2.0, None),
        ),
        ({"x-ratelimit-remaining": "0", "x-ratelimit-reset": "2"}, (None, 2.0)),
        ({"X-RateLimit-Limit": "100"}, (None, None)),  # no window: nothing to pace by
        (
            {"RateLimit-Policy": "q=many;w=nan", "X-RateLimit-Reset": "soon"},
            (None, None),
        ),
        ({"RateLimit": "r=5;t=-1", "RateLimit-Policy": "q=0;w=60"}, (None, None)),
        ({}, (None, None)),
    ],
)
def test_rate_limit_headers(
    headers: dict[str, str], stated: tuple[object, object]
) -> None:
    rate, pause = stated_quota(httpx.Headers(headers), NOW)
    assert (rate, pause) == (pytest.approx(stated[0]) if stated[0] else None, stated[1])


def test_a_record_survives_its_round_trip() -> None:
    quota = LearnedQuota(rate=2.5, accepted={"100": 3}, seen={"abc": 100.0})
    assert LearnedQuota.decode(quota.encode()) == quota
    assert LearnedQuota.decode(None) == LearnedQuota()


@pytest.mark.parametrize(
    "data",
    [
        "not json",
        "[]",
        '{"rate": "fast"}',
        '{"rate": NaN}',
        '{"accepted": {"x": 1}}',
        '{"seen": [1, 2]}',
        '{"colour": 1}',
        '{"seen": {"abc": 1' + "0" * 400 + "}}",  # no float holds it
        "[" * 100_000,
    ],
)
def test_a_record_that_is_not_one_is_a_value_error(data: str) -> None:
    with pytest.raises(ValueError, match="not a learned quota"):
        LearnedQuota.decode(data)
