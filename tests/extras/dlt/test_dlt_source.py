"""The pure pieces of ``service_api.dlt`` and its argument checks, without a pipeline."""

from __future__ import annotations

import re
import subprocess
import sys
from typing import Any

import pytest

pytest.importorskip(
    "dlt", reason="dlt is not installed: pip install 'service-api[dlt]'"
)

import service_api
from service_api.dlt import list_endpoints, source
from service_api.dlt._source import _start_pages
from service_api_client.api import LIST_ENDPOINTS


def test_endpoints_and_their_identifiers_come_from_the_generated_client() -> None:
    assert list_endpoints() == {name: e.id_field for name, e in LIST_ENDPOINTS.items()}
    # The seed's own two, as the spec names their records' identifiers.
    assert (
        list_endpoints().items()
        >= {"devices": "deviceId", "shipments": "shipmentId"}.items()
    )


@pytest.mark.parametrize(
    ("state", "accounts", "page_size", "expected"),
    [
        # First run, or the last pass finished: every account from page 1.
        ({}, ["a", "b"], 50, {"a": 1, "b": 1}),
        ({"pending": {}, "done": [], "page_size": 50}, ["a"], 50, {"a": 1}),
        # An interrupted pass: "a" done, "b" stopped before page 3, "c" never listed.
        (
            {"pending": {"b": 3}, "done": ["a"], "page_size": 50},
            ["a", "b", "c"],
            50,
            {"b": 3, "c": 1},
        ),
        # The only unfinished account is no longer asked for: a new pass.
        ({"pending": {"c": 2}, "done": ["a"], "page_size": 50}, ["a"], 50, {"a": 1}),
        # Another page size: start where the first record not yet loaded is
        # (record 100 of b is on page 5 of 25, and on page 3 of 40 with 20 read again).
        ({"pending": {"b": 3}, "done": [], "page_size": 50}, ["b"], 25, {"b": 5}),
        ({"pending": {"b": 3}, "done": [], "page_size": 50}, ["b"], 40, {"b": 3}),
    ],
)
def test_start_pages(
    state: dict[str, Any], accounts: list[str], page_size: int, expected: dict[str, int]
) -> None:
    assert _start_pages(state, accounts, page_size) == expected


@pytest.fixture
def offline_client() -> service_api.Client:
    # Never sends a request: these tests fail before any I/O.
    return service_api.Client("http://127.0.0.1:9", "id", "secret-value")


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        (
            {"accounts": []},
            ValueError,
            "accounts must be a list of printable account IDs",
        ),
        ({"accounts": "acct-1"}, ValueError, "not 'acct-1'"),
        ({"accounts": ["acct\n1"]}, ValueError, "printable"),
        (
            {"endpoints": ["parcels"]},
            ValueError,
            f"unknown endpoint 'parcels' (known: {', '.join(LIST_ENDPOINTS)})",
        ),
        ({"page_size": 51}, ValueError, "page_size must be within 1..50"),
        (
            {"concurrency": 0},
            ValueError,
            "concurrency must be an integer of at least 1",
        ),
        ({"max_itemz": 3}, TypeError, "unexpected keyword argument 'max_itemz'"),
    ],
)
def test_bad_arguments_are_refused_with_a_clear_error(
    offline_client: service_api.Client,
    kwargs: dict[str, Any],
    error: type[Exception],
    message: str,
) -> None:
    # The endpoints whose records have an identifier field: one without needs a key
    # named, which is not what these cases are about.
    keyed = [name for name, e in LIST_ENDPOINTS.items() if e.id_field is not None]
    arguments: dict[str, Any] = {"accounts": ["acct-1"], "endpoints": keyed, **kwargs}
    accounts = arguments.pop("accounts")
    with pytest.raises(error, match=re.escape(message)):
        source(offline_client, accounts, **arguments)


def test_an_identifier_can_be_named_for_an_endpoint(
    offline_client: service_api.Client,
) -> None:
    built = source(
        offline_client,
        ["acct-1"],
        endpoints=["devices"],
        primary_keys={"devices": "serialNumber"},
    )
    columns = built.resources["devices"].compute_table_schema()["columns"]
    assert columns["serialNumber"]["primary_key"]
    assert "deviceId" not in columns


def test_without_dlt_the_package_imports_and_the_module_names_the_extra() -> None:
    # A child interpreter where ``import dlt`` fails, as in an install without the extra.
    code = (
        "import sys; sys.modules['dlt'] = None\n"
        "import service_api\n"
        "try:\n"
        "    import service_api.dlt\n"
        "except ImportError as exc:\n"
        "    print(exc)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert done.stdout == "service_api.dlt needs dlt: pip install 'service-api[dlt]'\n"


def test_public_names_are_sorted_and_documented() -> None:
    import service_api.dlt

    exported = list(service_api.dlt.__all__)
    assert exported == sorted(exported)
    for name in exported:
        assert getattr(service_api.dlt, name).__doc__, name
    assert service_api.dlt.__doc__


def test_an_endpoint_without_an_identifier_replaces_its_table_and_stops_no_other(
    offline_client: service_api.Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    import dataclasses

    from service_api.dlt import _source
    from service_api_client.api import LIST_ENDPOINTS

    devices = LIST_ENDPOINTS["devices"]
    nameless = dataclasses.replace(devices, name="readings", id_field=None)
    monkeypatch.setattr(
        _source, "LIST_ENDPOINTS", {"readings": nameless, "devices": devices}
    )
    built = source(offline_client, ["acct-1"])
    assert list(built.resources) == ["readings", "devices"]
    readings = built.resources["readings"]
    assert readings.write_disposition == "replace"
    columns = readings.compute_table_schema()["columns"]
    assert not any(c.get("primary_key") for c in columns.values())
    assert built.resources["devices"].write_disposition == "merge"
    # A key named makes it merge, as any other.
    built = source(offline_client, ["acct-1"], primary_keys={"readings": "deviceId"})
    assert built.resources["readings"].write_disposition == "merge"
    columns = built.resources["readings"].compute_table_schema()["columns"]
    assert columns["deviceId"]["primary_key"]
