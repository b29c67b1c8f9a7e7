"""List endpoints come from the generated registry (``LIST_ENDPOINTS``), never named in
the CLI's code; ``--param`` values are checked against the endpoint's own parameters,
by their spec name or their Python name, and converted to the types they declare."""

from __future__ import annotations

import datetime
import importlib
import re
import sys
import textwrap
import types
from collections.abc import Iterator
from pathlib import Path

import pytest

from service_api_cli import _job
from service_api_cli._app import build_parser
from service_api_cli._exit_codes import UsageError
from service_api_cli._job import (
    ListJob,
    endpoint_parameters,
    find_endpoint,
    parse_params,
    resolve_job,
)
from service_api_client.api import LIST_ENDPOINTS, ListEndpoint


def test_the_cli_offers_the_generated_list_endpoints_by_their_path() -> None:
    for name, endpoint in LIST_ENDPOINTS.items():
        assert find_endpoint(name) is endpoint
        module_name = endpoint.module.__name__.rsplit(".", 1)[-1]
        assert find_endpoint(module_name) is endpoint


# A generated-looking list endpoint that did not exist before, with parameters of every
# kind the generator writes (its registry entry is built here as the generator would).
# Its _get_kwargs does what the generated one does with a date: call isoformat().
_FAKE_ENDPOINT = """
import datetime
from typing import Literal
import attrs
from fake_api_pkg.types import UNSET, Unset

Status = Literal["delivered", "in_transit"]  # an enum, as the generator writes it

@attrs.define
class ParcelPage:
    total_records: int
    page_number: int
    page_size: int
    data: list[dict]

def _get_kwargs(*, page_number: int | Unset = 1, page_size: int | Unset = 50,
                status: Status | Unset = UNSET, min_weight: float | Unset = UNSET,
                fragile: bool | Unset = UNSET, limit: int | Unset = UNSET,
                carrier: str | Unset = UNSET,
                created_after: datetime.datetime | Unset = UNSET,
                shipped_on: datetime.date | Unset = UNSET) -> dict:
    params = {"createdAfter": created_after.isoformat(), "shippedOn": shipped_on.isoformat()}
    return {"method": "get", "url": "/parcels/archived", "params": params}

def sync_detailed(*, client: object, page_number: int | Unset = 1, page_size: int | Unset = 50,
                  status: Status | Unset = UNSET, min_weight: float | Unset = UNSET,
                  fragile: bool | Unset = UNSET, limit: int | Unset = UNSET,
                  carrier: str | Unset = UNSET,
                  created_after: datetime.datetime | Unset = UNSET,
                  shipped_on: datetime.date | Unset = UNSET) -> None:
    return None

SUCCESS_MODEL = ParcelPage
"""


@pytest.fixture
def fake_endpoint(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[ListEndpoint]:
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
    # The registry the command line reads, as after `make` with the endpoint in the spec.
    monkeypatch.setattr(_job, "LIST_ENDPOINTS", {**LIST_ENDPOINTS, entry.name: entry})
    yield entry
    for name in [m for m in sys.modules if m.startswith("fake_api_pkg")]:
        del sys.modules[name]


def test_an_endpoint_of_the_registry_is_offered_with_its_own_parameters(
    fake_endpoint: ListEndpoint,
) -> None:
    assert list(endpoint_parameters(fake_endpoint)) == [
        "status",
        "min_weight",
        "fragile",
        "limit",
        "carrier",
        "created_after",
        "shipped_on",
    ]
    assert find_endpoint("parcels-archived") is fake_endpoint
    assert find_endpoint("list_archived_parcels") is fake_endpoint


def test_params_are_checked_and_converted_to_the_declared_types(
    fake_endpoint: ListEndpoint,
) -> None:
    params = parse_params(
        fake_endpoint,
        [
            "status=delivered",
            "min-weight=2.5",
            "fragile=true",
            "limit=7",
            "carrier=7",
            "created_after=2024-05-01T08:00:00Z",
            "shipped_on=2024-05-02",
        ],
    )
    assert params == {
        "status": "delivered",
        "min_weight": 2.5,
        "fragile": True,
        "limit": 7,
        "carrier": "7",
        "created_after": datetime.datetime(2024, 5, 1, 8, tzinfo=datetime.UTC),
        "shipped_on": datetime.date(2024, 5, 2),
    }
    # What the generated code does with them: a date-time given as text used to fail
    # here ('str' object has no attribute 'isoformat').
    sent = fake_endpoint.module._get_kwargs(**params)["params"]
    assert sent == {
        "createdAfter": "2024-05-01T08:00:00+00:00",
        "shippedOn": "2024-05-02",
    }


@pytest.mark.parametrize(
    "name", ["createdAfter", "created_after", "created-after", "CREATEDAFTER"]
)
def test_a_param_is_named_by_its_spec_name_or_its_python_name(
    fake_endpoint: ListEndpoint, name: str
) -> None:
    params = parse_params(fake_endpoint, [f"{name}=2024-05-01"])
    assert params == {"created_after": datetime.datetime(2024, 5, 1)}


@pytest.mark.parametrize(
    ("pair", "message"),
    [
        ("colour=red", "no parameter 'colour'.*accepted: status, min_weight"),
        ("status=lost", "--param status='lost': expected one of delivered, in_transit"),
        ("limit=many", "--param limit='many': expected an integer"),
        ("minWeight=heavy", "--param minWeight='heavy': expected a number"),
        ("fragile=maybe", "expected one of true, false"),
        (
            "createdAfter=yesterday",
            "--param createdAfter='yesterday': expected an ISO 8601 date-time, "
            "such as 2024-05-01T08:00:00Z",
        ),
        ("shipped_on=2024-05-02T08:00", "expected an ISO 8601 date, such as"),
        ("status", "NAME=VALUE"),
        ("page_size=10", "--page-size"),
        ("pageNumber=3", "driven by the pagination"),
    ],
)
def test_bad_params_are_usage_errors_that_say_why(
    fake_endpoint: ListEndpoint, pair: str, message: str
) -> None:
    with pytest.raises(UsageError, match=message):
        parse_params(fake_endpoint, [pair])


def test_a_parameter_the_function_requires_must_be_given() -> None:
    # A list under a parent (/shipments/{shipmentId}/events): its function takes the
    # parent's identifier first, with no default.
    def sync_detailed(
        shipment_id: str, *, client: object, page_number: int = 1, page_size: int = 50
    ) -> None:
        return None

    module = types.ModuleType("list_shipment_events")
    module.sync_detailed = sync_detailed  # type: ignore[attr-defined]
    events = ListEndpoint("shipment-events", module, dict, dict, "eventId")
    with pytest.raises(
        UsageError, match="'shipment-events' needs --param shipment_id="
    ):
        parse_params(events, [])
    assert parse_params(events, ["shipmentId=S1"]) == {"shipment_id": "S1"}


def test_the_job_holds_the_converted_params(
    fake_endpoint: ListEndpoint, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SERVICE_API_BASE_URL", "http://127.0.0.1:9/public/v3")
    monkeypatch.setenv("SERVICE_API_CLIENT_ID", "id")
    monkeypatch.setenv("SERVICE_API_CLIENT_SECRET", "secret")
    argv = [
        "list",
        "parcels-archived",
        "--account",
        "a",
        "--param",
        "createdAfter=2024",
    ]
    with pytest.raises(UsageError, match="createdAfter='2024': expected an ISO 8601"):
        resolve_job(build_parser().parse_args(argv))
    argv[-1] = "createdAfter=2024-05-01T08:00:00+02:00"
    job = resolve_job(build_parser().parse_args(argv))
    assert isinstance(job, ListJob)
    assert job.endpoint is fake_endpoint
    offset = datetime.timezone(datetime.timedelta(hours=2))
    assert job.params == {
        "created_after": datetime.datetime(2024, 5, 1, 8, tzinfo=offset)
    }


def test_an_unknown_endpoint_lists_the_known_ones() -> None:
    known = ", ".join(LIST_ENDPOINTS)
    with pytest.raises(
        UsageError, match=re.escape(f"unknown endpoint 'parcels' (known: {known})")
    ):
        find_endpoint("parcels")


@pytest.mark.parametrize("name", list(LIST_ENDPOINTS))
def test_every_generated_list_needs_no_param_and_names_those_it_takes(
    name: str,
) -> None:
    endpoint = LIST_ENDPOINTS[name]
    assert parse_params(endpoint, []) == {}
    accepted = ", ".join(endpoint_parameters(endpoint)) or "none"
    with pytest.raises(UsageError, match=re.escape(f"(accepted: {accepted})")):
        parse_params(endpoint, ["no_such_parameter=x"])
