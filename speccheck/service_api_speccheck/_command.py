"""The command line of the check: ``service-api spec check`` hands it every option.

Example::

    service-api spec check --account acct-1 --write   # then: make
"""

from __future__ import annotations

import argparse
import contextlib
import json
from collections.abc import Callable, Sequence
from typing import Any

import service_api

_EPILOG = """\
examples:
  service-api spec check --account acct-1                  # the report only
  service-api spec check --account acct-1 --write && make  # learn, regenerate
  service-api spec check --from observed.json --write      # from Client(observe=...)

It sends at most --budget requests, GET and the token POST only (--allow-writes: it
also creates, changes and deletes a record of its own), through the client of the
connection options (service-api --help), for the first account: the first, a later and
the last page of every list with pageSize 50 and above, a page past the end, gets of
listed identifiers, and probes with no account header, an account of nobody, an
invalid token. --write adds fields, widens types, adds nullability, declares the
statuses, content types and headers seen, and marks what held x-observed: DATE; it
never removes or narrows, refuses a spec file changed since the check started, and a
second --write against the same service changes nothing.

exit codes: 0 the spec matched, 1 the report has differences, 2 usage (a budget too
small to see one page, a spec file changed), 3 to 5 and 130 as for service-api list"""
_OPTIONS: tuple[tuple[str, dict[str, Any]], ...] = (
    (
        "--account",
        {"action": "append", "metavar": "ID", "help": "account to sample as"},
    ),
    ("--spec", {"default": "openapi.yaml", "metavar": "PATH", "help": "the spec file"}),
    (
        "--budget",
        {"type": int, "default": 100, "metavar": "N", "help": "requests at most"},
    ),
    ("--allow-writes", {"action": "store_true", "help": "create, change, delete one"}),
    ("--enums", {"action": "store_true", "help": "report enum candidates"}),
    (
        "--format",
        {"choices": ("text", "json"), "default": "text", "help": "of the report"},
    ),
    ("--write", {"action": "store_true", "help": "edit the spec file in place"}),
    ("--from", {"dest": "observed", "metavar": "PATH", "help": "observation file"}),
)


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
    for flag, options in _OPTIONS:
        check.add_argument(flag, **options)
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # --help (0), or a usage error argparse printed (2)
        return int(exc.code or 0)
    options = {
        "budget": args.budget,
        "allow_writes": args.allow_writes,
        "enums": args.enums,
    }
    with contextlib.ExitStack() as stack:
        made = None if args.observed else stack.enter_context(client())
        account = made and made.with_account(accounts(args.account)[0])
        report = check_spec(args.spec, account, observed=args.observed, **options)
    print(json.dumps(report.to_json()) if args.format == "json" else report.text())
    if args.write:
        report.write()
    return int(not report.matched)
