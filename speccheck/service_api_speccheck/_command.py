"""The command line of the check: ``service-api spec check`` hands it every option.

Example::

    service-api spec check --account acct-1 --write   # then: make
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable, Sequence

import service_api

_EPILOG = """\
examples:
  service-api spec check --account acct-1                  # the report only
  service-api spec check --account acct-1 --write && make  # learn, regenerate
  service-api spec check --from observed.json --write      # from Client(observe=...)

It sends at most --budget requests, GET and the token POST only (--allow-writes: it
also creates, changes and deletes a record of its own), through the client of the
connection options (service-api --help), for the first account: the first, a later and
the last page of every list with the spec's largest pageSize and above, a page past
the end, gets of listed identifiers, and probes with no account header, an account of
nobody, an invalid token. --write adds fields, widens types, adds nullability, declares the
statuses, content types and headers seen, and marks x-observed: DATE beside each
x-assumed the check saw; it never removes or narrows, refuses a spec file changed since
the check started, and a second --write against the same service changes nothing.

exit codes: 0 the spec matched, 1 the report has differences, 2 usage (a budget too
small to see one page, a spec file changed), 3 to 5 and 130 as for service-api list"""


def main(
    argv: Sequence[str],
    client: Callable[[], service_api.Client],
    accounts: Callable[[Sequence[str] | None], list[str]],
) -> int:
    """Run ``spec check`` with ``argv`` (what follows ``service-api spec``), sampling
    with a client of ``client()`` for the first account of ``accounts(--account)``;
    the exit code: 0 when the spec matched, 1 when the report has differences.

    Example::

        main(["check", "--from", "observed.json"], make_client, resolve_accounts)
    """
    from . import check_spec

    parser = argparse.ArgumentParser(prog="service-api spec")
    check = parser.add_subparsers(dest="command", required=True).add_parser(
        "check",
        description="Find where openapi.yaml is wrong, and --write the fix.",
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    check.add_argument(
        "--account", action="append", metavar="ID", help="account to sample as"
    )
    check.add_argument(
        "--spec", default="openapi.yaml", metavar="PATH", help="the spec file"
    )
    check.add_argument(
        "--budget", type=int, default=100, metavar="N", help="requests at most"
    )
    check.add_argument(
        "--allow-writes", action="store_true", help="create, change, delete one"
    )
    check.add_argument("--enums", action="store_true", help="report enum candidates")
    check.add_argument(
        "--format", choices=("text", "json"), default="text", help="of the report"
    )
    check.add_argument(
        "--write", action="store_true", help="edit the spec file in place"
    )
    check.add_argument(
        "--from", dest="observed", metavar="PATH", help="observation file"
    )
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # --help (0), or a usage error argparse printed (2)
        return int(exc.code or 0)
    if args.observed:
        report = check_spec(args.spec, observed=args.observed)
    else:
        with client() as made:
            account = made.with_account(accounts(args.account)[0])
            report = check_spec(
                args.spec,
                account,
                budget=args.budget,
                allow_writes=args.allow_writes,
                enums=args.enums,
            )
    print(json.dumps(report.to_json()) if args.format == "json" else report.text())
    if args.write:
        report.write()
    return int(not report.matched)
