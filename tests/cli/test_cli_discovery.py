"""List endpoints are found in the generated package, never named in the CLI's code."""

from __future__ import annotations

import importlib
import sys
import textwrap
import types
from collections.abc import Iterator
from pathlib import Path

import pytest

from service_api_cli._discovery import (
    discover_list_endpoints,
    find_endpoint,
    parse_params,
)
from service_api_cli._exit_codes import UsageError


def test_the_generated_list_endpoints_are_found_by_their_path() -> None:
    endpoints = discover_list_endpoints()
    assert list(endpoints) == ["devices", "shipments"]
    assert (
        endpoints["shipments"].module.__name__ == "service_api_client.api.shipments.list_shipments"
    )
    # /authenticate answers a token, not a page: not a list endpoint.
    assert all("authenticate" not in e.qualified_name for e in endpoints.values())


# A generated-looking package with one list endpoint that did not exist before, with
# parameters of every kind the generator writes, and an operation that is not a list.
_FAKE_ENDPOINT = """
from typing import Literal
import attrs
from fake_api_pkg.types import UNSET, Unset

Status = Literal["delivered", "in_transit"]

@attrs.define
class ParcelPage:
    total_records: int
    page_number: int
    page_size: int
    data: list[dict]

def _get_kwargs(*, page_number: int | Unset = 1, page_size: int | Unset = 50,
                status: Status | Unset = UNSET, min_weight: float | Unset = UNSET,
                fragile: bool | Unset = UNSET, limit: int | Unset = UNSET,
                carrier: str | Unset = UNSET) -> dict:
    return {"method": "get", "url": "/parcels/archived", "params": {}}

def sync_detailed(*, client: object, page_number: int | Unset = 1, page_size: int | Unset = 50,
                  status: Status | Unset = UNSET, min_weight: float | Unset = UNSET,
                  fragile: bool | Unset = UNSET, limit: int | Unset = UNSET,
                  carrier: str | Unset = UNSET) -> None:
    return None

SUCCESS_MODEL = ParcelPage
"""

_FAKE_NOT_A_LIST = """
import attrs

@attrs.define
class Thing:
    data: list[dict]

def sync_detailed(*, client: object) -> None:
    return None

SUCCESS_MODEL = Thing
"""


@pytest.fixture
def fake_package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[types.ModuleType]:
    root = tmp_path / "fake_api_pkg"
    (root / "api" / "parcels").mkdir(parents=True)
    (root / "__init__.py").write_text("")
    (root / "types.py").write_text("class Unset:\n    pass\nUNSET = Unset()\n")
    (root / "api" / "__init__.py").write_text("")
    (root / "api" / "parcels" / "__init__.py").write_text("")
    (root / "api" / "parcels" / "list_archived_parcels.py").write_text(
        textwrap.dedent(_FAKE_ENDPOINT)
    )
    (root / "api" / "parcels" / "get_thing.py").write_text(textwrap.dedent(_FAKE_NOT_A_LIST))
    monkeypatch.syspath_prepend(str(tmp_path))
    package = importlib.import_module("fake_api_pkg.api")
    yield package
    for name in [m for m in sys.modules if m.startswith("fake_api_pkg")]:
        del sys.modules[name]


def test_an_endpoint_added_to_the_spec_appears_without_cli_change(
    fake_package: types.ModuleType,
) -> None:
    endpoints = discover_list_endpoints(fake_package)
    assert list(endpoints) == ["parcels-archived"]
    endpoint = endpoints["parcels-archived"]
    assert list(endpoint.parameters) == [
        "status",
        "min_weight",
        "fragile",
        "limit",
        "carrier",
    ]
    assert find_endpoint("list_archived_parcels", endpoints) is endpoint


def test_params_are_checked_and_converted_to_the_declared_types(
    fake_package: types.ModuleType,
) -> None:
    endpoint = discover_list_endpoints(fake_package)["parcels-archived"]
    params = parse_params(
        endpoint,
        ["status=delivered", "min-weight=2.5", "fragile=true", "limit=7", "carrier=7"],
    )
    assert params == {
        "status": "delivered",
        "min_weight": 2.5,
        "fragile": True,
        "limit": 7,
        "carrier": "7",
    }


@pytest.mark.parametrize(
    ("pair", "message"),
    [
        ("colour=red", "no parameter 'colour'.*accepted: status, min_weight"),
        ("status=lost", "expected one of delivered, in_transit"),
        ("limit=many", "expected an integer"),
        ("fragile=maybe", "expected true or false"),
        ("status", "NAME=VALUE"),
        ("page_size=10", "--page-size"),
    ],
)
def test_bad_params_are_usage_errors_that_say_why(
    fake_package: types.ModuleType, pair: str, message: str
) -> None:
    endpoint = discover_list_endpoints(fake_package)["parcels-archived"]
    with pytest.raises(UsageError, match=message):
        parse_params(endpoint, [pair])


def test_an_unknown_endpoint_lists_the_known_ones() -> None:
    with pytest.raises(
        UsageError, match=r"unknown endpoint 'parcels' \(known: devices, shipments\)"
    ):
        find_endpoint("parcels", discover_list_endpoints())


def test_the_generated_endpoints_take_no_extra_params_today() -> None:
    endpoint = find_endpoint("shipments", discover_list_endpoints())
    assert parse_params(endpoint, []) == {}
    with pytest.raises(UsageError, match="accepted: none"):
        parse_params(endpoint, ["status=x"])
