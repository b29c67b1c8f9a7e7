"""``service-api load``: load list endpoints into a database with dlt (DuckDB by default).

The work is :func:`service_api.dlt.load`'s; this module parses the command, builds the
client and the pipeline, and reports. dlt is imported only when the command runs, so
``--help`` and the other commands work without the ``dlt`` extra.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import sys
import time
from collections.abc import Callable, Iterator
from typing import Any

import service_api
from service_api_cli._connection import ENV_ACCOUNT_ID, make_client, resolve_accounts
from service_api_cli._exit_codes import (
    ExitCode,
    UsageError,
    describe_error,
    exit_code_for,
    say,
)

__all__ = [
    "DEFAULT_DATASET",
    "DEFAULT_PIPELINE",
    "DEFAULT_PIPELINES_DIR",
    "add_load_parser",
    "run_load",
]

PROG = "service-api"
DEFAULT_PIPELINE = "service_api"
DEFAULT_DATASET = "raw"
DEFAULT_PIPELINES_DIR = ".dlt-pipelines"

_LOAD_EPILOG = f"""\
examples:
  {PROG} load shipments devices --account acct-1 --account acct-2
  {PROG} load shipments --account acct-1 --dataset raw --pipelines-dir .dlt-pipelines
  {PROG} load devices --account acct-1 --destination postgres   # credentials as dlt reads them
  {PROG} list shipments --account acct-1 -o s.jsonl
  {PROG} load shipments --from s.jsonl --account acct-1   # no request, no credentials

what it does:
  The credentials and every account are checked first, before the destination is
  touched. One table per endpoint, a row per record as sent plus an "account" column;
  nested lists become child tables. Rows are merged on the record's id and account: a
  rerun updates them, and the summary says how many rows are new. DuckDB writes
  {DEFAULT_PIPELINE}.duckdb in the current directory (DESTINATION__DUCKDB__CREDENTIALS
  chooses another file); dlt's state goes to {DEFAULT_PIPELINES_DIR}/ in the current
  directory. The dlt page of the docs gives the settings (file format, memory).

resume:
  After an API error or Ctrl-C the pages fetched so far are loaded, with where each
  account stopped: run the same command again to load the rest. dlt's anonymous
  telemetry is off unless RUNTIME__DLTHUB_TELEMETRY is set."""


_RESUME = "run the same command again to resume (rows are merged, never duplicated)"


def add_load_parser(
    commands: Any,
    formatter: type[argparse.HelpFormatter],
    positive_int: Callable[[str], int],
) -> None:
    """Add the ``load`` sub-command to the sub-parsers of ``service-api``.

    Example::

        add_load_parser(parser.add_subparsers(), argparse.RawDescriptionHelpFormatter, int)
    """
    load = commands.add_parser(
        "load",
        help="load list endpoints into a database (dlt; DuckDB by default)",
        description=(
            "Load every record of one or more list endpoints, for one or more accounts,\n"
            "into a database through dlt. Needs the dlt extra: pip install 'service-api[dlt]'."
        ),
        epilog=_LOAD_EPILOG,
        formatter_class=formatter,
    )
    load.add_argument(
        "endpoints",
        nargs="+",
        metavar="ENDPOINT",
        help="list endpoint, such as shipments",
    )
    load.add_argument(
        "--account",
        action="append",
        metavar="ID",
        help=f"account to load (repeatable) [{ENV_ACCOUNT_ID}]",
    )
    load.add_argument(
        "--destination",
        default="duckdb",
        metavar="NAME",
        help="any dlt destination by name (default: duckdb, a local file)",
    )
    load.add_argument(
        "--dataset",
        default=DEFAULT_DATASET,
        metavar="NAME",
        help="dataset (schema) to load into",
    )
    load.add_argument(
        "--pipeline-name",
        default=DEFAULT_PIPELINE,
        metavar="NAME",
        help="dlt pipeline name: its state (where to resume) is kept under it",
    )
    load.add_argument(
        "--pipelines-dir",
        metavar="DIR",
        default=DEFAULT_PIPELINES_DIR,
        help="where dlt keeps pipeline state and load packages, never a system folder "
        "(relative to the current directory)",
    )
    load.add_argument(
        "--from",
        dest="files",
        action="append",
        metavar="FILE",
        help="load this JSONL file of `service-api list ENDPOINT` instead of calling the API "
        "(repeatable; one ENDPOINT; no credentials needed)",
    )
    load.add_argument(
        "--page-size",
        type=positive_int,
        default=50,
        metavar="N",
        help="records per page",
    )
    load.add_argument(
        "--concurrency",
        type=positive_int,
        # Pages are fetched while dlt writes the one before: 4 took a fifth off the
        # fetch of 2 x 10,000 shipments (bench case "load").
        default=4,
        metavar="K",
        help="pages fetched ahead in parallel per account",
    )


def _progress(args: argparse.Namespace) -> Any:
    """dlt's progress, drawn by rich on a terminal: rows per table while extracting
    (fetching the pages), files while normalizing, jobs while loading."""
    from dlt.common.runtime.collector import NullCollector
    from dlt.common.runtime.collector_base import Collector
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
    )

    if not (sys.stderr.isatty() and not args.quiet):
        return NullCollector()

    class RichCollector(Collector):
        def _start(self, step: str) -> None:
            self.bars = Progress(
                TextColumn("[bold]{task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                TimeElapsedColumn(),
                console=Console(stderr=True),
            )
            self.tasks: dict[str, Any] = {}
            self.totals: dict[str, int] = {}
            self.bars.start()

        def update(
            self, name: str, inc: int = 1, total: Any = None, *args: Any, **kw: Any
        ) -> None:
            inc_total = (args[:1] or [kw.get("inc_total")])[0]
            if kw.get("label") or name.startswith(
                "_dlt"
            ):  # dlt's own tables, sub-counters
                return
            if name not in self.tasks:  # the step is "Extract <source> in <load id>"
                self.tasks[name] = self.bars.add_task(f"{self.step.split()[0]} {name}")
            self.totals[name] = total or self.totals.get(name, 0) + (inc_total or 0)
            shown = self.totals[name] or None
            self.bars.update(self.tasks[name], advance=inc, total=shown)

        def _stop(self) -> None:
            self.bars.stop()

    return RichCollector()


@contextlib.contextmanager
def _status(args: argparse.Namespace, text: str) -> Iterator[None]:
    # Importing dlt and setting the pipeline up take seconds: never a silent screen.
    if not (sys.stderr.isatty() and not args.quiet):
        yield
        return
    from rich.console import Console

    with Console(stderr=True).status(text):
        yield


def _usable_accounts(
    args: argparse.Namespace, client: service_api.Client
) -> tuple[list[str], BaseException | None]:
    """The accounts the credentials may act for, asked of the service before the
    destination is touched: a refused secret or a wrong address ends here, with nothing
    created. An account refused (403) is said and left out (and its error returned); if
    none is left, that error is raised."""
    from service_api_client.api import LIST_ENDPOINTS

    endpoint = LIST_ENDPOINTS[args.endpoints[0]].module
    usable, refused = [], None
    for account in resolve_accounts(args.account):
        try:
            with client.with_account(account) as child:
                list(service_api.paginate(endpoint, child, page_size=1, max_pages=1))
        except service_api.PermissionDeniedError as exc:
            say(f"error: {account}: {describe_error(exc)}; loading the others")
            refused = exc
            continue
        usable.append(account)
    if not usable and refused is not None:
        raise refused
    return usable, refused


def run_load(args: argparse.Namespace) -> int:
    """``service-api load``: check the credentials and accounts, run the pipeline, then
    say what each table received (new rows and rows already there).

    Example::

        run_load(build_parser().parse_args(["load", "shipments", "--account", "acct-1"]))
    """
    # Nothing leaves 127.0.0.1 or the service but what the user asked for: dlt's usage
    # reports stay off unless the user turns them on.
    os.environ.setdefault("RUNTIME__DLTHUB_TELEMETRY", "false")
    if args.page_size > 50:
        raise UsageError(
            f"--page-size is at most 50 (the service's maximum), got {args.page_size}"
        )
    with _status(args, "starting dlt"):
        try:
            import dlt
            from dlt.pipeline.exceptions import PipelineStepFailed

            from service_api.dlt import list_endpoints, load
        except ImportError:
            raise UsageError(
                "the load command needs dlt: pip install 'service-api[dlt]'"
            ) from None
    known = list_endpoints()
    unknown = [name for name in args.endpoints if name not in known]
    if unknown:
        raise UsageError(
            f"unknown endpoint {unknown[0]!r} (known: {', '.join(known) or 'none'})"
        )
    client, refused = None, None
    if args.files:
        if len(args.endpoints) != 1:
            raise UsageError(
                "--from loads files of one endpoint: name exactly one ENDPOINT"
            )
        missing = [path for path in args.files if not os.path.isfile(path)]
        if missing:
            raise UsageError(f"--from {missing[0]!r}: no such file")
        accounts = (
            resolve_accounts(args.account)
            if args.account or os.environ.get(ENV_ACCOUNT_ID, "").strip()
            else []
        )
        if len(accounts) > 1:
            raise UsageError(
                "--from takes at most one --account, for records without one"
            )
    else:
        accounts = resolve_accounts(args.account)
        client = make_client(args)
    with contextlib.ExitStack() as stack:
        if client is not None:
            stack.enter_context(client)
            with _status(args, "checking the credentials and accounts"):
                accounts, refused = _usable_accounts(args, client)
        try:
            pipeline = dlt.pipeline(
                pipeline_name=args.pipeline_name,
                destination=args.destination,
                dataset_name=args.dataset,
                pipelines_dir=args.pipelines_dir,
                progress=_progress(args),
            )
        except Exception as exc:  # dlt's errors for an unknown destination and the like
            raise UsageError(
                f"cannot set up the pipeline: {describe_error(exc)}"
            ) from None
        before = _rows(pipeline, args.endpoints)
        began = time.monotonic()
        try:
            if client is None:
                from service_api.dlt import load_files

                load_files(
                    pipeline,
                    args.endpoints[0],
                    args.files,
                    account=accounts[0] if accounts else None,
                )
            else:
                load(
                    pipeline,
                    client,
                    accounts,
                    endpoints=args.endpoints,
                    page_size=args.page_size,
                    concurrency=args.concurrency,
                )
        except PipelineStepFailed as exc:
            if isinstance(exc.exception, KeyboardInterrupt):
                # Ctrl-C while dlt itself was working (its own signal handling included).
                return _stopped(args, pipeline, before, KeyboardInterrupt(), began)
            return _dlt_failed(exc)
        except (service_api.ServiceApiError, KeyboardInterrupt) as exc:
            return _stopped(args, pipeline, before, exc, began)
    say(_summary(pipeline, args.endpoints, before, time.monotonic() - began))
    return ExitCode.OK if refused is None else exit_code_for(refused)


def _stopped(
    args: argparse.Namespace,
    pipeline: Any,
    before: Any,
    error: BaseException,
    began: float,
) -> int:
    """The error first, then what was loaded before it, then whether a rerun resumes."""
    resumable = isinstance(error, KeyboardInterrupt) or getattr(
        error, "resumable", False
    )
    say(
        "interrupted"
        if isinstance(error, KeyboardInterrupt)
        else f"error: {describe_error(error)}"
    )
    say(_summary(pipeline, args.endpoints, before, time.monotonic() - began))
    if resumable:
        say(_RESUME)
    return exit_code_for(error)


def _dlt_failed(exc: Any) -> int:
    """dlt's own failure (destination, disk, schema, a bad file): the cause first, then
    dlt's generic text, which is many lines, cut to its first."""
    cause: BaseException = exc.exception
    while cause.__cause__ is not None or cause.__context__ is not None:
        cause = cause.__cause__ or cause.__context__  # type: ignore[assignment]
    say(f"error: {_explained(cause)}")
    if cause is not exc.exception:
        say(f"dlt failed at its {exc.step} step: {describe_error(exc.exception)}")
    if exc.step in ("normalize", "load"):
        say("dlt keeps what was extracted and finishes it on the next run")
    return ExitCode.FAILURE


def _explained(cause: BaseException) -> str:
    # DuckDB names the file it cannot open; a missing folder is the usual reason.
    opened = re.search(r'Cannot open file "([^"]+)"', str(cause))
    if opened and not os.path.isdir(folder := os.path.dirname(opened.group(1)) or "."):
        return f"the folder {folder!r} does not exist (for the DuckDB file {opened.group(1)!r})"
    return describe_error(cause)


def _rows(pipeline: Any, endpoints: list[str]) -> dict[str, int | None]:
    """Rows in each endpoint's table now (0 before the first load; ``None`` where the
    destination cannot be asked, such as files)."""
    counts: dict[str, int | None] = {}
    for name in endpoints:
        try:
            if _table_name(pipeline, name) not in pipeline.default_schema.tables:
                counts[name] = 0
                continue
            with pipeline.sql_client() as sql:
                table = sql.make_qualified_table_name(_table_name(pipeline, name))
                # The table name is dlt's own, quoted by its SQL client.
                query = f"select count(*) from {table}"  # noqa: S608
                counts[name] = int(sql.execute_sql(query)[0][0])
        except Exception:  # no schema yet (first run), or no SQL at the destination
            counts[name] = 0 if not pipeline.default_schema_name else None
    return counts


def _summary(
    pipeline: Any, endpoints: list[str], before: dict[str, int | None], elapsed: float
) -> str:
    # Row counts of this run's normalize step: the tables of the endpoints and their child
    # tables (shipments__shipment_legs), as loaded (empty when nothing reached dlt); the
    # new rows are those the table did not have before.
    counts: dict[str, int] = {}
    trace = pipeline.last_trace
    normalize = trace.last_normalize_info if trace is not None else None
    if normalize is not None:
        counts = dict(normalize.row_counts)
    after = _rows(pipeline, endpoints)
    parts = []
    for name in endpoints:
        table_name = _table_name(pipeline, name)
        rows = counts.get(table_name, 0)
        children = sum(n for t, n in counts.items() if t.startswith(f"{table_name}__"))
        first, then = before.get(name), after.get(name)
        new = (
            ""
            if first is None or then is None
            else f", {then - first} new, {rows - (then - first)} already there"
        )
        parts.append(
            f"{name}: {rows} rows{new}"
            + (f" (+{children} in child tables)" if children else "")
        )
    where = f"{pipeline.destination.destination_name} dataset {pipeline.dataset_name}"
    nothing = all(
        before.get(n) is not None and before.get(n) == after.get(n) for n in endpoints
    )
    note = "; nothing new was added" if nothing and counts else ""
    return f"loaded {', '.join(parts)} into {where} in {elapsed:.1f}s{note}"


def _table_name(pipeline: Any, endpoint: str) -> str:
    # dlt's naming convention of the schema: "tracker-data" becomes "tracker_data".
    try:
        return str(pipeline.default_schema.naming.normalize_table_identifier(endpoint))
    except Exception:  # no schema yet: nothing was loaded
        return endpoint
