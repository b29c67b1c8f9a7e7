"""``service-api list``: every account in turn, page by page, and what happens on failure.

With ``-o FILE`` nothing fetched is lost and a failed run never touches ``FILE``: each
whole page goes to a hidden folder beside it (``.FILE.partial/``: one JSON Lines file per
account, exactly as the API sent the records, and ``state.json``, where each account
stands). ``FILE`` is replaced, atomically, only once every account is complete; then the
folder goes. Run the same command again after an error, Ctrl-C, SIGTERM or even a
``kill -9`` and it fetches only what is missing, per account: the state says where each
account stopped and how many bytes of its file are whole pages, so a page torn by the
stop is cut off and fetched again, never written twice. ``--restart`` drops the folder.

Standard output (and a FIFO or device) cannot be replaced or resumed: JSON Lines goes
out a page at a time as it arrives; CSV and the table, which need every record first,
are written when the export ends, with whatever was fetched, also after a failure.
"""

import contextlib
import json
import os
import shutil
import sys
import tempfile
import time
import traceback
from collections.abc import Iterator, Mapping, Sequence
from typing import IO, Any

import attrs
from rich.console import Console

import service_api
from service_api_cli._connection import make_client, say_drift
from service_api_cli._exit_codes import (
    ExitCode,
    UsageError,
    describe_error,
    exit_code_for,
    say,
    say_error,
)
from service_api_cli._job import ListJob
from service_api_cli._output import jsonl_line, render, tagged
from service_api_cli._progress import Bars

STATE_FILE = "state.json"


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


@attrs.define
class AccountState:
    """Where the export of one account stands; the first seven fields are kept on disk.

    Example::

        state = AccountState("acct-1", "0.jsonl")
        state.count_page(1, 50)   # page 1, 50 records: next_page is 2
    """

    account: str
    file: str  # its JSON Lines file in the kept folder
    next_page: int = 1
    pages: int = 0
    records: int = 0
    size: int = 0  # bytes of its file that are whole pages
    done: bool = False
    kept: int = 0  # records it had from an earlier run
    refused: BaseException | None = None

    def count_page(self, number: int, records: int) -> None:
        """Page ``number`` and its ``records`` are written."""
        self.pages += 1
        self.next_page = number + 1
        self.records += records


# What state.json keeps of each account.
_SAVED = attrs.filters.exclude("kept", "refused")


class KeptPages:
    """The hidden folder beside ``FILE`` holding the whole pages of an unfinished export.

    ``command`` is what shapes the records (endpoint, page size, parameters, limit): the
    pages kept by another command are refused with a :class:`UsageError` that says so.

    Example::

        kept = KeptPages("shipments.jsonl", {"endpoint": "shipments"}, ["acct-1"])
        for state in kept.accounts: ...
        kept.finish("jsonl", tag=False, complete=True)
    """

    def __init__(
        self,
        path: str,
        command: Mapping[str, Any],
        accounts: Sequence[str],
        *,
        restart: bool,
    ) -> None:
        # A symbolic link keeps pointing at the file.
        self.target = os.path.realpath(path)
        folder, name = os.path.split(self.target)
        self.folder = os.path.join(folder, f".{name}.partial")
        self.command = dict(command)
        if restart:
            shutil.rmtree(self.folder, ignore_errors=True)
        before, self._all = self._load()
        if before != self.command:
            changed = ", ".join(
                f"{key} {before.get(key)!r}"
                for key, value in self.command.items()
                if before.get(key) != value
            )
            raise UsageError(
                f"{path} has pages kept by another export ({changed}): run that command "
                "again to finish it, or add --restart to drop them and start over"
            )
        for account in accounts:
            new = AccountState(account, f"{len(self._all)}.jsonl")
            state = self._all.setdefault(account, new)
            path = self._path(state)  # a file that lost pages (a crash) starts again
            if (os.path.getsize(path) if os.path.exists(path) else 0) < state.size:
                self._all[account] = AccountState(account, state.file)
        self.accounts = [self._all[a] for a in accounts]

    def _path(self, state: AccountState) -> str:
        return os.path.join(self.folder, state.file)

    def _load(self) -> tuple[dict[str, Any], dict[str, AccountState]]:
        """The command and the accounts of the pages kept: this command's and none when
        there are none."""
        path = os.path.join(self.folder, STATE_FILE)
        try:
            with open(path, encoding="utf-8") as file:
                saved = json.load(file)
            accounts = {
                account: AccountState(**{**state, "kept": state["records"]})
                for account, state in saved["accounts"].items()
            }
            return saved["command"], accounts
        except FileNotFoundError:
            return self.command, {}
        # Not a state this command wrote: unreadable, or of another shape.
        except (OSError, ValueError, TypeError, KeyError, AttributeError) as exc:
            raise UsageError(
                f"cannot read {path} ({exc!r}): add --restart to start over"
            ) from None

    def save(self) -> None:
        """Write ``state.json`` afresh and put it in place atomically."""
        accounts = {a: attrs.asdict(s, filter=_SAVED) for a, s in self._all.items()}
        temp = os.path.join(self.folder, f"{STATE_FILE}.new")
        with open(temp, "w", encoding="utf-8") as file:
            json.dump({"command": self.command, "accounts": accounts}, file)
        os.replace(temp, os.path.join(self.folder, STATE_FILE))

    def write_page(
        self, state: AccountState, number: int, records: Sequence[Any]
    ) -> None:
        """Append a page to the account's file after its last whole page, then count it."""
        os.makedirs(self.folder, exist_ok=True)
        with open(self._path(state), "a", encoding="utf-8") as stream:
            stream.truncate(state.size)  # a page torn by an earlier stop goes
            stream.writelines(jsonl_line(record) for record in records)
            stream.flush()
            state.count_page(number, len(records))
            state.size = stream.tell()
        self.save()

    def records(self, tag: bool) -> Iterator[dict[str, Any]]:
        """Every kept record, account after account, tagged with it if ``tag``."""
        for state in self.accounts:
            with open(self._path(state), encoding="utf-8") as lines:
                for record in _records(lines):
                    yield tagged(record, state.account) if tag else record

    def finish(self, fmt: str, *, tag: bool, complete: bool) -> None:
        """Once ``complete``: write ``FILE`` from the kept records, put it in place, then
        drop the folder."""
        if not complete:
            return
        temp = os.path.join(self.folder, "output")
        with open(temp, "w", encoding="utf-8", newline="") as stream:
            render(fmt, lambda: self.records(tag), stream)
            os.fsync(stream.fileno())  # on disk before the rename: never an empty FILE
        with contextlib.suppress(FileNotFoundError):
            shutil.copymode(self.target, temp)
        os.replace(temp, self.target)
        shutil.rmtree(self.folder, ignore_errors=True)

    def drop_if_empty(self) -> None:
        """Remove the folder when it keeps nothing (a run that fetched no page)."""
        if not any(s.pages for s in self._all.values()):
            shutil.rmtree(self.folder, ignore_errors=True)


class _Stream:
    """Standard output, a FIFO or a device: JSON Lines as it comes, CSV and the table
    from a spool at the end (with what was fetched, also after a failure)."""

    def __init__(
        self, stream: IO[str], accounts: Sequence[str], *, fmt: str, tag: bool
    ) -> None:
        self.stream, self.tag = stream, tag
        self.accounts = [AccountState(account, "") for account in accounts]
        self.spool = None
        if fmt != "jsonl":
            # Closed in finish().
            self.spool = tempfile.TemporaryFile("w+", encoding="utf-8")  # noqa: SIM115

    def write_page(
        self, state: AccountState, number: int, records: Sequence[Any]
    ) -> None:
        out = self.spool or self.stream
        out.writelines(
            jsonl_line(tagged(r, state.account) if self.tag else r) for r in records
        )
        out.flush()
        state.count_page(number, len(records))

    def finish(self, fmt: str, *, tag: bool, complete: bool) -> None:
        if (spool := self.spool) is not None:
            with spool:
                render(fmt, lambda: _records(spool), self.stream)


def _records(spool: IO[str]) -> Iterator[dict[str, Any]]:
    # From the start: a spool is read again (a CSV reads its records twice).
    spool.seek(0)
    for line in spool:
        yield json.loads(line)


def _export(
    job: ListJob, client: service_api.Client, sink: KeptPages | _Stream
) -> BaseException | None:
    """Fetch what each account still misses, from where it stopped; the error that
    stopped the export, if any. An account the credentials may not act for (403) is set
    aside and the others go on."""
    # Records drawn on the terminal: a progress bar on it would tear them.
    on_terminal = sys.stdout.isatty() and job.output is None and job.format != "table"
    shown = sys.stderr.isatty() and not on_terminal and not job.quiet
    progress = Bars(Console(stderr=True), shown=shown)
    try:
        for state in sink.accounts:
            if state.done:
                continue
            left = None if job.max_items is None else job.max_items - state.records
            try:
                with client.with_account(state.account) as child:
                    pager = service_api.paginate(
                        job.endpoint.module,
                        child,
                        page_size=job.page_size,
                        start_page=state.next_page,
                        max_items=left,
                        concurrency=job.concurrency,
                        **job.params,
                    )
                    with contextlib.closing(iter(pager.pages())) as pages:
                        for page in pages:
                            sink.write_page(state, page.number, page.raw_items)
                            total = min(
                                page.total_records, job.max_items or page.total_records
                            )
                            progress.update(
                                state.account,
                                completed=state.records,
                                pages=state.pages,
                                total=total,
                            )
            except service_api.PermissionDeniedError as exc:
                state.refused = exc
                continue
            state.done = True
            if isinstance(sink, KeptPages):
                sink.save()
    except (Exception, KeyboardInterrupt) as exc:
        return exc
    finally:
        progress.close()
    return None


def run_list(job: ListJob) -> int:
    """``service-api list``: export an endpoint for every account, then say what was done.

    Example::

        run_list(resolve_job(build_parser().parse_args(["list", "shipments", "-o", "s.jsonl"])))
    """
    # A regular file resumes from the pages kept beside it; standard output, a FIFO or
    # a device starts over.
    output = job.output
    sink: KeptPages | _Stream
    if output is not None and (not os.path.exists(output) or os.path.isfile(output)):
        # What shapes the records: the pages kept by another command are refused.
        command = {
            "endpoint": job.endpoint.name,
            "page_size": job.page_size,
            "param": sorted(f"{name}={value}" for name, value in job.params.items()),
            "max_items": job.max_items,
        }
        sink = KeptPages(output, command, job.accounts, restart=job.restart)
    else:
        stream = sys.stdout
        if output is not None:
            stream = open(output, "w", encoding="utf-8")  # noqa: SIM115 -- closed at exit
        sink = _Stream(stream, job.accounts, fmt=job.format, tag=job.tag)
    began = time.monotonic()
    with make_client(job.connection) as client:
        error = _export(job, client, sink)
    refused = [s.refused for s in sink.accounts if s.refused is not None]
    try:
        sink.finish(job.format, tag=job.tag, complete=error is None and not refused)
    except (Exception, KeyboardInterrupt) as exc:
        error = error or exc
    if error is None and refused:
        error = refused[0]
    code = _report(job, sink, error, elapsed=time.monotonic() - began)
    say_drift(client)  # the last line: where the answers differed from the spec
    return code


def _account_summary(state: AccountState) -> str:
    text = f"{state.account}: {_count(state.records, 'record')}, "
    text += _count(state.pages, "page")
    if state.refused:
        return f"{text} (refused)"
    if not state.done:
        return f"{text}, stopped before page {state.next_page}"
    return text


def _summary(
    accounts: Sequence[AccountState], elapsed: float, where: str | None = None
) -> str:
    records = sum(a.records for a in accounts)
    pages = sum(a.pages for a in accounts)
    per_account = "; ".join(_account_summary(a) for a in accounts)
    kept = sum(a.kept for a in accounts)
    earlier = f" ({kept} of them kept from an earlier run)" if kept else ""
    written = f"{_count(records, 'record')} ({_count(pages, 'page')})"
    if where is None:
        return f"stopped after {written} in {elapsed:.1f}s [{per_account}]{earlier}"
    return f"exported {written} to {where} in {elapsed:.1f}s [{per_account}]{earlier}"


def _say_error(
    job: ListJob, accounts: Sequence[AccountState], error: BaseException
) -> None:
    """The error first: each account refused, then what stopped the export, once."""
    if job.debug:
        traceback.print_exception(error)
    for state in accounts:
        if state.refused is not None:
            say(f"error: {state.account}: {describe_error(state.refused)}")
    if not any(state.refused is error for state in accounts):
        say_error(error)


def _say_kept(
    job: ListJob, sink: KeptPages, error: BaseException, *, records: int
) -> None:
    """What became of ``--output`` and its kept pages (``records`` of them), and how
    to go on."""
    accounts = sink.accounts
    sink.drop_if_empty()
    if records == 0:
        say(f"{job.output} was left as it was: no page was kept")
        return
    say(
        f"{job.output} was left as it was; the {_count(records, 'record')} fetched are "
        f"kept beside it in {os.path.basename(sink.folder)}/"
    )
    refused = [a.account for a in accounts if a.refused]
    if refused and all(a.done or a.refused for a in accounts):
        flags = " ".join(f"--account {account}" for account in refused)
        say(f"run the same command without {flags} to write {job.output} from them")
    elif _resumable(error):
        say("run the same command again to fetch only the rest (--restart starts over)")


def _report(
    job: ListJob,
    sink: KeptPages | _Stream,
    error: BaseException | None,
    *,
    elapsed: float,
) -> int:
    """Say what was done, or what stopped it and what became of the records; the exit
    code."""
    accounts = sink.accounts
    if error is None:
        say(_summary(accounts, elapsed, job.output or "stdout"))
        return ExitCode.OK
    if isinstance(error, BrokenPipeError) and isinstance(sink, _Stream):
        # The reader went away (``| head``): say so once and keep the interpreter from
        # complaining again when it flushes stdout at exit.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
        say("error: the output was closed before the export ended (broken pipe)")
        say(_summary(accounts, elapsed))
        return ExitCode.FAILURE
    _say_error(job, accounts, error)
    records = sum(a.records for a in accounts)
    if records:
        say(_summary(accounts, elapsed))
    if isinstance(sink, KeptPages):
        _say_kept(job, sink, error, records=records)
    elif _resumable(error) and records:
        say(
            f"the {_count(records, 'record')} went to {job.output or 'stdout'}; "
            "a rerun starts over (with -o FILE it would resume)"
        )
    return exit_code_for(error)


def _resumable(error: BaseException) -> bool:
    # Failures a rerun cannot cure (refused credentials, permission, a bad request, a
    # record that is not one) fail again the same way; Ctrl-C, a full disk, network and
    # server failures do not.
    if isinstance(error, service_api.ServiceApiError) and error.start_page is not None:
        return error.resumable
    final = service_api.InvalidCredentialsError | service_api.PermissionDeniedError
    return not isinstance(
        error, final | service_api.BadRequestError | service_api.ConfigurationError
    )
