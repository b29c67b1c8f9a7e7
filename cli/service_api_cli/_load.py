"""``service-api load``: load list endpoints into a database with dlt (DuckDB by default).

The work is :func:`service_api.dlt.load`'s; this module parses the command, builds the
client and the pipeline, and reports. dlt is imported only when the command runs, so
``--help`` and the other commands work without the ``dlt`` extra.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable
from typing import Any

import service_api
from service_api_cli._config import ENV_ACCOUNT_ID, Settings, resolve_accounts
from service_api_cli._connection import make_client, options_from
from service_api_cli._exit_codes import ExitCode, UsageError

__all__ = ["DEFAULT_DATASET", "DEFAULT_PIPELINE", "add_load_parser", "run_load"]

PROG = "service-api"
DEFAULT_PIPELINE = "service_api"
DEFAULT_DATASET = "raw"

_LOAD_EPILOG = f"""\
examples:
  {PROG} load shipments devices --account acct-1 --account acct-2
  {PROG} load shipments --account acct-1 --dataset raw --pipelines-dir .dlt-pipelines
  {PROG} load devices --account acct-1 --destination postgres   # credentials as dlt reads them

what it does:
  One table per endpoint, one row per record as the API sent it plus an "account"
  column; nested lists become child tables (shipments__shipment_legs). Rows are merged
  on the record's id and account, so a nightly re-run updates them instead of adding
  duplicates. DuckDB writes {DEFAULT_PIPELINE}.duckdb in the current directory (set
  DESTINATION__DUCKDB__CREDENTIALS=path/to/file.duckdb to choose another file).

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
        help="where dlt keeps pipeline state and load packages (default: dlt's, ~/.dlt)",
    )
    load.add_argument(
        "--page-size", type=positive_int, default=50, metavar="N", help="records per page"
    )
    load.add_argument(
        "--concurrency",
        type=positive_int,
        default=1,
        metavar="K",
        help="pages fetched ahead in parallel per account",
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
    accounts = resolve_accounts(args.account, dict(os.environ))
    if args.page_size > 50:
        raise UsageError(f"--page-size is at most 50 (the service's maximum), got {args.page_size}")
    settings = settings_from(args)
    options: dict[str, Any] = {}
    if args.pipelines_dir:
        options["pipelines_dir"] = args.pipelines_dir
    try:
        pipeline = dlt.pipeline(
            pipeline_name=args.pipeline_name,
            destination=args.destination,
            dataset_name=args.dataset,
            **options,
        )
    except Exception as exc:  # dlt's errors for an unknown destination and the like
        raise UsageError(f"cannot set up the pipeline: {_first_line(exc)}") from None
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
            # dlt's own failure (destination, disk, schema): its message is many lines.
            _say(f"error: dlt failed at its {exc.step} step: {_first_line(exc.exception)}")
            if exc.step in ("normalize", "load"):
                _say("dlt keeps what was fetched and finishes it on the next run")
            return ExitCode.FAILURE
        except (service_api.ServiceApiError, KeyboardInterrupt) as exc:
            resumable = isinstance(exc, KeyboardInterrupt) or exc.resumable
            _say(_summary(pipeline, args.endpoints, time.monotonic() - began))
            if resumable:
                _say(_RESUME)
            raise
    _say(_summary(pipeline, args.endpoints, time.monotonic() - began))
    return ExitCode.OK


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
