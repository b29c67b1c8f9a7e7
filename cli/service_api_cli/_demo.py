"""``make demo``: export every shipment of two accounts from a local mock, load shipments
and devices into DuckDB, count the rows per account with SQL, then stop.

The mock runs in this process on a free loopback port (so it cannot outlive the demo);
the export and the load are the real ``service-api list`` and ``service-api load``
commands, run as child processes exactly as a user would type them, with the demo
credentials passed through the environment. The DuckDB file and dlt's pipeline state go
beside the export file; a second demo run merges into them (the counts stay the same).

Example::

    python -m service_api_cli._demo            # what make demo runs
    python -m service_api_cli._demo --records 2000 --output /tmp/shipments.jsonl
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from service_api_mock import (
    DEMO_ACCOUNTS,
    DEMO_CLIENT_ID,
    DEMO_CLIENT_SECRET,
    running_mock,
)

__all__ = ["main"]

DEFAULT_OUTPUT = Path("build/demo/shipments.jsonl")


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
        "--output", type=Path, default=DEFAULT_OUTPUT, help="export file"
    )
    args = parser.parse_args(argv)
    args.output.parent.mkdir(parents=True, exist_ok=True)
    with running_mock(records=args.records, seed=0) as server:
        print(
            f"demo: mock of the API on {server.base_url} ({args.records} shipments per account)",
            flush=True,
        )
        command = ["service-api", "list", "shipments"]
        for account in DEMO_ACCOUNTS:
            command += ["--account", account]
        command += ["--output", str(args.output)]
        env = {
            **os.environ,
            "SERVICE_API_BASE_URL": server.base_url,
            "SERVICE_API_CLIENT_ID": DEMO_CLIENT_ID,
            "SERVICE_API_CLIENT_SECRET": DEMO_CLIENT_SECRET,
        }
        returncode, elapsed = _run_shown(command, env)
        counts = server.service.counts()  # the mock runs in this process
        if returncode != 0:
            print(
                f"demo: the export failed with exit code {returncode}", file=sys.stderr
            )
            return returncode
        _print_export_summary(args.output, counts, elapsed)
        loaded = _load_into_duckdb(env, args.output.parent)
    if loaded != 0:
        return loaded
    print("demo: mock stopped")
    return 0


def _run_shown(command: list[str], env: dict[str, str]) -> tuple[int, float]:
    """Show ``command`` as a user would type it, run it with this interpreter; return its
    exit code and the seconds it took."""
    print("demo: $ " + " ".join(command), flush=True)
    began = time.monotonic()
    done = subprocess.run(  # noqa: S603 -- our own interpreter and arguments
        [sys.executable, "-m", "service_api_cli", *command[1:]],
        env=env,
        stdin=subprocess.DEVNULL,
        check=False,
    )
    return done.returncode, time.monotonic() - began


def _print_export_summary(
    output: Path, counts: dict[str, dict[int, int]], elapsed: float
) -> None:
    with output.open(encoding="utf-8") as exported:
        per_account: dict[str, int] = {}
        for line in exported:
            account = json.loads(line)["account"]
            per_account[account] = per_account.get(account, 0) + 1
    records = sum(per_account.values())
    pages = counts.get("listShipments", {}).get(200, 0)
    tokens = sum(counts.get("authenticate", {}).values())
    print(
        f"demo: {records} records ("
        + ", ".join(f"{a}: {n}" for a, n in per_account.items())
        + f") in {pages} pages, {tokens} token fetch{'es' if tokens != 1 else ''}, "
        f"{elapsed:.1f}s, written to {output}",
        flush=True,
    )


DATABASE_NAME = "service_api.duckdb"
_COUNT_SQL = (
    "select 'shipments' as table_name, account, count(*) as rows from raw.shipments "
    "group by account union all "
    "select 'devices', account, count(*) from raw.devices group by account order by 1, 2"
)


def _load_into_duckdb(base_env: dict[str, str], folder: Path) -> int:
    """``service-api load`` of both endpoints for the demo accounts, then a SQL count."""
    try:
        import duckdb
    except ImportError:
        print("demo: load skipped: pip install 'service-api[dlt]' to try it")
        return 0
    database = folder / DATABASE_NAME
    command = ["service-api", "load", "shipments", "devices"]
    for account in DEMO_ACCOUNTS:
        command += ["--account", account]
    command += ["--pipelines-dir", str(folder / "pipelines")]
    env = {
        **base_env,
        # Where dlt's DuckDB destination writes, and no usage reports from the demo.
        "DESTINATION__DUCKDB__CREDENTIALS": str(database),
        "RUNTIME__DLTHUB_TELEMETRY": "false",
    }
    returncode, elapsed = _run_shown(command, env)
    if returncode != 0:
        print(f"demo: the load failed with exit code {returncode}", file=sys.stderr)
        return returncode
    print(f"demo: loaded into {database} in {elapsed:.1f}s")
    print(f"demo: SQL> {_COUNT_SQL}")
    with duckdb.connect(str(database), read_only=True) as connection:
        for table, account, rows in connection.execute(_COUNT_SQL).fetchall():
            print(f"demo:   {table:<10} {account:<8} {rows:>6}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
