"""One load into DuckDB, measured in a fresh process: wall time and peak RSS.

Run by the load case as
``python -m bench._load_probe CONTENDER BASE_URL WORKDIR ACCOUNT...``; prints one JSON
object. ``CONTENDER`` is ``service_api`` (``service-api load shipments``), ``floor``
(``service-api list shipments`` to JSONL, then DuckDB's ``read_json_auto``) or
``rest_api`` (dlt's ``rest_api`` source configured by hand for this API). The DuckDB
file and dlt's state live in ``WORKDIR``, so a second run is a second load.

Example::

    python -m bench._load_probe floor http://127.0.0.1:8099/public/v3 /tmp/w acct-1 acct-2
"""

from __future__ import annotations

import json
import os
import resource
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ._memory_probe import _high_water_mark
from ._mock_process import CLIENT_ID, CLIENT_SECRET

__all__ = ["CONTENDERS", "main"]

CONTENDERS = ("service_api", "floor", "rest_api")
DATABASE = "load.duckdb"
_MB = 1024 * 1024


def _cli(argv: list[str]) -> None:
    from service_api_cli._app import main as cli

    code = cli(argv)
    if code != 0:
        raise SystemExit(f"service-api {' '.join(argv[:2])} ended with {code}")


def _service_api(base_url: str, work: Path, accounts: Sequence[str]) -> None:
    account_args = [arg for account in accounts for arg in ("--account", account)]
    _cli(
        ["load", "shipments", *account_args, "--pipelines-dir", str(work / "pipelines")]
    )


def _floor(base_url: str, work: Path, accounts: Sequence[str]) -> None:
    import duckdb

    account_args = [arg for account in accounts for arg in ("--account", account)]
    exported = work / "shipments.jsonl"
    _cli(["list", "shipments", *account_args, "--output", str(exported)])
    with duckdb.connect(str(work / DATABASE)) as connection:
        connection.execute("create schema if not exists raw")
        connection.execute(
            "create or replace table raw.shipments as select * from read_json_auto(?)",
            [str(exported)],
        )


def _rest_api(base_url: str, work: Path, accounts: Sequence[str]) -> None:
    # What a data engineer writes for this API with dlt alone: the token request is
    # multipart, the account goes in a header, pages go by number, rows merge on id + account.
    import dlt
    from dlt.common.configuration import configspec
    from dlt.sources.helpers.rest_client.auth import OAuth2ClientCredentials
    from dlt.sources.rest_api import rest_api_source

    @configspec
    class MultipartToken(OAuth2ClientCredentials):
        def build_access_token_request(self) -> dict[str, Any]:
            fields = {
                "client_id": self.client_id,
                "client_secret": self.client_secret,
                "grant_type": "client_credentials",
            }
            return {"files": {k: (None, v) for k, v in fields.items()}}

    auth = MultipartToken(
        access_token_url=f"{base_url}/authenticate",
        client_id=CLIENT_ID,
        client_secret=CLIENT_SECRET,
    )
    resources: list[Any] = [_rest_api_resource(account) for account in accounts]
    source = rest_api_source(
        {"client": {"base_url": base_url, "auth": auth}, "resources": resources}
    )
    pipeline = dlt.pipeline(
        "rest_api_peer",
        destination=dlt.destinations.duckdb(str(work / DATABASE)),
        dataset_name="raw",
        pipelines_dir=str(work / "pipelines"),
    )
    # At its best: the file format dlt's docs advise for bulk loads, not DuckDB's default
    # INSERT statements (which take minutes at 100,000 rows here).
    pipeline.run(source, loader_file_format="jsonl")


def _rest_api_resource(account: str) -> dict[str, Any]:
    """The shipments of ``account`` as a resource of dlt's ``rest_api`` source."""
    from dlt.sources.helpers.rest_client.paginators import PageNumberPaginator

    def tag(row: dict[str, Any]) -> dict[str, Any]:
        return {**row, "account": account}

    return {
        "name": f"shipments_{account}",
        "table_name": "shipments",
        "primary_key": ["shipmentId", "account"],
        "write_disposition": "merge",
        "processing_steps": [{"map": tag}],
        "endpoint": {
            "path": "shipments",
            "headers": {"x-service-account-id": account},
            "params": {"pageSize": 50},
            "data_selector": "data",
            "paginator": PageNumberPaginator(
                base_page=1,
                page_param="pageNumber",
                total_path=None,
                stop_after_empty_page=True,
            ),
        },
    }


def main(argv: Sequence[str] | None = None) -> None:
    """Run one contender once and print its wall time, CPU time (user + system, all
    threads) and peak RSS in MB."""
    args = list(argv if argv is not None else sys.argv[1:])
    contender = args[0]
    base_url = args[1]
    work = Path(args[2])
    accounts = args[3:]
    work.mkdir(parents=True, exist_ok=True)
    os.chdir(work)  # service-api load writes its DuckDB file in the working directory
    os.environ.update(
        SERVICE_API_BASE_URL=base_url,
        SERVICE_API_CLIENT_ID=CLIENT_ID,
        SERVICE_API_CLIENT_SECRET=CLIENT_SECRET,
        DESTINATION__DUCKDB__CREDENTIALS=str(work / DATABASE),
        RUNTIME__DLTHUB_TELEMETRY="false",
    )
    loaders = {"service_api": _service_api, "floor": _floor, "rest_api": _rest_api}
    wall0 = time.perf_counter()
    cpu0 = _cpu_seconds()
    loaders[contender](base_url, work, accounts)
    result = {
        "contender": contender,
        "wall_s": time.perf_counter() - wall0,
        "cpu_s": _cpu_seconds() - cpu0,
        "peak_rss_mb": _high_water_mark() / _MB,
    }
    print(json.dumps(result))


def _cpu_seconds() -> float:
    # On a shared machine the wall time moves with the other users; the CPU time of
    # this process (DuckDB's threads included) much less.
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


if __name__ == "__main__":
    main()
