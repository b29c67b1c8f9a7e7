"""The request budget shared by processes (SQLite, Redis) through pyrate-limiter."""

import logging
import multiprocessing
import time
from pathlib import Path

import pytest
from quota_redis import redis_server
from quota_workers import process_pool, take_slots

from service_api.quota import RateLimiter, StoreError


@pytest.fixture(params=["sqlite", "redis"])
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return f"sqlite://{tmp_path / 'quota.db'}"
    url: str = request.getfixturevalue("redis_db")
    return url


def test_four_processes_share_one_budget(store_url: str) -> None:
    # 1,200 per minute over 0.5 s windows: 10 per window, 40 in 2 s for all four.
    context = multiprocessing.get_context("spawn")
    with (
        context.Manager() as manager,
        process_pool(4) as pool,
    ):
        start = manager.Barrier(4)
        futures = [
            pool.submit(take_slots, store_url, 1200, 0.5, 2.0, start) for _ in range(4)
        ]
        granted = [f.result(timeout=60) for f in futures]
    total = sum(len(g) for g in granted)
    # Each alone would take 40: together they stay within the one budget (plus the
    # window that may straddle the end) and use most of it. (Who gets a freed slot is
    # a race: the split between processes is not even, and not asserted.)
    assert 32 <= total <= 50, [len(g) for g in granted]
    calls = sorted(call for g in granted for call in g)
    # Grants whose calls all fall within less than half a second: at most 10. The bucket
    # stamps a grant to the nearest microsecond (so up to half of one before the call
    # began): two grants exactly one window apart can fall within 0.499999 s of wall time.
    resolution = 0.000001
    for i, (first_before, _) in enumerate(calls):
        window_end = first_before + 0.5 - resolution
        assert sum(1 for _, after in calls[i:] if after < window_end) <= 10


def test_integrations_keep_separate_counts(store_url: str) -> None:
    mine = RateLimiter(60, store=store_url, key="demo-client", window=60)
    theirs = RateLimiter(60, store=store_url, key="other-client", window=60)
    try:
        assert [mine.try_acquire() for _ in range(60)] == [0.0] * 60
        assert 0 < mine.try_acquire() <= 60
        assert theirs.try_acquire() == 0.0
    finally:
        mine.close()
        theirs.close()


def test_an_unreachable_redis_is_a_clear_error_at_once() -> None:
    started = time.monotonic()
    with pytest.raises(StoreError, match=r"127\.0\.0\.1:1/0") as caught:
        RateLimiter(60, store="redis://:hunter2@127.0.0.1:1/0", key="k")
    assert "hunter2" not in str(caught.value)
    assert time.monotonic() - started < 5


def test_a_redis_that_goes_away_leaves_an_in_process_limit_and_one_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with redis_server(tmp_path) as url:
        limiter = RateLimiter(600, store=url, key="k", window=1.0)
        assert limiter.try_acquire() == 0.0
    try:
        with caplog.at_level(logging.WARNING, logger="service_api"):
            waits = [limiter.try_acquire() for _ in range(5)]
        assert waits[0] == 0.0  # the fallback's first slot
        assert all(0 < w <= 0.1 for w in waits[1:])  # then 600 per minute
        warnings = [r for r in caplog.records if "shared rate store" in r.getMessage()]
        assert len(warnings) == 1
        assert "in-process" in repr(limiter)
    finally:
        limiter.close()
