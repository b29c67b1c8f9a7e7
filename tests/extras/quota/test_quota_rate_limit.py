"""The client-side rate limiter: decisions only, on an injected clock."""

import contextlib
import logging
import math
import sqlite3
from pathlib import Path

import pytest

from service_api.quota import RateLimiter, StoreError
from service_api.quota import limiter as build_limiter


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


def test_idle_time_is_not_saved_up() -> None:
    clock = FakeClock()
    limiter = RateLimiter(120, clock=clock)
    assert limiter.try_acquire() == 0.0
    clock.now += 60
    assert [limiter.try_acquire() for _ in range(2)] == [0.0, 0.5]


def test_a_sender_that_waits_what_it_is_told_keeps_the_exact_pace() -> None:
    clock = FakeClock()
    limiter = RateLimiter(90, clock=clock)
    assert [limiter.try_acquire(), limiter.try_acquire()] == [0.0, pytest.approx(2 / 3)]
    # No drift from rounding the wait: 90 slots take 89 intervals, to the millisecond.
    for _ in range(89):
        while (wait := limiter.try_acquire()) > 0:
            clock.now += wait
    assert clock.now == pytest.approx(100.0 + 89 * 60 / 90, abs=0.001)
    assert "in-process" in repr(limiter)


def test_invalid_rates_are_refused() -> None:
    for bad in (0, -1, math.inf, math.nan):
        with pytest.raises(ValueError, match="positive"):
            RateLimiter(bad)


# ---- shared through a SQLite file (the multi-process and Redis tests are beside) --


def test_a_sqlite_store_spreads_the_rate_over_short_windows(tmp_path: Path) -> None:
    limiter = RateLimiter(600, store=f"sqlite://{tmp_path}/q.db", key="k", window=1.0)
    try:
        assert [limiter.try_acquire() for _ in range(10)] == [0.0] * 10
        assert 0 < limiter.try_acquire() <= 1.0
        assert "sqlite" in repr(limiter)
    finally:
        limiter.close()


def test_two_limiters_on_one_file_share_the_count(tmp_path: Path) -> None:
    url = f"sqlite://{tmp_path}/q.db"
    first = RateLimiter(120, store=url, key="k", window=60)
    second = RateLimiter(120, store=url, key="k", window=60)
    try:
        assert [first.try_acquire() for _ in range(60)] == [0.0] * 60
        assert [second.try_acquire() for _ in range(60)] == [0.0] * 60
        assert second.try_acquire() > 0
        assert first.try_acquire() > 0
    finally:
        first.close()
        second.close()


@pytest.mark.parametrize(
    ("url", "match"),
    [
        ("memcached://h/x", "sqlite:///absolute/path or redis://"),
        ("sqlite://host/x.db", "sqlite:///absolute/path"),
        ("sqlite:///x.db?mode=ro", "sqlite:///absolute/path"),
    ],
)
def test_a_bad_store_url_is_refused(url: str, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        RateLimiter(60, store=url, key="k")


def test_a_store_in_a_missing_directory_is_a_store_error(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="does not exist"):
        RateLimiter(60, store=f"sqlite://{tmp_path}/no/such/dir/q.db", key="k")


def test_a_file_that_is_not_a_database_is_a_store_error(tmp_path: Path) -> None:
    path = tmp_path / "q.db"
    path.write_bytes(b"this is not a SQLite database, only text " * 100)
    with pytest.raises(StoreError, match="cannot use"):
        RateLimiter(60, store=f"sqlite://{path}", key="k")


def test_a_store_failing_in_use_falls_back_with_one_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "q.db"
    limiter = RateLimiter(600, store=f"sqlite://{path}", key="k", window=1.0)
    try:
        assert limiter.try_acquire() == 0.0
        # Another program damages the store: the table is gone.
        with contextlib.closing(sqlite3.connect(path)) as other:
            found = other.execute("SELECT name FROM sqlite_master WHERE type='table'")
            for (table,) in found.fetchall():
                other.execute(f"DROP TABLE '{table}'")
            other.commit()
        with caplog.at_level(logging.WARNING, logger="service_api"):
            waits = [limiter.try_acquire() for _ in range(3)]
        assert waits[0] == 0.0
        assert all(0 < w <= 0.1 for w in waits[1:])
        assert len([r for r in caplog.records if "shared rate store" in r.message]) == 1
    finally:
        limiter.close()


def test_a_shared_rate_must_be_positive(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="positive"):
        RateLimiter(0, store=f"sqlite://{tmp_path}/q.db", key="k")


def test_clients_of_one_integration_share_one_budget_in_a_process() -> None:
    import service_api

    url = "http://127.0.0.1:9/public/v3"
    first = service_api.Client(url, "integration-a", "s3cret", "acct-1", rate_limit=60)
    second = service_api.Client(url, "integration-a", "s3cret", "acct-2", rate_limit=60)
    other = service_api.Client(url, "integration-b", "s3cret", "acct-1", rate_limit=60)
    with first, second, other:
        limiter = build_limiter(60, None, key="integration-a")
        assert limiter is not None
        assert (
            first._shared.guard_args["limiter"]
            is second._shared.guard_args["limiter"]
            is limiter
        )
        assert other._shared.guard_args["limiter"] is not limiter
        assert limiter.try_acquire() == 0.0  # the slot of this second is taken ...
        again, apart = (
            build_limiter(60, None, key=k) for k in ("integration-a", "integration-b")
        )
        assert again is limiter
        assert again.try_acquire() > 0  # ... for every client of the integration
        assert apart is not None
        assert apart.try_acquire() == 0.0
        assert build_limiter("adaptive", None, key="integration-a") is not limiter
    assert build_limiter(None, None, key="integration-a") is None
