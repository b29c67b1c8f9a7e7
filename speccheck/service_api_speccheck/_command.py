"""The command line of the check: ``service-api spec check`` hands it every option.

Example::

    service-api spec check --account acct-1 --write   # then: make
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Sequence

import service_api

from ._compare import MIN_SHARE
from ._observation import SpecCheckError
from ._sample import MIN_BUDGET
from ._write import SpecWriteError

#: The exit code of a ``--write`` that could not replace the spec file (left as it was).
WRITE_FAILED = 6

EXIT_CODES = f"""\
exit codes:
  0    the spec matched; with --write, every difference found was written
  1    the report has differences (with --write: those the spec cannot say are left)
  2    usage: bad option, --budget below {MIN_BUDGET}, a spec or --from file that cannot be
       read, a spec file changed since the check started, no list answered a page
  3    authentication: client ID or secret refused, token refused
  4    permission: the credentials cannot act for that account (every list refused it)
  5    API or network error: no answer, server error
  {WRITE_FAILED}    --write could not replace the spec file: it is as it was
  130  interrupted (Ctrl-C or SIGTERM); nothing written"""

_EPILOG = f"""\
examples:
  service-api spec check --account acct-1                  # the report only
  service-api spec check --account acct-1 --write && make  # learn, regenerate
  service-api spec check --from observed.json --write      # from Client(observe=...)

It sends at most --budget requests, GET and the token POST only (--allow-writes: it
also creates and deletes a record of its own, and the report says what it did),
through the client of the connection options (service-api --help), as the account of
--account (the first, if given several; else SERVICE_API_ACCOUNT_ID's first): the
first, a later and the last page of every list at the largest pageSize the spec allows
(and, where that is refused, halving to the largest accepted), a page past the end,
gets of listed identifiers, and probes with no account header, an account of nobody,
an invalid token, an identifier of nobody.

Each line of the report names a place of the spec and what the client does about it.
--write adds fields (those in at least --min-share of the objects), widens types, adds
nullability, makes optional a required field not always sent, lowers the pageSize
limit to the largest accepted, gives a body that fits no shared schema a schema of its
own, declares the statuses, content types and headers seen, and marks x-observed: DATE
beside each x-assumed the check saw; it never removes a field, refuses a spec file
changed since the check started, and a second --write against the same service changes
nothing. What the spec cannot say (a probe answered 200, pages that contradict
totalRecords) stays a difference, with advice.

{EXIT_CODES}"""


def _share(text: str) -> float:
    share = float(text)
    if not 0 <= share <= 1:
        raise argparse.ArgumentTypeError(f"{text} is no share between 0 and 1")
    return share


def build_parser() -> argparse.ArgumentParser:
    """The parser of ``service-api spec``: its one command, ``check``.

    Example::

        build_parser().parse_args(["check", "--budget", "50"])
    """
    parser = argparse.ArgumentParser(
        prog="service-api spec",
        description="The spec (openapi.yaml) and the service: one command, check.",
        epilog=f"service-api spec check --help says its options.\n\n{EXIT_CODES}",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    commands = parser.add_subparsers(
        dest="command", required=True, title="commands", metavar="COMMAND"
    )
    check = commands.add_parser(
        "check",
        help="find where openapi.yaml differs from the service; --write the fix",
        description="Find where openapi.yaml differs from the service, and --write the fix.",
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    check.add_argument(
        "--account",
        action="append",
        metavar="ID",
        help="the account to sample as (default: SERVICE_API_ACCOUNT_ID's first)",
    )
    check.add_argument(
        "--spec",
        default="openapi.yaml",
        metavar="PATH",
        help="the spec file to check and --write (default: openapi.yaml)",
    )
    check.add_argument(
        "--budget",
        type=int,
        default=100,
        metavar="N",
        help=f"requests at most, retries and the token's included, {MIN_BUDGET} or more "
        "(default: 100)",
    )
    check.add_argument(
        "--allow-writes",
        action="store_true",
        help="also create a copy of a listed record and delete it",
    )
    check.add_argument(
        "--enums", action="store_true", help="report the few words string fields take"
    )
    check.add_argument(
        "--min-share",
        type=_share,
        default=MIN_SHARE,
        metavar="SHARE",
        help="the share of the objects an undeclared field must be in to be written "
        f"(default: {MIN_SHARE}); below it, a note",
    )
    check.add_argument(
        "--format",
        choices=("text", "json"),
        default="text",
        help="of the report (default: text)",
    )
    check.add_argument(
        "--write", action="store_true", help="edit the spec file in place"
    )
    check.add_argument(
        "--from",
        dest="observed",
        metavar="PATH",
        help="an observation file of Client(observe=...): sends nothing",
    )
    return parser


def main(
    argv: Sequence[str],
    client: Callable[[], service_api.Client],
    accounts: Callable[[Sequence[str] | None], list[str]],
) -> int:
    """Run ``spec check`` with ``argv`` (what follows ``service-api spec``), sampling
    with a client of ``client()`` for the first account of ``accounts(--account)``;
    the exit code (see :data:`EXIT_CODES`). Raises :class:`SpecCheckError` for a usage
    error, the client's typed errors for the others.

    Example::

        main(["check", "--from", "observed.json"], make_client, resolve_accounts)
    """
    from . import check_spec

    try:
        args = build_parser().parse_args(argv)
    except SystemExit as exc:  # --help (0), or a usage error argparse printed (2)
        return int(exc.code or 0)
    if args.budget < MIN_BUDGET and not args.observed:
        raise SpecCheckError(
            f"--budget {args.budget} sees no page: {MIN_BUDGET} at least "
            "(the token request and a page)"
        )
    if args.observed:
        report = check_spec(args.spec, observed=args.observed, min_share=args.min_share)
    else:
        with client() as made:
            account = made.with_account(accounts(args.account)[0])
            report = check_spec(
                args.spec,
                account,
                budget=args.budget,
                allow_writes=args.allow_writes,
                enums=args.enums,
                min_share=args.min_share,
            )
    failed = None
    if args.write:
        try:
            report.write()
        except SpecWriteError as exc:  # the file could not be replaced
            failed = f"{exc}; it is as it was"
    print(json.dumps(report.to_json()) if args.format == "json" else report.text())
    if failed:
        print(f"service-api: error: {failed}", file=sys.stderr)
        return WRITE_FAILED
    return int(not (report.matched or (report.written and report.settled)))
