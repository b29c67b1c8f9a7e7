"""Processes that start together on a new SQLite rate store all get it.

Turning on SQLite's write-ahead log needs the file alone, and SQLite answers "database
is locked" at once rather than waiting for it: several processes opening a new store
at the same moment (the workers of one export) must take turns, not fail.
"""

from __future__ import annotations

import multiprocessing
from pathlib import Path

from service_api.quota._limiters import RecordInSQLite

PROCESSES = 6
ROUNDS = 8


def open_store(path: str, ready: multiprocessing.synchronize.Barrier) -> str:
    ready.wait()
    try:
        RecordInSQLite(path, "client").close()
    except Exception as exc:  # reported to the test, which names it
        return f"{type(exc).__name__}: {exc}"
    return "ok"


def test_processes_opening_a_new_store_at_once_all_get_it(tmp_path: Path) -> None:
    context = multiprocessing.get_context("spawn")
    failures = []
    with context.Manager() as manager, context.Pool(PROCESSES) as pool:
        for round_ in range(ROUNDS):
            ready = manager.Barrier(PROCESSES)
            path = str(tmp_path / f"rates-{round_}.db")
            answers = pool.starmap(open_store, [(path, ready)] * PROCESSES)
            failures += [answer for answer in answers if answer != "ok"]
    assert failures == []
