"""Every resource model builds from any JSON object and gives it back unchanged.

The resource schemas of openapi.yaml are guesses, so the generated models must survive
whatever the real service sends: nested nulls, wrong types, unknown fields, dates in
any spelling. Two properties, over arbitrary JSON objects biased towards the field
names the spec guesses:

* ``to_dict(from_dict(x))`` is ``x``, byte for byte once serialised (so ``1`` stays
  ``1`` and not ``1.0``, ``True`` stays ``true``, ``"Z"`` stays ``"Z"``);
* every attribute holds a value of its declared type, or ``UNSET``: a value that does
  not match is not cast into the attribute but kept as sent (``record["field"]``), and
  a required field left out is ``UNSET`` though typed as the spec says;
* every field sent is read by its JSON name (``record["shipmentId"]``, ``.get()``,
  ``in``, ``keys()``): a declared one gives its attribute's value, any other the value
  as sent (a map's value read as the map's kind: a record of the object sent), and a
  declared field that is UNSET is absent;

through the generated ``from_dict`` / ``to_dict``, and through ``service_api.paginate``
and ``paginate`` (``async for``) against a small server on 127.0.0.1 that serves the records.

The declared fields of a model are read from its ``_ATTRIBUTES`` (JSON name ->
attribute, from its field table), so the same checks hold for models of no named schema
(an inline nested object) and for fields named as Python's own words (``from`` is
``from_``); the models of the project's spec grown by tests/spec/growth.yaml, generated
once for the module, are checked as well.
"""

from __future__ import annotations

import asyncio
import datetime
import importlib
import json
import math
import sys
import types
import typing
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import attrs
import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from spec_copy import GROWTH, build_spec_copy, load_generated
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

import service_api
import service_api_client.models as models
from service_api_client import Client
from service_api_client.api.devices import list_devices
from service_api_client.api.shipments import list_shipments
from service_api_client.records import DATE_TIME, Record
from service_api_client.types import UNSET, Unset
from service_api_mock import serve_asgi
from service_api_mock._data import make_dataset


def _record_models(package: types.ModuleType) -> list[type[Any]]:
    """The models that must build from any JSON object: every generated model with no
    required field (a record the service sends), so that a model the spec gains is
    covered without editing this test."""
    found = []
    for name in sorted(package.__all__):
        model = getattr(package, name)
        if not (attrs.has(model) and hasattr(model, "from_dict")):
            continue
        if all(
            attribute.default is not attrs.NOTHING or not attribute.init
            for attribute in attrs.fields(model)
        ):
            found.append(model)
    return found


def _declared(model: Any) -> dict[str, str]:
    """The attribute of each declared field of ``model``, by its JSON name."""
    found: dict[str, str] = model._ATTRIBUTES
    return found


def _is_unset(model: Any, value: object) -> bool:
    """Whether ``value`` is the UNSET of ``model``'s package."""
    package = model.__module__.rpartition(".models.")[0]
    return value is sys.modules[f"{package}.types"].UNSET


RECORD_MODELS = _record_models(models)

# Every field name the models declare, so that generated objects hit the typed paths.
GUESSED_NAMES = sorted({name for model in RECORD_MODELS for name in _declared(model)})


def _date_strings() -> st.SearchStrategy[str]:
    """Date-times as a server may spell them: "Z" or an offset, 0 to 6 fractional
    digits, a date alone; and strings that only look like one."""
    moments = st.datetimes(
        min_value=datetime.datetime(1, 1, 2),
        max_value=datetime.datetime(9999, 12, 30),
        timezones=st.sampled_from(
            [None, datetime.UTC, datetime.timezone(datetime.timedelta(hours=-5))]
        ),
    )

    def spell(moment: datetime.datetime, style: int) -> str:
        text = moment.isoformat(
            timespec=["seconds", "milliseconds", "microseconds"][style % 3]
        )
        if style >= 3 and text.endswith("+00:00"):
            text = text[:-6] + "Z"
        return text if style != 5 else text[:10]

    return st.one_of(
        st.builds(spell, moments, st.integers(0, 5)),
        st.sampled_from(
            [
                "",
                "today",
                "2024-02-30T00:00:00Z",
                "2024-01-01T25:00:00",
                "07/31/2024 10:00:00",
            ]
        ),
    )


JSON_SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**63), max_value=2**63),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=12),
    _date_strings(),
)


def _json_objects(
    values: st.SearchStrategy[Any], names: list[str] = GUESSED_NAMES
) -> st.SearchStrategy[dict[str, Any]]:
    keys = st.one_of(st.sampled_from(names), st.text(max_size=8))
    return st.dictionaries(keys, values, max_size=8)


JSON_VALUES: st.SearchStrategy[Any] = st.recursive(
    JSON_SCALARS,
    lambda children: st.one_of(st.lists(children, max_size=4), _json_objects(children)),
    max_leaves=30,
)
JSON_OBJECTS = _json_objects(JSON_VALUES)


def _canonical(value: object) -> str:
    return json.dumps(value, sort_keys=True)


def _conforms(value: object, hint: Any) -> bool:
    """Whether ``value`` is of the annotated type (the kinds the generated models use)."""
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        return any(_conforms(value, arm) for arm in typing.get_args(hint))
    if origin is list:
        (item,) = typing.get_args(hint)
        return isinstance(value, list) and all(_conforms(v, item) for v in value)
    if origin is dict:
        return isinstance(value, dict)
    if origin is typing.Literal:
        return value in typing.get_args(hint)
    if hint is Any:
        return True
    if hint is type(None):
        return value is None
    if hint is float:
        return type(value) in (int, float)
    if hint is int:
        return type(value) is int
    return isinstance(value, hint)


def _check_fields(record: Any) -> None:
    """Every attribute of ``record`` (and of the models in it) is of its declared type;
    a required field's may be UNSET, typed as the spec says though it is, where the
    record keeps what was sent: the field left out, or a value that is not of its
    type kept as sent (a tolerant record tells both as drift). A value of its type
    that was sent is read."""
    cls = type(record)
    hints = typing.get_type_hints(cls)
    required = {f.attribute: f.name for f in cls._FIELDS if f.required}
    for attribute in attrs.fields(cls):
        value = getattr(record, attribute.name)
        if attribute.name.startswith("_"):
            continue
        if attribute.name in required and _is_unset(cls, value):
            name = required[attribute.name]
            kept = record.additional_properties
            assert name not in kept or not _conforms(kept[name], hints[attribute.name])
            continue
        assert _conforms(value, hints[attribute.name]), (
            cls.__name__,
            attribute.name,
            value,
        )
        nested = value if isinstance(value, list) else [value]
        for item in nested:
            if attrs.has(type(item)):
                _check_fields(item)


def test_the_record_models_are_found() -> None:
    names = {model.__name__ for model in RECORD_MODELS}
    assert {"Shipment", "ShipmentLeg", "Address", "Coordinates", "Device"} <= names


def _round_trips(model: Any, raw: dict[str, Any]) -> None:
    sent = _canonical(raw)
    record = model.from_dict(raw)
    assert _canonical(record.to_dict()) == sent
    assert _canonical(raw) == sent, "from_dict changed its argument"
    _check_fields(record)


def _written(value: Any) -> Any:
    """``value`` as JSON writes it: records (in lists too) by their ``to_dict()``."""
    if attrs.has(type(value)) and hasattr(value, "to_dict"):
        return value.to_dict()
    if type(value) is list:
        return [_written(item) for item in value]
    return value


def _read_back(read: Any, sent: Any) -> Any:
    """``read`` where it writes back as ``sent`` (a map's value read as a record),
    else ``sent``: what the record must give for a map's key."""
    return read if _canonical(_written(read)) == _canonical(sent) else sent


def _reads_by_json_names(model: Any, raw: dict[str, Any]) -> None:
    record = model.from_dict(raw)
    declared = _declared(model)
    assert set(record.keys()) == set(raw) == set(dict(record))
    for name, value in raw.items():
        assert name in record
        # A declared field gives its attribute; any other, or a value the attribute
        # could not hold, the value as sent.
        expected = value
        if name in declared and not _is_unset(model, getattr(record, declared[name])):
            expected = getattr(record, declared[name])
        elif name not in declared and model._EXTRA is not None:
            # A map's value (additionalProperties of a schema) is read as its kind: a
            # record of the map's model is the object sent, written back.
            expected = _read_back(record[name], value)
        assert record[name] is expected or record[name] == expected, (
            name,
            record[name],
        )
        assert (
            record.get(name, KeyError) is record[name]
            or record.get(name) == record[name]
        )
    for name in set(declared) - set(raw):
        assert name not in record
        assert record.get(name, "absent") == "absent"
        with pytest.raises(KeyError):
            record[name]


@pytest.mark.parametrize("model", RECORD_MODELS, ids=lambda m: m.__name__)
@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(raw=JSON_OBJECTS)
def test_any_json_object_builds_and_round_trips(
    model: Any, raw: dict[str, Any]
) -> None:
    _round_trips(model, raw)


@pytest.mark.parametrize("model", RECORD_MODELS, ids=lambda m: m.__name__)
@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(raw=JSON_OBJECTS)
def test_every_field_sent_reads_by_its_json_name(
    model: Any, raw: dict[str, Any]
) -> None:
    _reads_by_json_names(model, raw)


def _tolerant_models(package: types.ModuleType) -> list[type[Any]]:
    """Every generated model but the page envelopes (whose required fields the pager
    needs): those with required fields too."""
    found = []
    for name in sorted(package.__all__):
        model: Any = getattr(package, name)
        if isinstance(model, type) and issubclass(model, Record) and not model._STRICT:
            found.append(model)
    return found


TOLERANT_MODELS = _tolerant_models(models)


def test_models_with_required_fields_are_tolerant_too() -> None:
    required = [m for m in TOLERANT_MODELS if any(f.required for f in m._FIELDS)]
    assert required, "the spec has no model with a required field but the pages"
    assert len(TOLERANT_MODELS) > len(RECORD_MODELS)


@pytest.mark.parametrize("model", TOLERANT_MODELS, ids=lambda m: m.__name__)
@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(raw=JSON_OBJECTS)
def test_any_json_object_builds_even_without_its_required_fields(
    model: Any, raw: dict[str, Any]
) -> None:
    """A required field left out, a value of another type, an extra field: the record
    builds, gives back what was sent, and reads every field by its JSON name."""
    record = model.from_dict(raw)
    assert _canonical(record.to_dict()) == _canonical(raw)
    assert list(record.keys()) == list(raw)
    for declared in model._FIELDS:
        if declared.required and declared.name not in raw:
            assert _is_unset(model, getattr(record, declared.attribute))
            assert declared.name not in record


@pytest.fixture(scope="module")
def grown_models(tmp_path_factory: pytest.TempPathFactory) -> list[type[Any]]:
    """The record models of the project's spec grown by growth.yaml (inline nested
    objects, fields named ``type``, ``class``, ``from``), imported beside this package."""
    copy = build_spec_copy(tmp_path_factory.mktemp("grown-models"), GROWTH)
    load_generated(copy, "grown_models_client")
    return _record_models(importlib.import_module("grown_models_client.models"))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_grown_models_build_from_any_json_object_and_read_by_json_names(
    grown_models: list[type[Any]], data: st.DataObject
) -> None:
    names = sorted({name for model in grown_models for name in _declared(model)})
    raw = data.draw(_json_objects(JSON_VALUES, names))
    for model in grown_models:
        _round_trips(model, raw)
        _reads_by_json_names(model, raw)


def test_an_inline_object_and_python_words_read_as_sent(
    grown_models: list[type[Any]],
) -> None:
    by_name = {model.__name__: model for model in grown_models}
    # The nested object of no named schema is a model of its own; from/type/class are
    # attributes with a "_" after them and JSON names as sent.
    raw = {
        "eventId": "e-1",
        "type": "Arrived",
        "location": {"latitude": 51.5, "longitude": "7", "from": "dock 4"},
    }
    event = by_name["ShipmentEvent"].from_dict(raw)
    assert event.type_ == event["type"] == "Arrived"
    assert attrs.has(type(event.location)), event.location
    assert (event.location.from_, event.location["from"]) == ("dock 4", "dock 4")
    assert _is_unset(type(event.location), event.location.longitude)
    assert event.location["longitude"] == "7"
    assert event.to_dict() == raw
    service = by_name["CarrierService"].from_dict({"class": "express", "from": "HUB"})
    assert (service.class_, service.from_) == ("express", "HUB")
    assert dict(service) == {"class": "express", "from": "HUB"}


def test_a_shipment_reads_by_json_names_beside_its_attributes() -> None:
    raw = make_dataset("shipments", "acct-1", seed=3, records=1)[0]
    shipment = models.Shipment.from_dict(raw)
    assert shipment["shipmentId"] == shipment.shipment_id == raw["shipmentId"]
    assert shipment["shipmentLegs"] is shipment.shipment_legs
    assert shipment.get("status", "unknown") == raw["status"]
    assert "referenceNumber" in shipment
    assert "nothing" not in shipment
    assert 1 not in shipment
    assert shipment.get("nothing") is None
    assert shipment.get("nothing", 0) == 0
    assert list(shipment.keys())[:3] == ["shipmentId", "devices", "shipmentLegs"]
    assert dict(shipment).keys() == raw.keys()
    empty = models.Shipment()
    assert "shipmentId" not in empty
    assert empty.get("shipmentId", "none") == "none"
    with pytest.raises(KeyError, match="shipmentId"):
        empty["shipmentId"]
    assert list(empty.keys()) == []


def test_fields_are_written_by_attribute_or_json_name() -> None:
    shipment = models.Shipment(shipment_id="s-1")
    shipment["note"] = "fragile"
    assert shipment["note"] == "fragile"
    assert shipment.to_dict()["note"] == "fragile"
    del shipment["note"]
    assert "note" not in shipment
    with pytest.raises(
        TypeError, match=r"'shipmentId' is a declared field: set record\.shipment_id"
    ):
        shipment["shipmentId"] = "s-2"
    shipment.shipment_id = "s-2"
    assert shipment["shipmentId"] == "s-2"


def _nested_shipment(leg: dict[str, Any]) -> dict[str, Any]:
    return {"shipmentId": "s-1", "shipmentLegs": [leg], "devices": ["d-1"]}


def _leg_values() -> st.SearchStrategy[dict[str, Any]]:
    """A shipment leg whose guessed fields get values of every JSON kind."""
    return st.fixed_dictionaries(
        {},
        optional=dict.fromkeys(_declared(models.ShipmentLeg), JSON_VALUES),
    )


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(leg=_leg_values())
def test_a_shipment_with_any_leg_round_trips(leg: dict[str, Any]) -> None:
    raw = _nested_shipment(leg)
    shipment = models.Shipment.from_dict(raw)
    assert _canonical(shipment.to_dict()) == _canonical(raw)
    _check_fields(shipment)


@pytest.mark.parametrize(
    ("raw", "check"),
    [
        pytest.param(
            {"shipFromDate": "2024-05-01T08:30:00Z"},
            lambda leg: (
                leg.ship_from_date
                == datetime.datetime(2024, 5, 1, 8, 30, tzinfo=datetime.UTC)
            ),
            id="Z-parsed",
        ),
        pytest.param(
            {"shipFromDate": "2024-05-01T08:30:00.1234567Z"},
            lambda leg: leg.ship_from_date.microsecond == 123456,
            id="seven-digits-truncated-and-written-back-as-sent",
        ),
        pytest.param(
            {"shipFromDate": "31/07/2024 10:00"},
            lambda leg: (
                leg.ship_from_date is UNSET
                and leg["shipFromDate"] == "31/07/2024 10:00"
            ),
            id="not-iso-kept-as-sent",
        ),
        pytest.param(
            {"fromAddress": None, "toAddress": "Main St 1"},
            lambda leg: (
                leg.from_address is None
                and leg.to_address is UNSET
                and leg["toAddress"] == "Main St 1"
            ),
            id="null-and-string-address",
        ),
        pytest.param(
            {"fromCoordinates": {"latitude": "51.5", "longitude": 7}},
            lambda leg: (
                leg.from_coordinates.latitude is UNSET
                and leg.from_coordinates["latitude"] == "51.5"
                and leg.from_coordinates.longitude == 7
            ),
            id="string-latitude-kept",
        ),
        pytest.param(
            {"mode": "Barge"},
            lambda leg: leg.mode == "Barge",
            id="fifth-mode-is-a-mode",
        ),
    ],
)
def test_leg_fields_as_documented(
    raw: dict[str, Any], check: Callable[[Any], bool]
) -> None:
    leg = models.ShipmentLeg.from_dict(raw)
    assert check(leg), leg
    assert leg.to_dict() == raw


def test_a_number_id_stays_as_sent() -> None:
    shipment = models.Shipment.from_dict({"shipmentId": 42, "devices": {"0": "d"}})
    assert shipment.shipment_id is UNSET
    assert isinstance(shipment.shipment_id, Unset)
    assert shipment["shipmentId"] == 42
    assert shipment["devices"] == {"0": "d"}


def test_a_new_date_is_written_with_isoformat() -> None:
    device = models.Device.from_dict(
        {"deviceId": "d", "measurementTime": "2024-05-01T08:30:00Z"}
    )
    assert device.to_dict()["measurementTime"] == "2024-05-01T08:30:00Z"
    device.measurement_time = datetime.datetime(2025, 1, 2, tzinfo=datetime.UTC)
    assert device.to_dict()["measurementTime"] == "2025-01-02T00:00:00+00:00"


@pytest.mark.parametrize("model", RECORD_MODELS, ids=lambda m: m.__name__)
@pytest.mark.parametrize("bad", [None, 5, "text", [], [["key", "value"]]], ids=repr)
def test_a_record_that_is_not_an_object_is_a_type_error_naming_the_model(
    model: Any, bad: object
) -> None:
    with pytest.raises(
        TypeError, match=rf"^{model.__name__}\.from_dict: expected a JSON object"
    ):
        model.from_dict(bad)


@pytest.mark.parametrize("resource", ["shipments", "devices"])
def test_the_mock_records_round_trip_with_every_field_typed(resource: str) -> None:
    model = models.Shipment if resource == "shipments" else models.Device
    for raw in make_dataset(resource, "acct-1", seed=3, records=40):
        record = model.from_dict(raw)
        assert record.to_dict() == raw
        _check_fields(record)
        _check_all_guesses_held(record)


def _check_all_guesses_held(record: Any) -> None:
    """No field the spec names was left aside as a mismatch, here or in nested models."""
    guessed = set(_declared(type(record)))
    assert not guessed & set(record.additional_properties), (
        type(record).__name__,
        record,
    )
    for attribute in attrs.fields(type(record)):
        value = getattr(record, attribute.name)
        for item in value if isinstance(value, list) else [value]:
            if attrs.has(type(item)):
                _check_all_guesses_held(item)


# -- through paginate, over loopback HTTP ------------------------------------------------


@dataclass
class Records:
    """What the server serves now: the same records on both list paths."""

    items: list[dict[str, Any]] = field(default_factory=list)


def _app(records: Records) -> Starlette:
    async def page(request: Request) -> Response:
        number = int(request.query_params.get("pageNumber", "1"))
        size = min(int(request.query_params.get("pageSize", "50")), 50)
        total = len(records.items)
        body: dict[str, Any] = {
            "totalRecords": total,
            "pageNumber": number,
            "pageSize": size,
            "data": records.items[(number - 1) * size : number * size],
        }
        if number < math.ceil(total / size):
            body["next"] = (
                f"{request.url.replace_query_params(pageNumber=number + 1, pageSize=size)}"
            )
        if number > 1:
            body["previous"] = (
                f"{request.url.replace_query_params(pageNumber=number - 1, pageSize=size)}"
            )
        return Response(json.dumps(body), media_type="application/json")

    return Starlette(
        routes=[Route("/public/v3/shipments", page), Route("/public/v3/devices", page)]
    )


@dataclass
class RecordServer:
    base_url: str
    records: Records


@pytest.fixture(scope="module")
def record_server() -> Iterator[RecordServer]:
    records = Records()
    with serve_asgi(_app(records), name="record-server") as origin:
        yield RecordServer(f"{origin}/public/v3", records)


@pytest.fixture(scope="module")
def client(record_server: RecordServer) -> Iterator[Client]:
    with Client(base_url=record_server.base_url, timeout=httpx.Timeout(30.0)) as plain:
        yield plain


# Each record carries its position, and an id it carries is its own: paginate rightly
# drops or refuses a record whose id was already handed over (two arbitrary records with
# the same shipmentId are one record served twice).
RECORD_LISTS = st.lists(JSON_OBJECTS, max_size=12).map(
    lambda records: [
        {
            **r,
            "~seq": n,
            **{k: f"{k}-{n}" for k in ("shipmentId", "deviceId") if k in r},
        }
        for n, r in enumerate(records)
    ]
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(items=RECORD_LISTS, page_size=st.integers(1, 5))
def test_paginate_hands_over_every_record_as_sent(
    record_server: RecordServer,
    client: Client,
    items: list[dict[str, Any]],
    page_size: int,
) -> None:
    record_server.records.items = items
    for endpoint in (list_shipments, list_devices):
        got = list(service_api.paginate(endpoint, client, page_size=page_size))
        assert [_canonical(r.to_dict()) for r in got] == [_canonical(r) for r in items]
        model = models.Shipment if endpoint is list_shipments else models.Device
        assert all(type(r) is model for r in got)


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(items=RECORD_LISTS)
def test_async_paginate_hands_over_every_record_as_sent(
    record_server: RecordServer, client: Client, items: list[dict[str, Any]]
) -> None:
    record_server.records.items = items

    async def collect() -> list[str]:
        async with Client(
            base_url=record_server.base_url, timeout=httpx.Timeout(30.0)
        ) as aclient:
            return [
                _canonical(r.to_dict())
                async for r in service_api.paginate(
                    list_shipments, aclient, page_size=3, concurrency=2
                )
            ]

    assert asyncio.run(collect()) == [_canonical(r) for r in items]


def test_a_map_of_dates_gives_back_the_strings_sent() -> None:
    """A map whose values are date-times (``additionalProperties: {format: date-time}``)
    reads each value parsed and writes back the string sent, as a declared field does."""

    @attrs.define(repr=False)
    class Moments(Record):
        additional_properties: dict[str, Any] = attrs.field(init=False, factory=dict)
        _order: tuple[str, ...] = attrs.field(init=False, default=(), eq=False)
        _sent: Any = attrs.field(init=False, default=None, eq=False)

    Moments._declare(extra=DATE_TIME, undeclared_drift=False)
    raw = {"first": "2024-05-01T08:30:00Z", "then": "2024-05-02", "odd": "soon"}
    moments = Moments.from_dict(raw)
    assert moments["first"] == datetime.datetime(2024, 5, 1, 8, 30, tzinfo=datetime.UTC)
    assert moments["odd"] == "soon"
    assert moments.to_dict() == raw
    moments.additional_properties["first"] = datetime.datetime(2025, 1, 2)
    assert moments.to_dict()["first"] == "2025-01-02T00:00:00"
