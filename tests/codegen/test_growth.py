"""Every operation of a grown spec has its typed door, with no hand edit.

The spec is the project's with tests/spec/growth.yaml merged in, the shapes a user adds by
hand: a sub-resource list, a plain-array answer, a required header parameter, range, date
and enum filters, PUT / PATCH / DELETE, an action, records with two ``...Id`` fields,
inline nested objects, fields named ``type``, ``class`` and ``from``. It is generated once
for the module by codegen/generate.py, as ``make`` does, and imported beside the
repository's own package. What each door must be is read from the spec model, so the
checks hold for whatever the spec gains; none lists the operations it expects.
"""

from __future__ import annotations

import importlib
import inspect
import subprocess
import sys
import typing
from collections.abc import Iterator
from types import ModuleType, NoneType, UnionType
from typing import Any

import attrs
import pytest
from spec_copy import GROWTH, SpecCopy, build_spec_copy, load_generated

from service_api._page_plan import PageOptions
from service_api_spec import (
    PAGE_PARAMETERS,
    Operation,
    Spec,
    load_spec,
    python_identifier,
)

GROWN = "grown_client"


@pytest.fixture(scope="module")
def grown(tmp_path_factory: pytest.TempPathFactory) -> SpecCopy:
    return build_spec_copy(tmp_path_factory.mktemp("grown"), GROWTH)


@pytest.fixture(scope="module")
def model(grown: SpecCopy) -> Spec:
    return load_spec(grown.spec)


@pytest.fixture(scope="module")
def package(grown: SpecCopy) -> ModuleType:
    return load_generated(grown, GROWN)


@pytest.fixture(scope="module")
def client(package: ModuleType) -> Any:
    return package.Client(base_url="http://127.0.0.1:9/public/v3")


def with_doors(model: Spec) -> Iterator[Operation]:
    return (op for op in model.operations if op.door is not None)


def door_of(client: Any, model: Spec, op: Operation, awaited: bool = False) -> Any:
    owner = client.aio if awaited else client
    attributes = importlib.import_module(f"{client.__module__.split('.')[0]}.api")
    resource = getattr(owner, attributes.TAG_ATTRIBUTES[op.tag])
    return getattr(resource, str(op.door))


def is_page_parameter(op: Operation, name: str, location: str) -> bool:
    return op.kind == "list" and location == "query" and name in PAGE_PARAMETERS


def test_the_grown_spec_has_the_shapes_this_module_is_about(model: Spec) -> None:
    lists = model.lists
    assert any(model.resources[str(op.resource)].parent for op in lists)
    others = [op for op in model.operations if op.kind == "other"]
    assert any(op.success and op.success.shape == "array" for op in others)
    headers = [p for op in model.operations for p in op.parameters]
    assert any(p.location == "header" and p.required for p in headers)
    kinds = {op.kind for op in model.operations}
    assert {"list", "get", "create", "replace", "update", "delete", "other"} <= kinds


def test_the_grown_package_type_checks(grown: SpecCopy) -> None:
    done = grown.type_check()
    assert done.returncode == 0, done.stdout + done.stderr


def test_every_operation_has_a_door_and_an_awaited_twin(
    client: Any, model: Spec
) -> None:
    for op in with_doors(model):
        door = door_of(client, model, op)
        awaited = door_of(client, model, op, awaited=True)
        assert not inspect.iscoroutinefunction(door), op.operation_id
        # A list door returns the same pager on client.aio (async for).
        assert inspect.iscoroutinefunction(awaited) is (op.kind != "list"), op
        assert inspect.signature(door) == inspect.signature(awaited), op.operation_id


def keyword(op: Operation, name: str, changed: dict[str, str]) -> str:
    """The door's keyword of the parameter ``name``: its Python name, made distinct
    from the operation's others' by the generator's rule, with a ``_`` after it where
    a list's pager has an option of that name (docs/development/endpoint.md)."""
    python = changed.get(name, python_identifier(name))
    return (
        f"{python}_" if op.kind == "list" and python in PageOptions._fields else python
    )


def test_every_door_takes_its_operations_parameters_by_keyword(
    client: Any, model: Spec, prepare: Any
) -> None:
    """Path, query, header and cookie parameters (a list's but its page ones) and the
    body, required as the spec says; a list door also takes the pager's options."""
    for op in with_doors(model):
        parameters = inspect.signature(door_of(client, model, op)).parameters
        assert all(p.kind is p.KEYWORD_ONLY for p in parameters.values()), op
        changed = prepare.distinct([p.name for p in op.parameters])
        expected = {
            keyword(op, p.name, changed): p.required
            for p in op.parameters
            if not is_page_parameter(op, p.name, p.location)
        }
        if op.body is not None:
            expected["body"] = op.body.required
        if op.kind == "list":
            expected |= dict.fromkeys(PageOptions._fields, False)
        given = {name: p.default is p.empty for name, p in parameters.items()}
        assert given == expected, op.operation_id


def test_every_door_returns_its_success(
    client: Any, model: Spec, package: ModuleType
) -> None:
    """A list door its pager of the page and item models; any other door the type of
    each 2xx its operation declares (a record, a list for a plain array, None for no
    body), their union where there are several (200 a list, 202 an object), and
    nothing else."""
    for op in with_doors(model):
        returns = typing.get_type_hints(door_of(client, model, op))["return"]
        if op.kind == "list":
            assert typing.get_origin(returns) is package.doors.ListPager, op
            page, item = typing.get_args(returns)
            module = sys.modules[
                f"{GROWN}.api.{model.tags[op.tag].module}.{op.python_name}"
            ]
            assert page is module.SUCCESS_MODEL, op.operation_id
            data = typing.get_type_hints(page)["data"]
            assert typing.get_args(data) == (item,), op.operation_id
            continue
        union = typing.get_origin(returns) in (UnionType, typing.Union)
        arms = typing.get_args(returns) if union else (returns,)
        shapes = {answer.shape for answer in op.successes} or {"empty"}
        # None is a type of the door's exactly when a success has no body.
        assert (NoneType in arms) is ("empty" in shapes), (op.operation_id, returns)
        typed = [arm for arm in arms if arm is not NoneType]
        # One type at most per success with a body (two may share one).
        bodies = [answer for answer in op.successes if answer.shape != "empty"]
        assert len(typed) <= len(bodies), (op.operation_id, returns)
        if "array" in shapes:
            lists = [arm for arm in typed if typing.get_origin(arm) is list]
            assert lists, (op.operation_id, returns)
        if "object" in shapes:
            records = [arm for arm in typed if attrs.has(arm)]
            assert all(hasattr(arm, "from_dict") for arm in records), op.operation_id
            assert records, (op.operation_id, returns)
        if shapes - {"empty"}:
            assert typed, (op.operation_id, returns)


def test_the_registry_has_every_list_with_its_parameters(
    model: Spec, package: ModuleType
) -> None:
    registry = importlib.import_module(f"{package.__name__}.api").LIST_ENDPOINTS
    assert set(registry) == {
        model.resources[str(op.resource)].name for op in model.lists
    }
    assert list(registry) == sorted(registry)
    for op in model.lists:
        resource = model.resources[str(op.resource)]
        entry = registry[resource.name]
        assert entry.module.__name__.rpartition(".")[2] == op.python_name
        assert entry.module.SUCCESS_MODEL is entry.page_model
        assert entry.id_field == resource.id_field
        # The item's attribute of its identifier: what the pager drops repeats by. Items
        # that are a union of models (item_model the base Record) have it in each
        # model that declares the field, under one name.
        assert entry.item_models, entry
        assert entry.item_model in entry.item_models or len(entry.item_models) > 1
        attributes = {
            item._ATTRIBUTES[resource.id_field]
            for item in entry.item_models
            if resource.id_field in item._ATTRIBUTES
        }
        expected_id = attributes.pop() if len(attributes) == 1 else None
        assert expected_id == entry.module.ID_ATTRIBUTE, entry
        expected = [
            (p.name, p.location, p.required, p.kind, p.choices)
            for p in op.parameters
            if not is_page_parameter(op, p.name, p.location)
        ]
        given = [
            (q.name, q.location, q.required, q.kind, q.choices)
            for q in entry.parameters
        ]
        assert given == expected, op.operation_id
        keywords = inspect.signature(entry.module._get_kwargs).parameters
        assert all(q.python_name in keywords for q in entry.parameters), entry


# Run in a child process whose path puts the grown package first: service_api.Client is
# built on the repository's own package, so it pages only through its own modules.
CALLS = """
import asyncio
import json

import httpx

import service_api
from service_api_client.models import CarrierService, ShipmentEvent

seen = []

def serve(request):
    path, method = request.url.path.removeprefix("/public/v3"), request.method
    seen.append((method, path, dict(request.url.params), request.headers))
    if path.endswith("/authenticate"):
        token = {"access_token": "t", "token_type": "Bearer", "expires_in": "3600"}
        return httpx.Response(200, json=token)
    if path == "/shipments/S1/events":
        event = {"eventId": "e-1", "shipmentId": "S1", "type": "Departed",
                 "location": {"latitude": 1.5, "longitude": 2, "from": "dock 4"}}
        page = {"totalRecords": 1, "pageNumber": 1, "pageSize": 50, "data": [event]}
        return httpx.Response(200, json=page)
    if path == "/routes":
        page = {"totalRecords": 1, "pageNumber": 1, "pageSize": 50,
                "data": [{"routeId": "R1", "carrierId": "C1", "rating": 4}]}
        return httpx.Response(200, json=page)
    if path == "/carriers/C1/services":
        return httpx.Response(200, json=[{"serviceId": "s-1", "class": "express", "from": "HUB"}])
    if path == "/routes/R1/archive":
        return httpx.Response(200, json={"routeId": "R1", "archivedAt": "2024-05-01T08:30:00Z"})
    if method == "DELETE":
        return httpx.Response(204)
    raise AssertionError((method, path))

transport = httpx.MockTransport(serve)
with service_api.Client(
    "http://127.0.0.1:9/public/v3", "cid", "secret", "acct-1",
    httpx_args={"transport": transport},
) as client:
    events = list(client.shipments.list_shipment_events(shipment_id="S1", type_="Departed"))
    assert [type(e) for e in events] == [ShipmentEvent], events
    event = events[0]
    assert (event.type_, event.location.from_, event["location"]["from"]) == (
        "Departed", "dock 4", "dock 4"), event
    assert seen[-1][2]["type"] == "Departed", seen[-1]
    routes = list(client.routes.list(x_request_source="nightly", min_rating=3))
    assert [r.route_id for r in routes] == ["R1"], routes
    method, path, params, headers = seen[-1]
    assert (headers["x-request-source"], params["minRating"]) == ("nightly", "3"), seen[-1]
    services = client.carriers.list_carrier_services(carrier_id="C1")
    assert [type(s) for s in services] == [CarrierService], services
    assert (services[0].class_, services[0].from_) == ("express", "HUB"), services
    assert client.routes.archive_route(route_id="R1").route_id == "R1"
    assert client.routes.delete(route_id="R1") is None
    awaited = asyncio.run(client.aio.carriers.list_carrier_services(carrier_id="C1"))
    assert awaited[0].service_id == "s-1", awaited
print("called")
"""


def test_the_new_doors_call_the_service_and_give_typed_values(grown: SpecCopy) -> None:
    done = subprocess.run(
        [sys.executable, "-c", CALLS],
        env=grown.env(),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    assert done.stdout.strip() == "called"
