"""The export's destination, in process: a failed run never destroys the previous file."""

from __future__ import annotations

import errno
import os
import stat
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import IO, Any

import pytest

from service_api_cli._destination import Outcome, open_output
from service_api_cli._exit_codes import UsageError
from service_api_cli._output import CsvWriter, JsonlWriter

PREVIOUS = b'{"id":"yesterday-1"}\n{"id":"yesterday-2"}\n'


def leftovers(directory: Path) -> list[str]:
    """Temporary files left beside the target."""
    return sorted(p.name for p in directory.iterdir() if p.name.endswith(".partial"))


@pytest.fixture
def previous(tmp_path: Path) -> Path:
    path = tmp_path / "out.jsonl"
    path.write_bytes(PREVIOUS)
    return path


def test_a_complete_export_replaces_the_file(previous: Path) -> None:
    with open_output(str(previous), append=False) as output:
        writer = output.track(JsonlWriter(output.stream))
        writer.write_page([{"id": "today-1"}])
        # Nothing reaches the target before the end.
        assert previous.read_bytes() == PREVIOUS
        writer.close()
        assert output.finish(complete=True) is Outcome.WRITTEN
    assert previous.read_bytes() == b'{"id":"today-1"}\n'
    assert leftovers(previous.parent) == []


def test_an_incomplete_export_leaves_the_previous_bytes(previous: Path) -> None:
    with open_output(str(previous), append=False) as output:
        writer = output.track(JsonlWriter(output.stream))
        writer.write_page([{"id": "today-1"}])
        assert leftovers(previous.parent) != []  # written beside the target
        writer.close()
        assert output.finish(complete=False) is Outcome.UNCHANGED
    assert previous.read_bytes() == PREVIOUS
    assert leftovers(previous.parent) == []


def _fail_inside(path: Path, *, append: bool, error: BaseException) -> None:
    with open_output(str(path), append=append) as output:
        writer = output.track(JsonlWriter(output.stream))
        writer.write_page([{"id": "today-1"}])
        output.stream.write('{"id":"tor')
        raise error


def test_an_error_escaping_the_block_removes_the_temporary_file(previous: Path) -> None:
    with pytest.raises(RuntimeError):
        _fail_inside(previous, append=False, error=RuntimeError("boom"))
    assert previous.read_bytes() == PREVIOUS
    assert leftovers(previous.parent) == []


def test_a_missing_file_stays_missing_after_a_failure(tmp_path: Path) -> None:
    target = tmp_path / "new.jsonl"
    with open_output(str(target), append=False) as output:
        output.track(JsonlWriter(output.stream)).write_page([{"id": 1}])
        output.finish(complete=False)
    assert not target.exists()
    assert leftovers(tmp_path) == []


def test_keep_partial_keeps_whole_pages_only(previous: Path) -> None:
    with open_output(str(previous), append=False) as output:
        writer = output.track(JsonlWriter(output.stream))
        writer.write_page([{"id": "today-1"}, {"id": "today-2"}])
        # A page torn by a failure in the middle of it.
        output.stream.write('{"id":"today-3"}\n{"id":"to')
        assert output.finish(complete=False, keep_partial=True) is Outcome.KEPT_PARTIAL
    assert previous.read_bytes() == b'{"id":"today-1"}\n{"id":"today-2"}\n'
    assert leftovers(previous.parent) == []


class _TearingWriter(JsonlWriter):
    """Writes part of its second page then fails, as a full disk does; a later flush
    then succeeds (the failed bytes are dropped), which must not make the torn page
    look whole."""

    def __init__(self, stream: IO[str]) -> None:
        super().__init__(stream)
        self.pages = 0

    def write_page(self, records: Sequence[Mapping[str, Any]]) -> None:
        self.pages += 1
        if self.pages == 2:
            self._stream.write('{"id":"torn')
            self._stream.flush()
            raise OSError(errno.EFBIG, "File too large")
        super().write_page(records)


def test_a_failed_write_is_never_kept_even_if_a_later_flush_succeeds(previous: Path) -> None:
    with open_output(str(previous), append=False) as output:
        writer = output.track(_TearingWriter(output.stream))
        writer.write_page([{"id": "today-1"}])
        with pytest.raises(OSError, match="File too large"):
            writer.write_page([{"id": "today-2"}])
        writer.close()  # flushes without an error
        assert output.finish(complete=False, keep_partial=True) is Outcome.KEPT_PARTIAL
    assert previous.read_bytes() == b'{"id":"today-1"}\n'


def test_keep_partial_with_nothing_written_keeps_the_previous_file(previous: Path) -> None:
    with open_output(str(previous), append=False) as output:
        assert output.finish(complete=False, keep_partial=True) is Outcome.UNCHANGED
    assert previous.read_bytes() == PREVIOUS


def test_csv_with_keep_partial_is_completed_with_its_header(tmp_path: Path) -> None:
    target = tmp_path / "out.csv"
    target.write_text("old\n")
    with open_output(str(target), append=False) as output:
        writer = output.track(CsvWriter(output.stream))
        writer.write_page([{"id": 1, "to": {"city": "Oslo"}}])
        writer.close()
        assert output.finish(complete=False, keep_partial=True) is Outcome.KEPT_PARTIAL
    assert target.read_text().splitlines() == ["id,to.city", "1,Oslo"]


def test_append_keeps_whole_pages_and_cuts_a_torn_one(previous: Path) -> None:
    with open_output(str(previous), append=True) as output:
        writer = output.track(JsonlWriter(output.stream))
        writer.write_page([{"id": "today-1"}])
        output.stream.write('{"id":"tor')
        assert output.finish(complete=False) is Outcome.APPENDED
    assert previous.read_bytes() == PREVIOUS + b'{"id":"today-1"}\n'


def test_append_undone_by_an_escaping_error_keeps_only_whole_pages(previous: Path) -> None:
    with pytest.raises(KeyboardInterrupt):
        _fail_inside(previous, append=True, error=KeyboardInterrupt())
    assert previous.read_bytes() == PREVIOUS + b'{"id":"today-1"}\n'


def test_the_previous_mode_is_kept(previous: Path) -> None:
    previous.chmod(0o640)
    with open_output(str(previous), append=False) as output:
        output.finish(complete=True)
    assert stat.S_IMODE(previous.stat().st_mode) == 0o640


def test_a_new_file_gets_the_usual_mode(tmp_path: Path) -> None:
    target = tmp_path / "new.jsonl"
    mask = os.umask(0o022)
    os.umask(mask)
    with open_output(str(target), append=False) as output:
        output.finish(complete=True)
    # mkstemp's 0600 would hide the export from the rest of the team.
    assert stat.S_IMODE(target.stat().st_mode) == 0o666 & ~mask


def test_a_symbolic_link_keeps_pointing_at_the_replaced_file(previous: Path) -> None:
    link = previous.parent / "latest.jsonl"
    link.symlink_to(previous.name)
    with open_output(str(link), append=False) as output:
        output.track(JsonlWriter(output.stream)).write_page([{"id": "today-1"}])
        output.finish(complete=True)
    assert link.is_symlink()
    assert previous.read_bytes() == b'{"id":"today-1"}\n'


def test_a_fifo_is_written_directly(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    received: list[bytes] = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_bytes()))
    reader.start()
    with open_output(str(fifo), append=False) as output:
        output.track(JsonlWriter(output.stream)).write_page([{"id": 1}])
        output.finish(complete=True)
    reader.join(timeout=30)
    assert received == [b'{"id":1}\n']
    assert stat.S_ISFIFO(fifo.stat().st_mode)


@pytest.mark.parametrize("append", [False, True])
@pytest.mark.parametrize(
    ("where", "why"),
    [
        ("missing-dir/out.jsonl", "the folder '[^']*/missing-dir' does not exist$"),
        ("a/b/out.jsonl", "the folder '[^']*/a/b' does not exist$"),
        (".", "[Ii]s a directory"),
    ],
)
def test_an_output_that_cannot_be_opened_is_a_usage_error(
    tmp_path: Path, where: str, why: str, append: bool
) -> None:
    with pytest.raises(UsageError, match=f"cannot open --output .*{why}") as info:
        open_output(str(tmp_path / where), append=append).__enter__()
    assert "temporary" not in str(info.value)
    assert leftovers(tmp_path) == []
