"""Exit codes of ``service-api`` and the mapping from errors to them.

The codes are part of the command's interface (scripts branch on them), so they are
listed in ``--help`` and in docs/extras/cli.md, and kept in one place here.
"""

from __future__ import annotations

import enum
import sys

import httpx

from service_api import (
    ApiConnectionError,
    AuthenticationError,
    InvalidCredentialsError,
    PermissionDeniedError,
    ServiceApiError,
)

__all__ = [
    "EXIT_CODES_HELP",
    "ExitCode",
    "UsageError",
    "describe_error",
    "exit_code_for",
    "say",
]


class ExitCode(enum.IntEnum):
    """What the process exit status means."""

    OK = 0
    FAILURE = 1
    USAGE = 2
    AUTHENTICATION = 3
    PERMISSION = 4
    API = 5
    INTERRUPTED = 130


EXIT_CODES_HELP = """\
exit codes:
  0    success
  1    unexpected failure (rerun with --debug); output not writable (disk full) or closed
  2    usage: bad option, unknown endpoint or parameter, missing setting
  3    authentication: client ID or secret refused, token refused
  4    permission: the credentials cannot act for that account
  5    API or network error: bad request, rate limit, server error, no answer
  130  interrupted (Ctrl-C or SIGTERM); what was fetched is kept, rerun to resume"""


class UsageError(ValueError):
    """The command line or the environment asks for something impossible.

    Example::

        raise UsageError("unknown endpoint 'parcels' (known: devices, shipments)")
    """


def exit_code_for(exc: BaseException) -> ExitCode:
    """The exit code for an error that ended a command.

    A page that failed on a refused token is an authentication failure, not a generic
    API error: pagination raises the typed error itself.

    Example::

        >>> exit_code_for(UsageError("no such endpoint"))
        <ExitCode.USAGE: 2>
    """
    if isinstance(exc, KeyboardInterrupt):
        return ExitCode.INTERRUPTED
    if isinstance(exc, UsageError):
        return ExitCode.USAGE
    if isinstance(exc, InvalidCredentialsError | AuthenticationError):
        return ExitCode.AUTHENTICATION
    if isinstance(exc, PermissionDeniedError):
        return ExitCode.PERMISSION
    if isinstance(exc, ServiceApiError | ApiConnectionError | httpx.HTTPError):
        return ExitCode.API
    return ExitCode.FAILURE


def describe_error(exc: BaseException) -> str:
    """One line for an error that ended a command; for a failed page, the page and the cause.

    Example::

        >>> describe_error(ValueError("bad value"))
        'bad value'
    """
    if isinstance(exc, ServiceApiError) and exc.page_number is not None:
        return f"page {exc.page_number} failed: {_first_line(exc)}"
    if (
        isinstance(exc, OSError)
        and not isinstance(exc, ServiceApiError)
        and exc.strerror
        and exc.filename is None
    ):
        # A failed write to the output (disk full, file too large) has no file name
        # attached: say what failed rather than "[Errno 28] ...".
        return f"cannot write the output: {exc.strerror}"
    return _first_line(exc)


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def say(message: str) -> None:
    """One line of the command on stderr, after its name, printed at once.

    Example::

        say("error: no account")   # service-api: error: no account
    """
    print(f"service-api: {message}", file=sys.stderr, flush=True)
