"""A shared store that fails mid-run and comes back: the fixed budget (``rate_limit=N``
with a ``rate_store``) does what the learned one does. Each process goes on alone at its
share (the processes counted from the heartbeats in the store), with one warning, and
counts in the store again once it answers. SQLite and a real redis-server."""

import contextlib
import logging
import multiprocessing
import sqlite3
import time
from pathlib import Path

import pytest
import redis
from quota_redis import redis_server
from quota_workers import export_sharing, process_pool

from service_api.quota import RateLimiter
from service_api_mock import RunningMock

SPAWN = multiprocessing.get_context("spawn")
# The Redis keys of the budgets' sorted sets (not their locks, not the heartbeats).
BUCKETS = "service-api:rate:[0-9a-f]*[0-9a-f]"


def store_messages(caplog: pytest.LogCaptureFixture, level: int) -> list[str]:
    return [
        r.getMessage()
        for r in caplog.records
        if r.levelno == level and "rate store" in r.getMessage()
    ]


def wait_until_shared(limiter: RateLimiter, seconds: float = 10.0) -> None:
    """Ask for slots as a sender would until the limiter counts in the store again (it
    tries the store every 2 s)."""
    deadline = time.monotonic() + seconds
    while "fallback" in repr(limiter):
        assert time.monotonic() < deadline, "never rejoined the store"
        time.sleep(limiter.try_acquire() or 0.05)


def sqlite_rows(path: Path) -> int:
    """Entries in the budget's bucket tables of the SQLite file."""
    with contextlib.closing(sqlite3.connect(path)) as db:
        found = db.execute(
            "SELECT name FROM sqlite_master WHERE type='table' AND name LIKE 'rate%'"
        )
        tables = [name for (name,) in found.fetchall()]
        # The names come from the file itself.
        counts = [db.execute(f"SELECT count(*) FROM '{t}'") for t in tables]  # noqa: S608
        return sum(count.fetchone()[0] for count in counts)


def damage(path: Path) -> None:
    """Another program drops every table of the store."""
    with contextlib.closing(sqlite3.connect(path)) as other:
        found = other.execute("SELECT name FROM sqlite_master WHERE type='table'")
        for (table,) in found.fetchall():
            other.execute(f"DROP TABLE '{table}'")
        other.commit()


def test_a_failing_sqlite_store_leaves_each_process_its_share_then_it_rejoins(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "q.db"
    # Two limiters: two processes as the store sees them, each with its heartbeat.
    first = RateLimiter(600, store=f"sqlite://{path}", key="k")
    second = RateLimiter(600, store=f"sqlite://{path}", key="k")
    try:
        assert second.try_acquire() == 0.0
        damage(path)
        with caplog.at_level(logging.INFO, logger="service_api"):
            waits = [second.try_acquire() for _ in range(3)]
            assert "in-process fallback" in repr(second)
            assert waits[0] == 0.0
            # Its share: 300 a minute, half of 600, one every 0.2 s.
            assert all(0.15 < w <= 0.2 for w in waits[1:])
            wait_until_shared(second)
        assert "sqlite" in repr(second)
        (warning,) = store_messages(caplog, logging.WARNING)
        assert "1 of 2 processes" in warning
        assert "300 a minute" in warning
        (back,) = store_messages(caplog, logging.INFO)
        assert "is back" in back
        # It counts in the store again: its next slot is an entry in the file.
        before = sqlite_rows(path)
        while second.try_acquire() > 0:
            time.sleep(0.01)
        assert sqlite_rows(path) == before + 1
    finally:
        first.close()
        second.close()


def test_a_redis_outage_leaves_each_process_its_share_then_they_rejoin(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with redis_server(tmp_path) as url:
        port = int(url.rsplit(":", 1)[1].split("/")[0])
        # Three processes as the store sees them; the last one read all three heartbeats.
        limiters = [RateLimiter(1200, store=url, key="k") for _ in range(3)]
        assert limiters[2].try_acquire() == 0.0
    try:
        with caplog.at_level(logging.INFO, logger="service_api"):
            waits = [limiters[2].try_acquire() for _ in range(4)]
            assert "in-process fallback" in repr(limiters[2])
            assert waits[0] == 0.0
            # Its share: 400 a minute, a third of 1,200, one every 0.15 s.
            assert all(0.1 < w <= 0.15 for w in waits[1:])
            with redis_server(tmp_path, port):  # back, and empty
                wait_until_shared(limiters[2])
                assert "redis" in repr(limiters[2])
                # It counts in the store again: its next slot is an entry there.
                with redis.Redis.from_url(url) as connection:
                    before = sum(connection.zcard(k) for k in connection.keys(BUCKETS))
                    while limiters[2].try_acquire() > 0:
                        time.sleep(0.01)
                    after = sum(connection.zcard(k) for k in connection.keys(BUCKETS))
                assert after == before + 1
        (warning,) = store_messages(caplog, logging.WARNING)
        assert "1 of 3 processes" in warning
        assert "400 a minute" in warning
        (back,) = store_messages(caplog, logging.INFO)
        assert "is back" in back
    finally:
        for limiter in limiters:
            limiter.close()


@pytest.mark.parametrize("rate_limit", ["adaptive", 570])
def test_processes_export_everything_through_a_redis_outage(
    mock: RunningMock, tmp_path: Path, rate_limit: str | int
) -> None:
    # 600 a minute over 1 s windows: 10 a second for the integration, two processes.
    mock.service.reset(records=400)
    mock.service.set_faults(rate_limit=600, rate_window=1.0)
    with (
        SPAWN.Manager() as manager,
        process_pool(2) as pool,
        contextlib.ExitStack() as first_server,
    ):
        url = first_server.enter_context(redis_server(tmp_path))
        port = int(url.rsplit(":", 1)[1].split("/")[0])
        start = manager.Barrier(2)
        futures = [
            pool.submit(
                export_sharing,
                mock.base_url,
                account,
                url,
                start,
                rate_limit=rate_limit,
            )
            for account in ("acct-1", "acct-2")
        ]
        deadline = time.monotonic() + 60
        while mock.service.count("listShipments", 200) < 20:  # a quarter in
            assert time.monotonic() < deadline, "the export did not start"
            time.sleep(0.05)
        first_server.close()  # the store stops, mid-run
        while mock.service.count("listShipments", 200) < 40:
            assert time.monotonic() < deadline, "the export stopped with the store"
            time.sleep(0.05)
        with redis_server(tmp_path, port):  # back, empty
            exported = [f.result(timeout=120) for f in futures]
    for result in exported:
        assert len(result["ids"]) == len(set(result["ids"])) == 400
        assert len(result["warnings"]) == 1
        assert "shared rate store" in result["warnings"][0]
        assert "1 of 2 processes" in result["warnings"][0]
    assert mock.service.count(status=429) <= 10
