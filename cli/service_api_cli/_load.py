"""``service-api load``: load list endpoints into a database with dlt (DuckDB by default).

The work is :func:`service_api.dlt.load`'s; this module parses the command, builds the
client and the pipeline, and reports. dlt is imported only when the command runs, so
``--help`` and the other commands work without the ``dlt`` extra.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import time
from collections.abc import Callable
from typing import Any

import service_api
from service_api_cli._config import ENV_ACCOUNT_ID, Settings, resolve_accounts
from service_api_cli._connection import make_client, options_from
from service_api_cli._exit_codes import ExitCode, UsageError

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
  One table per endpoint, one row per record as the API sent it plus an "account"
  column; nested lists become child tables (shipments__shipment_legs). Rows are merged
  on the record's id and account, so a nightly re-run updates them instead of adding
  duplicates. DuckDB writes {DEFAULT_PIPELINE}.duckdb in the current directory (set
  DESTINATION__DUCKDB__CREDENTIALS=path/to/file.duckdb to choose another file). Rows go
  through dlt's fastest file format the destination supports (jsonl for DuckDB) unless
  dlt's config sets one (NORMALIZE__LOADER_FILE_FORMAT, [normalize] loader_file_format).
  For memory flat in the records it loads one file at a time (LOAD__WORKERS=1) and DuckDB
  with one thread and a 64 MB buffer, unless dlt's config sets LOAD__WORKERS or
  DESTINATION__DUCKDB__CREDENTIALS__GLOBAL_CONFIG (such as '{{"threads": 4}}').
  dlt's state and load packages are kept in {DEFAULT_PIPELINES_DIR}/ in the current
  directory (--pipelines-dir to choose another).

resume:
  After an API error or Ctrl-C the pages fetched so far are loaded, with where each
  account stopped kept in the pipeline's state: run the same command again to load the
  rest. dlt's anonymous telemetry is off unless RUNTIME__DLTHUB_TELEMETRY is set."""


_RESUME = "run the same command again to resume (rows are merged, never duplicated)"


def add_load_parser(
    commands: Any, formatter: type[argparse.HelpFormatter], positive_int: Callable[[str], int]
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
        "endpoints", nargs="+", metavar="ENDPOINT", help="list endpoint, such as shipments"
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
        "--dataset", default=DEFAULT_DATASET, metavar="NAME", help="dataset (schema) to load into"
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
        "--page-size", type=positive_int, default=50, metavar="N", help="records per page"
    )
    load.add_argument(
        "--concurrency",
        type=positive_int,
        # Pages are fetched while dlt writes the one before: 4 took a fifth off the
        # fetch of 2 x 10,000 shipments (bench case "load").
        default=4,
        metavar="K",
        help="pages fetched ahead in parallel per account (default: 4)",
    )


def _say(message: str) -> None:
    print(f"{PROG}: {message}", file=sys.stderr, flush=True)


def run_load(
    args: argparse.Namespace, settings_from: Callable[[argparse.Namespace], Settings]
) -> int:
    """``service-api load``: run the pipeline, then print what each table received."""
    # Nothing leaves 127.0.0.1 or the service but what the user asked for: dlt's usage
    # reports stay off unless the user turns them on.
    os.environ.setdefault("RUNTIME__DLTHUB_TELEMETRY", "false")
    try:
        import dlt
        from dlt.pipeline.exceptions import PipelineStepFailed

        from service_api.dlt import list_endpoints, load
    except ImportError:
        raise UsageError("the load command needs dlt: pip install 'service-api[dlt]'") from None
    known = list_endpoints()
    unknown = [name for name in args.endpoints if name not in known]
    if unknown:
        raise UsageError(f"unknown endpoint {unknown[0]!r} (known: {', '.join(known) or 'none'})")
    if args.files:
        if len(args.endpoints) != 1:
            raise UsageError("--from loads files of one endpoint: name exactly one ENDPOINT")
        missing = [path for path in args.files if not os.path.isfile(path)]
        if missing:
            raise UsageError(f"--from {missing[0]!r}: no such file")
        accounts = _account_list(args.account) or _account_list(
            [os.environ.get(ENV_ACCOUNT_ID, "")]
        )
        if len(accounts) > 1:
            raise UsageError("--from takes at most one --account, for records without one")
    else:
        accounts = resolve_accounts(args.account, dict(os.environ))
    if args.page_size > 50:
        raise UsageError(f"--page-size is at most 50 (the service's maximum), got {args.page_size}")
    try:
        pipeline = dlt.pipeline(
            pipeline_name=args.pipeline_name,
            destination=args.destination,
            dataset_name=args.dataset,
            pipelines_dir=args.pipelines_dir,
        )
    except Exception as exc:  # dlt's errors for an unknown destination and the like
        raise UsageError(f"cannot set up the pipeline: {_first_line(exc)}") from None
    if args.files:
        return _load_files(pipeline, args, accounts[0] if accounts else None)
    settings = settings_from(args)
    began = time.monotonic()
    with make_client(settings, None, options_from(args)) as client:
        try:
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
                # Ctrl-C while dlt itself was working (its own signal handling included):
                # nothing of the run is lost that a rerun cannot bring back.
                _say(_RESUME)
                raise KeyboardInterrupt from None
            return _dlt_failed(exc)
        except (service_api.ServiceApiError, KeyboardInterrupt) as exc:
            resumable = isinstance(exc, KeyboardInterrupt) or exc.resumable
            _say(_summary(pipeline, args.endpoints, time.monotonic() - began))
            if resumable:
                _say(_RESUME)
            raise
    _say(_summary(pipeline, args.endpoints, time.monotonic() - began))
    return ExitCode.OK


def _load_files(pipeline: Any, args: argparse.Namespace, account: str | None) -> int:
    from dlt.pipeline.exceptions import PipelineStepFailed

    from service_api.dlt import load_files

    began = time.monotonic()
    try:
        load_files(pipeline, args.endpoints[0], args.files, account=account)
    except PipelineStepFailed as exc:
        return _dlt_failed(exc)
    _say(_summary(pipeline, args.endpoints, time.monotonic() - began))
    return ExitCode.OK


def _dlt_failed(exc: Any) -> int:
    """dlt's own failure (destination, disk, schema, a bad file): the cause first, then
    dlt's generic text, which is many lines, cut to its first."""
    cause: BaseException = exc.exception
    while cause.__cause__ is not None or cause.__context__ is not None:
        cause = cause.__cause__ or cause.__context__  # type: ignore[assignment]
    _say(f"error: {_explained(cause)}")
    if cause is not exc.exception:
        _say(f"dlt failed at its {exc.step} step: {_first_line(exc.exception)}")
    if exc.step in ("normalize", "load"):
        _say("dlt keeps what was extracted and finishes it on the next run")
    return ExitCode.FAILURE


def _explained(cause: BaseException) -> str:
    # DuckDB names the file it cannot open; a missing folder is the usual reason.
    opened = re.search(r'Cannot open file "([^"]+)"', str(cause))
    if opened and not os.path.isdir(folder := os.path.dirname(opened.group(1)) or "."):
        return f"the folder {folder!r} does not exist (for the DuckDB file {opened.group(1)!r})"
    return _first_line(cause)


def _account_list(values: Any) -> list[str]:
    return [a.strip() for value in values or () for a in value.split(",") if a.strip()]


def _summary(pipeline: Any, endpoints: list[str], elapsed: float) -> str:
    # Row counts of this run's normalize step: the tables of the endpoints and their child
    # tables (shipments__shipment_legs), as loaded (empty when nothing reached dlt).
    counts: dict[str, int] = {}
    trace = pipeline.last_trace
    normalize = trace.last_normalize_info if trace is not None else None
    if normalize is not None:
        counts = dict(normalize.row_counts)
    parts = []
    for name in endpoints:
        table_name = _table_name(pipeline, name)
        rows = counts.get(table_name, 0)
        children = sum(n for t, n in counts.items() if t.startswith(f"{table_name}__"))
        parts.append(
            f"{name}: {rows} rows" + (f" (+{children} in child tables)" if children else "")
        )
    where = f"{pipeline.destination.destination_name} dataset {pipeline.dataset_name}"
    return f"loaded {', '.join(parts)} into {where} in {elapsed:.1f}s{_steps(trace)}"


def _steps(trace: Any) -> str:
    # Where the time went, per dlt step: extract includes fetching the pages.
    steps = [
        f"{step.step} {(step.finished_at - step.started_at).total_seconds():.1f}s"
        for step in (trace.steps if trace is not None else ())
        if step.step in ("extract", "normalize", "load") and step.finished_at is not None
    ]
    return f" ({', '.join(steps)})" if steps else ""


def _table_name(pipeline: Any, endpoint: str) -> str:
    # dlt's naming convention of the schema: "tracker-data" becomes "tracker_data".
    try:
        return str(pipeline.default_schema.naming.normalize_table_identifier(endpoint))
    except Exception:  # no schema yet: nothing was loaded
        return endpoint


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
