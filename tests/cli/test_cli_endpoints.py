"""List endpoints come from the generated registry (``LIST_ENDPOINTS``), never named in
the CLI's code; ``--param`` values are checked against the endpoint's own parameters as
the registry describes them (``ListEndpoint.parameters``), by their spec name or their
Python name, and converted by their kind and choices. A path or header parameter has an
option of its own (``--shipment-id S1``)."""

from __future__ import annotations

import datetime
import importlib
import re
import sys
import textwrap
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

import service_api_client.api
from service_api_cli import _job
from service_api_cli._app import build_parser
from service_api_cli._exit_codes import UsageError
from service_api_cli._job import (
    ListJob,
    LoadJob,
    convert,
    find_endpoint,
    parse_params,
    resolve_job,
)
from service_api_client.api import LIST_ENDPOINTS, ListEndpoint, ListParameter


def test_the_cli_offers_the_generated_list_endpoints_by_their_path() -> None:
    for name, endpoint in LIST_ENDPOINTS.items():
        assert find_endpoint(name) is endpoint


# A generated-looking list endpoint that did not exist before: its _get_kwargs does what
# the generated one does with its values (isoformat() of a date, str() of a UUID); its
# registry entry, with a parameter of every kind, is built here as the generator would.
_FAKE_ENDPOINT = """
def _get_kwargs(*, page_number=1, page_size=50, status=None, min_weight=None,
                fragile=None, limit=None, carrier=None, created_after=None,
                shipped_on=None, parcel_ref=None, tags=None) -> dict:
    params = {"createdAfter": created_after.isoformat(), "shippedOn": shipped_on.isoformat(),
              "parcelRef": str(parcel_ref), "tags": tags}
    return {"method": "get", "url": "/parcels/archived", "params": params}

SUCCESS_MODEL = dict
"""

PARAMETERS = (
    ListParameter("status", "status", "query", choices=("delivered", "in_transit")),
    ListParameter("minWeight", "min_weight", "query", kind="number"),
    ListParameter("fragile", "fragile", "query", kind="boolean"),
    ListParameter("limit", "limit", "query", kind="integer"),
    ListParameter("carrier", "carrier", "query"),
    ListParameter("createdAfter", "created_after", "query", kind="date-time"),
    ListParameter("shippedOn", "shipped_on", "query", kind="date"),
    ListParameter("parcelRef", "parcel_ref", "query", kind="uuid"),
    ListParameter("tags", "tags", "query", kind="array"),
    ListParameter("box", "box", "query", kind="object"),
)


@pytest.fixture
def fake_endpoint(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[ListEndpoint]:
    root = tmp_path / "fake_api_pkg"
    root.mkdir()
    (root / "__init__.py").write_text("")
    (root / "list_archived_parcels.py").write_text(textwrap.dedent(_FAKE_ENDPOINT))
    monkeypatch.syspath_prepend(str(tmp_path))
    module = importlib.import_module("fake_api_pkg.list_archived_parcels")
    entry = ListEndpoint(
        "parcels-archived", module, dict, dict, None, parameters=PARAMETERS
    )
    # The registry the command line reads, as after `make` with the endpoint in the spec.
    monkeypatch.setattr(_job, "LIST_ENDPOINTS", {**LIST_ENDPOINTS, entry.name: entry})
    yield entry
    for name in [m for m in sys.modules if m.startswith("fake_api_pkg")]:
        del sys.modules[name]


def test_an_endpoint_of_the_registry_is_offered_by_its_name(
    fake_endpoint: ListEndpoint,
) -> None:
    assert find_endpoint("parcels-archived") is fake_endpoint


def test_params_are_checked_and_converted_by_the_registry_s_kinds(
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
            "parcelRef=123e4567-e89b-12d3-a456-426614174000",
            "tags=red, blue",
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
        "parcel_ref": uuid.UUID("123e4567-e89b-12d3-a456-426614174000"),
        "tags": ["red", "blue"],
    }
    # What the generated code does with them: a date-time given as text used to fail
    # here ('str' object has no attribute 'isoformat').
    sent = fake_endpoint.module._get_kwargs(**params)["params"]
    assert sent == {
        "createdAfter": "2024-05-01T08:00:00+00:00",
        "shippedOn": "2024-05-02",
        "parcelRef": "123e4567-e89b-12d3-a456-426614174000",
        "tags": ["red", "blue"],
    }


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("2024-05-01T08:00:00Z", datetime.datetime(2024, 5, 1, 8, tzinfo=datetime.UTC)),
        ("2024-05-01T08:00:00", datetime.datetime(2024, 5, 1, 8)),
        (
            "2024-05-01T08:00:00+02:00",
            datetime.datetime(
                2024, 5, 1, 8, tzinfo=datetime.timezone(datetime.timedelta(hours=2))
            ),
        ),
        ("2024-05-01", datetime.datetime(2024, 5, 1)),
    ],
)
def test_a_date_time_is_iso_8601_with_or_without_z(
    raw: str, expected: datetime.datetime
) -> None:
    created = ListParameter("createdAfter", "created_after", "query", kind="date-time")
    assert convert(created, raw) == expected


def test_an_enum_gives_its_member_of_its_own_type() -> None:
    levels = ListParameter("level", "level", "query", kind="integer", choices=(1, 2))
    assert convert(levels, "2") == 2
    with pytest.raises(ValueError, match="expected one of 1, 2"):
        convert(levels, "3")


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
        ("colour=red", "no parameter 'colour'.*accepted: status, minWeight, fragile"),
        ("status=lost", "--param status='lost': expected one of delivered, in_transit"),
        ("limit=many", "--param limit='many': expected an integer"),
        ("limit=2.5", "--param limit='2.5': expected an integer"),
        ("minWeight=heavy", "--param minWeight='heavy': expected a number"),
        ("fragile=maybe", "--param fragile='maybe': expected true or false"),
        (
            "createdAfter=yesterday",
            "--param createdAfter='yesterday': expected an ISO 8601 date-time, "
            "such as 2024-05-01T08:00:00Z",
        ),
        ("shipped_on=2024-05-02T08:00", "expected an ISO 8601 date, such as"),
        ("parcelRef=P-1", "--param parcelRef='P-1': expected a UUID, such as"),
        ("box=1", "--param box='1': an object cannot be given on the command line"),
        ("status", "NAME=VALUE"),
        # The page is the pagination's: the registry leaves its parameters out.
        ("page_size=10", "no parameter 'page_size'.*records per page: --page-size"),
        ("pageNumber=3", "no parameter 'pageNumber'"),
    ],
)
def test_bad_params_are_usage_errors_that_say_why(
    fake_endpoint: ListEndpoint, pair: str, message: str
) -> None:
    with pytest.raises(UsageError, match=message):
        parse_params(fake_endpoint, [pair])


# A list under a parent (/shipments/{shipmentId}/events) with a required header, and one
# under a parent that has no list (/carriers/{carrierId}/rates): as the generator writes
# them, the first with its parent and the field that gives its parameter.
EVENTS = ListEndpoint(
    "shipment-events",
    LIST_ENDPOINTS["shipments"].module,
    dict,
    dict,
    "eventId",
    parent="shipments",
    parent_fields={"shipmentId": "shipmentId"},
    parameters=(
        ListParameter("shipmentId", "shipment_id", "path", required=True),
        ListParameter("x-source", "x_source", "header", required=True),
    ),
)
RATES = ListEndpoint(
    "carrier-rates",
    LIST_ENDPOINTS["shipments"].module,
    dict,
    dict,
    "rateId",
    parameters=(ListParameter("carrierId", "carrier_id", "path", required=True),),
)


@pytest.fixture
def nested(monkeypatch: pytest.MonkeyPatch) -> None:
    """The registry with EVENTS and RATES, for the job and for the parser's options."""
    registry = {**LIST_ENDPOINTS, EVENTS.name: EVENTS, RATES.name: RATES}
    monkeypatch.setattr(_job, "LIST_ENDPOINTS", registry)
    monkeypatch.setattr(service_api_client.api, "LIST_ENDPOINTS", registry)
    monkeypatch.setenv("SERVICE_API_BASE_URL", "http://127.0.0.1:9/public/v3")
    monkeypatch.setenv("SERVICE_API_CLIENT_ID", "id")
    monkeypatch.setenv("SERVICE_API_CLIENT_SECRET", "secret")
    monkeypatch.setenv("SERVICE_API_ACCOUNT_ID", "acct-1")


@pytest.mark.usefixtures("nested")
def test_a_parameter_the_endpoint_requires_is_named_by_its_option() -> None:
    with pytest.raises(
        UsageError,
        match=re.escape(
            "endpoint 'shipment-events' needs --shipment-id VALUE "
            "(or --param shipmentId=VALUE)"
        ),
    ):
        parse_params(EVENTS, ["x-source=cli"])
    with pytest.raises(UsageError, match="needs --x-source VALUE"):
        parse_params(EVENTS, ["shipmentId=S1"])
    both = parse_params(EVENTS, ["shipmentId=S1", "x_source=cli"])
    assert both == {"shipment_id": "S1", "x_source": "cli"}
    # load takes every parent's records when the parent's id is left out, where the
    # parents have a list; a parent without one must be named all the same.
    assert parse_params(EVENTS, ["x-source=cli"], parents=True) == {"x_source": "cli"}
    with pytest.raises(UsageError, match="needs --carrier-id VALUE"):
        parse_params(RATES, [], parents=True)


@pytest.mark.usefixtures("nested")
def test_a_required_parameter_has_an_option_of_its_own(
    capsys: pytest.CaptureFixture[str],
) -> None:
    flag = "--shipment-id"
    argv = ["list", "shipment-events", flag, "S1", "--x-source", "cli"]
    job = resolve_job(build_parser().parse_args(argv))
    assert isinstance(job, ListJob)
    assert job.params == {"shipment_id": "S1", "x_source": "cli"}
    # Before the endpoint too: the option is the parser's, not a loose word.
    argv = ["load", flag, "S1", "shipment-events", "--param", "x-source=cli"]
    job = resolve_job(build_parser().parse_args(argv))
    assert isinstance(job, LoadJob)
    assert job.params == {"shipment-events": {"shipment_id": "S1", "x_source": "cli"}}
    with pytest.raises(SystemExit):
        build_parser().parse_args(["list", "--help"])
    shown = capsys.readouterr().out
    assert "--shipment-id VALUE" in shown
    assert "--x-source VALUE" in shown


@pytest.mark.usefixtures("nested")
def test_load_gives_every_parameter_to_every_endpoint_named() -> None:
    argv = ["load", "shipment-events", "--x-source", "cli"]
    job = resolve_job(build_parser().parse_args(argv))
    assert isinstance(job, LoadJob)
    assert job.params == {"shipment-events": {"x_source": "cli"}}
    # One that an endpoint named does not take is refused: load those one at a time.
    with pytest.raises(UsageError, match="'shipments' has no parameter 'x-source'"):
        resolve_job(build_parser().parse_args([*argv[:2], "shipments", *argv[2:]]))


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
def test_every_generated_list_names_the_parameters_it_takes(name: str) -> None:
    endpoint = LIST_ENDPOINTS[name]
    accepted = ", ".join(p.name for p in endpoint.parameters) or "none"
    with pytest.raises(UsageError, match=re.escape(f"(accepted: {accepted};")):
        parse_params(endpoint, ["no_such_parameter=x"])
