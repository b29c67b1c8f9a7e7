"""The export behind ``service-api list``: accounts one after another, page by page.

Each page is written whole and flushed before the next is asked for, and the state of
every account (pages and records written, the next page to ask for) is kept so that the
summary can say exactly how to resume after an error or Ctrl-C.
"""

from __future__ import annotations

import contextlib
import shlex
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any, Protocol

import attrs

from service_api_cli._interrupts import InterruptGuard
from service_api_cli._output import RecordWriter, tag_records
from service_api_cli._progress import ExportProgress

__all__ = ["AccountState", "ExportResult", "PageSource", "Record", "export", "resume_commands"]

Record = Mapping[str, Any]


class PageLike(Protocol):
    """What the export needs of a page: its number, items and the total announced."""

    @property
    def number(self) -> int: ...
    @property
    def items(self) -> Sequence[Any]: ...
    @property
    def total_records(self) -> int: ...


class PageSource(Protocol):
    """Yields the pages of one account from ``start_page`` on."""

    def __call__(self, account: str, start_page: int) -> Iterable[PageLike]: ...


@attrs.define
class AccountState:
    """How far the export of one account got."""

    account: str
    next_page: int
    pages: int = 0
    records: int = 0
    total: int | None = None
    done: bool = False


@attrs.define
class ExportResult:
    """Every account's state and the elapsed time; ``error`` is what stopped it, if anything."""

    accounts: list[AccountState]
    elapsed: float = 0.0
    error: BaseException | None = None

    @property
    def records(self) -> int:
        """Records written, all accounts together."""
        return sum(a.records for a in self.accounts)

    @property
    def pages(self) -> int:
        """Pages written, all accounts together."""
        return sum(a.pages for a in self.accounts)

    def summary(self, destination: str | None) -> str:
        """One line: what was written where (``None``: nowhere kept), in how long; or how
        far it got."""
        per_account = "; ".join(
            f"{a.account}: {_count(a.records, 'record')}, {_count(a.pages, 'page')}"
            + ("" if a.done else f", stopped before page {a.next_page}")
            for a in self.accounts
        )
        verb = "exported" if self.error is None else "stopped after"
        written = f"{_count(self.records, 'record')} ({_count(self.pages, 'page')})"
        where = "" if destination is None else f" to {destination}"
        return f"{verb} {written}{where} in {self.elapsed:.1f}s [{per_account}]"


@contextlib.contextmanager
def _page_iterator(pages: Iterable[PageLike]) -> Iterator[Iterator[PageLike]]:
    # Leaving early (--max-items, an error, Ctrl-C) closes the page iterator at once, so
    # that its fetch-ahead and its per-account client stop now rather than at collection.
    iterator = iter(pages)
    try:
        yield iterator
    finally:
        close = getattr(iterator, "close", None)
        if callable(close):
            close()


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


def _to_dict(item: Any) -> dict[str, Any]:
    # Generated models give API field names, undeclared fields included; plain dicts
    # (fakes in tests) pass through.
    if isinstance(item, Mapping):
        return dict(item)
    result: dict[str, Any] = item.to_dict()
    return result


def _records(page: PageLike) -> list[dict[str, Any]]:
    """The page's records as the API sent them (``raw_items``): a model's ``to_dict``
    would re-spell declared values (a date-time's ``Z`` becomes ``+00:00``). A page
    without them (a fake) gives its items' dicts."""
    raw = getattr(page, "raw_items", None)
    if raw is None:
        return [_to_dict(item) for item in page.items]
    # Each is a JSON object: the generated parser already read it into a model.
    return [dict(record) for record in raw]


def export(
    *,
    accounts: Sequence[str],
    start_page: int,
    page_size: int,
    max_items: int | None,
    pages: PageSource,
    writer: RecordWriter,
    progress: ExportProgress,
    guard: InterruptGuard,
    tag: bool,
) -> ExportResult:
    """Export every account in turn; never raises, the result carries the error.

    ``max_items`` bounds each account. With ``tag`` every record gets an ``account`` field.

    Example::

        result = export(accounts=["acct-1"], start_page=1, page_size=50, max_items=None,
                        pages=lambda account, start: paginate(...).pages(), writer=writer,
                        progress=NoProgress(), guard=guard, tag=False)
    """
    states = [AccountState(account=a, next_page=start_page) for a in accounts]
    result = ExportResult(accounts=states)
    began = time.monotonic()
    try:
        for state in states:
            progress.start_account(state.account)
            skipped: int | None = None
            with _page_iterator(pages(state.account, start_page)) as iterator:
                for page in iterator:
                    if skipped is None:
                        # The service may serve smaller pages than asked (it caps the size),
                        # so count what lies before the start page with the size it used.
                        served = getattr(getattr(page, "model", None), "page_size", page_size)
                        skipped = (start_page - 1) * (
                            served if isinstance(served, int) else page_size
                        )
                    records = _records(page)
                    if max_items is not None:
                        records = records[: max(0, max_items - state.records)]
                    state.total = max(0, page.total_records - skipped)
                    if max_items is not None:
                        state.total = min(state.total, max_items)
                    with guard.critical():
                        writer.write_page(tag_records(records, state.account) if tag else records)
                        state.pages += 1
                        state.records += len(records)
                        state.next_page = page.number + 1
                    progress.update(
                        state.account, records=state.records, pages=state.pages, total=state.total
                    )
                    if max_items is not None and state.records >= max_items:
                        break
            state.done = True
    except (Exception, KeyboardInterrupt) as exc:
        result.error = exc
    finally:
        result.elapsed = time.monotonic() - began
    return result


def resume_commands(
    result: ExportResult, base_argv: Sequence[str], *, output: str | None, append: bool
) -> list[str]:
    """The commands that finish an unfinished export, one per account not done.

    ``base_argv`` is the original command without accounts, start page and output. With
    ``append`` the resumed records go to the end of ``output``; without (CSV, whose header
    cannot grow) they go to a new file beside it, one per account.

    Example::

        resume_commands(result, ["service-api", "list", "shipments"], output="out.jsonl",
                        append=True)
    """
    commands = []
    for state in result.accounts:
        if state.done:
            continue
        argv = [*base_argv, "--account", state.account, "--start-page", str(state.next_page)]
        if output is not None and append:
            argv += ["--output", output, "--append"]
        elif output is not None:
            stem, dot, suffix = output.rpartition(".")
            name = (
                f"{stem}.{state.account}-from-{state.next_page}{dot}{suffix}"
                if dot
                else (f"{output}.{state.account}-from-{state.next_page}")
            )
            argv += ["--output", name]
        commands.append(shlex.join(argv))
    return commands
