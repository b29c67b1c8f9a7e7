"""``service-api spec check``: the spec checked against the service, and written.

The library does the work (:func:`service_api_speccheck.check_spec`); here are its flags,
the client of the connection flags (as ``list`` builds it) for the first account, the
report on stdout and the exit code: 0 when the spec matched, 1 when the report has
differences, the command's other codes otherwise.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from service_api_cli._connection import make_client, resolve_accounts
from service_api_cli._exit_codes import UsageError

__all__ = ["add_spec_parser", "run_spec_check"]

_EPILOG = """\
examples:
  service-api spec check --account acct-1                 # report only
  service-api spec check --account acct-1 --write && make # learn, then regenerate
  service-api spec check --from observed.json --write     # from Client(observe=...)

It sends at most --budget requests, GET and the token POST only (unless --allow-writes:
then it creates, changes and deletes a record of its own): the first, a later, the last
page of every list with pageSize 50 and above, a page past the end, gets of listed
identifiers, and probes with no account header, an account of nobody, an invalid token.
--write adds fields, widens types, adds nullability, declares the statuses, content
types and headers seen, and marks what held x-observed: DATE; it never removes or
narrows, refuses a spec file changed since the check started, and a second --write
against the same service changes nothing.

exit codes: 0 the spec matched, 1 differences (see the report), others as for list"""


def add_spec_parser(commands: Any, formatter: type[argparse.HelpFormatter]) -> None:
    """Add ``spec check`` to the sub-commands.

    Example::

        add_spec_parser(parser.add_subparsers(), argparse.HelpFormatter)
    """
    spec = commands.add_parser("spec", help="check openapi.yaml against the service")
    check = spec.add_subparsers(dest="spec_command", required=True).add_parser(
        "check",
        help="compare openapi.yaml with a sample of answers; --write fixes it",
        description="Compare openapi.yaml with what the service answers.",
        epilog=_EPILOG,
        formatter_class=formatter,
    )
    flags: dict[str, dict[str, Any]] = {
        "--account": {"action": "append", "metavar": "ID", "help": "account to sample as"},
        "--spec": {"default": "openapi.yaml", "metavar": "PATH", "help": "spec file"},
        "--budget": {"type": int, "default": 100, "metavar": "N", "help": "requests"},
        "--allow-writes": {"action": "store_true", "help": "create/delete own records"},
        "--enums": {"action": "store_true", "help": "report enum candidates"},
        "--format": {"choices": ("text", "json"), "default": "text", "help": "report"},
        "--write": {"action": "store_true", "help": "edit the spec file in place"},
        "--from": {"dest": "observed", "metavar": "PATH", "help": "observation file"},
    }
    for flag, options in flags.items():
        check.add_argument(flag, **options)


def run_spec_check(args: argparse.Namespace) -> int:
    """Run ``service-api spec check``; the exit code.

    Example::

        run_spec_check(build_parser().parse_args(["spec", "check", "--account", "a"]))
    """
    from service_api_speccheck import SpecCheckError, check_spec

    options = {"budget": args.budget, "allow_writes": args.allow_writes, "enums": args.enums}
    try:
        if args.observed:
            report = check_spec(args.spec, observed=args.observed)
        else:
            with make_client(args) as client:
                account = client.with_account(resolve_accounts(args.account)[0])
                report = check_spec(args.spec, account, **options)
        print(json.dumps(report.to_json()) if args.format == "json" else report.text())
        if args.write:
            report.write()
    except SpecCheckError as exc:
        raise UsageError(str(exc)) from None
    return int(not report.matched)
