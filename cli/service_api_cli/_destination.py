"""Where an export goes, and why a failed run never destroys the previous file.

``--output FILE`` is written to a temporary file beside ``FILE`` (same directory, so the
final :func:`os.replace` is atomic) and moved into place only when the export succeeded,
or, with ``--keep-partial``, when it stopped after writing at least one whole page. In
every other case the temporary file is removed and ``FILE`` keeps its bytes (or stays
absent). A wrong secret, a closed port, Ctrl-C or a full disk therefore never leave
yesterday's export truncated.

``--append`` writes in place (the file is the resume point of an earlier run) but never
leaves a torn page behind: after a failure the file is cut back to the end of the last
whole page, so the printed resume command neither loses nor repeats a record.

Standard output, and an existing ``FILE`` that is not a regular file (a FIFO, a device),
are written directly as before: they cannot be replaced atomically.
"""

from __future__ import annotations

import contextlib
import enum
import os
import stat
import sys
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from typing import IO, TYPE_CHECKING, Any

from service_api_cli._exit_codes import UsageError

if TYPE_CHECKING:
    from service_api_cli._output import RecordWriter

__all__ = ["Outcome", "Output", "open_output"]

TEMP_SUFFIX = ".partial"


class Outcome(enum.Enum):
    """What an export left at its destination."""

    WRITTEN = "written"
    """The export is complete and in place (or was streamed to stdout or a device)."""
    KEPT_PARTIAL = "kept-partial"
    """It failed; with ``--keep-partial`` its whole pages replaced the file."""
    APPENDED = "appended"
    """It failed while appending; whole pages stay, a torn tail was cut off."""
    UNCHANGED = "unchanged"
    """It failed; the file has exactly its previous bytes (or still does not exist)."""


class _Mode(enum.Enum):
    STREAM = "stream"  # stdout, a FIFO, a device: written as it comes
    REPLACE = "replace"  # a temporary file moved over the target at the end
    APPEND = "append"  # the target itself, cut back to a page boundary on failure


class Output:
    """An open destination: ``stream`` to write to, and how to finish.

    Use :func:`open_output`, wrap the writer with :meth:`track`, then call :meth:`finish`.

    Example::

        with open_output("out.jsonl", append=False) as output:
            writer = output.track(JsonlWriter(output.stream))
            writer.write_page(records)
            writer.close()
            output.finish(complete=True)
    """

    def __init__(
        self,
        stream: IO[str],
        *,
        mode: _Mode,
        target: str | None = None,
        temp: str | None = None,
        fd: int | None = None,
    ) -> None:
        self.stream = stream
        self._mode = mode
        self._target = target
        self._temp = temp
        self._fd = fd  # our own descriptor of the file, to cut it back after a failure
        self._good = os.fstat(fd).st_size if fd is not None else 0
        self._torn = False  # a write failed: nothing after it can be trusted whole
        self.outcome: Outcome | None = None

    @property
    def is_stdout(self) -> bool:
        """Whether records go to standard output."""
        return self._target is None

    def page_written(self) -> None:
        """Mark the end of a whole page (or of the finished output) as safe to keep.

        After a failed write nothing more is marked: a later flush may "succeed" with
        part of the failed page already on disk.
        """
        if self._fd is not None and not self._torn:
            self.stream.flush()
            self._good = os.fstat(self._fd).st_size

    def write_failed(self) -> None:
        """A write to the stream failed: keep at most what was marked before it."""
        self._torn = True

    def track(self, writer: RecordWriter) -> RecordWriter:
        """``writer``, calling :meth:`page_written` after every page and after ``close``."""
        return _TrackedWriter(writer, self)

    def finish(self, *, complete: bool, keep_partial: bool = False) -> Outcome:
        """End the output and say what it left.

        A complete export replaces the file; an incomplete one replaces it only with
        ``keep_partial`` and at least one whole page written, else the temporary file is
        removed. With ``--append`` whatever was written stays, cut back to whole pages.
        """
        if self._mode is _Mode.STREAM:
            if self._target is None:
                self.stream.flush()
            else:
                self.stream.close()
            self.outcome = Outcome.WRITTEN
            return self.outcome
        self._close_stream()
        fd, self._fd = self._fd, None
        if fd is None:
            raise RuntimeError("the output was already finished")
        keep = complete or (keep_partial and self._good > 0)
        try:
            if self._mode is _Mode.APPEND:
                _cut(fd, self._good)
                os.fsync(fd)
                self.outcome = Outcome.WRITTEN if complete else Outcome.APPENDED
                return self.outcome
            if not keep:
                self._remove_temp()
                self.outcome = Outcome.UNCHANGED
                return self.outcome
            _cut(fd, self._good)
            # On disk before the rename, so that a crash right after it cannot leave an
            # empty file where the previous export was.
            os.fsync(fd)
        finally:
            os.close(fd)
        temp, target, self._temp = self._temp, self._target, None
        if temp is None or target is None:
            raise RuntimeError("no temporary file to put in place")
        os.replace(temp, target)
        _sync_directory(os.path.dirname(target) or ".")
        self.outcome = Outcome.WRITTEN if complete else Outcome.KEPT_PARTIAL
        return self.outcome

    def abandon(self) -> None:
        """Undo after an unexpected error: drop the temporary file, cut an append back."""
        if self.outcome is not None:
            return
        if self._mode is _Mode.STREAM:
            if self._target is not None:
                self._close_stream()
            return
        self._close_stream()
        fd, self._fd = self._fd, None
        if fd is not None:
            try:
                if self._mode is _Mode.APPEND:
                    with contextlib.suppress(OSError):
                        _cut(fd, self._good)
            finally:
                os.close(fd)
        self._remove_temp()
        self.outcome = Outcome.APPENDED if self._mode is _Mode.APPEND else Outcome.UNCHANGED

    def _close_stream(self) -> None:
        # After a full disk the buffer may still hold bytes that cannot be written; the
        # file is cut back through our own descriptor afterwards, so this is safe to drop.
        with contextlib.suppress(OSError, ValueError):
            self.stream.close()

    def _remove_temp(self) -> None:
        if self._temp is not None:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(self._temp)
            self._temp = None


class _TrackedWriter:
    def __init__(self, writer: RecordWriter, output: Output) -> None:
        self._writer = writer
        self._output = output

    def write_page(self, records: Sequence[Mapping[str, Any]]) -> None:
        try:
            self._writer.write_page(records)
            self._output.page_written()
        except BaseException:
            self._output.write_failed()
            raise

    def close(self) -> None:
        try:
            self._writer.close()
            self._output.page_written()
        except BaseException:
            self._output.write_failed()
            raise


def _cut(fd: int, size: int) -> None:
    if os.fstat(fd).st_size != size:
        os.ftruncate(fd, size)


def _sync_directory(path: str) -> None:
    # Makes the rename itself durable; not every filesystem lets a directory be opened.
    with contextlib.suppress(OSError):
        fd = os.open(path, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def _new_file_mode() -> int:
    # What open() would have given a new file: 0o666 less the umask (read by setting it).
    mask = os.umask(0o022)
    os.umask(mask)
    return 0o666 & ~mask


def _stream(fd: int, mode: str) -> IO[str]:
    # A duplicate descriptor for the text stream, so that closing it (even when its last
    # flush fails) leaves ours open to cut the file back. newline="" lets the csv module
    # write its own line endings.
    return open(os.dup(fd), mode, encoding="utf-8", newline="")


@contextlib.contextmanager
def open_output(path: str | None, *, append: bool) -> Iterator[Output]:
    """Open the export's destination; an error escaping the block undoes the file.

    ``None`` or ``"-"`` is standard output. Errors opening the file are a
    :class:`UsageError`, raised before any request.

    Example::

        with open_output("shipments.jsonl", append=False) as output:
            ...
            output.finish(complete=result.error is None, keep_partial=False)
    """
    if path is None or path == "-":
        yield Output(sys.stdout, mode=_Mode.STREAM)
        return
    output = _open_file(path, append=append)
    try:
        yield output
    except BaseException:
        output.abandon()
        raise
    finally:
        if output.outcome is None:
            # Left without finish() and without an error: nothing proves it complete.
            output.abandon()


def _open_file(path: str, *, append: bool) -> Output:
    folder = os.path.dirname(path) or "."
    if not os.path.exists(folder):  # said plainly, before any temporary file is tried
        raise UsageError(f"cannot open --output {path!r}: the folder {folder!r} does not exist")
    try:
        if append:
            fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, _new_file_mode())
            try:
                return Output(_stream(fd, "a"), mode=_Mode.APPEND, target=path, fd=fd)
            except BaseException:
                os.close(fd)
                raise
        try:
            existing: os.stat_result | None = os.stat(path)
        except FileNotFoundError:
            existing = None
        if existing is not None and not stat.S_ISREG(existing.st_mode):
            if stat.S_ISDIR(existing.st_mode):
                raise UsageError(f"cannot open --output {path!r}: it is a directory")
            # A FIFO or a device: written directly, it cannot be replaced.
            stream = open(path, "w", encoding="utf-8", newline="")  # noqa: SIM115 -- closed in finish()
            return Output(stream, mode=_Mode.STREAM, target=path)
    except OSError as exc:
        raise UsageError(f"cannot open --output {path!r}: {exc.strerror}") from None
    # Replace the file a symbolic link points to, not the link.
    target = os.path.realpath(path)
    directory, name = os.path.split(target)
    try:
        fd, temp = tempfile.mkstemp(prefix=f".{name}.", suffix=TEMP_SUFFIX, dir=directory)
    except OSError as exc:
        raise UsageError(
            f"cannot open --output {path!r}: no temporary file beside it ({exc.strerror}); "
            "the export is written there first so that a failure keeps the previous file"
        ) from None
    try:
        os.fchmod(fd, (existing.st_mode & 0o7777) if existing is not None else _new_file_mode())
        return Output(_stream(fd, "w"), mode=_Mode.REPLACE, target=target, temp=temp, fd=fd)
    except BaseException:
        os.close(fd)
        os.unlink(temp)
        raise
