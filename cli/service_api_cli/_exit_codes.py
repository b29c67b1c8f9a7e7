"""Exit codes of ``service-api`` and the mapping from errors to them.

The codes are part of the command's interface (scripts branch on them), so they are
listed in ``--help`` and in docs/extras/cli.md, and kept in one place here.
"""

import enum
import re
import sys
from collections.abc import Mapping

import httpx

from service_api import (
    AuthenticationError,
    NotFoundError,
    PermissionDeniedError,
    ServiceApiError,
)


class ExitCode(enum.IntEnum):
    """What the process exit status means."""

    OK = 0
    FAILURE = 1
    USAGE = 2
    AUTHENTICATION = 3
    PERMISSION = 4
    API = 5
    INTERRUPTED = 130


def exit_codes_help(meanings: Mapping[ExitCode, str]) -> str:
    """The ``exit codes:`` section of a command's help: what each code means for it.

    Example::

        >>> print(exit_codes_help({ExitCode.OK: "success"}))
        exit codes:
          0    success
    """
    lines = [f"  {int(code):<5}{text}" for code, text in meanings.items()]
    return "\n".join(["exit codes:", *lines])


_UNEXPECTED = "unexpected failure (rerun with --debug)"

#: What each code means for any command: the section of the main help.
EXIT_CODES: Mapping[ExitCode, str] = {
    ExitCode.OK: "success",
    ExitCode.FAILURE: f"{_UNEXPECTED}; output not writable (disk full) or closed",
    ExitCode.USAGE: "usage: bad option, unknown endpoint or parameter, missing setting",
    ExitCode.AUTHENTICATION: "authentication: client ID or secret refused, token refused",
    ExitCode.PERMISSION: "permission: the credentials cannot act for that account",
    ExitCode.API: "API or network error: bad request, rate limit, server error, no answer",
    ExitCode.INTERRUPTED: "interrupted (Ctrl-C or SIGTERM); what was fetched is kept, "
    "rerun to resume",
}
EXIT_CODES_HELP = exit_codes_help(EXIT_CODES)

#: ``service-api list``: every code, as the main help says it.
LIST_EXIT_CODES = EXIT_CODES

#: ``service-api load``: the codes of ``list``, as a load ends.
LOAD_EXIT_CODES: Mapping[ExitCode, str] = {
    ExitCode.OK: "success: every account loaded",
    ExitCode.FAILURE: f"{_UNEXPECTED}; dlt failed (its cause is said first)",
    ExitCode.USAGE: "usage: bad option, endpoint, parameter or destination; missing setting or dlt",
    ExitCode.AUTHENTICATION: EXIT_CODES[ExitCode.AUTHENTICATION],
    ExitCode.PERMISSION: "permission: the credentials cannot act for an account "
    "(the others are loaded)",
    ExitCode.API: "API or network error; what was fetched is loaded, rerun to resume",
    ExitCode.INTERRUPTED: "interrupted (Ctrl-C or SIGTERM); what was fetched is "
    "loaded, rerun to resume",
}

#: ``service-api token``: one request, no account, nothing to resume.
TOKEN_EXIT_CODES: Mapping[ExitCode, str] = {
    ExitCode.OK: "success: a token was obtained",
    ExitCode.FAILURE: _UNEXPECTED,
    ExitCode.USAGE: "usage: bad option, missing setting (base URL, client ID, secret)",
    ExitCode.AUTHENTICATION: "authentication: client ID or secret refused",
    ExitCode.API: "API or network error: an answer that is no token, server error, "
    "no answer",
    ExitCode.INTERRUPTED: "interrupted (Ctrl-C or SIGTERM)",
}

#: ``service-api mock``: the mock's own entry point's codes.
MOCK_EXIT_CODES: Mapping[ExitCode, str] = {
    ExitCode.OK: "stopped with Ctrl-C; --check-spec: the mock serves the spec",
    ExitCode.FAILURE: "the mock cannot serve the spec (it says why)",
    ExitCode.USAGE: "usage: bad option, or no 'mock' extra",
}


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
    if isinstance(exc, AuthenticationError):  # refused credentials too
        return ExitCode.AUTHENTICATION
    if isinstance(exc, PermissionDeniedError):
        return ExitCode.PERMISSION
    if isinstance(exc, ServiceApiError | httpx.HTTPError):
        return ExitCode.API
    return ExitCode.FAILURE


# The library's advice on a 404 whose URL lacks "/public/v3/". It misleads where the
# URL has its version segment behind another prefix (a gateway's path): left out there.
_LIBRARY_VERSION_HINT = "; the base URL probably lacks its /public/v3 prefix"


def lacks_version(url: str) -> bool:
    """Whether the path of ``url`` has no version segment (such as ``/v3``): only then
    may a 404 mean a base URL without its ``/public/v3``.

    Example::

        >>> lacks_version("http://127.0.0.1:8080/"), lacks_version("https://gw/api/v3/x")
        (True, False)
    """
    return re.search(r"/v[0-9]+(/|$)", httpx.URL(url).path) is None


def describe_error(exc: BaseException) -> str:
    """One line for an error that ended a command; for a failed page, the page and the cause.

    Example::

        >>> describe_error(ValueError("bad value"))
        'bad value'
    """
    text = str(exc).strip()
    text = text.splitlines()[0] if text else type(exc).__name__
    if (
        isinstance(exc, NotFoundError)
        and exc.request
        and not lacks_version(str(exc.request.url))
    ):
        text = text.replace(_LIBRARY_VERSION_HINT, "")
    if isinstance(exc, ServiceApiError) and exc.page_number is not None:
        return f"page {exc.page_number} failed: {text}"
    if isinstance(exc, OSError) and exc.strerror and exc.filename is None:
        # A failed write to the output (disk full, file too large) has no file name
        # attached: say what failed rather than "[Errno 28] ...". (The client's own
        # errors that are an OSError, such as ApiConnectionError, carry a message only.)
        return f"cannot write the output: {exc.strerror}"
    return text


def say_error(exc: BaseException) -> None:
    """The line that says what ended a command: ``interrupted`` for Ctrl-C or SIGTERM,
    else the error.

    Example::

        say_error(UsageError("no account"))   # service-api: error: no account
    """
    if isinstance(exc, KeyboardInterrupt):
        say("interrupted")
    else:
        say(f"error: {describe_error(exc)}")


def say(message: str) -> None:
    """One line of the command on stderr, after its name, printed at once.

    Example::

        say("error: no account")   # service-api: error: no account
    """
    print(f"service-api: {message}", file=sys.stderr, flush=True)
