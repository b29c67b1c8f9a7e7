"""The spec model: one reading of openapi.yaml, its rules held on specs of the tests' own.

The shapes come from ``growth.yaml`` (what a user adds by hand) merged into the project's
spec, and from small documents built here for one rule each.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, get_args

import pytest
from openapi_python_client.strings import PythonIdentifier
from spec_copy import ROOT, merged_spec

from service_api_spec import (
    Compare,
    Filter,
    Kind,
    Location,
    PageSize,
    Parameter,
    ParameterKind,
    Shape,
    Spec,
    SpecDocument,
    SpecError,
    load_spec,
    python_identifier,
    read_spec,
)

GROWTH = Path(__file__).with_name("growth.yaml")
PAGE: dict[str, Any] = {
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
        # A record may have no identifier field (its list is served all the same); one
        # it has is one of its fields.
        if resource.id_field is not None:
            assert resource.id_field in resource.fields
    assert any(r.id_field is not None for r in spec.resources.values())


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


def sized(schema: dict[str, Any], page: dict[str, Any] | None = None) -> Spec:
    """A list of things whose pageSize parameter has ``schema`` (and whose page
    envelope is ``page``)."""
    size = {"name": "pageSize", "in": "query", "schema": schema}
    listed = listing()
    listed["parameters"] = [PAGING[0], size]
    if page is not None:
        listed["responses"] = answer(page)
    return spec_of({"/things": {"get": listed}})


def test_page_sizes_are_the_page_size_parameter_s_default_and_maximum() -> None:
    def sizes(spec: Spec) -> PageSize | None:
        return spec.operation("listThings").page_size

    stated = sized({"type": "integer", "default": 10, "maximum": 20})
    assert sizes(stated) == PageSize(default=10, maximum=20)
    assert sizes(sized({"type": "integer", "maximum": 20})) == PageSize(20, 20)
    assert sizes(sized({"type": "integer", "exclusiveMaximum": 21})) == PageSize(20, 20)
    assert sizes(sized({"type": "integer", "default": 7})) == PageSize(7, None)
    assert sizes(sized({"type": "integer"})) == PageSize(None, None)
    # A service that answers at most N whatever is asked says so in its page.
    bounded = {**PAGE, "properties": {**PAGE["properties"]}}
    bounded["properties"]["pageSize"] = {"type": "integer", "maximum": 30}
    assert sizes(sized({"type": "integer"}, bounded)) == PageSize(30, 30)
    bounded["properties"]["pageSize"] = {"type": "integer"}
    bounded["properties"]["data"] = {**PAGE["properties"]["data"], "maxItems": 25}
    assert sizes(sized({"type": "integer", "default": 5}, bounded)) == PageSize(5, 25)
    # Only a list has page sizes.
    spec = spec_of({"/things/{thingId}": {"get": {"responses": answer(THING)}}})
    assert all(op.page_size is None for op in spec.operations)


def test_the_project_s_lists_state_their_page_sizes() -> None:
    spec = load_spec(ROOT / "openapi.yaml")
    for op in spec.lists:
        assert op.page_size is not None
        assert op.page_size.default is not None
        if op.page_size.maximum is not None:
            assert op.page_size.default <= op.page_size.maximum


def test_an_answer_is_found_by_status_exact_then_range_then_default() -> None:
    responses = {
        **answer(THING, "200"),
        **answer(THING, "201"),
        **answer(None, "4XX"),
        **answer(None, "404"),
        **answer(None, "default"),
    }
    spec = spec_of(
        {"/things": {"post": {"operationId": "make", "responses": responses}}}
    )
    op = spec.operation("make")
    assert op.answer(404) is op.answers["404"]
    assert op.answer(409) is op.answers["4XX"]
    assert op.answer(503) is op.answers["default"]
    assert op.answer(201) is op.answers["201"]
    assert [a.status for a in op.successes] == ["200", "201"]
    alone = spec_of({"/x": {"get": {"operationId": "x", "responses": answer(THING)}}})
    assert alone.operation("x").answer(500) is None


def test_one_route_matcher_literal_paths_first_and_parameters_decoded() -> None:
    item = {"get": {"operationId": "getThing", "responses": answer(THING)}}
    search = {"post": {"operationId": "search", "responses": answer(THING)}}
    spec = spec_of(
        {
            "/things/{thingId}": item,
            "/things/search": search,
            "/things/{thingId}/parts/{partId}": {
                "delete": {"operationId": "dropPart", "responses": {"204": {}}}
            },
        }
    )
    found = spec.route("POST", "/things/search")
    assert found is not None
    assert found[0].operation_id == "search"
    # A GET of the literal path is the item's: the only path with a GET that fits.
    found = spec.route("get", "/things/search")
    assert found == (spec.operation("getThing"), {"thingId": "search"})
    found = spec.route("GET", "/things/a%2Fb")
    assert found == (spec.operation("getThing"), {"thingId": "a/b"})
    found = spec.route("DELETE", "/things/t1/parts/p%201")
    assert found == (spec.operation("dropPart"), {"thingId": "t1", "partId": "p 1"})
    matched = spec.match("/things/t1")
    assert matched is not None
    assert set(matched[0].methods) == {"GET"}
    assert spec.route("PUT", "/things/t1") is None
    assert spec.match("/things/") is None
    assert spec.match("/nothing") is None


def test_the_identifier_by_the_resource_s_own_name_among_several_id_fields() -> None:
    fields = {
        "routeId": {"type": "string"},
        "carrierId": {"type": "string"},
        "hubId": {"type": "string"},
    }
    spec = spec_of(
        {"/routes": {"get": listing("listRoutes", responses=answer(PAGE))}},
        thing={"type": "object", "properties": fields},
    )
    assert spec.resources["routes"].id_field == "routeId"
    several = {"id": {"type": "integer"}, "ownerId": {"type": "string"}}
    spec = spec_of(
        {"/things": {"get": listing()}},
        thing={"type": "object", "properties": several},
    )
    assert spec.resources["things"].id_field == "id"


@pytest.mark.parametrize(
    ("item", "fields", "expected"),
    [
        ("petId", {"id": {"type": "integer"}, "name": {}}, "id"),
        ("Sid", {"sid": {"type": "string"}, "accountSid": {}}, "sid"),
        ("thingId", {"thingId": {"type": "string"}}, "thingId"),
        ("code", {"name": {"type": "string"}}, None),
    ],
)
def test_an_item_parameter_named_otherwise_than_the_field_ties_to_it(
    item: str, fields: dict[str, Any], expected: str | None
) -> None:
    collection = "/pets" if item == "petId" else "/things"
    spec = spec_of(
        {
            collection: {"get": listing()},
            f"{collection}/{{{item}}}": {"get": {"responses": answer(THING)}},
        },
        thing={"type": "object", "properties": fields},
    )
    (resource,) = spec.resources.values()
    assert resource.item_parameter == item
    assert resource.id_field == expected


def _union(keyword: str, typed: bool, variants: list[dict[str, Any]]) -> dict[str, Any]:
    """A record that is a union of ``variants`` (objects of these properties)."""
    union: dict[str, Any] = {
        keyword: [{"type": "object", "properties": v} for v in variants]
    }
    if typed:  # as Box's Item says "type: object" beside its oneOf
        union["type"] = "object"
    if keyword == "oneOf":
        union["discriminator"] = {"propertyName": "kind"}
    return union


@pytest.mark.parametrize("keyword", ["oneOf", "anyOf"])
@pytest.mark.parametrize("typed", [True, False])
def test_a_union_of_records_is_identified_by_the_field_of_every_variant(
    keyword: str, typed: bool
) -> None:
    file = {"id": {"type": "string"}, "kind": {"type": "string"}, "sha1": {}}
    folder = {"kind": {"type": "string"}, "id": {"type": "string"}, "size": {}}
    spec = spec_of(
        {"/things": {"get": listing(parameters=[{"name": "size", "in": "query"}])}},
        thing=_union(keyword, typed, [file, folder]),
    )
    things = spec.resources["things"]
    assert things.id_field == "id"
    assert things.id_kind == "string"
    # Its fields are the union's: the first variant's, then the others' new ones.
    assert things.fields == ("id", "kind", "sha1", "size")
    assert spec.operation("listThings").filters == (Filter("size", "size", "eq"),)
    # A variant without it, or variants identified by different fields: none.
    others: list[dict[str, Any]] = [
        {"kind": {}, "name": {}},
        {"kind": {}, "thingId": {}},
    ]
    for other in others:
        spec = spec_of(
            {"/things": {"get": listing()}},
            thing=_union(keyword, typed, [file, other]),
        )
        assert spec.resources["things"].id_field is None, other


def test_a_filter_named_for_what_it_means_is_tied_by_the_stated_rules() -> None:
    fields = {
        "thingId": {"type": "string"},
        "StartTime": {"type": "string", "format": "date-time"},
        "ownerRef": {"type": "string", "format": "uuid"},
    }

    def query(name: str, schema: dict[str, Any]) -> dict[str, Any]:
        return {"name": name, "in": "query", "schema": schema}

    moment = {"type": "string", "format": "date-time"}
    parameters = [
        query("StartTime>", moment),
        query("StartTime<", moment),
        query("updatedSince", moment),
        query("owner", {"type": "string", "format": "uuid"}),
        query("q", {"type": "string"}),
    ]
    spec = spec_of(
        {"/things": {"get": listing(parameters=parameters)}},
        thing={"type": "object", "properties": fields},
    )
    things = spec.operation("listThings")
    assert set(things.filters) == {
        Filter("StartTime>", "StartTime", "ge"),
        Filter("StartTime<", "StartTime", "le"),
        # The only field of its type and format, compared as its name says.
        Filter("updatedSince", "StartTime", "ge"),
        Filter("owner", "ownerRef", "eq"),
    }
    assert things.unapplied == ("q",)
    # Two fields of the format: which one is meant is not known.
    fields["EndTime"] = moment
    spec = spec_of(
        {"/things": {"get": listing(parameters=parameters[2:3])}},
        thing={"type": "object", "properties": fields},
    )
    assert spec.operation("listThings").unapplied == ("updatedSince",)


def test_every_post_on_a_collection_is_a_create_with_its_header_parameters() -> None:
    key = {"name": "Idempotency-Key", "in": "header", "required": True}
    key["schema"] = {"type": "string"}
    created = {
        "operationId": "createPayment",
        "tags": ["payments"],
        "parameters": [key],
        "requestBody": {"content": {"application/json": {"schema": THING}}},
        "responses": answer(THING, "201"),
    }
    action = {"operationId": "cancelThing", "responses": answer(THING)}
    spec = spec_of(
        {"/payments": {"post": created}, "/things/{thingId}/cancel": {"post": action}}
    )
    payment = spec.operation("createPayment")
    assert (payment.kind, payment.door, payment.resource) == (
        "create",
        "create",
        "payments",
    )
    assert payment.parameter("Idempotency-Key") == Parameter(
        "Idempotency-Key",
        "header",
        True,
        "string",
        (),
        "#/paths/~1payments/post/parameters/0/schema",
        exploded=False,  # a header's style is simple: an array is one text
        style="simple",
    )
    assert spec.resources["payments"].id_field == "thingId"
    assert spec.operation("cancelThing").kind == "other"


def test_a_sub_resource_s_parameters_are_given_by_its_parent_s_fields() -> None:
    pet = {"type": "object", "properties": {"id": {"type": "integer"}}}
    toy = {"type": "object", "properties": {"toyId": {"type": "string"}}}
    part = {"type": "object", "properties": {"partId": {"type": "string"}}}

    def page_of(record: dict[str, Any]) -> dict[str, Any]:
        data = {"type": "array", "items": record}
        return {**PAGE, "properties": {**PAGE["properties"], "data": data}}

    def lister(name: str, record: dict[str, Any]) -> dict[str, Any]:
        return {"get": listing(name, responses=answer(page_of(record)))}

    spec = spec_of(
        {
            "/pets": lister("listPets", pet),
            "/pets/{petId}": {
                "get": {"operationId": "getPet", "responses": answer(pet)}
            },
            "/pets/{petId}/toys": lister("listToys", toy),
            "/pets/{petId}/toys/{toyId}/parts": lister("listParts", part),
        }
    )
    toys, parts = spec.resources["pet-toys"], spec.resources["pet-toy-parts"]
    assert (toys.parent, dict(toys.parent_fields)) == ("pets", {"petId": "id"})
    assert parts.parent == "pet-toys"
    # The pet's id is a column of a toy's rows by its parameter's name.
    assert dict(parts.parent_fields) == {"petId": "petId", "toyId": "toyId"}
    assert spec.resources["pets"].parent is None


def test_kinds_shapes_and_locations_are_the_literal_types_named(grown: Spec) -> None:
    for op in grown.operations:
        assert op.kind in get_args(Kind)
        for parameter in op.parameters:
            assert parameter.kind in get_args(ParameterKind)
            assert parameter.location in get_args(Location)
        for answered in op.answers.values():
            assert answered.shape in get_args(Shape)
        for tied in op.filters:
            assert tied.compare in get_args(Compare)
    odd = {"name": "x", "in": "body", "schema": {"type": "string"}}
    spec = spec_of({"/things": {"get": listing(parameters=[odd])}})
    assert spec.operation("listThings").parameter("x") is None


@pytest.mark.parametrize("word", ["status", "analysis", "cancel", "search"])
def test_a_post_on_a_word_that_is_no_plural_is_an_action(word: str) -> None:
    posted = {"operationId": "act", "responses": answer(THING)}
    spec = spec_of({f"/things/{{thingId}}/{word}": {"post": posted}})
    assert spec.operation("act").kind == "other"
    assert spec.resources == {}
