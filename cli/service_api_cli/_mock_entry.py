"""``service-api-mock``: the mock's own command, with a one-line error when the ``mock``
extra is missing (the mock package imports starlette and uvicorn as it loads, so its
entry point alone would end in a traceback).

This module imports neither the mock nor the command line's own extra (rich).

Example::

    $ service-api-mock --port 8080
"""

import sys
from collections.abc import Callable, Sequence

from service_api_cli._exit_codes import ExitCode, UsageError

#: Top-level modules the ``mock`` extra provides (and the mock package itself).
MOCK_EXTRA_MODULES = {
    "starlette",
    "uvicorn",
    "multipart",
    "python_multipart",
    "yaml",
    "jsonschema",
    "service_api_mock",
}


def load_mock_main() -> Callable[..., int]:
    """The mock's ``main``, or a :class:`UsageError` naming the extra to install.

    Only a missing module of the extra counts: any other ``ImportError`` is a bug and
    propagates as such.

    Example::

        mock_main = load_mock_main()
        mock_main(["--port", "8080"])
    """
    try:
        from service_api_mock.__main__ import main as mock_main
    except ImportError as exc:
        if (exc.name or "").partition(".")[0] not in MOCK_EXTRA_MODULES:
            raise
        raise UsageError(
            f"the mock needs the 'mock' extra (no module {exc.name!r}): "
            "pip install 'service-api[mock]'"
        ) from None
    return mock_main


def main(argv: Sequence[str] | None = None) -> int:
    """Run the mock with ``argv`` (default: the process arguments); returns the exit code.

    Example::

        main(["--port", "0", "--records", "50"])
    """
    try:
        mock_main = load_mock_main()
    except UsageError as exc:
        print(f"service-api-mock: error: {exc}", file=sys.stderr)
        return ExitCode.USAGE
    return mock_main(argv, prog="service-api-mock")
