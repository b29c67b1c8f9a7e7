"""The pages an unfinished export keeps beside FILE: whole pages only, one command's, and
FILE written from them once complete (no network: the export's own tests run the command)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from service_api_cli._exit_codes import UsageError
from service_api_cli._export import KeptPages

COMMAND = {"endpoint": "shipments", "page_size": 2, "param": [], "max_items": None}


def _kept(out: Path, *accounts: str, restart: bool = False) -> KeptPages:
    return KeptPages(str(out), COMMAND, list(accounts), restart=restart)


def test_a_torn_page_is_cut_off_and_the_state_says_where_to_go_on(
    tmp_path: Path,
) -> None:
    out = tmp_path / "s.jsonl"
    kept = _kept(out, "acct-1")
    (state,) = kept.accounts
    kept.write_page(state, 1, [{"id": 1}, {"id": 2}])
    with open(Path(kept.folder) / state.file, "a", encoding="utf-8") as torn:
        torn.write('{"id": 3}\n{"i')  # a stop in the middle of page 2
    again = _kept(out, "acct-1")
    (state,) = again.accounts
    assert (state.next_page, state.records, state.kept) == (2, 2, 2)
    again.write_page(state, 2, [{"id": 3}, {"id": 4}])
    again.finish("jsonl", tag=False, complete=True)
    assert [json.loads(line)["id"] for line in out.read_text().splitlines()] == [
        1,
        2,
        3,
        4,
    ]
    assert not Path(kept.folder).exists()


def test_a_file_shorter_than_its_state_starts_that_account_again(
    tmp_path: Path,
) -> None:
    out = tmp_path / "s.jsonl"
    kept = _kept(out, "acct-1", "acct-2")
    kept.write_page(kept.accounts[0], 1, [{"id": 1}, {"id": 2}])
    kept.write_page(kept.accounts[1], 1, [{"id": 5}, {"id": 6}])
    (Path(kept.folder) / kept.accounts[0].file).write_text("")  # lost to a crash
    first, second = _kept(out, "acct-1", "acct-2").accounts
    assert (first.next_page, first.records) == (1, 0)
    assert (second.next_page, second.records) == (2, 2)


def test_file_is_written_tagged_in_the_order_asked_with_its_previous_mode(
    tmp_path: Path,
) -> None:
    out = tmp_path / "s.csv"
    out.write_text("old\n")
    out.chmod(0o640)
    kept = _kept(out, "acct-2", "acct-1")
    for number, state in enumerate(kept.accounts, 1):
        kept.write_page(state, 1, [{"id": number}])
    kept.finish("csv", tag=True, complete=True)
    assert out.read_text().splitlines() == ["account,id", "acct-2,1", "acct-1,2"]
    assert out.stat().st_mode & 0o777 == 0o640


def test_an_incomplete_export_leaves_file_alone(tmp_path: Path) -> None:
    out = tmp_path / "s.jsonl"
    out.write_text("yesterday\n")
    kept = _kept(out, "acct-1")
    kept.write_page(kept.accounts[0], 1, [{"id": 1}])
    kept.finish("jsonl", tag=False, complete=False)
    assert out.read_text() == "yesterday\n"
    assert Path(kept.folder).is_dir()


def test_pages_of_another_command_or_an_unreadable_state_need_restart(
    tmp_path: Path,
) -> None:
    out = tmp_path / "s.jsonl"
    kept = _kept(out, "acct-1")
    kept.write_page(kept.accounts[0], 1, [{"id": 1}])
    with pytest.raises(UsageError, match=r"another export \(page_size 2\).*--restart"):
        KeptPages(str(out), {**COMMAND, "page_size": 3}, ["acct-1"], restart=False)
    (Path(kept.folder) / "state.json").write_text('{"accounts": {"acct-1": {"x": 1}}}')
    with pytest.raises(UsageError, match="--restart"):
        _kept(out, "acct-1")
    (state,) = _kept(out, "acct-1", restart=True).accounts
    assert (state.next_page, state.records) == (1, 0)


def test_nothing_kept_leaves_no_folder(tmp_path: Path) -> None:
    kept = _kept(tmp_path / "s.jsonl", "acct-1")
    os.makedirs(kept.folder)
    kept.drop_if_empty()
    assert list(tmp_path.iterdir()) == []
