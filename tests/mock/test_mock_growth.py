"""The mock serving a spec grown by hand, started as users start it, called over loopback
with plain httpx.

The spec is the project's with ``tests/spec/growth.yaml`` merged in: a sub-resource list
(the events of a shipment), a plain-array answer, a required header parameter, integer
range, date-time and enum filters, a record with two ``...Id`` fields, PUT, PATCH and
DELETE linked from create, an action. ``python -m service_api_mock --spec`` serves it;
every operation the spec model reads is called and must answer its declared success with
a body its schema takes (checked with jsonschema, apart from the mock's own checks).
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml
from jsonschema import Draft202012Validator  # type: ignore[import-untyped]  # no stubs kept
from spec_copy import SpecCopy, auth_headers, merged_spec, serve_spec

from service_api_mock._schemas import Schemas
from service_api_spec import Operation, Parameter, Spec, is_json, load_spec

GROWTH = Path(__file__).resolve().parents[1] / "spec" / "growth.yaml"
RECORDS = 30
# A value for a required parameter of each kind, where it has no enum.
SAMPLES = {
    "integer": "1",
    "number": "1.5",
    "boolean": "true",
    "date-time": "2026-01-05T08:00:00Z",
    "date": "2026-01-05",
}


@pytest.fixture(scope="module")
def grown(tmp_path_factory: pytest.TempPathFactory) -> SpecCopy:
    root = tmp_path_factory.mktemp("grown")
    copy = SpecCopy(root=root, generated=root / "generated")
    copy.spec.write_text(yaml.safe_dump(merged_spec(GROWTH), sort_keys=False), "utf-8")
    return copy


@pytest.fixture(scope="module")
def model(grown: SpecCopy) -> Spec:
    return load_spec(grown.spec)


@pytest.fixture(scope="module")
def api(grown: SpecCopy) -> Iterator[httpx.Client]:
    """A client of the mock serving the grown spec, signed in for the first account."""
    with serve_spec(grown, "--records", str(RECORDS)) as base_url:
        headers = auth_headers(base_url)
        with httpx.Client(base_url=base_url, headers=headers) as client:
            yield client


def matches(model: Spec, pointer: str, value: Any) -> list[str]:
    """What does not fit the schema at ``pointer``, by jsonschema alone on the spec
    model's JSON Schema of it (3.0's ``nullable`` as 2020-12 says it)."""
    validator = Draft202012Validator(
        model.schemas.json_schema(pointer, "reading"),
        format_checker=Draft202012Validator.FORMAT_CHECKER,
    )
    return [error.message for error in validator.iter_errors(value)]


def every(api: httpx.Client, path: str, **params: Any) -> list[dict[str, Any]]:
    """Every record a list answers, page after page by its ``next`` links."""
    records: list[dict[str, Any]] = []
    url: str | None = path
    query: dict[str, Any] | None = {"pageSize": 7, **params}
    headers = {"x-request-source": "tests"}
    while url is not None:
        response = api.get(url, params=query, headers=headers)
        assert response.status_code == 200, response.text
        page = response.json()
        records += page["data"]
        url = page.get("next")
        query = None  # the next link carries the query
    return records


class Caller:
    """Calls any operation of the model with what it needs: records that exist for its
    path, a value for each required parameter, a record for its JSON body."""

    def __init__(self, api: httpx.Client, model: Spec) -> None:
        self.api = api
        self.model = model
        self.schemas = Schemas(model.schemas)

    def text(self, parameter: Parameter) -> Any:
        """A value of an array or object ``parameter`` built from its schema, as sent:
        a list of texts (one query parameter each, or joined by commas where it is not
        exploded), an object as JSON text."""
        built = self.schemas.build(
            str(parameter.pointer), random.Random(0), parameter.name, "writing"
        )
        if isinstance(built, list):
            items = [
                json.dumps(i) if isinstance(i, (bool, dict)) else str(i) for i in built
            ]
            return items if parameter.exploded else ",".join(items)
        return json.dumps(built)

    def can_call(self, op: Operation) -> bool:
        """Whether this caller can send ``op`` what it needs: a record that a list
        shows for itself and each parent (by its identifier), a JSON body or none, and
        a declared success to expect."""
        if op.kind == "token" or op.success is None:
            return False  # the token: auth_headers() signed in through it
        if op.body is not None and not is_json(op.body.media):
            return False
        resource = self.model.resources.get(str(op.resource))
        while resource is not None:
            listed = any(
                o.kind == "list" and o.resource == resource.name
                for o in self.model.operations
            )
            if resource.id_field is None or not listed:
                return False
            if resource.parent_parameters and resource.parent is None:
                return False
            resource = self.model.resources.get(str(resource.parent))
        return True

    def first(self, resource: str, path: dict[str, str]) -> dict[str, Any]:
        listing = next(
            op
            for op in self.model.operations
            if op.kind == "list" and op.resource == resource
        )
        found = self.send(listing, path)
        assert found.status_code == 200, found.text
        record: dict[str, Any] = found.json()["data"][0]
        return record

    def path(self, op: Operation) -> dict[str, str]:
        """Path parameters of records that exist: the parents', the record's own (one
        the resource's create makes, where it has one, else one its list shows)."""
        resource = self.model.resources.get(str(op.resource))
        # A value its schema takes (a pattern's too) where no record gives one.
        values = {
            p.name: str(
                self.schemas.build(p.pointer, random.Random(0), p.name, "writing")
            )
            if p.pointer is not None
            else "any"
            for p in op.parameters
            if p.location == "path"
        }
        if resource is None:
            return values
        for name, parent in zip(
            resource.parent_parameters, [resource.parent], strict=False
        ):
            above = self.model.resources[str(parent)]
            values[name] = self.first(above.name, {})[str(above.id_field)]
        if op.kind in ("get", "replace", "update", "delete"):
            create = [
                o
                for o in self.model.operations
                if o.kind == "create"
                and o.resource == op.resource
                and (o.body is None or is_json(o.body.media))
            ]
            record = (
                self.send(create[0], values).json()
                if create
                else self.first(resource.name, values)
            )
            item = [p.name for p in op.parameters if p.location == "path"][-1]
            values[item] = str(record[str(resource.id_field)])
        return values

    def send(self, op: Operation, path: dict[str, str]) -> httpx.Response:
        url = op.path.format(**path)
        query: dict[str, Any] = {}
        headers: dict[str, str] = {}
        for parameter in op.parameters:
            if parameter.required and parameter.location in ("query", "header"):
                value: Any = SAMPLES.get(parameter.kind, "tests")
                if parameter.choices:
                    value = str(parameter.choices[0])
                elif parameter.kind in ("array", "object") and parameter.pointer:
                    value = self.text(parameter)
                if parameter.location == "query":
                    query[parameter.name] = value
                else:
                    headers[parameter.name] = (
                        ",".join(map(str, value))
                        if isinstance(value, list)
                        else str(value)
                    )
        body = None
        if op.body is not None and op.resource is not None:
            resource = self.model.resources[op.resource]
            body = dict(self.first(resource.name, path))
            body.pop(str(resource.id_field), None)
        elif op.body is not None and op.body.pointer is not None:
            rng = random.Random(0)
            body = self.schemas.build(op.body.pointer, rng, "body", "writing")
        return self.api.request(
            op.method, url, params=query, headers=headers, json=body
        )


def test_every_operation_answers_its_declared_success_with_a_body_that_fits(
    api: httpx.Client, model: Spec
) -> None:
    caller = Caller(api, model)
    called = 0
    reached = {op.operation_id for op in model.operations if caller.can_call(op)}
    # This caller's own reach: every operation of the grown part. What lies beyond it
    # (records nothing lists, bodies other than JSON, operations that declare no
    # success) is driven by schemathesis in test_mock_corpus.py and test_mock_fuzz.py.
    grown = yaml.safe_load(GROWTH.read_text("utf-8"))["paths"]
    assert {
        op.operation_id
        for op in model.operations
        if op.method.lower() in grown.get(op.path, {})
    } <= reached
    for op in model.operations:
        if op.operation_id not in reached:
            continue
        response = caller.send(op, caller.path(op))
        success = op.success
        assert success is not None, op.operation_id
        assert response.status_code == success.code, (op.operation_id, response.text)
        if success.pointer is not None and is_json(str(success.media)):
            problems = matches(model, success.pointer, response.json())
            assert problems == [], (op.operation_id, problems)
        elif success.pointer is not None:  # text, audio...: the declared media type
            media = response.headers["content-type"].split(";")[0]
            assert media == success.media, (op.operation_id, media)
        else:
            assert response.content == b"", op.operation_id
        called += 1
    assert called >= 10  # the seed's and the grown spec's operations


def test_range_date_time_and_enum_filters_select_what_they_say(
    api: httpx.Client,
) -> None:
    routes = every(api, "/routes")
    assert len(routes) >= RECORDS

    rated = every(api, "/routes", minRating=4)
    assert rated == [r for r in routes if r["rating"] >= 4]
    assert 0 < len(rated) < len(routes)

    def instant(text: str) -> datetime:
        return datetime.fromisoformat(text)

    moments = sorted(instant(r["createdAt"]) for r in routes)
    middle = moments[len(moments) // 2]
    # The same instant in another zone: filters compare moments, not text.
    east = middle.astimezone(timezone(timedelta(hours=5))).isoformat()
    later = every(api, "/routes", createdAfter=east)
    assert later == [r for r in routes if instant(r["createdAt"]) > middle]
    assert 0 < len(later) < len(routes)

    active = every(api, "/routes", status="Active", minRating=2)
    expected = [r for r in routes if r["status"] == "Active" and r["rating"] >= 2]
    assert active == expected
    assert active


@pytest.mark.parametrize(
    ("params", "named"),
    [({"minRating": 9}, "minRating"), ({"createdAfter": "yesterday"}, "createdAfter")],
)
def test_a_filter_value_its_schema_refuses_is_the_declared_400_naming_it(
    api: httpx.Client, params: dict[str, Any], named: str
) -> None:
    refused = api.get("/routes", params=params, headers={"x-request-source": "t"})
    assert refused.status_code == 400
    assert refused.headers["content-type"] == "application/problem+json"
    assert named in refused.json()["detail"]


def test_a_missing_required_header_is_the_declared_400_naming_it(
    api: httpx.Client,
) -> None:
    refused = api.get("/routes")
    assert refused.status_code == 400
    assert refused.headers["content-type"] == "application/problem+json"
    assert refused.json()["status"] == 400
    assert "x-request-source" in refused.json()["detail"]


def test_the_events_of_a_shipment_are_its_own_paged_and_stable(
    api: httpx.Client,
) -> None:
    first, second = [s["shipmentId"] for s in every(api, "/shipments")[:2]]
    events = every(api, f"/shipments/{first}/events")
    assert len(events) == RECORDS
    assert {event["shipmentId"] for event in events} == {first}
    assert every(api, f"/shipments/{first}/events") == events  # the same each time
    others = every(api, f"/shipments/{second}/events")
    assert {event["shipmentId"] for event in others} == {second}
    ids = {event["eventId"] for event in events + others}
    assert len(ids) == 2 * RECORDS
    arrived = every(api, f"/shipments/{first}/events", type="Arrived")
    assert arrived == [e for e in events if e["type"] == "Arrived"]
    unknown = api.get("/shipments/no-such-shipment/events")
    assert unknown.status_code == 404
    assert unknown.headers["content-type"] == "application/problem+json"


def test_identifiers_are_unique_among_records_with_two_id_fields(
    api: httpx.Client,
) -> None:
    routes = every(api, "/routes")
    assert len({route["routeId"] for route in routes}) == len(routes)
    created = api.post("/routes", json={"carrierId": "c-1", "rating": 3})
    assert created.status_code == 201
    route = created.json()
    assert route["routeId"] not in {r["routeId"] for r in routes}
    url = f"/routes/{route['routeId']}"
    assert api.get(url).json() == route
    patched = api.patch(url, json={"rating": 5, "routeId": "another"}).json()
    assert patched == {**route, "rating": 5}  # the identifier stays
    replaced = api.put(url, json={"carrierId": "c-2"}).json()
    assert replaced == {"carrierId": "c-2", "routeId": route["routeId"]}
    assert api.delete(url).status_code == 204
    assert api.get(url).status_code == 404
    assert len(every(api, "/routes")) == len(routes)


def test_a_plain_array_and_an_action_answer_data_built_from_their_schemas(
    api: httpx.Client,
) -> None:
    services = api.get("/carriers/c-1/services")
    assert services.status_code == 200
    assert isinstance(services.json(), list)
    assert api.get("/carriers/c-1/services").json() == services.json()  # seeded
    archived = api.post("/routes/r-1/archive")
    assert archived.status_code == 200
    assert set(archived.json()) <= {"archivedAt", "routeId"}
    moment = datetime.fromisoformat(archived.json()["archivedAt"])
    assert moment.tzinfo == UTC
