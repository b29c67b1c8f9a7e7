"""The ``service-api`` command: argument parsing, error handling and exit codes.

Errors end the command with one line on stderr and a documented exit code (see
:mod:`service_api_cli._exit_codes`); ``--debug`` adds the traceback and debug logging.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.metadata
import logging
import os
import signal
import sys
import threading
import traceback
import warnings
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from service_api import PaginationWarning
from service_api_cli._connection import (
    ENV_ACCOUNT_ID,
    ENV_RATE_LIMIT,
    ENV_RATE_STORE,
    ENV_TOKEN_STORE,
)
from service_api_cli._exit_codes import (
    EXIT_CODES_HELP,
    ExitCode,
    UsageError,
    describe_error,
    exit_code_for,
    say,
)
from service_api_cli._formats import FORMATS
from service_api_cli._load import add_load_parser, run_load
from service_api_cli._spec_check import add_spec_parser, run_spec_check

__all__ = ["build_parser", "main"]

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

_LIST_EPILOG = f"""\
examples:
  {PROG} list shipments --account acct-1 > shipments.jsonl
  {PROG} list shipments --account acct-1 --account acct-2 -o all.jsonl
  {PROG} list shipments --account acct-1 -o shipments.csv
  {PROG} list devices --account acct-1 --format table --max-items 20

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

{EXIT_CODES_HELP}"""

_TOKEN_EPILOG = f"""\
examples:
  {PROG} token                 # token type and expiry; the token itself stays hidden
  {PROG} token --show-token    # print the token too (it grants access: handle with care)

{EXIT_CODES_HELP}"""

_MOCK_EPILOG = f"""\
examples:
  {PROG} mock --port 8080 --records 500
  {PROG} mock --port 0 --fault-rate 0.1 --seed 7
  {PROG} mock --help           # every option of the mock

Every option after "mock" goes to the mock's own entry point (service-api-mock)."""


class _HelpFormatter(argparse.RawDescriptionHelpFormatter):
    """Keeps the epilogs as written and shows each option's default, where it has one."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        text = action.help
        default = action.default
        if (
            text is not None
            and "%(default)" not in text
            and action.option_strings
            and default not in (None, False, [], argparse.SUPPRESS)
        ):
            text += " (default: %(default)s)"
        return text


def _whole_number(least: int) -> Callable[[str], int]:
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"expected a whole number, got {text!r}"
            ) from None
        if value < least:
            raise argparse.ArgumentTypeError(f"must be at least {least}, got {value}")
        return value

    return parse


_non_negative_int, _positive_int = _whole_number(0), _whole_number(1)


def build_parser() -> argparse.ArgumentParser:
    """The parser of ``service-api`` and its sub-commands.

    Example::

        args = build_parser().parse_args(["list", "shipments", "--account", "acct-1"])
    """
    formatter = _HelpFormatter
    parser = argparse.ArgumentParser(
        prog=PROG,
        description="Export records from the service's public HTTP API.",
        epilog=_MAIN_EPILOG,
        formatter_class=formatter,
    )
    parser.add_argument(
        "--version",
        action="version",
        version=f"%(prog)s {importlib.metadata.version('service-api')}",
    )
    connection = parser.add_argument_group(
        "connection (flags win over the environment)"
    )
    connection.add_argument(
        "--base-url", metavar="URL", help="API base URL [SERVICE_API_BASE_URL]"
    )
    connection.add_argument(
        "--client-id", metavar="ID", help="client ID [SERVICE_API_CLIENT_ID]"
    )
    connection.add_argument(
        "--client-secret",
        metavar="SECRET",
        help="client secret; prefer SERVICE_API_CLIENT_SECRET or the prompt (shell history)",
    )
    connection.add_argument(
        "--proxy",
        metavar="URL",
        help="send every request through this proxy (http, https or socks5 URL) "
        "instead of the environment's HTTP_PROXY / HTTPS_PROXY / ALL_PROXY",
    )
    connection.add_argument(
        "--retries",
        type=_non_negative_int,
        metavar="N",
        help="retries of a failed request (0: none) [the library's default]",
    )
    sharing = parser.add_argument_group(
        "shared between processes (flags win over the environment)"
    )
    sharing.add_argument(
        "--rate-limit",
        metavar="N|adaptive",
        help="at most N requests per minute, or adaptive: learn the quota from 429 "
        f"answers [{ENV_RATE_LIMIT}; default: no limit, 90 with --rate-store]",
    )
    sharing.add_argument(
        "--rate-store",
        metavar="URL",
        help="share the request budget with every process using the same store: "
        f"sqlite:///PATH (one host) or redis://HOST:PORT/DB [{ENV_RATE_STORE}]",
    )
    sharing.add_argument(
        "--token-store",
        metavar="URL",
        help="share the bearer token with every process using the same store: "
        f"file:///PATH (one host) or redis://HOST:PORT/DB [{ENV_TOKEN_STORE}]",
    )
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

    listing = commands.add_parser(
        "list",
        help="export every record of a list endpoint",
        description=(
            "Export every record of a list endpoint, page by page, for one or more accounts. "
            "ENDPOINT is any list operation of the generated client (see the choices in the "
            "error for an unknown name)."
        ),
        epilog=_LIST_EPILOG,
        formatter_class=formatter,
    )
    listing.add_argument(
        "endpoint", metavar="ENDPOINT", help="list endpoint, such as shipments"
    )
    listing.add_argument(
        "--account",
        action="append",
        metavar="ID",
        help=f"account to export (repeatable, or comma-separated) [{ENV_ACCOUNT_ID}]",
    )
    listing.add_argument(
        "--page-size",
        type=_positive_int,
        default=50,
        metavar="N",
        help="records per page",
    )
    listing.add_argument(
        "--max-items",
        type=_positive_int,
        metavar="N",
        help="stop after N records per account",
    )
    listing.add_argument(
        "--concurrency",
        type=_positive_int,
        default=1,
        metavar="K",
        help="pages fetched ahead in parallel (order is kept)",
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
    listing.add_argument(
        "--param",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="extra endpoint parameter (repeatable), checked against the endpoint",
    )

    add_load_parser(commands, formatter, _positive_int)
    add_spec_parser(commands)
    for name in ("list", "load"):  # -q where it is often typed too: after the command
        quiet: dict[str, Any] = {
            "default": argparse.SUPPRESS,
            "help": argparse.SUPPRESS,
        }
        commands.choices[name].add_argument(
            "-q", "--quiet", action="store_true", **quiet
        )

    token = commands.add_parser(
        "token",
        help="obtain a token and show its type and expiry",
        description="Obtain a bearer token and show its type and lifetime.",
        epilog=_TOKEN_EPILOG,
        formatter_class=formatter,
    )
    token.add_argument(
        "--show-token", action="store_true", help="print the token itself too"
    )

    commands.add_parser(
        "mock",
        help="run the local mock of the service",
        description="Run the local mock (same options as service-api-mock).",
        epilog=_MOCK_EPILOG,
        formatter_class=formatter,
        add_help=False,
        prefix_chars="\0",  # hand every option, --help included, to the mock untouched
    ).add_argument("mock_args", nargs=argparse.REMAINDER)
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


def _shown(record: logging.LogRecord, *, retries: bool) -> bool:
    # Warnings always; of the client's INFO lines, the retries it waits out (each says
    # what failed, how long it waits and which retry of how many), unless --quiet.
    # SERVICE_API_LOG asks for the client's lines as its level says: all of them.
    if (
        record.levelno >= logging.WARNING
        or os.environ.get("SERVICE_API_LOG", "").strip()
    ):
        return True
    return retries and str(record.msg).startswith("retrying")


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
        handler.addFilter(lambda record: _shown(record, retries=not quiet))
    root, client = logging.getLogger(), logging.getLogger("service_api")
    transport = logging.getLogger("httpcore")
    saved = (root.level, transport.level, client.level)
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
        root.setLevel(saved[0])
        transport.setLevel(saved[1])
        client.setLevel(saved[2])


def _warning_text(message: Warning | str, category: type[Warning]) -> str:
    text = str(message).strip()
    first = text.splitlines()[0] if text else category.__name__
    if issubclass(category, PaginationWarning):
        return f"warning: {first}"
    return f"warning: {category.__name__}: {first}"


def _warning_line(located: bool) -> Callable[..., None]:
    def show(
        message: Warning | str,
        category: type[Warning],
        filename: str,
        lineno: int,
        *_: Any,
    ) -> None:
        say(
            _warning_text(message, category)
            + (f" ({filename}:{lineno})" if located else "")
        )

    return show


def _run(args: argparse.Namespace) -> int:
    # Imported here so that --help and usage errors stay fast.
    from service_api_cli import _commands

    if args.command == "mock":
        if {"-h", "--help"} & set(args.mock_args):
            # The mock's own help lists its options; ours adds how to call it from here.
            print(f"usage: {PROG} mock [options of the mock]\n\n{_MOCK_EPILOG}\n")
        return _commands.run_mock(list(args.mock_args))
    if args.command == "load":
        return run_load(args)
    if args.command == "token":
        return _commands.run_token(args)
    if args.command == "spec":
        return run_spec_check(args)
    from service_api_cli._export import run_list

    return run_list(args)


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

    Example::

        >>> main(["--version"])  # doctest: +SKIP
        service-api 0.1.0
    """
    parser = build_parser()
    args = parser.parse_args(argv)
    with (
        _logging_to_stderr(debug=args.debug, quiet=args.quiet),
        _terminate_as_interrupt(),
    ):
        return _handle_errors(parser, args)


def _handle_errors(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    try:
        return _run(args)
    except KeyboardInterrupt:
        say("interrupted")
        return ExitCode.INTERRUPTED
    except UsageError as exc:
        parser.print_usage(sys.stderr)
        say(f"error: {exc}")
        return ExitCode.USAGE
    except Exception as exc:
        if args.debug:
            traceback.print_exc()
        say(f"error: {describe_error(exc)}")
        return exit_code_for(exc)
