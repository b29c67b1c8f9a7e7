"""The ``service-api`` command: argument parsing, error handling and exit codes.

Errors end the command with one line on stderr and a documented exit code (see
:mod:`service_api_cli._exit_codes`); ``--debug`` adds the traceback and debug logging.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.metadata
import logging
import math
import os
import signal
import sys
import textwrap
import threading
import traceback
import warnings
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

from service_api import PaginationWarning, RetryPolicy
from service_api_cli._connection import (
    ENV_ACCOUNT_ID,
    ENV_RATE_LIMIT,
    ENV_RATE_STORE,
    ENV_TOKEN_STORE,
)
from service_api_cli._exit_codes import (
    EXIT_CODES_HELP,
    LIST_EXIT_CODES,
    LOAD_EXIT_CODES,
    MOCK_EXIT_CODES,
    TOKEN_EXIT_CODES,
    UsageError,
    exit_code_for,
    exit_codes_help,
    say,
    say_error,
)
from service_api_cli._formats import FORMATS
from service_api_cli._spec_check import add_spec_parser

if TYPE_CHECKING:
    from service_api_cli._job import Job
    from service_api_client.api import ListParameter


PROG = "service-api"

_ENVIRONMENT_HELP = f"""\
environment:
  SERVICE_API_BASE_URL        base URL, such as https://api.example.com/public/v3
  SERVICE_API_CLIENT_ID       client ID of the integration
  SERVICE_API_CLIENT_SECRET   client secret (prompted for on a terminal when unset)
  {ENV_ACCOUNT_ID:<28}accounts when no --account is given (comma-separated)
  {ENV_RATE_LIMIT:<28}requests per minute, or adaptive (--rate-limit wins)
  {ENV_RATE_STORE:<28}sqlite:///PATH or redis://HOST:PORT/DB (--rate-store wins)
  {ENV_TOKEN_STORE:<28}file:///PATH or redis://HOST:PORT/DB (--token-store wins)
  HTTP_PROXY, HTTPS_PROXY, ALL_PROXY, NO_PROXY
  {"":<28}proxies, as httpx reads them (--proxy wins)"""

_MAIN_EPILOG = f"""\
examples:
  export SERVICE_API_BASE_URL=http://127.0.0.1:8080/public/v3
  export SERVICE_API_CLIENT_ID=demo-client SERVICE_API_CLIENT_SECRET=demo-secret
  {PROG} list shipments --account acct-1 --output shipments.jsonl
  {PROG} list devices --account acct-1 --account acct-2 -o devices.csv
  {PROG} --proxy http://proxy.internal:3128 --retries 5 list shipments -o all.jsonl
  {PROG} --rate-store sqlite:///var/tmp/quota.db --token-store file:///var/tmp/api.token \\
      list shipments --account acct-1 -o shipments.jsonl   # one budget, one token per host
  {PROG} token
  {PROG} mock --port 8080 --records 500

{_ENVIRONMENT_HELP}

{EXIT_CODES_HELP}"""

_LIST_EXAMPLES = f"""\
examples:
  {PROG} list shipments --account acct-1 > shipments.jsonl
  {PROG} list shipments --account acct-1 --account acct-2 -o all.jsonl
  {PROG} list shipments --account acct-1 -o shipments.csv
  {PROG} list devices --account acct-1 --format table --max-items 20"""

_LIST_EPILOG = f"""\
output:
  --format, else the extension of --output (.csv; .jsonl, .ndjson), else jsonl; a .json
  file needs --format jsonl. jsonl: each record as the API sent it; csv: nested fields
  as dotted columns (shipmentLegs.0.mode); table: top-level fields, for a quick look.
  With several accounts (or --tag-account) each record gets an "account" field, first.

resuming:
  A failed or interrupted run leaves --output FILE as it was and keeps every whole page
  it fetched beside it, in .FILE.partial/; FILE is replaced only once every account is
  complete. Run the same command again: it fetches only what is missing, per account,
  and writes no record twice. --restart drops the kept pages and starts over.
  Standard output cannot resume: JSON Lines goes out a page at a time, CSV and the
  table once the export ends (also after a failure, with what was fetched).

{_ENVIRONMENT_HELP}

{exit_codes_help(LIST_EXIT_CODES)}"""

_TOKEN_EPILOG = f"""\
examples:
  {PROG} token                 # token type and expiry; the token itself stays hidden
  {PROG} token --show-token    # print the token too (it grants access: handle with care)

{exit_codes_help(TOKEN_EXIT_CODES)}"""

_MOCK_EPILOG = f"""\
examples:
  {PROG} mock --port 8080 --records 500
  {PROG} mock --port 0 --fault-rate 0.1 --seed 7

Every option after "mock" goes to the mock's own entry point (service-api-mock).

{exit_codes_help(MOCK_EXIT_CODES)}"""


_LOAD_EXAMPLES = f"""\
examples:
  {PROG} load shipments devices --account acct-1 --account acct-2
  {PROG} load shipments --account acct-1 --dataset raw --pipelines-dir state
  {PROG} load devices --account acct-1 --destination postgres   # credentials as dlt reads them
  {PROG} load devices --account acct-1 --primary-key deviceId   # the key rows merge on
  {PROG} list shipments --account acct-1 -o s.jsonl
  {PROG} load shipments --from s.jsonl --account acct-1   # no request, no credentials"""

_LOAD_EPILOG = f"""\
what it does:
  The credentials and every account are checked first, before the destination is
  touched. One table per endpoint, a row per record as sent plus an "account" column;
  nested lists become child tables. Rows are merged on the record's identifier (as the
  spec gives it, or --primary-key) and account: a rerun updates them, and the summary
  says how many rows are new; a list with neither replaces its table at each load.
  --param and the options of required parameters go to each ENDPOINT named that has
  the parameter and takes the value (one that none has or takes is a usage error); a
  list under a parent loads the records of the parent whose id is given (--shipment-id
  S1), else of every parent, each page of the parent list first: one request (or more)
  per parent, and a column of the parent's id.
  DuckDB writes service_api.duckdb (PIPELINE-NAME.duckdb) in the current folder;
  DESTINATION__DUCKDB__CREDENTIALS chooses another file.

where dlt keeps its state:
  dlt's pipeline state (where to resume) and load packages live beside the DuckDB
  file they belong to, in FILE.dlt/ (service_api.duckdb.dlt/); for any other
  destination in dlt's own place (~/.dlt/pipelines/); --pipelines-dir chooses.

resume:
  After an API error or Ctrl-C the pages fetched so far are loaded, with where each
  account stopped: run the same command again to load the rest. dlt's anonymous
  telemetry is off unless RUNTIME__DLTHUB_TELEMETRY is set.

{exit_codes_help(LOAD_EXIT_CODES)}"""


def _whole_number(least: int, most: float = math.inf) -> Callable[[str], int]:
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"expected a whole number, got {text!r}"
            ) from None
        if value < least:
            raise argparse.ArgumentTypeError(f"must be at least {least}, got {value}")
        if value > most:
            raise argparse.ArgumentTypeError(f"must be at most {most}, got {value}")
        return value

    return parse


_positive_int = _whole_number(1)


def _option(parser: Any, flag: str, metavar: str, text: str, **more: Any) -> None:
    """An option taking a value: its flag, what the value is, its help."""
    parser.add_argument(flag, metavar=metavar, help=text, **more)


def _add_connection(parser: argparse.ArgumentParser) -> None:
    connection = parser.add_argument_group(
        "connection (flags win over the environment)"
    )
    _option(connection, "--base-url", "URL", "API base URL [SERVICE_API_BASE_URL]")
    _option(connection, "--client-id", "ID", "client ID [SERVICE_API_CLIENT_ID]")
    _option(
        connection,
        "--client-secret",
        "SECRET",
        "client secret; prefer SERVICE_API_CLIENT_SECRET or the prompt (shell history)",
    )
    _option(
        connection,
        "--proxy",
        "URL",
        "send every request through this proxy (http, https or socks5 URL) "
        "instead of the environment's HTTP_PROXY / HTTPS_PROXY / ALL_PROXY",
    )
    _option(
        connection,
        "--retries",
        "N",
        f"retries of a failed request (0: none; default: {RetryPolicy().max_retries})",
        type=_whole_number(0),
    )
    sharing = parser.add_argument_group(
        "shared between processes (flags win over the environment)"
    )
    _option(
        sharing,
        "--rate-limit",
        "N|adaptive",
        "at most N requests per minute, or adaptive: learn the quota from 429 "
        f"answers [{ENV_RATE_LIMIT}; default: no limit, 90 with --rate-store]",
    )
    _option(
        sharing,
        "--rate-store",
        "URL",
        "share the request budget with every process using the same store: "
        f"sqlite:///PATH (one host) or redis://HOST:PORT/DB [{ENV_RATE_STORE}]",
    )
    _option(
        sharing,
        "--token-store",
        "URL",
        "share the bearer token with every process using the same store: "
        f"file:///PATH (one host) or redis://HOST:PORT/DB [{ENV_TOKEN_STORE}]",
    )


def _add_paging(command: argparse.ArgumentParser, *, concurrency: int) -> set[str]:
    # Options list and load share; load fetches ahead while dlt writes.
    _option(
        command,
        "--account",
        "ID",
        f"account (repeatable, or comma-separated) [{ENV_ACCOUNT_ID}]",
        action="append",
    )
    _option(
        command,
        "--page-size",
        "N",
        "records per page (default: the endpoint's, as the spec states it)",
        type=_whole_number(1),
        default=None,
    )
    _option(
        command,
        "--concurrency",
        "K",
        "pages fetched ahead in parallel per account (order is kept; "
        "default: %(default)s)",
        type=_positive_int,
        default=concurrency,
    )
    _option(
        command,
        "--param",
        "NAME=VALUE",
        "a parameter of the endpoint (repeatable; each endpoint's are named below), by "
        "its spec name (createdAfter) or snake name (created_after); checked and "
        "converted as the spec declares it (dates in ISO 8601, an array as a,b,c)",
        action="append",
        default=[],
    )
    flags = _add_endpoint_options(command)
    # -q where it is often typed too: after the command.
    command.add_argument(
        "-q",
        "--quiet",
        action="store_true",
        default=argparse.SUPPRESS,
        help=argparse.SUPPRESS,
    )
    return flags


def _add_endpoint_options(command: argparse.ArgumentParser) -> set[str]:
    """Add an option for each parameter a list requires; the options added."""
    # Each parameter a list requires, such as a parent's id in its path or a header,
    # has an option named after it (--shipment-id) that adds "shipmentId=VALUE" to
    # --param. A name taken by another option of the command is left to --param; one
    # parameter that several lists require is one option.
    from service_api_cli._job import option
    from service_api_client.api import LIST_ENDPOINTS

    required: dict[str, tuple[str, list[str]]] = {}
    for endpoint in LIST_ENDPOINTS.values():
        for parameter in endpoint.parameters:
            if parameter.required:
                _, names = required.setdefault(option(parameter), (parameter.name, []))
                names.append(endpoint.name)
    group = command.add_argument_group(
        "parameters the endpoints require (or --param NAME=VALUE)"
    )
    added = set()
    for flag, (name, endpoints) in required.items():
        with contextlib.suppress(argparse.ArgumentError):
            group.add_argument(
                flag,
                dest="param",
                action="append",
                type=f"{name}={{}}".format,
                metavar="VALUE",
                help=f"{name} of {', '.join(endpoints)}",
            )
            added.add(flag)
    return added


def _endpoints_help(flags: set[str]) -> str:
    """The section of the help that names every list endpoint of this spec (the
    generated registry) and its parameters: those it requires by their option (of
    ``flags``, else by ``--param``), then those ``--param`` may give."""
    from service_api_cli._job import option
    from service_api_client.api import LIST_ENDPOINTS

    def required_by(parameter: ListParameter) -> str:
        flag = option(parameter)
        return f"{flag} VALUE" if flag in flags else f"--param {parameter.name}=VALUE"

    lines = ["endpoints of this spec: the options each requires; what --param may give"]
    width = max(map(len, LIST_ENDPOINTS), default=0) + 2
    for name, endpoint in LIST_ENDPOINTS.items():
        required = [required_by(p) for p in endpoint.parameters if p.required]
        optional = [p.name for p in endpoint.parameters if not p.required]
        text = "; ".join(filter(None, [" ".join(required), ", ".join(optional)]))
        lines.append(
            textwrap.fill(
                f"{name:<{width}}{text or '(no parameter)'}",
                width=88,
                initial_indent="  ",
                subsequent_indent=" " * (width + 2),
                break_on_hyphens=False,
            )
        )
    return "\n".join(lines)


def _add_list(commands: Any) -> None:
    listing = commands.add_parser(
        "list",
        help="export every record of a list endpoint",
        description=(
            "Export every record of a list endpoint, page by page, for one or more "
            "accounts."
        ),
    )
    listing.add_argument(
        "endpoint", metavar="ENDPOINT", help="a list endpoint of this spec (see below)"
    )
    # Above the service's largest page, the pager warns and asks for its largest.
    flags = _add_paging(listing, concurrency=1)
    listing.epilog = f"{_LIST_EXAMPLES}\n\n{_endpoints_help(flags)}\n\n{_LIST_EPILOG}"
    _option(
        listing,
        "--max-items",
        "N",
        "stop after N records per account",
        type=_positive_int,
    )
    listing.add_argument(
        "--format",
        choices=FORMATS,
        help="output format [from the extension of --output, else jsonl]",
    )
    listing.add_argument(
        "-o", "--output", metavar="FILE", help="write to FILE instead of stdout"
    )
    listing.add_argument(
        "--restart",
        action="store_true",
        help="drop the pages an earlier run of this export kept beside --output, start over",
    )
    listing.add_argument(
        "--tag-account",
        action="store_true",
        help='add the "account" field even with a single account',
    )


def _add_load(commands: Any) -> None:
    load = commands.add_parser(
        "load",
        help="load list endpoints into a database (dlt; DuckDB by default)",
        description=(
            "Load every record of one or more list endpoints, for one or more accounts,\n"
            "into a database through dlt. Needs the dlt extra: pip install 'service-api[dlt]'."
        ),
    )
    load.add_argument(
        "endpoints",
        nargs="+",
        metavar="ENDPOINT",
        help="list endpoints of this spec (see below)",
    )
    # Pages are fetched while dlt writes the one before: 4 took a fifth off the fetch
    # of 2 x 10,000 shipments (bench case "load").
    flags = _add_paging(load, concurrency=4)
    load.epilog = f"{_LOAD_EXAMPLES}\n\n{_endpoints_help(flags)}\n\n{_LOAD_EPILOG}"
    _option(
        load,
        "--primary-key",
        "FIELD",
        "the field rows are merged on (with the account) in every ENDPOINT named; "
        "needed where the records have no single ...Id field",
    )
    _option(
        load,
        "--destination",
        "NAME",
        "any dlt destination by name (default: %(default)s, a local file)",
        default="duckdb",
    )
    _option(
        load,
        "--dataset",
        "NAME",
        "dataset (schema) to load into (default: %(default)s)",
        default="raw",
    )
    _option(
        load,
        "--pipeline-name",
        "NAME",
        "dlt pipeline name: its state (where to resume) is kept under it "
        "(default: %(default)s)",
        default="service_api",
    )
    _option(
        load,
        "--pipelines-dir",
        "DIR",
        "where dlt keeps the pipeline's state and load packages (default: beside "
        "the DuckDB file, in FILE.dlt/; for another destination, dlt's own place)",
    )
    _option(
        load,
        "--from",
        "FILE",
        "load this JSONL file of `service-api list ENDPOINT` instead of calling the API "
        "(repeatable; one ENDPOINT; no credentials needed)",
        dest="files",
        action="append",
    )


def build_parser() -> argparse.ArgumentParser:
    """The parser of ``service-api`` and its sub-commands.

    Example::

        args = build_parser().parse_args(["list", "shipments", "--account", "acct-1"])
    """
    parser = argparse.ArgumentParser(
        prog=PROG,
        description="Export records from the service's public HTTP API.",
        epilog=_MAIN_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.set_defaults(parser=parser)
    parser.add_argument(
        "--version",
        action="version",
        version=f"%(prog)s {importlib.metadata.version('service-api')}",
    )
    _add_connection(parser)
    parser.add_argument(
        "--debug",
        action="store_true",
        help="show tracebacks and debug logging on errors",
    )
    parser.add_argument(
        "-q",
        "--quiet",
        action="store_true",
        help="no line per retry waited out, no progress",
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    _add_list(commands)
    _add_load(commands)
    token = commands.add_parser(
        "token",
        help="obtain a token and show its type and expiry",
        description="Obtain a bearer token and show its type and lifetime.",
        epilog=_TOKEN_EPILOG,
    )
    token.add_argument(
        "--show-token", action="store_true", help="print the token itself too"
    )
    commands.add_parser(
        "mock",
        help="run the local mock of the service",
        description="Run the local mock (same options as service-api-mock).",
        epilog=_MOCK_EPILOG,
        add_help=False,
        prefix_chars="\0",  # hand every option, --help included, to the mock untouched
    ).add_argument("mock_args", nargs=argparse.REMAINDER)
    add_spec_parser(commands)
    for command in commands.choices.values():
        # Each help says its default, once, where there is one (%(default)s).
        command.formatter_class = argparse.RawDescriptionHelpFormatter
        command.set_defaults(parser=command)
    return parser


class _StderrHandler(logging.StreamHandler):  # type: ignore[type-arg]
    """Writes to whatever ``sys.stderr`` is at the time, so that lines logged while the
    progress bar runs go through rich's redirection and print above the bar."""

    @property
    def stream(self) -> object:
        return sys.stderr

    @stream.setter
    def stream(self, value: object) -> None:
        pass


def _is_retry(record: logging.LogRecord) -> bool:
    # The client's line for a retry it waits out (a WARNING, see service_api's
    # _client.py): "retrying GET /public/v3/shipments after ServerError in ...".
    return record.name == "service_api" and str(record.msg).startswith("retrying")


def _shown(record: logging.LogRecord, *, quiet: bool) -> bool:
    # --quiet hides each retry waited out, whatever its level and SERVICE_API_LOG;
    # else warnings always, and the client's INFO lines only when SERVICE_API_LOG asks
    # for the client's lines as its level says.
    if quiet and _is_retry(record):
        return False
    return (
        record.levelno >= logging.WARNING
        or bool(os.environ.get("SERVICE_API_LOG", "").strip())
        or _is_retry(record)
    )


@contextlib.contextmanager
def _logging_to_stderr(*, debug: bool, quiet: bool) -> Iterator[None]:
    # The client logs retries and token refreshes; neither the secret nor a token is ever
    # in those lines. Undone at the end so that main() called in process (tests, other
    # programs) leaves logging as it was.
    handler = _StderrHandler()
    handler.setFormatter(
        logging.Formatter(
            "%(levelname)s %(name)s: %(message)s" if debug else f"{PROG}: %(message)s"
        )
    )
    if not debug:
        handler.addFilter(lambda record: _shown(record, quiet=quiet))
    loggers = [logging.getLogger(name) for name in ("", "service_api", "httpcore")]
    root, client, transport = loggers
    saved = [logger.level for logger in loggers]
    root.addHandler(handler)
    if debug or root.level in (logging.NOTSET, logging.WARNING):
        root.setLevel(logging.DEBUG if debug else logging.WARNING)
    if not quiet and client.getEffectiveLevel() > logging.INFO:
        client.setLevel(logging.INFO)
    # Request lines are enough; the transport's own debug log is noise here.
    transport.setLevel(logging.INFO)
    # Warnings of the client (such as a page that repeated items) as one plain line each,
    # without the file and line of the library that raised them (--debug adds them).
    saved_show = warnings.showwarning
    warnings.showwarning = _warning_line(located=debug)
    try:
        yield
    finally:
        warnings.showwarning = saved_show
        root.removeHandler(handler)
        for logger, level in zip(loggers, saved, strict=True):
            logger.setLevel(level)


def _warning_line(located: bool) -> Callable[..., None]:
    def show(
        message: Warning | str,
        category: type[Warning],
        filename: str,
        lineno: int,
        *_: Any,
    ) -> None:
        first = (str(message).strip() or category.__name__).splitlines()[0]
        kind = f"{category.__name__}: "
        if issubclass(category, PaginationWarning):
            kind = ""  # the client's own: the message says it all
        where = f" ({filename}:{lineno})" if located else ""
        say(f"warning: {kind}{first}{where}")

    return show


def _run(job: Job) -> int:
    # Imported here so that --help and usage errors stay fast.
    from service_api_cli import _commands, _export, _load, _spec_check
    from service_api_cli._job import ListJob, LoadJob, SpecJob, TokenJob

    if isinstance(job, SpecJob):
        return _spec_check.run_spec_check(job)
    if isinstance(job, ListJob):
        return _export.run_list(job)
    if isinstance(job, LoadJob):
        return _load.run_load(job)
    if isinstance(job, TokenJob):
        return _commands.run_token(job)
    code = _commands.run_mock(job.argv)
    if {"-h", "--help"} & set(job.argv) and code == 0:
        # The mock's own help (its usage, its options) was printed: ours adds how to
        # call it from here, once, after it.
        print(f"\n{_MOCK_EPILOG}")
    return code


def _terminated(signum: int, frame: object) -> None:
    raise KeyboardInterrupt  # SIGTERM stops as Ctrl-C does: what was fetched is kept


@contextlib.contextmanager
def _terminate_as_interrupt() -> Iterator[None]:
    if threading.current_thread() is not threading.main_thread():
        yield  # main() run in a worker thread (a test): signals stay as they are
        return
    previous = signal.signal(signal.SIGTERM, _terminated)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``service-api`` with ``argv`` (default: the process arguments); returns the exit code.

    The command line is parsed, then resolved once into the job the command runs.

    Example::

        >>> main(["--version"])  # doctest: +SKIP
        service-api 0.1.0
    """
    args, unknown = build_parser().parse_known_args(argv)
    # The command's own parser: a usage error shows that command's usage, and so does
    # an argument it does not know (argparse leaves those to the main parser).
    command = args.parser
    if unknown:
        command.error(f"unrecognized arguments: {' '.join(unknown)}")
    # What the error handling needs, taken before the job: resolving may fail.
    debug = args.debug
    with (
        _logging_to_stderr(debug=debug, quiet=args.quiet),
        _terminate_as_interrupt(),
    ):
        try:
            from service_api_cli._job import resolve_job

            return _run(resolve_job(args))
        except (Exception, KeyboardInterrupt) as exc:
            if isinstance(exc, UsageError):
                command.print_usage(sys.stderr)
            elif debug:
                traceback.print_exc()
            say_error(exc)
            return exit_code_for(exc)
