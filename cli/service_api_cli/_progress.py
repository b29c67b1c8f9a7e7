"""Progress of an export on stderr: a rich bar per account on a terminal, nothing otherwise.

The bar is driven by ``totalRecords`` of the pages, so it shows records, pages, rate and
time left. When stderr is not a terminal (a pipe, a CI log) the bar would be noise, so
only the final summary line (printed by the command) remains.
"""

from typing import Any

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


class _RecordRateColumn(ProgressColumn):
    def render(self, task: Task) -> Text:
        speed = task.finished_speed or task.speed
        return Text(
            "-- rec/s" if speed is None else f"{speed:,.0f} rec/s", style="cyan"
        )


class Bars:
    """One bar per account of an export: records of the total, pages, rate, elapsed
    and time left; with ``shown`` false nothing is drawn.

    Example::

        bars = Bars(Console(stderr=True), shown=sys.stderr.isatty())
        bars.update("acct-1", completed=50, pages=1, total=500)
        bars.close()
    """

    def __init__(self, console: Console, *, shown: bool = True) -> None:
        self._progress = Progress(
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("records"),
            TextColumn("{task.fields[pages]} page{task.fields[plural]}"),
            _RecordRateColumn(),
            TimeElapsedColumn(),
            TextColumn("ETA"),
            TimeRemainingColumn(),
            console=console,
            disable=not shown,
        )
        self._tasks: dict[str, TaskID] = {}

    def update(self, account: str, **fields: Any) -> None:
        """Move the account's bar (the first call adds it): rich's ``completed`` and
        ``total``, and ``pages``."""
        if account not in self._tasks:
            self._progress.start()
            self._tasks[account] = self._progress.add_task(
                account, total=None, pages=0, plural="s"
            )
        plural = "" if fields.get("pages") == 1 else "s"
        self._progress.update(self._tasks[account], plural=plural, **fields)

    def close(self) -> None:
        """Draw the bars one last time and leave them on screen."""
        self._progress.stop()
