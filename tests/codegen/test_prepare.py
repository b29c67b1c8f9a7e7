"""codegen/prepare.py: the rules by which the generator makes the spec's names distinct
as Python names (docs/development/endpoint.md, "Python names"), on the copy of the spec
openapi-python-client parses; the spec and its JSON names are left as they are."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml


@pytest.mark.parametrize(
    ("names", "expected"),
    [
        (["+1", "-1", "laugh"], {"+1": "plus_1", "-1": "minus_1"}),
        (
            ["StartTime", "StartTime<", "StartTime>"],
            {"StartTime<": "start_time_lt", "StartTime>": "start_time_gt"},
        ),
        (["address", "Address"], {"Address": "address_2"}),
        (["$ref", "ref"], {"$ref": "dollar_ref"}),
        (["@odata.type", "odata_type"], {"@odata.type": "at_odata_type"}),
        (["id", "name", "from"], {}),
    ],
)
def test_names_of_one_python_name_are_made_distinct(
    prepare: Any, names: list[str], expected: dict[str, str]
) -> None:
    assert prepare.distinct(names) == expected


def _spec(**schemas: Any) -> dict[str, Any]:
    return {
        "openapi": "3.1.0",
        "info": {"title": "t", "version": "1"},
        "paths": {},
        "components": {"schemas": schemas},
    }


def test_components_of_one_class_name_get_a_number_and_their_refs_follow(
    prepare: Any,
) -> None:
    source = _spec(
        Address={"type": "object", "properties": {"city": {"type": "string"}}},
        address={"type": "object", "title": "Address"},
        customer={
            "type": "object",
            "properties": {"address": {"$ref": "#/components/schemas/address"}},
        },
    )
    kept = copy.deepcopy(source)
    prepared = prepare.Prepared.of(source)
    schemas = prepared.document["components"]["schemas"]
    assert list(schemas) == ["Address", "address_2", "customer"]
    assert "title" not in schemas["address_2"]
    ref = schemas["customer"]["properties"]["address"]["$ref"]
    assert ref == "#/components/schemas/address_2"
    assert prepared.renamed == {"address": "address_2"}
    assert source == kept  # the spec itself is untouched


def test_fields_of_one_python_name_get_placeholders_restored_later(
    prepare: Any,
) -> None:
    rollup = {
        "type": "object",
        "required": ["+1", "-1"],
        "properties": {"+1": {"type": "integer"}, "-1": {"type": "integer"}},
    }
    prepared = prepare.Prepared.of(_spec(Rollup=rollup))
    schema = prepared.document["components"]["schemas"]["Rollup"]
    assert set(schema["properties"]) == set(schema["required"])
    assert sorted(prepared.placeholders.values()) == [
        ("+1", "plus_1"),
        ("-1", "minus_1"),
    ]
    assert set(prepared.placeholders) == set(schema["properties"])


def test_parameters_defaults_bodies_and_headers_the_generator_cannot_type(
    prepare: Any,
) -> None:
    operation = {
        "operationId": "listCalls",
        "parameters": [
            {"name": "StartTime", "in": "query", "schema": {"type": "string"}},
            {"name": "StartTime<", "in": "query", "schema": {"type": "string"}},
            {
                "name": "token",
                "in": "header",
                "schema": {"type": "array", "items": {"type": "integer"}},
            },
            {
                "name": "coordinates",
                "in": "query",
                "content": {"application/json": {"schema": {"type": "object"}}},
            },
        ],
        "requestBody": {
            "content": {
                "application/json": {"schema": {"type": "object"}},
                "application/xml": {"schema": {"type": "object"}},
                "application/x-www-form-urlencoded": {"schema": {"type": "object"}},
            }
        },
        "responses": {"200": {"description": "ok"}},
    }
    source = _spec(
        Meta={
            "type": "object",
            "properties": {
                "labels": {"default": {}, "allOf": [{"$ref": "#/components/schemas/M"}]}
            },
        },
        M={"type": "object", "title": "Kept inline only"},
    )
    source["paths"] = {"/calls": {"post": operation}}
    prepared = prepare.Prepared.of(source)
    done = prepared.document["paths"]["/calls"]["post"]
    names = [p["name"] for p in done["parameters"]]
    assert names[0] == "StartTime"
    assert prepared.placeholders[names[1]] == ("StartTime<", "start_time_lt")
    assert done["parameters"][2]["schema"]["type"] == "string"
    # A parameter of no schema (described by its media type) would be left out.
    coordinates = done["parameters"][3]
    assert coordinates["schema"]["type"] == "string", coordinates
    assert "content" not in coordinates
    assert "application/json" in coordinates["schema"]["description"]
    assert list(done["requestBody"]["content"]) == ["application/json"]
    labels = prepared.document["components"]["schemas"]["Meta"]["properties"]["labels"]
    assert "default" not in labels


def test_what_the_generator_cannot_carry_fails_naming_it(tmp_path: Path) -> None:
    # An enum of an integer and a string: openapi-python-client makes no type of it.
    from spec_copy import ROOT, SpecEditError, generate_copy

    document = yaml.safe_load((ROOT / "openapi.yaml").read_text("utf-8"))
    document["components"]["schemas"]["Mixed"] = {
        "type": "object",
        "properties": {"level": {"enum": [1, "one"]}},
    }
    document["paths"]["/mixed"] = {
        "get": {
            "operationId": "getMixed",
            "tags": ["shipments"],
            "responses": {
                "200": {
                    "description": "One.",
                    "content": {
                        "application/json": {
                            "schema": {"$ref": "#/components/schemas/Mixed"}
                        }
                    },
                }
            },
        }
    }
    with pytest.raises(SpecEditError) as failed:
        generate_copy(tmp_path / "copy", document)
    said = str(failed.value)
    assert "cannot generate the client:" in said
    assert "/components/schemas/Mixed" in said
    assert not (tmp_path / "copy" / "generated" / "service_api_client").exists()


def test_a_nullable_enum_takes_null_among_its_values(prepare: Any) -> None:
    # Stripe's tax_exempt (3.0) and a 3.1 spelling: null is one of the values, as the
    # spec model reads it, so the generator types the field with None.
    customer = {
        "type": "object",
        "properties": {
            "tax_exempt": {
                "type": "string",
                "nullable": True,
                "enum": ["none", "reverse"],
            },
            "state": {"type": ["string", "null"], "enum": ["open", "closed"]},
            "kind": {"type": "string", "enum": ["a", "b"]},
        },
    }
    prepared = prepare.Prepared.of(_spec(Customer=customer))
    fields = prepared.document["components"]["schemas"]["Customer"]["properties"]
    assert fields["tax_exempt"]["enum"] == ["none", "reverse", None]
    assert fields["state"]["enum"] == ["open", "closed", None]
    assert fields["kind"]["enum"] == ["a", "b"]  # not nullable: as written
