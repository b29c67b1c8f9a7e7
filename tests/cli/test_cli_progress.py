"""The progress bar: records of the total, pages, rate and ETA, only on a terminal."""

from __future__ import annotations

import io

from rich.console import Console

from service_api_cli._progress import Bars


def _drawn(*, shown: bool) -> str:
    out = io.StringIO()
    console = Console(file=out, force_terminal=True, width=160, color_system=None)
    progress = Bars(console, shown=shown)
    progress.update("acct-1", completed=100, pages=2, total=500)
    progress.update("acct-2", completed=50, pages=1)
    progress.close()
    return out.getvalue()


def test_the_bar_shows_records_of_total_and_pages() -> None:
    text = _drawn(shown=True)
    assert "acct-1" in text
    assert "100/500 records" in text
    assert "2 pages" in text
    assert "rec/s" in text
    assert "ETA" in text
    assert "acct-2" in text
    assert "1 page " in text
    assert "1 pages" not in text


def test_no_bar_when_stderr_is_not_a_terminal() -> None:
    assert _drawn(shown=False) == ""
