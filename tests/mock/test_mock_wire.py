"""Requests read as the wire carries them, whatever the spec's style: a query array
that is not exploded (``order=a,b``), a pattern read as JSON Schema's ECMA-262 reads it,
a declared body of a media type the mock does not read (XML); and records that an enum
filter finds."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml
from spec_copy import signed_in

from service_api_mock import MockConfig, MockService
from service_api_spec import load_spec

pytestmark = pytest.mark.anyio

ROOT = Path(__file__).resolve().parents[2]


def _wired(document: dict[str, Any]) -> None:
    """The list of devices with an array that is not exploded, a patterned word and
    an enum filter of a free text field; the create of shipments taking XML too."""
    devices = document["paths"]["/devices"]["get"]
    order = {"type": "array", "uniqueItems": True, "items": {"type": "string"}}
    kinds = {"type": "string", "enum": ["tracker", "beacon"]}
    document["components"]["schemas"]["Device"]["properties"]["kind"] = {
        "type": "string"
    }
    devices["parameters"] += [
        {"name": "order", "in": "query", "explode": False, "schema": order},
        {"name": "kind", "in": "query", "schema": kinds},
        # An exploded form object: its properties are parameters of their own.
        {
            "name": "near",
            "in": "query",
            "schema": {"type": "object", "additionalProperties": {"type": "integer"}},
        },
        {
            "name": "word",
            "in": "query",
            "schema": {"type": "string", "pattern": "^\\w+$"},
        },
    ]
    create = document["paths"]["/shipments"]["post"]["requestBody"]["content"]
    create["application/xml"] = {"schema": {"type": "object"}}


@pytest.fixture
async def api(tmp_path: Path) -> AsyncIterator[httpx.AsyncClient]:
    document = yaml.safe_load((ROOT / "openapi.yaml").read_text("utf-8"))
    _wired(document)
    spec = tmp_path / "openapi.yaml"
    spec.write_text(yaml.safe_dump(document, sort_keys=False), "utf-8")
    order = load_spec(spec).operation("listDevices").parameter("order")
    assert order is not None
    assert order.exploded is False
    service = MockService(MockConfig(records=3), spec=spec)
    async with signed_in(service.app) as client:
        yield client


async def test_an_array_that_is_not_exploded_is_split_by_commas(
    api: httpx.AsyncClient,
) -> None:
    # The commas as sent delimit the items (httpx would encode one given in params).
    assert (await api.get("/devices?order=a,b")).status_code == 200
    # Split, its items are the same twice: uniqueItems refuses it, naming the parameter.
    twice = await api.get("/devices?order=a,a")
    assert twice.status_code == 400
    assert "order" in twice.json()["detail"]
    # An item's own comma is sent encoded, and stays in it: "a,a" and "a" differ.
    assert (await api.get("/devices?order=a%2Ca,a")).status_code == 200
    # Exploded all the same (as openapi-python-client's clients send any array).
    assert (await api.get("/devices?order=a&order=b")).status_code == 200


async def test_a_pattern_reads_word_characters_as_ascii(api: httpx.AsyncClient) -> None:
    assert (await api.get("/devices", params={"word": "Route_7"})).status_code == 200
    # Python's \w takes "É"; ECMA-262's, which a client's validator uses, does not.
    refused = await api.get("/devices", params={"word": "Élan"})
    assert refused.status_code == 400
    assert "word" in refused.json()["detail"]


async def test_a_declared_body_the_mock_does_not_read_is_taken_as_sent(
    api: httpx.AsyncClient,
) -> None:
    xml = b"<shipment><referenceNumber>R-1</referenceNumber></shipment>"
    created = await api.post(
        "/shipments", content=xml, headers={"content-type": "application/xml"}
    )
    assert created.status_code == 201, created.text
    assert "shipmentId" in created.json()
    # A media type the operation does not declare is still refused.
    other = await api.post(
        "/shipments", content=b"a=1", headers={"content-type": "text/csv"}
    )
    assert other.status_code == 400


async def test_each_member_of_an_enum_filter_finds_records(
    api: httpx.AsyncClient,
) -> None:
    # The field is free text; the filter's enum says which values clients ask for
    # (GitHub's state=open): the records carry them in turn.
    for member in ("tracker", "beacon"):
        page = (await api.get("/devices", params={"kind": member})).json()
        assert page["data"], member
        assert {device["kind"] for device in page["data"]} == {member}


async def test_an_exploded_form_object_is_the_parameters_no_other_names(
    api: httpx.AsyncClient,
) -> None:
    assert (await api.get("/devices?lat=1&long=2&pageSize=5")).status_code == 200
    # Its values are integers: "x" is refused, naming it; pageSize stays the list's own.
    refused = await api.get("/devices?lat=x&pageSize=5")
    assert refused.status_code == 400
    assert "near" in refused.json()["detail"]
