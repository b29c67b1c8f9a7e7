"""The spec model: one reading of openapi.yaml, its rules held on specs of the tests' own.

The shapes come from ``growth.yaml`` (what a user adds by hand) merged into the project's
spec, and from small documents built here for one rule each.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from openapi_python_client.strings import PythonIdentifier
from spec_copy import ROOT, merged_spec

from service_api_spec import (
    Filter,
    Spec,
    SpecDocument,
    SpecError,
    load_spec,
    python_identifier,
    read_spec,
)

GROWTH = Path(__file__).with_name("growth.yaml")
PAGE = {
    "type": "object",
    "properties": {
        "totalRecords": {"type": "integer"},
        "pageNumber": {"type": "integer"},
        "pageSize": {"type": "integer"},
        "data": {"type": "array", "items": {"$ref": "#/components/schemas/Thing"}},
    },
}
PAGING = [
    {"name": "pageNumber", "in": "query", "schema": {"type": "integer"}},
    {"name": "pageSize", "in": "query", "schema": {"type": "integer"}},
]


@pytest.fixture(scope="module")
def grown() -> Spec:
    return read_spec(SpecDocument(merged_spec(GROWTH)))


def answer(schema: dict[str, Any] | None = None, status: str = "200") -> dict[str, Any]:
    content = {"application/json": {"schema": schema}} if schema is not None else {}
    return {status: {"description": "x", "content": content}}


def spec_of(paths: dict[str, Any], thing: dict[str, Any] | None = None) -> Spec:
    """A document of ``paths`` with the record ``Thing`` (default: thingId, name)."""
    fields = {"thingId": {"type": "string"}, "name": {"type": "string"}}
    document = {
        "openapi": "3.1.0",
        "info": {"title": "t", "version": "1"},
        "paths": paths,
        "components": {
            "schemas": {"Thing": thing or {"type": "object", "properties": fields}}
        },
    }
    return read_spec(SpecDocument(document))


def listing(operation_id: str = "listThings", **extra: Any) -> dict[str, Any]:
    parameters = PAGING + extra.pop("parameters", [])
    return {
        "operationId": operation_id,
        "parameters": parameters,
        "responses": answer(PAGE),
        **extra,
    }


THING = {"$ref": "#/components/schemas/Thing"}


def test_every_shape_a_user_adds_is_read_as_what_it_is(grown: Spec) -> None:
    shapes = {op.operation_id: (op.kind, op.tag, op.door) for op in grown.operations}
    assert shapes["listShipmentEvents"] == ("list", "shipments", "list_shipment_events")
    assert shapes["listCarrierServices"] == (
        "other",
        "carriers",
        "list_carrier_services",
    )
    assert shapes["listRoutes"] == ("list", "routes", "list")
    assert shapes["getRoute"] == ("get", "routes", "get")
    assert shapes["replaceRoute"] == ("replace", "routes", "replace")
    assert shapes["updateRoute"] == ("update", "routes", "update")
    assert shapes["deleteRoute"] == ("delete", "routes", "delete")
    assert shapes["archiveRoute"] == ("other", "routes", "archive_route")
    assert shapes["authenticate"] == ("token", "authentication", None)
    assert grown.operation("listCarrierServices").success.shape == "array"  # type: ignore[union-attr]
    assert grown.operation("deleteRoute").success.shape == "empty"  # type: ignore[union-attr]


def test_a_sub_resource_knows_its_parent_and_its_own_identifier(grown: Spec) -> None:
    events = grown.resources["shipment-events"]
    assert events.parent == "shipments"
    assert events.parent_parameters == ("shipmentId",)
    # eventId and shipmentId end in Id; the parent's is left out.
    assert events.id_field == "eventId"
    assert "location" in events.fields
    path = [p.name for p in grown.operation("listShipmentEvents").parameters]
    assert path[0] == "shipmentId"  # path parameters first


def test_the_item_path_names_the_identifier_among_two_id_fields(grown: Spec) -> None:
    routes = grown.resources["routes"]
    assert {"routeId", "carrierId"} <= set(routes.fields)
    assert routes.id_field == "routeId"
    assert routes.item_parameter == "routeId"


def test_range_date_and_enum_filters_are_tied_to_their_fields(grown: Spec) -> None:
    routes = grown.operation("listRoutes")
    assert set(routes.filters) == {
        Filter("minRating", "rating", "ge"),
        Filter("createdAfter", "createdAt", "gt"),
        Filter("status", "status", "eq"),
    }
    assert routes.unapplied == ()
    header = routes.parameter("x-request-source")
    assert header is not None
    assert header.location == "header"
    assert header.required
    created = routes.parameter("createdAfter")
    assert created is not None
    assert created.kind == "date-time"
    status = routes.parameter("status")
    assert status is not None
    assert status.choices == ("Draft", "Active", "Retired")


def test_a_filter_extension_wins_and_an_untied_parameter_is_listed() -> None:
    hinted = {
        "name": "named",
        "in": "query",
        "schema": {"type": "string"},
        "x-filter": {"field": "name", "compare": "ge"},
    }
    loose = {"name": "color", "in": "query", "schema": {"type": "string"}}
    spec = spec_of({"/things": {"get": listing(parameters=[hinted, loose])}})
    things = spec.operation("listThings")
    assert things.filters == (Filter("named", "name", "ge"),)
    assert things.unapplied == ("color",)


def test_without_an_item_path_two_id_fields_name_no_identifier() -> None:
    fields = {"aId": {"type": "string"}, "bId": {"type": "integer"}}
    spec = spec_of(
        {"/things": {"get": listing()}},
        thing={"type": "object", "properties": fields},
    )
    assert spec.resources["things"].id_field is None
    one = spec_of(
        {"/things": {"get": listing()}},
        thing={"type": "object", "properties": {"id": {"type": "integer"}}},
    )
    assert one.resources["things"].id_field == "id"
    assert one.resources["things"].id_kind == "integer"


def test_two_operations_on_one_door_keep_their_own_names() -> None:
    spec = spec_of(
        {
            "/things": {"get": listing(tags=["things"])},
            "/other-things": {"get": listing("list_things", tags=["things"])},
        }
    )
    doors = [op.door for op in spec.operations]
    assert doors[0] == "list"
    assert doors[1] != "list"
    assert len(set(doors)) == 2


def test_a_tag_is_named_by_its_module_only() -> None:
    # The client's attribute for it (token -> token_api) is the generator's choice:
    # the model knows nothing of the client.
    spec = spec_of({"/things": {"get": listing(tags=["token"])}})
    assert spec.tags["token"].module == "token"
    assert not hasattr(spec.tags["token"], "attribute")


@pytest.mark.parametrize(
    "name",
    [
        "listShipments",
        "getShipment",
        "list_shipment_events",
        "from",
        "class",
        "type",
        "id",
        "list",
        "_private",
        "2fa",
        "x-request-source",
        "HTTPStatus",
        "get.thing",
        "datetime",
    ],
)
def test_python_names_are_the_generators_own(name: str) -> None:
    assert python_identifier(name) == PythonIdentifier(name, prefix="field_")
    assert python_identifier(name, "tag") == PythonIdentifier(name, prefix="tag")


def test_the_projects_spec_reads_with_a_door_per_secured_operation() -> None:
    spec = load_spec(ROOT / "openapi.yaml")
    for operation in spec.operations:
        if operation.kind == "token":
            assert operation.door is None
            assert not operation.bearer
        else:
            assert operation.door, operation.operation_id
    assert spec.lists, "the seed's spec has list endpoints"
    for operation in spec.lists:
        resource = spec.resources[str(operation.resource)]
        assert resource.pointer is not None
        assert resource.id_field in resource.fields


def test_a_reference_loop_or_a_file_that_is_no_yaml_is_a_spec_error(
    tmp_path: Path,
) -> None:
    loop = {"$ref": "#/components/responses/x"}
    document = {
        "paths": {"/a": {"get": {"responses": {"200": loop}}}},
        "components": {"responses": {"x": loop}},
    }
    with pytest.raises(SpecError, match="references that never end"):
        read_spec(SpecDocument(document))
    broken = tmp_path / "openapi.yaml"
    broken.write_text("openapi: 3.1.0\npaths:\n  /a: [\n", encoding="utf-8")
    with pytest.raises(SpecError, match=r"openapi.yaml:4: not valid YAML"):
        load_spec(broken)
    broken.write_text("- a list\n", encoding="utf-8")
    with pytest.raises(SpecError, match="not an OpenAPI document"):
        load_spec(broken)


def test_an_all_of_record_and_a_nullable_parameter_read_through() -> None:
    thing = {
        "allOf": [
            {"type": "object", "properties": {"thingId": {"type": "string"}}},
            {"type": "object", "properties": {"size": {"type": "integer"}}},
        ]
    }
    nullable = {
        "name": "since",
        "in": "query",
        "schema": {"anyOf": [{"type": "null"}, {"type": "string", "format": "date"}]},
    }
    spec = spec_of({"/things": {"get": listing(parameters=[nullable])}}, thing=thing)
    assert spec.resources["things"].fields == ("thingId", "size")
    since = spec.operation("listThings").parameter("since")
    assert since is not None
    assert since.kind == "date"


def test_an_operation_of_no_known_shape_is_other_and_still_has_a_door() -> None:
    spec = spec_of(
        {
            "/things/{thingId}": {
                "get": {"operationId": "getThing", "responses": answer(THING)},
                "post": {
                    "operationId": "poke",
                    "responses": answer({"type": "string"}),
                },
            },
            "/ping": {"head": {"responses": {"204": {"description": "up"}}}},
        }
    )
    kinds = {op.operation_id: (op.kind, op.door) for op in spec.operations}
    assert kinds["getThing"] == ("get", "get_thing")  # no tag "things": its own name
    assert kinds["poke"] == ("other", "poke")
    assert kinds["head_ping"] == ("other", "head_ping")
