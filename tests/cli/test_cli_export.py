"""The export loop on fake pages: whole pages, account tags, limits, resume points."""

from __future__ import annotations

import io
import json
from collections.abc import Iterator, Sequence
from typing import Any

import attrs

from service_api_cli._export import ExportResult, PageLike, export, resume_commands
from service_api_cli._interrupts import InterruptGuard
from service_api_cli._output import JsonlWriter
from service_api_cli._progress import NoProgress


@attrs.frozen
class FakePage:
    number: int
    items: Sequence[Any]
    total_records: int


class Recorder(NoProgress):
    def __init__(self) -> None:
        self.updates: list[tuple[str, int, int, int | None]] = []

    def update(self, account: str, *, records: int, pages: int, total: int | None) -> None:
        self.updates.append((account, records, pages, total))


def _pages(
    total: int, size: int, fail_at: int | None = None, error: BaseException | None = None
) -> Any:
    def source(account: str, start_page: int) -> Iterator[PageLike]:
        number = start_page
        while (number - 1) * size < total:
            if number == fail_at:
                raise error or RuntimeError("boom")
            first = (number - 1) * size
            items = [{"id": f"{account}-{i}"} for i in range(first, min(first + size, total))]
            yield FakePage(number, items, total)
            number += 1

    return source


def _run(
    accounts: Sequence[str],
    source: Any,
    *,
    start_page: int = 1,
    max_items: int | None = None,
    tag: bool = False,
    progress: NoProgress | None = None,
) -> tuple[ExportResult, list[dict[str, Any]]]:
    out = io.StringIO()
    with InterruptGuard() as guard:
        result = export(
            accounts=accounts,
            start_page=start_page,
            page_size=2,
            max_items=max_items,
            pages=source,
            writer=JsonlWriter(out),
            progress=progress or NoProgress(),
            guard=guard,
            tag=tag,
        )
    return result, [json.loads(line) for line in out.getvalue().splitlines()]


def test_every_account_is_exported_in_turn_and_tagged() -> None:
    result, records = _run(["a", "b"], _pages(5, 2), tag=True)
    assert result.error is None
    assert [r["id"] for r in records] == [f"a-{i}" for i in range(5)] + [f"b-{i}" for i in range(5)]
    assert {r["account"] for r in records[:5]} == {"a"}
    assert {r["account"] for r in records[5:]} == {"b"}
    assert (result.records, result.pages) == (10, 6)
    assert "exported 10 records (6 pages) to out.jsonl" in result.summary("out.jsonl")


def test_untagged_records_are_exactly_as_given() -> None:
    _, records = _run(["a"], _pages(3, 2))
    assert records == [{"id": "a-0"}, {"id": "a-1"}, {"id": "a-2"}]


def test_max_items_bounds_each_account() -> None:
    result, records = _run(["a", "b"], _pages(9, 2), max_items=3)
    assert [r["id"] for r in records] == ["a-0", "a-1", "a-2", "b-0", "b-1", "b-2"]
    assert result.error is None


def test_progress_is_told_records_pages_and_the_expected_total() -> None:
    progress = Recorder()
    _run(["a"], _pages(5, 2), start_page=2, progress=progress)
    # Starting at page 2 of size 2 skips 2 records: 3 are expected.
    assert progress.updates == [("a", 2, 1, 3), ("a", 3, 2, 3)]


def test_a_failure_keeps_written_pages_and_says_where_to_resume() -> None:
    result, records = _run(["a", "b"], _pages(6, 2, fail_at=2), tag=True)
    assert isinstance(result.error, RuntimeError)
    assert [r["id"] for r in records] == ["a-0", "a-1"]
    assert result.accounts[0].next_page == 2
    assert not result.accounts[0].done
    assert "stopped after 2 records (1 page)" in result.summary("x")
    commands = resume_commands(
        result, ["service-api", "list", "shipments"], output="out.jsonl", append=True
    )
    # "b" never started: it is resumed from its start page.
    assert commands == [
        "service-api list shipments --account a --start-page 2 --output out.jsonl --append",
        "service-api list shipments --account b --start-page 1 --output out.jsonl --append",
    ]


def test_ctrl_c_is_reported_not_raised() -> None:
    result, records = _run(["a"], _pages(6, 2, fail_at=3, error=KeyboardInterrupt()))
    assert isinstance(result.error, KeyboardInterrupt)
    assert len(records) == 4
    assert result.accounts[0].next_page == 3


def test_csv_resume_goes_to_a_new_file_per_account() -> None:
    result, _ = _run(["a"], _pages(6, 2, fail_at=2))
    assert resume_commands(result, ["service-api"], output="out.csv", append=False) == [
        "service-api --account a --start-page 2 --output out.a-from-2.csv"
    ]


def test_resume_to_stdout_names_no_file() -> None:
    result, _ = _run(["a"], _pages(6, 2, fail_at=2))
    assert resume_commands(result, ["service-api"], output=None, append=True) == [
        "service-api --account a --start-page 2"
    ]


def test_the_page_iterator_is_closed_when_the_export_leaves_early() -> None:
    closed: list[str] = []

    def source(account: str, start_page: int) -> Iterator[PageLike]:
        try:
            yield from _pages(9, 2)(account, start_page)
        finally:
            closed.append(account)

    result, records = _run(["a"], source, max_items=3)
    assert (result.error, len(records), closed) == (None, 3, ["a"])
