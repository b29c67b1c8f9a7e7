"""The quota learned once and shared by processes: SQLite and a real redis-server."""

import contextlib
import logging
import multiprocessing
import sqlite3
import time
from pathlib import Path

import httpx
import pytest
import redis
from quota_redis import redis_server
from quota_workers import export_sharing, learned_elsewhere, process_pool

from service_api.quota import AdaptiveRateLimiter, StoreError
from service_api_mock import RunningMock

SPAWN = multiprocessing.get_context("spawn")


@pytest.fixture(params=["sqlite", "redis"])
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return f"sqlite://{tmp_path / 'quota.db'}"
    url: str = request.getfixturevalue("redis_db")
    return url


def test_what_one_process_learns_every_process_uses(store_url: str) -> None:
    here = AdaptiveRateLimiter(store_url, key="demo-client")
    try:
        for _ in range(10):
            assert here.try_acquire() == 0.0
            here.observe(httpx.Response(200))
        here.observe(httpx.Response(429, headers={"retry-after": "60"}))
        learned = here.per_minute
        assert learned is not None
        with process_pool(1) as pool:
            first, seen = pool.submit(learned_elsewhere, store_url).result(timeout=60)
        assert 30 < first <= 60  # the 429's Retry-After pauses the other process too
        assert seen == pytest.approx(learned)
    finally:
        here.close()


def test_processes_share_one_pace(store_url: str) -> None:
    here = AdaptiveRateLimiter(store_url, key="demo-client")
    try:
        here.observe(httpx.Response(200, headers={"ratelimit-policy": "q=6;w=60"}))
        assert here.try_acquire() == 0.0  # one every 10 s, this one taken here
        with process_pool(1) as pool:
            first, seen = pool.submit(learned_elsewhere, store_url).result(timeout=60)
        assert 0 < first <= 10.0
        assert seen == pytest.approx(6.0)
    finally:
        here.close()


def test_integrations_learn_apart(store_url: str) -> None:
    mine = AdaptiveRateLimiter(store_url, key="demo-client")
    theirs = AdaptiveRateLimiter(store_url, key="other-client")
    try:
        mine.observe(httpx.Response(200, headers={"ratelimit-policy": "q=60;w=60"}))
        assert [mine.try_acquire(), mine.try_acquire()] == [
            0.0,
            pytest.approx(1.0, abs=0.05),
        ]
        assert theirs.try_acquire() == 0.0
        assert theirs.per_minute is None
    finally:
        mine.close()
        theirs.close()


def test_processes_exporting_under_the_quota_learn_it_together(
    mock: RunningMock, store_url: str
) -> None:
    # 600 a minute over 1 s windows: 10 a second for the integration, two processes.
    mock.service.reset(records=300)
    mock.service.set_faults(rate_limit=600, rate_window=1.0)
    accounts = ["acct-1", "acct-2"]
    with SPAWN.Manager() as manager, process_pool(2) as pool:
        start = manager.Barrier(2)
        futures = [
            pool.submit(export_sharing, mock.base_url, a, store_url, start)
            for a in accounts
        ]
        exported = [f.result(timeout=120) for f in futures]
    for result in exported:
        assert len(result["ids"]) == len(set(result["ids"])) == 300
        assert result["warnings"] == []
    # 62 requests (pages and tokens) in all: the first burst meets the quota, few after.
    assert mock.service.count("listShipments", 200) == 2 * 30
    assert mock.service.count(status=429) <= 8
    learned = AdaptiveRateLimiter(store_url, key="demo-client")
    try:
        assert learned.per_minute is not None
        assert 0.6 * 600 <= learned.per_minute <= 1.1 * 600
    finally:
        learned.close()


def test_a_redis_outage_leaves_each_process_its_share_then_they_rejoin(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with redis_server(tmp_path) as url:
        # Two limiters, two processes as the store sees them (each has its heartbeat).
        first = AdaptiveRateLimiter(url, key="demo-client")
        second = AdaptiveRateLimiter(url, key="demo-client")
        first.observe(httpx.Response(200, headers={"ratelimit-policy": "q=600;w=60"}))
        assert second.try_acquire() == 0.0
        assert first.try_acquire() > 0  # one pace: 10 a second for both
    try:
        with caplog.at_level(logging.WARNING, logger="service_api"):
            waits = [first.try_acquire() for _ in range(5)]
        assert first.per_minute == pytest.approx(300)  # its share: half of 600
        assert "in-process fallback" in repr(first)
        assert waits[0] <= 0.2  # within one of its intervals (spread, not all at once)
        assert all(0 < w <= 0.2 for w in waits[1:])
        warnings = [
            r.getMessage() for r in caplog.records if "rate store" in r.getMessage()
        ]
        assert len(warnings) == 1
        assert "1 of 2 processes" in warnings[0]
        port = int(url.rsplit(":", 1)[1].split("/")[0])
        with redis_server(tmp_path, port):  # back, and empty
            deadline = time.monotonic() + 10
            while "fallback" in repr(first):
                assert time.monotonic() < deadline, "never rejoined"
                time.sleep(first.try_acquire() or 0.05)  # polls; rejoins every 2 s
            assert first.per_minute == pytest.approx(600)  # brought back to the store
            third = AdaptiveRateLimiter(url, key="demo-client")
            assert third.per_minute == pytest.approx(600)
            third.close()
    finally:
        first.close()
        second.close()
    assert len([r for r in caplog.records if r.levelno >= logging.WARNING]) == 1


# ---- bad input at start-up: a StoreError naming the store, never its password ----


def test_an_unreachable_redis_is_a_store_error_without_its_password() -> None:
    started = time.monotonic()
    with pytest.raises(StoreError, match=r"127\.0\.0\.1:1/0") as caught:
        AdaptiveRateLimiter("redis://:hunter2@127.0.0.1:1/0", key="k")
    assert "hunter2" not in str(caught.value)
    assert time.monotonic() - started < 5


@pytest.mark.parametrize("where", ["directory", "proc"])
def test_an_unwritable_sqlite_store_is_a_store_error(
    tmp_path: Path, where: str
) -> None:
    path = tmp_path if where == "directory" else Path("/proc/learned.db")
    with pytest.raises(StoreError, match=f"cannot use '{path}' as a rate store"):
        AdaptiveRateLimiter(f"sqlite://{path}", key="k")


def test_a_file_that_is_not_a_database_is_a_store_error(tmp_path: Path) -> None:
    path = tmp_path / "q.db"
    path.write_bytes(b"this is not a SQLite database, only text " * 100)
    with pytest.raises(StoreError, match=f"cannot use '{path}' as a rate store"):
        AdaptiveRateLimiter(f"sqlite://{path}", key="k")


def test_a_corrupt_record_in_sqlite_is_a_store_error(tmp_path: Path) -> None:
    path = tmp_path / "q.db"
    AdaptiveRateLimiter(f"sqlite://{path}", key="k").close()
    with contextlib.closing(sqlite3.connect(path)) as other:
        other.execute('UPDATE learned SET quota = \'{"rate": "fast"}\'')
        other.commit()
    with pytest.raises(StoreError, match="not a learned quota"):
        AdaptiveRateLimiter(f"sqlite://{path}", key="k")


def test_a_corrupt_record_in_redis_is_a_store_error(redis_db: str) -> None:
    AdaptiveRateLimiter(redis_db, key="k").close()
    with redis.Redis.from_url(redis_db) as connection:
        (name,) = connection.keys("service-api:learned:*")
        connection.set(name, b"\xff not JSON")
    with pytest.raises(
        StoreError, match=r"redis:127\.0\.0\.1:\d+/0.*not a learned quota"
    ):
        AdaptiveRateLimiter(redis_db, key="k")
