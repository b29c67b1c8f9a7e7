"""``service_api.dlt`` end to end: the mock over loopback HTTP, a real DuckDB file in
``tmp_path``, every check made with SQL on it."""

from __future__ import annotations

import shutil
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
from dlt.common.normalizers.naming import snake_case

import service_api
from service_api.dlt import list_endpoints, load, source
from service_api_client.api import LIST_ENDPOINTS
from service_api_mock import RunningMock

ACCOUNTS = ["acct-1", "acct-2"]
MakePipeline = Callable[[], dlt.Pipeline]
Sql = Callable[..., list[tuple[Any, ...]]]


def per_account(sql: Sql, table: str) -> dict[str, tuple[int, int]]:
    """account -> (rows, distinct identifiers) of a table of the dataset."""
    id_field = LIST_ENDPOINTS[table].id_field
    assert id_field is not None, f"{table} has no identifier field"
    column = snake_case.NamingConvention().normalize_identifier(
        id_field
    )  # dlt's own rule
    # Names from the generated registry, not from input.
    statement = f"select account, count(*), count(distinct {column}) from raw.{table}"  # noqa: S608
    rows = sql(f"{statement} group by account")
    return {str(account): (int(n), int(ids)) for account, n, ids in rows}


#: A value of each kind a parameter may be.
SAMPLE = {"string": "x", "integer": 1, "number": 1.0, "boolean": True}


def test_one_resource_per_list_endpoint_with_merge_keys(
    client: service_api.Client,
) -> None:
    # A value for each parameter a list requires besides its parents' ids (these
    # load every parent's records when left out).
    params = {
        name: {
            p.python_name: p.choices[0] if p.choices else SAMPLE[p.kind]
            for p in endpoint.parameters
            if p.required and p.location != "path"
        }
        for name, endpoint in LIST_ENDPOINTS.items()
    }
    # A list whose records have no identifier field is merged on a field named for it.
    keys = {
        name: endpoint.item_model._FIELDS[0].name
        for name, endpoint in LIST_ENDPOINTS.items()
        if endpoint.id_field is None and endpoint.item_model._FIELDS
    }
    built = source(client, ACCOUNTS, params=params, primary_keys=keys)
    assert sorted(built.resources) == sorted(list_endpoints()) == sorted(LIST_ENDPOINTS)
    for name, key in keys.items():
        columns = built.resources[name].compute_table_schema()["columns"]
        assert columns[key]["primary_key"]
    shipments = built.resources["shipments"]
    assert shipments.write_disposition == "merge"
    assert shipments.compute_table_schema()["columns"]["shipmentId"]["primary_key"]
    assert shipments.compute_table_schema()["columns"]["account"]["primary_key"]


def test_resources_yield_whole_pages_tagged_with_their_account(
    client: service_api.Client, mock: RunningMock
) -> None:
    from service_api.dlt._source import _pages

    mock.service.reset(records=60)
    state: dict[str, Any] = {}
    pages = list(
        _pages(
            LIST_ENDPOINTS["devices"],
            client,
            ACCOUNTS,
            errors=None,
            resource_state=lambda: state,
            page_size=50,
            concurrency=2,
        )
    )
    # One list per page: 50 + 10 records for each account.
    assert [len(page) for page in pages] == [50, 10, 50, 10]
    assert mock.service.count("listDevices", 200) == 4
    served = mock.service.dataset("devices", "acct-2")
    assert pages[2][0] == {**served[0], "account": "acct-2"}
    assert [row["deviceId"] for page in pages[2:] for row in page] == [
        record["deviceId"] for record in served
    ]
    # The pass is complete: nothing pending, the next run starts again at page 1.
    assert state == {"page_size": 50, "pending": {}, "done": []}


def test_load_twice_updates_rows_in_place(
    client: service_api.Client, mock: RunningMock, make_pipeline: MakePipeline, sql: Sql
) -> None:
    mock.service.reset(records=120)
    load(make_pipeline(), client, ACCOUNTS, endpoints=["shipments", "devices"])
    assert per_account(sql, "shipments") == {"acct-1": (120, 120), "acct-2": (120, 120)}
    assert per_account(sql, "devices") == {"acct-1": (120, 120), "acct-2": (120, 120)}
    first = mock.service.dataset("shipments", "acct-1")[0]
    legs_before = sql(
        "select count(*) from raw.shipments__shipment_legs l join raw.shipments s "
        "on l._dlt_parent_id = s._dlt_id where s.shipment_id = ?",
        first["shipmentId"],
    )[0][0]
    assert legs_before == len(first["shipmentLegs"]) > 0

    # Between two nightly runs the service changes records: a status, a nested list
    # replaced, a field the spec does not declare.
    mock.service.update_record(
        "shipments", "acct-1", 0, {"status": "Lost", "shipmentLegs": []}
    )
    mock.service.update_record(
        "shipments", "acct-2", 119, {"referenceNumber": "PO-NEW"}
    )
    mock.service.update_record("devices", "acct-2", 5, {"battery": 1.0})
    load(make_pipeline(), client, ACCOUNTS, endpoints=["shipments", "devices"])

    assert per_account(sql, "shipments") == {"acct-1": (120, 120), "acct-2": (120, 120)}
    assert per_account(sql, "devices") == {"acct-1": (120, 120), "acct-2": (120, 120)}
    assert sql(
        "select status from raw.shipments where shipment_id = ?", first["shipmentId"]
    ) == [("Lost",)]
    last = mock.service.dataset("shipments", "acct-2")[119]
    assert sql(
        "select reference_number from raw.shipments where shipment_id = ?",
        last["shipmentId"],
    ) == [("PO-NEW",)]
    device = mock.service.dataset("devices", "acct-2")[5]
    assert sql(
        "select battery from raw.devices where device_id = ?", device["deviceId"]
    ) == [(1.0,)]
    # The replaced list: the child rows of the updated shipment are gone, no others.
    assert sql(
        "select count(*) from raw.shipments__shipment_legs l join raw.shipments s "
        "on l._dlt_parent_id = s._dlt_id where s.shipment_id = ?",
        first["shipmentId"],
    ) == [(0,)]
    expected_legs = sum(
        len(r["shipmentLegs"])
        for a in ACCOUNTS
        for r in mock.service.dataset("shipments", a)
    )
    assert sql("select count(*) from raw.shipments__shipment_legs") == [
        (expected_legs,)
    ]
    assert sql(
        "select count(*) from (select _dlt_id from raw.shipments__shipment_legs "
        "group by _dlt_id having count(*) > 1)"
    ) == [(0,)]


def test_a_list_without_an_identifier_is_replaced_by_each_load_beside_the_others(
    client: service_api.Client,
    mock: RunningMock,
    make_pipeline: MakePipeline,
    sql: Sql,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import dataclasses

    from service_api.dlt import _source

    # The registry of a spec whose devices have no identifier field.
    keyless = dataclasses.replace(LIST_ENDPOINTS["devices"], id_field=None)
    registry = {"devices": keyless, "shipments": LIST_ENDPOINTS["shipments"]}
    monkeypatch.setattr(_source, "LIST_ENDPOINTS", registry)
    mock.service.reset(records=60)
    everything = {"acct-1": (60, 60), "acct-2": (60, 60)}
    for _ in range(2):
        load(make_pipeline(), client, ACCOUNTS)  # every list: none stops the others
        # Each load's rows replace the table's: never twice.
        assert per_account(sql, "devices") == everything
        assert per_account(sql, "shipments") == everything
    tables = make_pipeline().default_schema.tables
    assert tables["devices"]["write_disposition"] == "replace"
    assert tables["shipments"]["write_disposition"] == "merge"


def test_the_same_record_id_in_two_accounts_is_two_rows(
    client: service_api.Client, mock: RunningMock, make_pipeline: MakePipeline, sql: Sql
) -> None:
    mock.service.reset(records=3)
    shared = mock.service.dataset("devices", "acct-1")[0]["deviceId"]
    mock.service.update_record("devices", "acct-2", 0, {"deviceId": shared})
    load(make_pipeline(), client, ACCOUNTS, endpoints=["devices"])
    assert sql(
        "select account from raw.devices where device_id = ? order by account", shared
    ) == [
        ("acct-1",),
        ("acct-2",),
    ]


def test_an_interrupted_load_resumes_from_dlt_state_without_duplicates(
    client: service_api.Client, mock: RunningMock, make_pipeline: MakePipeline, sql: Sql
) -> None:
    # 3 pages per account. The rate limit lets the token and 4 pages through, then
    # answers 429: with retries off (the
    # client's and the page's) the 5th page request ends the run.
    mock.service.reset(records=120, rate_limit=5)
    with pytest.raises(service_api.RateLimitError) as caught:
        load(make_pipeline(), client, ACCOUNTS, endpoints=["shipments"])
    assert caught.value.page_number == 2
    assert caught.value.resumable
    # What was fetched before the failure is loaded: acct-1 whole, acct-2 page 1.
    assert per_account(sql, "shipments") == {"acct-1": (120, 120), "acct-2": (50, 50)}
    state = make_pipeline().state["sources"]["service_api"]["resources"]["shipments"]
    assert state["pending"] == {"acct-2": 2}
    assert state["done"] == ["acct-1"]

    mock.service.set_faults(rate_limit=None)
    before = mock.service.count("listShipments", 200)
    load(make_pipeline(), client, ACCOUNTS, endpoints=["shipments"])
    # Only acct-2's pages 2 and 3 were fetched again.
    assert mock.service.count("listShipments", 200) - before == 2
    assert per_account(sql, "shipments") == {"acct-1": (120, 120), "acct-2": (120, 120)}

    # The pass is complete: the next run is a full refresh again, still without duplicates.
    before = mock.service.count("listShipments", 200)
    load(make_pipeline(), client, ACCOUNTS, endpoints=["shipments"])
    assert mock.service.count("listShipments", 200) - before == 6
    assert per_account(sql, "shipments") == {"acct-1": (120, 120), "acct-2": (120, 120)}


def test_ctrl_c_commits_the_pages_fetched_and_resumes(
    mock: RunningMock, make_pipeline: MakePipeline, sql: Sql
) -> None:
    mock.service.reset(records=120)
    page_requests = 0

    def interrupt_third_page(request: Any) -> None:
        nonlocal page_requests
        if request.url.path.endswith("/devices"):
            page_requests += 1
            if page_requests == 3:
                raise KeyboardInterrupt

    with (
        service_api.Client(
            mock.base_url,
            "demo-client",
            "demo-secret",
            httpx_args={"event_hooks": {"request": [interrupt_third_page]}},
        ) as interrupted,
        pytest.raises(KeyboardInterrupt),
    ):
        load(make_pipeline(), interrupted, ACCOUNTS, endpoints=["devices"])
    assert per_account(sql, "devices") == {"acct-1": (100, 100)}

    with service_api.Client(mock.base_url, "demo-client", "demo-secret") as plain:
        before = mock.service.count("listDevices", 200)
        load(make_pipeline(), plain, ACCOUNTS, endpoints=["devices"])
    assert (
        mock.service.count("listDevices", 200) - before == 4
    )  # acct-1 page 3, acct-2 x3
    assert per_account(sql, "devices") == {"acct-1": (120, 120), "acct-2": (120, 120)}


def test_without_an_error_list_a_failure_propagates_and_nothing_is_committed(
    client: service_api.Client, mock: RunningMock, make_pipeline: MakePipeline
) -> None:
    from dlt.pipeline.exceptions import PipelineStepFailed

    mock.service.reset(records=120, rate_limit=3)
    pipeline = make_pipeline()
    with pytest.raises(PipelineStepFailed) as caught:
        pipeline.run(source(client, ACCOUNTS, endpoints=["devices"]))
    assert isinstance(caught.value.__cause__, Exception)
    cause: BaseException | None = caught.value
    while cause is not None and not isinstance(cause, service_api.ServiceApiError):
        cause = cause.__cause__ or cause.__context__
    assert isinstance(cause, service_api.RateLimitError)
    assert "devices" not in make_pipeline().state.get("sources", {}).get(
        "service_api", {}
    ).get("resources", {})


def test_the_resume_point_travels_with_the_data_to_the_destination(
    client: service_api.Client,
    mock: RunningMock,
    make_pipeline: MakePipeline,
    sql: Sql,
    tmp_path: Path,
) -> None:
    # dlt stores the state in the destination with the rows: a machine that lost its
    # pipelines directory (a fresh CI runner) still resumes where the last run stopped.
    mock.service.reset(records=120, rate_limit=5)
    with pytest.raises(service_api.RateLimitError):
        load(make_pipeline(), client, ACCOUNTS, endpoints=["shipments"])
    shutil.rmtree(tmp_path / "pipelines")

    mock.service.set_faults(rate_limit=None)
    before = mock.service.count("listShipments", 200)
    load(make_pipeline(), client, ACCOUNTS, endpoints=["shipments"])
    assert mock.service.count("listShipments", 200) - before == 2
    assert per_account(sql, "shipments") == {"acct-1": (120, 120), "acct-2": (120, 120)}
