"""Progress of an export on stderr: a rich bar on a terminal, nothing otherwise.

The bar is driven by ``totalRecords`` of the first page, so it shows records, pages,
rate and time left. When stderr is not a terminal (a pipe, a CI log) the bar would be
noise, so only the final summary line (printed by the command) remains.
"""

from __future__ import annotations

from typing import Protocol

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    Task,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.text import Text

__all__ = ["ExportProgress", "NoProgress", "RichProgress", "make_progress"]


class ExportProgress(Protocol):
    """Told about each page of each account as it is written."""

    def start_account(self, account: str) -> None:
        """An account's export begins (its total is not known yet)."""

    def update(self, account: str, *, records: int, pages: int, total: int | None) -> None:
        """Records and pages written so far for ``account``, and how many are expected."""

    def close(self) -> None:
        """Remove the bar from the screen's live area."""


class NoProgress:
    """Shows nothing: stderr is not a terminal.

    Example::

        progress = NoProgress()
    """

    def start_account(self, account: str) -> None:
        """Nothing to show."""

    def update(self, account: str, *, records: int, pages: int, total: int | None) -> None:
        """Nothing to show."""

    def close(self) -> None:
        """Nothing to remove."""


class _RecordRateColumn(ProgressColumn):
    def render(self, task: Task) -> Text:
        speed = task.finished_speed or task.speed
        return Text("-- rec/s" if speed is None else f"{speed:,.0f} rec/s", style="cyan")


class _PagesColumn(ProgressColumn):
    def render(self, task: Task) -> Text:
        pages = int(task.fields.get("pages", 0))
        return Text(f"{pages} page{'' if pages == 1 else 's'}")


class RichProgress:
    """One bar per account: records of total, pages, rate, elapsed and time left.

    Example::

        progress = RichProgress(Console(stderr=True))
        progress.start_account("acct-1")
        progress.update("acct-1", records=50, pages=1, total=500)
        progress.close()
    """

    def __init__(self, console: Console) -> None:
        self._progress = Progress(
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("records"),
            _PagesColumn(),
            _RecordRateColumn(),
            TimeElapsedColumn(),
            TextColumn("ETA"),
            TimeRemainingColumn(),
            console=console,
            transient=False,
        )
        self._tasks: dict[str, TaskID] = {}
        self._started = False

    def start_account(self, account: str) -> None:
        """Add a bar for ``account``."""
        if not self._started:
            self._progress.start()
            self._started = True
        self._tasks[account] = self._progress.add_task(account, total=None, pages=0)

    def update(self, account: str, *, records: int, pages: int, total: int | None) -> None:
        """Move the account's bar."""
        task = self._tasks.get(account)
        if task is None:
            self.start_account(account)
            task = self._tasks[account]
        self._progress.update(task, completed=records, total=total, pages=pages)

    def close(self) -> None:
        """Draw the bars one last time and leave them on screen."""
        if self._started:
            self._progress.stop()
            self._started = False


def make_progress(stderr_is_tty: bool) -> ExportProgress:
    """A :class:`RichProgress` on a terminal, else :class:`NoProgress`.

    Example::

        progress = make_progress(sys.stderr.isatty())
    """
    if stderr_is_tty:
        return RichProgress(Console(stderr=True))
    return NoProgress()
