"""``service-api load``: load list endpoints into a database with dlt (DuckDB by default).

The work is :func:`service_api.dlt.load`'s; this module checks the credentials and the
accounts, builds the pipeline, runs it and reports. dlt is imported only when the
command runs, so ``--help`` and the other commands work without the ``dlt`` extra.

dlt's pipeline state (where to resume) and load packages belong to the destination:
beside the DuckDB file (``service_api.duckdb.dlt/`` beside ``service_api.duckdb``), or
for another destination in dlt's own place (``~/.dlt/pipelines/``), unless
``--pipelines-dir`` names a folder.
"""

import contextlib
import os
import sys
import time
from collections import Counter
from collections.abc import Iterable, Iterator
from typing import Any

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
from service_api_cli._job import LoadJob, option
from service_api_client.api import LIST_ENDPOINTS, ListEndpoint


def _progress(quiet: bool) -> Any:
    """dlt's progress on a terminal: one line with the step and what it has counted so
    far (rows per table while extracting, files while normalizing, jobs while loading).
    """
    from dlt.common.runtime.collector import NullCollector
    from dlt.common.runtime.collector_base import Collector
    from rich.console import Console

    if quiet or not sys.stderr.isatty():
        return NullCollector()

    class StatusCollector(Collector):
        def _start(self, step: str) -> None:
            self.counts: Counter[str] = Counter()
            self.status = Console(stderr=True).status(step)
            self.status.start()

        def update(self, name: str, inc: int = 1, *_: Any, **more: Any) -> None:
            if more.get("label") or name.startswith("_dlt"):
                return  # sub-counters (failed jobs), dlt's own tables
            self.counts[name] += inc
            counted = ", ".join(f"{n} {count}" for n, count in self.counts.items())
            # The step is "Extract <source> in <load id>".
            self.status.update(f"{self.step.split()[0]}: {counted}")

        def _stop(self) -> None:
            self.status.stop()

    return StatusCollector()


@contextlib.contextmanager
def _status(job: LoadJob, text: str) -> Iterator[None]:
    # Importing dlt and setting the pipeline up take seconds: never a silent screen.
    if job.quiet or not sys.stderr.isatty():
        yield
        return
    from rich.console import Console

    with Console(stderr=True).status(text):
        yield


def probe_endpoint(job: LoadJob) -> tuple[ListEndpoint, dict[str, Any]]:
    """The list the accounts are checked on, with its arguments: the first ENDPOINT of
    the job that has every parameter it requires, else the first list of the registry
    that requires none (a list of every parent's records lacks the parent's id). A
    UsageError when there is none: nothing can be asked without more parameters.

    Example::

        endpoint, params = probe_endpoint(job)   # LIST_ENDPOINTS["shipments"], {}
    """
    for endpoint in job.endpoints:
        params = dict(job.params.get(endpoint.name, {}))
        if all(p.python_name in params for p in endpoint.parameters if p.required):
            return endpoint, params
    for endpoint in LIST_ENDPOINTS.values():
        if not any(p.required for p in endpoint.parameters):
            return endpoint, {}
    # Here each ENDPOINT lacks a parent's id (load allows it: every parent's records).
    wanted = [
        f"{option(parameter)} VALUE for {endpoint.name}"
        for endpoint in job.endpoints
        for parameter in endpoint.parameters
        if parameter.required
        and parameter.python_name not in job.params.get(endpoint.name, {})
    ]
    raise UsageError(
        "cannot check the accounts: every list of the spec needs a parameter, "
        f"such as {wanted[0] if wanted else '--param NAME=VALUE'}"
    )


def _usable_accounts(job: LoadJob, client: service_api.Client) -> list[str]:
    """The accounts the credentials may act for, asked of the service before the
    destination is touched: a refused secret or a wrong address ends here, with nothing
    created. Each account refused (403) is said once, here."""
    endpoint, params = probe_endpoint(job)
    usable, refused = [], []
    for account in job.accounts:
        try:
            with client.with_account(account) as child:
                list(
                    service_api.paginate(
                        endpoint.module, child, page_size=1, max_pages=1, **params
                    )
                )
            usable.append(account)
        except service_api.PermissionDeniedError as exc:
            refused.append((account, exc))
    # "The others" only when there are others to load.
    going_on = "; loading the others" if usable else ""
    for account, error in refused:
        say(f"error: {account}: {describe_error(error)}{going_on}")
    return usable


def state_folder(job: LoadJob) -> tuple[Any, str | None]:
    """The destination to load into and the folder of dlt's pipeline state:
    ``--pipelines-dir``; else, for DuckDB, ``FILE.dlt`` beside its database ``FILE``
    (the two go together: the state says where a load resumes in that database); else
    ``None``, dlt's own place (``~/.dlt/pipelines``).

    The DuckDB file is the one dlt's settings name (``DESTINATION__DUCKDB__CREDENTIALS``,
    ``config.toml``), else ``PIPELINE-NAME.duckdb``, in the current folder when relative.

    Example::

        destination, folder = state_folder(job)   # ..., "/work/service_api.duckdb.dlt"
    """
    import dlt
    from dlt.common.configuration import resolve_configuration

    database: Any = None
    if job.destination == "duckdb":
        # A setting dlt itself will refuse (it says why at set-up): no file here then.
        with contextlib.suppress(Exception):
            spec = dlt.destinations.duckdb().spec()
            sections = ("destination", "duckdb")
            config = resolve_configuration(spec, sections=sections, accept_partial=True)
            database = getattr(config.credentials, "database", None)
            database = database or f"{job.pipeline_name}.duckdb"
    if not isinstance(database, str) or database.startswith(":"):
        return job.destination, job.pipelines_dir  # :memory:, :pipeline:, no file
    database = os.path.abspath(database)
    folder = os.path.dirname(database)
    if not os.path.isdir(folder):
        raise UsageError(
            f"the folder {folder!r} does not exist (for the DuckDB file {database!r})"
        )
    destination = dlt.destinations.duckdb(database)
    return destination, job.pipelines_dir or f"{database}.dlt"


def _pipeline(job: LoadJob, destination: Any, folder: str | None) -> Any:
    import dlt

    try:
        return dlt.pipeline(
            pipeline_name=job.pipeline_name,
            destination=destination,
            dataset_name=job.dataset,
            # None: dlt's own place, as when left out (dlt types it str only).
            pipelines_dir=folder,  # type: ignore[arg-type]
            progress=_progress(job.quiet),
        )
    except Exception as exc:  # dlt's errors for an unknown destination and the like
        raise UsageError(f"cannot set up the pipeline: {describe_error(exc)}") from None


def run_load(job: LoadJob) -> int:
    """``service-api load``: check the credentials and accounts, run the pipeline, then
    say what each table received (new rows and rows already there).

    Example::

        run_load(resolve_job(build_parser().parse_args(["load", "shipments"])))
    """
    # Nothing leaves 127.0.0.1 or the service but what the user asked for: dlt's usage
    # reports stay off unless the user turns them on.
    os.environ.setdefault("RUNTIME__DLTHUB_TELEMETRY", "false")
    with _status(job, "starting dlt"):
        try:
            from dlt.pipeline.exceptions import PipelineStepFailed

            from service_api.dlt import load, load_files
        except ImportError:
            raise UsageError(
                "the load command needs dlt: pip install 'service-api[dlt]'"
            ) from None
    destination, folder = state_folder(job)  # checked before any request
    with contextlib.ExitStack() as stack:
        client = None
        accounts = list(job.accounts)
        if job.connection is not None:
            client = stack.enter_context(make_client(job.connection))
            with _status(job, "checking the credentials and accounts"):
                accounts = _usable_accounts(job, client)
            if not accounts:
                return ExitCode.PERMISSION
        pipeline = _pipeline(job, destination, folder)
        # Rows in each endpoint's table, by name: the summary counts the new ones.
        before = _rows(pipeline, [endpoint.name for endpoint in job.endpoints])
        began = time.monotonic()
        try:
            if client is None:
                account = accounts[0] if accounts else None
                load_files(
                    pipeline,
                    job.endpoints[0].name,
                    job.files,
                    account=account,
                    primary_keys=job.primary_keys,
                )
            else:
                load(
                    pipeline,
                    client,
                    accounts,
                    endpoints=list(before),
                    params=job.params,
                    primary_keys=job.primary_keys,
                    page_size=job.page_size,
                    concurrency=job.concurrency,
                )
        except PipelineStepFailed as exc:
            if not isinstance(exc.exception, KeyboardInterrupt):
                return _dlt_failed(exc)
            # Ctrl-C while dlt itself was working (its own signal handling included).
            return _stopped(pipeline, before, KeyboardInterrupt(), began=began)
        except (service_api.ServiceApiError, KeyboardInterrupt) as exc:
            return _stopped(pipeline, before, exc, began=began)
    say(_summary(pipeline, before, time.monotonic() - began))
    say_drift(client)  # the last line: where the answers differed from the spec
    refused = len(accounts) < len(job.accounts)
    return ExitCode.PERMISSION if refused else ExitCode.OK


def _stopped(
    pipeline: Any, before: dict[str, int | None], error: BaseException, *, began: float
) -> int:
    """The error first, then what was loaded before it, then whether a rerun resumes."""
    say_error(error)
    say(_summary(pipeline, before, time.monotonic() - began))
    if isinstance(error, KeyboardInterrupt) or getattr(error, "resumable", False):
        say("run the same command again to resume (rows are merged, never duplicated)")
    return exit_code_for(error)


def _dlt_failed(exc: Any) -> int:
    """dlt's own failure (destination, disk, schema, a bad file): the cause first, then
    dlt's generic text, which is many lines, cut to its first."""
    cause: BaseException = exc.exception
    while cause.__cause__ is not None or cause.__context__ is not None:
        cause = cause.__cause__ or cause.__context__  # type: ignore[assignment]
    say(f"error: {describe_error(cause)}")
    if cause is not exc.exception:
        say(f"dlt failed at its {exc.step} step: {describe_error(exc.exception)}")
    if exc.step in ("normalize", "load"):
        say("dlt keeps what was extracted and finishes it on the next run")
    return ExitCode.FAILURE


def _rows(pipeline: Any, endpoints: Iterable[str]) -> dict[str, int | None]:
    """Rows in each endpoint's table now (0 before the first load; ``None`` where the
    destination cannot be asked, such as files)."""
    counts: dict[str, int | None] = {}
    for name in endpoints:
        try:
            table = _table_name(pipeline, name)
            if table not in pipeline.default_schema.tables:
                counts[name] = 0
                continue
            with pipeline.sql_client() as sql:
                table = sql.make_qualified_table_name(table)
                # The table name is dlt's own, quoted by its SQL client.
                query = f"select count(*) from {table}"  # noqa: S608
                counts[name] = int(sql.execute_sql(query)[0][0])
        except Exception:  # no schema yet (first run), or no SQL at the destination
            counts[name] = 0 if not pipeline.default_schema_name else None
    return counts


def _summary(pipeline: Any, before: dict[str, int | None], elapsed: float) -> str:
    # Row counts of this run's normalize step: the tables of the endpoints (the keys of
    # before) and their child tables (shipments__shipment_legs), as loaded (empty when
    # nothing reached dlt); the new rows are those the table did not have before.
    trace = pipeline.last_trace
    normalize = None if trace is None else trace.last_normalize_info
    counts = {} if normalize is None else dict(normalize.row_counts)
    after = _rows(pipeline, before)
    parts = []
    for name in before:
        table = _table_name(pipeline, name)
        rows = counts.get(table, 0)
        part = f"{name}: {rows} rows"
        first = before[name]
        then = after[name]
        if _replaced(pipeline, table):  # a list without an identifier
            part += ", the table replaced"
        elif first is not None and then is not None:
            part += f", {then - first} new, {rows - (then - first)} already there"
        children = sum(n for t, n in counts.items() if t.startswith(f"{table}__"))
        if children:
            part += f" (+{children} in child tables)"
        parts.append(part)
    where = f"{pipeline.destination.destination_name} dataset {pipeline.dataset_name}"
    note = ""
    if counts and before == after and None not in after.values():
        note = "; nothing new was added"
    return f"loaded {', '.join(parts)} into {where} in {elapsed:.1f}s{note}"


def _replaced(pipeline: Any, table: str) -> bool:
    """Whether each load replaces ``table`` (its records have no identifier)."""
    try:
        found = pipeline.default_schema.tables[table]
    except Exception:  # no schema or no such table yet: nothing was loaded
        return False
    return bool(found.get("write_disposition") == "replace")


def _table_name(pipeline: Any, endpoint: str) -> str:
    # dlt's naming convention of the schema: "tracker-data" becomes "tracker_data".
    try:
        return str(pipeline.default_schema.naming.normalize_table_identifier(endpoint))
    except Exception:  # no schema yet: nothing was loaded
        return endpoint
