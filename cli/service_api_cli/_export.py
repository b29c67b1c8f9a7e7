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

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Iterator, Mapping, Sequence
from typing import IO, Any

import attrs

import service_api
from service_api_cli._commands import find_endpoint, parse_params
from service_api_cli._connection import make_client, resolve_accounts
from service_api_cli._exit_codes import (
    ExitCode,
    UsageError,
    describe_error,
    exit_code_for,
    say,
)
from service_api_cli._formats import choose_format
from service_api_cli._output import jsonl_line, render, tagged
from service_api_cli._progress import make_progress
from service_api_client.api import LIST_ENDPOINTS

__all__ = ["KeptPages", "run_list"]

STATE_FILE = "state.json"


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


@attrs.define
class AccountState:
    """Where the export of one account stands; the first seven fields are kept on disk.

    Example::

        state = AccountState("acct-1", "0.jsonl")
        state.took(1, 50)   # page 1, 50 records: next_page is 2
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

    def took(self, number: int, records: int) -> None:
        """Page ``number`` and its ``records`` are written."""
        self.pages, self.next_page, self.records = (
            self.pages + 1,
            number + 1,
            self.records + records,
        )


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
        self.target = os.path.realpath(
            path
        )  # a symbolic link keeps pointing at the file
        folder, name = os.path.split(self.target)
        self.folder = os.path.join(folder, f".{name}.partial")
        self.command = dict(command)
        if restart:
            shutil.rmtree(self.folder, ignore_errors=True)
        saved = self._load()
        if saved and saved.get("command") != self.command:
            before = saved.get("command") or {}
            changed = ", ".join(
                f"{k} {before.get(k)!r}"
                for k in self.command
                if before.get(k) != self.command[k]
            )
            raise UsageError(
                f"{path} has pages kept by another export ({changed}): run that command "
                "again to finish it, or add --restart to drop them and start over"
            )
        try:
            self._all = {
                a: AccountState(**{**s, "kept": s["records"]})
                for a, s in ((saved or {}).get("accounts") or {}).items()
            }
        except (TypeError, KeyError, AttributeError):  # not a state this command wrote
            raise UsageError(
                f"cannot read {self.folder}/{STATE_FILE}: add --restart"
            ) from None
        for account in accounts:
            self._all.setdefault(
                account, AccountState(account, f"{len(self._all)}.jsonl")
            )
            state = self._all[account]
            path = self._path(state)  # a file that lost pages (a crash) starts again
            if (os.path.getsize(path) if os.path.exists(path) else 0) < state.size:
                self._all[account] = AccountState(account, state.file)
        self.accounts = [self._all[a] for a in accounts]

    def _path(self, state: AccountState) -> str:
        return os.path.join(self.folder, state.file)

    def _load(self) -> dict[str, Any] | None:
        try:
            with open(os.path.join(self.folder, STATE_FILE), encoding="utf-8") as file:
                saved: dict[str, Any] = json.load(file)
        except FileNotFoundError:
            return None
        except (OSError, ValueError) as exc:
            raise UsageError(
                f"cannot read {self.folder}/{STATE_FILE} ({exc}): add --restart to start over"
            ) from None
        return saved

    def save(self) -> None:
        """Write ``state.json`` afresh and put it in place atomically."""
        fields = ("account", "file", "next_page", "pages", "records", "size", "done")
        accounts = {a: {f: getattr(s, f) for f in fields} for a, s in self._all.items()}
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
            state.took(number, len(records))
            state.size = stream.tell()
        self.save()

    def records(self, tag: bool) -> Iterator[dict[str, Any]]:
        """Every kept record, account after account, tagged with it if ``tag``."""
        for state in self.accounts:
            with open(self._path(state), encoding="utf-8") as lines:
                for line in lines:
                    yield (
                        tagged(json.loads(line), state.account)
                        if tag
                        else json.loads(line)
                    )

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

    def __init__(self, stream: IO[str], fmt: str, tag: bool) -> None:
        self.stream, self.tag = stream, tag
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
        state.took(number, len(records))

    def finish(self, fmt: str, *, tag: bool, complete: bool) -> None:
        if (spool := self.spool) is not None:
            with spool:
                render(fmt, lambda: _records(spool), self.stream)


def _records(spool: IO[str]) -> Iterator[dict[str, Any]]:
    spool.seek(0)
    for line in spool:
        yield json.loads(line)


def _export(
    args: argparse.Namespace,
    client: service_api.Client,
    accounts: list[AccountState],
    sink: KeptPages | _Stream,
) -> BaseException | None:
    """Fetch what each account still misses; the error that stopped it, if any. An account
    the credentials may not act for (403) is set aside and the others go on."""
    endpoint = find_endpoint(args.endpoint, LIST_ENDPOINTS)
    params = parse_params(endpoint, args.param)
    on_terminal = (
        sys.stdout.isatty() and args.output in (None, "-") and args.format != "table"
    )
    progress = make_progress(sys.stderr.isatty() and not on_terminal and not args.quiet)
    try:
        for state in accounts:
            if state.done:
                continue
            progress.update(
                state.account, records=state.records, pages=state.pages, total=None
            )
            left = None if args.max_items is None else args.max_items - state.records
            try:
                with client.with_account(state.account) as child:
                    pager = service_api.paginate(
                        endpoint.module,
                        child,
                        page_size=args.page_size,
                        start_page=state.next_page,
                        max_items=left,
                        concurrency=args.concurrency,
                        **params,
                    )
                    with contextlib.closing(iter(pager.pages())) as pages:
                        for page in pages:
                            sink.write_page(state, page.number, page.raw_items)
                            total = min(
                                page.total_records, args.max_items or page.total_records
                            )
                            shown = {"records": state.records, "pages": state.pages}
                            progress.update(state.account, **shown, total=total)
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


def run_list(args: argparse.Namespace) -> int:
    """``service-api list``: export an endpoint for every account, then say what was done.

    Example::

        run_list(build_parser().parse_args(["list", "shipments", "-o", "s.jsonl"]))
    """
    endpoint = find_endpoint(args.endpoint, LIST_ENDPOINTS)
    parse_params(endpoint, args.param)  # checked before anything else
    names = resolve_accounts(args.account)
    args.format = choose_format(args.format, args.output)
    tag = args.tag_account or len(names) > 1
    to_file = args.output not in (None, "-")
    if to_file and os.path.isdir(args.output):
        raise UsageError(f"cannot write --output {args.output!r}: it is a directory")
    if to_file and not os.path.isdir(os.path.dirname(args.output) or "."):
        folder = os.path.dirname(args.output)
        raise UsageError(
            f"cannot write --output {args.output!r}: the folder {folder!r} does not exist"
        )
    regular = to_file and (
        not os.path.exists(args.output) or os.path.isfile(args.output)
    )
    sink: KeptPages | _Stream
    if regular:
        command = {
            "endpoint": endpoint.name,
            "page_size": args.page_size,
            "param": sorted(args.param),
            "max_items": args.max_items,
        }
        sink = KeptPages(args.output, command, names, restart=args.restart)
        accounts = sink.accounts
    else:
        stream = open(args.output, "w", encoding="utf-8") if to_file else sys.stdout  # noqa: SIM115 -- a FIFO or device, closed at exit
        sink = _Stream(stream, args.format, tag)
        accounts = [AccountState(a, "") for a in names]
    began = time.monotonic()
    with make_client(args) as client:
        error = _export(args, client, accounts, sink)
    refused = [s for s in accounts if s.refused is not None]
    try:
        sink.finish(args.format, tag=tag, complete=error is None and not refused)
    except (Exception, KeyboardInterrupt) as exc:
        error = error or exc
    return _report(
        args,
        accounts,
        error or (refused[0].refused if refused else None),
        sink,
        time.monotonic() - began,
    )


def _summary(
    accounts: Sequence[AccountState], elapsed: float, where: str | None = None
) -> str:
    records, pages = sum(a.records for a in accounts), sum(a.pages for a in accounts)
    per_account = "; ".join(
        f"{a.account}: {_count(a.records, 'record')}, {_count(a.pages, 'page')}"
        + (
            ""
            if a.done
            else " (refused)"
            if a.refused
            else f", stopped before page {a.next_page}"
        )
        for a in accounts
    )
    kept = sum(a.kept for a in accounts)
    earlier = f" ({kept} of them kept from an earlier run)" if kept else ""
    verb = "stopped after" if where is None else "exported"
    to = "" if where is None else f" to {where}"
    written = f"{_count(records, 'record')} ({_count(pages, 'page')})"
    return f"{verb} {written}{to} in {elapsed:.1f}s [{per_account}]{earlier}"


def _report(
    args: argparse.Namespace,
    accounts: list[AccountState],
    error: BaseException | None,
    sink: KeptPages | _Stream,
    elapsed: float,
) -> int:
    records = sum(a.records for a in accounts)
    if isinstance(error, BrokenPipeError) and isinstance(sink, _Stream):
        # The reader went away (``| head``): say so once and keep the interpreter from
        # complaining again when it flushes stdout at exit.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
        say("error: the output was closed before the export ended (broken pipe)")
        say(_summary(accounts, elapsed))
        return ExitCode.FAILURE
    where = args.output if isinstance(sink, KeptPages) else (args.output or "stdout")
    if error is None:
        say(_summary(accounts, elapsed, where))
        return ExitCode.OK
    if isinstance(error, KeyboardInterrupt):
        say("interrupted")
    else:
        if args.debug:
            import traceback

            traceback.print_exception(error)
        for state in accounts:
            if state.refused is not None:
                say(f"error: {state.account}: {describe_error(state.refused)}")
        if not any(state.refused is error for state in accounts):
            say(f"error: {describe_error(error)}")
    if records:
        say(_summary(accounts, elapsed))
    again = _resumable(error) and records > 0
    if isinstance(sink, _Stream):
        if again:
            say(
                f"the {_count(records, 'record')} went to {where}; "
                "a rerun starts over (with -o FILE it would resume)"
            )
        return exit_code_for(error)
    sink.drop_if_empty()
    if records == 0:
        say(f"{args.output} was left as it was: no page was kept")
        return exit_code_for(error)
    say(
        f"{args.output} was left as it was; the {_count(records, 'record')} fetched are kept "
        f"beside it in {os.path.basename(sink.folder)}/"
    )
    if all(a.done or a.refused for a in accounts) and any(a.refused for a in accounts):
        refused = " ".join(f"--account {a.account}" for a in accounts if a.refused)
        say(f"run the same command without {refused} to write {args.output} from them")
    elif again:
        say("run the same command again to fetch only the rest (--restart starts over)")
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
