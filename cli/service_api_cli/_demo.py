"""``make demo``: export every shipment of two accounts from a local mock, load shipments
and devices into DuckDB, count the rows per account with SQL, then stop.

The mock runs in this process on a free loopback port (so it cannot outlive the demo);
the export and the load are the real ``service-api list`` and ``service-api load``
commands, run as child processes exactly as a user would type them, with the demo
credentials passed through the environment. The DuckDB file goes beside the export file,
and dlt's pipeline state beside the DuckDB file; a second demo run merges into them (the
counts stay the same).

Example::

    python -m service_api_cli._demo            # what make demo runs
    python -m service_api_cli._demo --records 2000 --output /tmp/shipments.jsonl
"""

import argparse
import os
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

from service_api_mock import (
    DEMO_ACCOUNTS,
    DEMO_CLIENT_ID,
    DEMO_CLIENT_SECRET,
    running_mock,
)

DATABASE_NAME = "service_api.duckdb"
_COUNT_SQL = (
    "select 'shipments' as table_name, account, count(*) as rows from raw.shipments "
    "group by account union all "
    "select 'devices', account, count(*) from raw.devices group by account order by 1, 2"
)


def _run_shown(arguments: list[str], env: Mapping[str, str]) -> int:
    """Show ``service-api ARGUMENTS`` as a user would type it, run it with this
    interpreter; its exit code (the command says how long it took)."""
    print("demo: $ service-api " + " ".join(arguments), flush=True)
    done = subprocess.run(  # noqa: S603 -- our own interpreter and arguments
        [sys.executable, "-m", "service_api_cli", *arguments],
        env=env,
        stdin=subprocess.DEVNULL,
        check=False,
    )
    return done.returncode


def _print_counts(database: Path) -> None:
    import duckdb

    print(f"demo: SQL> {_COUNT_SQL}")
    with duckdb.connect(str(database), read_only=True) as connection:
        for table, account, rows in connection.execute(_COUNT_SQL).fetchall():
            print(f"demo:   {table:<10} {account:<8} {rows:>6}")


def main(argv: Sequence[str] | None = None) -> int:
    """Run the demo; returns the exit code of the export, or else of the load.

    Example::

        main(["--records", "300"])
    """
    parser = argparse.ArgumentParser(
        prog="make demo", description=__doc__.split("\n")[0]
    )
    parser.add_argument(
        "--records", type=int, default=500, help="shipments per account"
    )
    parser.add_argument(
        "--output",
        type=Path,
        default=Path("build/demo/shipments.jsonl"),
        help="export file",
    )
    args = parser.parse_args(argv)
    database = args.output.parent / DATABASE_NAME
    database.parent.mkdir(parents=True, exist_ok=True)
    accounts = [arg for account in DEMO_ACCOUNTS for arg in ("--account", account)]
    with running_mock(records=args.records, seed=0) as server:
        print(f"demo: mock of the API on {server.base_url}, {args.records} shipments")
        env = {
            **os.environ,
            "SERVICE_API_BASE_URL": server.base_url,
            "SERVICE_API_CLIENT_ID": DEMO_CLIENT_ID,
            "SERVICE_API_CLIENT_SECRET": DEMO_CLIENT_SECRET,
            # Where dlt's DuckDB destination writes, and no usage reports from the demo.
            "DESTINATION__DUCKDB__CREDENTIALS": str(database),
            "RUNTIME__DLTHUB_TELEMETRY": "false",
        }
        code = _run_shown(["list", "shipments", *accounts, "-o", str(args.output)], env)
        if code == 0:  # without the dlt extra, the load says what to install
            code = _run_shown(["load", "shipments", "devices", *accounts], env)
    if code == 0:
        _print_counts(database)
    print("demo: mock stopped")
    return code


if __name__ == "__main__":
    sys.exit(main())
