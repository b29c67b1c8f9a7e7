"""The loader file format ``service_api.dlt`` picks, and loading exported JSONL files:
the mock over loopback HTTP, a real DuckDB file in ``tmp_path``, checked with SQL."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip(
    "dlt", reason="dlt is not installed: pip install 'service-api[dlt]'"
)
pytest.importorskip(
    "duckdb", reason="duckdb is not installed: pip install 'service-api[dlt]'"
)

import dlt
from dlt.common.pipeline import LoadInfo
from dlt.destinations.impl.duckdb.configuration import DuckDbCredentials

import service_api
from service_api.dlt import fastest_file_format, load, load_files
from service_api_mock import RunningMock

ACCOUNTS = ["acct-1", "acct-2"]
MakePipeline = Callable[[], dlt.Pipeline]
Sql = Callable[..., list[tuple[Any, ...]]]


def formats(info: LoadInfo) -> dict[str, str]:
    """Table -> file format of the data files dlt loaded (its own state table and the
    merge statements it writes after them aside)."""
    return {
        job.job_file_info.table_name: job.job_file_info.file_format
        for package in info.load_packages
        for job in package.jobs["completed_jobs"]
        if not job.job_file_info.table_name.startswith("_dlt")
        and job.job_file_info.file_format != "sql"
    }


def export(
    mock: RunningMock, path: Path, account: str, *, tag: bool
) -> list[dict[str, Any]]:
    """What ``service-api list shipments --account A [--tag-account]`` writes."""
    records = mock.service.dataset("shipments", account)
    path.write_text(
        "".join(
            json.dumps({"account": account, **r} if tag else r) + "\n" for r in records
        )
    )
    return records


def test_duckdb_gets_jsonl_not_insert_statements(
    client: service_api.Client, mock: RunningMock, make_pipeline: MakePipeline
) -> None:
    mock.service.reset(records=60)
    pipeline = make_pipeline()
    assert fastest_file_format(pipeline) == "jsonl"
    info = load(pipeline, client, ACCOUNTS, endpoints=["shipments"])
    chosen = formats(info)
    assert chosen["shipments"] == chosen["shipments__shipment_legs"] == "jsonl"
    assert set(chosen.values()) == {"jsonl"}


def test_the_users_dlt_config_wins(
    client: service_api.Client,
    mock: RunningMock,
    make_pipeline: MakePipeline,
    sql: Sql,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    mock.service.reset(records=60)
    monkeypatch.setenv("NORMALIZE__LOADER_FILE_FORMAT", "insert_values")
    info = load(make_pipeline(), client, ACCOUNTS, endpoints=["devices"])
    assert formats(info) == {"devices": "insert_values"}
    assert sql("select count(*) from raw.devices") == [(120,)]


def test_a_format_set_on_the_destination_or_unsupported_is_left_to_dlt(
    tmp_path: Path,
) -> None:
    chosen = dlt.destinations.duckdb(
        str(tmp_path / "x.duckdb"), preferred_loader_file_format="parquet"
    )
    pipeline = dlt.pipeline("chosen", destination=chosen, pipelines_dir=str(tmp_path))
    assert fastest_file_format(pipeline) is None
    postgres = dlt.pipeline("pg", destination="postgres", pipelines_dir=str(tmp_path))
    assert fastest_file_format(postgres) is None  # no jsonl there: dlt's preferred


def test_pages_are_fetched_as_dlt_takes_them(
    client: service_api.Client, mock: RunningMock
) -> None:
    # Memory stays flat in the number of records: one page in hand at a time.
    from service_api.dlt._source import _pages
    from service_api_client.api import LIST_ENDPOINTS

    mock.service.reset(records=500)
    pages = _pages(
        LIST_ENDPOINTS["devices"],
        client,
        ["acct-1"],
        errors=None,
        resource_state=dict,
        page_size=50,
        concurrency=1,
    )
    assert len(next(pages)) == 50
    assert mock.service.count("listDevices", 200) == 1
    assert len(next(pages)) == 50
    assert mock.service.count("listDevices", 200) == 2
    pages.close()


def test_an_exported_file_loads_into_the_same_rows_and_twice_adds_nothing(
    client: service_api.Client,
    mock: RunningMock,
    make_pipeline: MakePipeline,
    sql: Sql,
    tmp_path: Path,
) -> None:
    mock.service.reset(records=70)
    one, two = tmp_path / "one.jsonl", tmp_path / "two.jsonl"
    first = export(mock, one, "acct-1", tag=False)
    export(mock, two, "acct-2", tag=True)
    info = load_files(make_pipeline(), "shipments", [str(one)], account="acct-1")
    assert formats(info)["shipments"] == "jsonl"
    load_files(make_pipeline(), "shipments", [str(one), str(two)], account="acct-1")
    counts = (
        "select account, count(*), count(distinct shipment_id) from raw.shipments "
        "group by 1 order by 1"
    )
    assert sql(counts) == [("acct-1", 70, 70), ("acct-2", 70, 70)]
    legs = sum(
        len(r["shipmentLegs"])
        for a in ACCOUNTS
        for r in mock.service.dataset("shipments", a)
    )
    assert sql("select count(*) from raw.shipments__shipment_legs") == [(legs,)]
    # The API's rows and the file's are the same rows: merged, not added.
    mock.service.update_record("shipments", "acct-1", 0, {"status": "Lost"})
    load(make_pipeline(), client, ACCOUNTS, endpoints=["shipments"])
    assert sql(counts) == [("acct-1", 70, 70), ("acct-2", 70, 70)]
    assert sql(
        "select status from raw.shipments where shipment_id = ?", first[0]["shipmentId"]
    ) == [("Lost",)]
    assert sql("select count(*) from raw.shipments__shipment_legs") == [(legs,)]


@pytest.mark.parametrize(
    ("text", "account", "message"),
    [
        (
            '{"shipmentId": "s1"}\n',
            None,
            r"one.jsonl:1: a record without an account: pass account=",
        ),
        (
            '{"shipmentId": "s1", "account": "a"}\nnot json\n',
            None,
            r"one.jsonl:2: not a JSON object",
        ),
        ("[1, 2]\n", "acct-1", r"one.jsonl:1: not a JSON object"),
    ],
)
def test_a_bad_file_fails_the_load_naming_the_line_and_loads_nothing(
    make_pipeline: MakePipeline,
    tmp_path: Path,
    text: str,
    account: str | None,
    message: str,
) -> None:
    from dlt.pipeline.exceptions import PipelineStepFailed

    path = tmp_path / "one.jsonl"
    path.write_text(text)
    pipeline = make_pipeline()
    with pytest.raises(PipelineStepFailed) as caught:
        load_files(pipeline, "shipments", [str(path)], account=account)
    cause: BaseException | None = caught.value
    while cause is not None and not isinstance(cause, ValueError):
        cause = cause.__cause__ or cause.__context__
    assert isinstance(cause, ValueError)
    assert cause.args[0].endswith(message.replace("\\", ""))
    assert pipeline.last_trace is not None
    assert pipeline.last_trace.last_normalize_info is None


def settings_seen(
    pipeline: dlt.Pipeline, monkeypatch: pytest.MonkeyPatch
) -> dict[str, Any]:
    """What dlt resolves for the load step while ``pipeline.run`` runs."""
    seen: dict[str, Any] = {}
    run = pipeline.run

    def spy(*args: Any, **kwargs: Any) -> LoadInfo:
        seen["workers"] = dlt.config.get("load.workers", int)
        seen["uncompressed"] = dlt.config.get("data_writer.disable_compression", bool)
        credentials: Any = pipeline.destination_client().config.credentials
        seen["duckdb"] = credentials.global_config
        return run(*args, **kwargs)

    monkeypatch.setattr(pipeline, "run", spy)
    return seen


def test_loads_run_with_bounded_memory_defaults_and_only_then(
    client: service_api.Client,
    mock: RunningMock,
    make_pipeline: MakePipeline,
    sql: Sql,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    mock.service.reset(records=30)
    pipeline = make_pipeline()
    seen = settings_seen(pipeline, monkeypatch)
    load(pipeline, client, ACCOUNTS, endpoints=["shipments"])
    assert seen == {
        "workers": 1,
        "uncompressed": True,
        "duckdb": {"threads": 1, "memory_limit": "64MB"},
    }
    assert sql("select count(*) from raw.shipments") == [(60,)]
    assert dlt.config.get("load.workers") is None  # nothing left behind after the run


def test_the_users_load_settings_win_over_the_defaults(
    client: service_api.Client,
    mock: RunningMock,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    mock.service.reset(records=30)
    monkeypatch.setenv("LOAD__WORKERS", "3")
    monkeypatch.setenv("DATA_WRITER__DISABLE_COMPRESSION", "false")
    own = dlt.destinations.duckdb(
        DuckDbCredentials(str(tmp_path / "own.duckdb"), global_config={"threads": 2})
    )
    pipeline = dlt.pipeline("own", destination=own, pipelines_dir=str(tmp_path))
    seen = settings_seen(pipeline, monkeypatch)
    load(pipeline, client, ACCOUNTS, endpoints=["shipments"])
    assert seen == {"workers": 3, "uncompressed": False, "duckdb": {"threads": 2}}

    # as ``service-api load`` builds it: the destination by name, its file from the environment
    monkeypatch.setenv("DESTINATION__DUCKDB__CREDENTIALS", str(tmp_path / "env.duckdb"))
    monkeypatch.setenv(
        "DESTINATION__DUCKDB__CREDENTIALS__GLOBAL_CONFIG", '{"threads": 4}'
    )
    again = dlt.pipeline("env", destination="duckdb", pipelines_dir=str(tmp_path))
    seen = settings_seen(again, monkeypatch)
    load(again, client, ACCOUNTS, endpoints=["shipments"])
    assert seen["duckdb"] == {"threads": 4}
