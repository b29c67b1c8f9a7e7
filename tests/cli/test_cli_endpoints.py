"""List endpoints come from the generated registry (``LIST_ENDPOINTS``), never named in
the CLI's code; ``--param`` values are checked against the endpoint's own parameters."""

from __future__ import annotations

import importlib
import re
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from service_api_cli._commands import endpoint_parameters, find_endpoint, parse_params
from service_api_cli._exit_codes import UsageError
from service_api_client.api import LIST_ENDPOINTS, ListEndpoint


def test_the_cli_offers_the_generated_list_endpoints_by_their_path() -> None:
    assert {"devices", "shipments"} <= set(
        LIST_ENDPOINTS
    )  # the seed's, and any the spec adds
    shipments = find_endpoint("shipments", LIST_ENDPOINTS)
    assert (
        shipments.module.__name__ == "service_api_client.api.shipments.list_shipments"
    )
    assert find_endpoint("list_devices", LIST_ENDPOINTS) is LIST_ENDPOINTS["devices"]


# A generated-looking list endpoint that did not exist before, with parameters of every
# kind the generator writes (its registry entry is built here as the generator would).
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


@pytest.fixture
def fake_endpoints(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[dict[str, ListEndpoint]]:
    root = tmp_path / "fake_api_pkg"
    (root / "api" / "parcels").mkdir(parents=True)
    (root / "__init__.py").write_text("")
    (root / "types.py").write_text("class Unset:\n    pass\nUNSET = Unset()\n")
    (root / "api" / "__init__.py").write_text("")
    (root / "api" / "parcels" / "__init__.py").write_text("")
    (root / "api" / "parcels" / "list_archived_parcels.py").write_text(
        textwrap.dedent(_FAKE_ENDPOINT)
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    module = importlib.import_module("fake_api_pkg.api.parcels.list_archived_parcels")
    entry = ListEndpoint("parcels-archived", module, module.ParcelPage, dict, None)
    yield {entry.name: entry}
    for name in [m for m in sys.modules if m.startswith("fake_api_pkg")]:
        del sys.modules[name]


def test_an_endpoint_of_the_registry_is_offered_with_its_own_parameters(
    fake_endpoints: dict[str, ListEndpoint],
) -> None:
    endpoint = fake_endpoints["parcels-archived"]
    assert list(endpoint_parameters(endpoint)) == [
        "status",
        "min_weight",
        "fragile",
        "limit",
        "carrier",
    ]
    assert find_endpoint("list_archived_parcels", fake_endpoints) is endpoint


def test_params_are_checked_and_converted_to_the_declared_types(
    fake_endpoints: dict[str, ListEndpoint],
) -> None:
    endpoint = fake_endpoints["parcels-archived"]
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
    fake_endpoints: dict[str, ListEndpoint], pair: str, message: str
) -> None:
    endpoint = fake_endpoints["parcels-archived"]
    with pytest.raises(UsageError, match=message):
        parse_params(endpoint, [pair])


def test_an_unknown_endpoint_lists_the_known_ones() -> None:
    known = ", ".join(LIST_ENDPOINTS)
    with pytest.raises(
        UsageError, match=re.escape(f"unknown endpoint 'parcels' (known: {known})")
    ):
        find_endpoint("parcels", LIST_ENDPOINTS)


def test_the_generated_endpoints_take_no_extra_params_today() -> None:
    endpoint = find_endpoint("shipments", LIST_ENDPOINTS)
    assert parse_params(endpoint, []) == {}
    with pytest.raises(UsageError, match="accepted: none"):
        parse_params(endpoint, ["status=x"])
