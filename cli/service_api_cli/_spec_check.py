"""``service-api spec check``: the spec checked against the service, and written.

As ``mock`` does, the command hands its options to the library's own command line
(:func:`service_api_speccheck.main`, which lists them in ``service-api spec check
--help``) with the two pieces it shares with ``list``: the client of the connection
flags and ``SERVICE_API_*``, and the accounts of ``--account`` or
``SERVICE_API_ACCOUNT_ID``. Exit codes (``service-api spec --help`` lists them): 0 when
the spec matched or ``--write`` wrote every difference, 1 when differences are left, 6
when ``--write`` could not replace the file, the command's others otherwise (a usage
error, refused credentials, an account refused, ...).
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from service_api_cli._connection import make_client, resolve_accounts
from service_api_cli._exit_codes import UsageError

if TYPE_CHECKING:
    import service_api
    from service_api_cli._job import SpecJob


def add_spec_parser(commands: Any) -> None:
    """Add ``spec`` to the sub-commands; every option after it goes to the library.

    Example::

        add_spec_parser(build_parser()._subparsers)
    """
    commands.add_parser(
        "spec",
        help="check openapi.yaml against the service, and --write the fix "
        "(spec check --help)",
        add_help=False,
        prefix_chars="\0",  # every option, --help included, to the library's parser
    ).add_argument("spec_args", nargs=argparse.REMAINDER)


def run_spec_check(job: SpecJob) -> int:
    """Run ``service-api spec ...``; its exit code.

    Example::

        run_spec_check(SpecJob(("check", "--account", "acct-1"), connection))
    """
    from service_api_speccheck import SpecCheckError, main

    def client() -> service_api.Client:
        if job.connection is None:
            raise UsageError("spec check needs the service's settings without --from")
        return make_client(job.connection)

    try:
        return main(list(job.argv), client, resolve_accounts)
    except SpecCheckError as exc:
        raise UsageError(str(exc)) from None
