"""Ctrl-C that never cuts a record in half.

While a page is being written, SIGINT is held back and raised as ``KeyboardInterrupt``
right after the page is complete; anywhere else (waiting on the network) it is raised at
once, as usual. The output file therefore always ends on a whole record.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType, TracebackType
from typing import Any

__all__ = ["InterruptGuard"]


class InterruptGuard:
    """Install for the duration of an export; wrap each page write in :meth:`critical`.

    Example::

        with InterruptGuard() as guard:
            for page in pages:
                with guard.critical():
                    writer.write_page(page)
    """

    def __init__(self) -> None:
        self._depth = 0
        self._pending = False
        self._previous: Any = None
        self._installed = False

    def __enter__(self) -> InterruptGuard:
        # Signal handlers can only be set from the main thread; elsewhere (tests calling
        # main() from a worker) the default behaviour stays, which is still safe enough.
        if threading.current_thread() is threading.main_thread():
            self._previous = signal.signal(signal.SIGINT, self._handle)
            self._installed = True
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._installed:
            signal.signal(signal.SIGINT, self._previous)
            self._installed = False

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        if self._depth:
            self._pending = True
            return
        raise KeyboardInterrupt

    @contextmanager
    def critical(self) -> Iterator[None]:
        """Hold Ctrl-C back until the block is done, then raise it."""
        self._depth += 1
        try:
            yield
        finally:
            self._depth -= 1
        # Reached only when the block succeeded: a pending Ctrl-C never hides another error.
        if self._depth == 0 and self._pending:
            self._pending = False
            raise KeyboardInterrupt
