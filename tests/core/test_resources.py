"""One door per operation: ``client.<tag>.list(**options)`` (its items with ``for`` /
``async for`` and its pages with ``.pages()``) against the mock, and ``client.<tag>.get()``
/ ``create()`` and their awaited twins ``client.aio.<tag>...`` against a small server of
this test, over loopback HTTP, sync and async side by side; and the registry
``service_api_client.api.LIST_ENDPOINTS``."""

from __future__ import annotations

import inspect
import json
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import aclosing, closing
from typing import Any

import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

import service_api
import service_api_client
from service_api_client.api import LIST_ENDPOINTS, ListEndpoint
from service_api_client.api.authentication import authenticate
from service_api_client.api.devices import list_devices
from service_api_client.api.shipments import list_shipments
from service_api_client.errors import UnexpectedStatus
from service_api_client.models import (
    Device,
    DevicePage,
    Shipment,
    ShipmentPage,
    TokenRequest,
    TokenResponse,
)
from service_api_mock import DEMO_CLIENT_ID, DEMO_CLIENT_SECRET, RunningMock, serve_asgi

pytestmark = pytest.mark.anyio

# resource: (item model, page model, id attribute, id field on the wire, operationId)
RESOURCES: dict[str, tuple[type[Any], type[Any], str, str, str]] = {
    "shipments": (Shipment, ShipmentPage, "shipment_id", "shipmentId", "listShipments"),
    "devices": (Device, DevicePage, "device_id", "deviceId", "listDevices"),
}


@pytest.fixture
async def client(mock: RunningMock) -> AsyncIterator[service_api.Client]:
    """A client of the mock for acct-1; both connection pools closed at the end."""
    made = service_api.Client(
        mock.base_url, DEMO_CLIENT_ID, DEMO_CLIENT_SECRET, "acct-1"
    )
    async with made:
        with made:
            yield made


@pytest.fixture(params=sorted(RESOURCES))
def resource(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def dataset_ids(mock: RunningMock, resource: str, account: str = "acct-1") -> list[str]:
    return [
        row[RESOURCES[resource][3]] for row in mock.service.dataset(resource, account)
    ]


def ids_of(items: list[Any], resource: str) -> list[str]:
    return [getattr(item, RESOURCES[resource][2]) for item in items]


def served_pages(mock: RunningMock, resource: str, expected: int) -> int:
    """Pages the mock served, once it has counted ``expected`` of them or after a
    deadline (it counts a request just after answering it)."""
    operation = RESOURCES[resource][4]
    deadline = time.monotonic() + 5
    while (
        mock.service.count(operation, status=200) < expected
        and time.monotonic() < deadline
    ):
        time.sleep(0.005)
    return mock.service.count(operation, status=200)


async def all_items(twin: str, accessor: Any, **options: Any) -> list[Any]:
    pager = accessor.list(**options)
    if twin == "sync":
        with closing(iter(pager)) as items:
            return list(items)
    async with aclosing(aiter(pager)) as aitems:
        return [item async for item in aitems]


async def all_pages(twin: str, accessor: Any, **options: Any) -> list[Any]:
    pages = accessor.list(**options).pages()
    if twin == "sync":
        with closing(iter(pages)) as sync_pages:
            return list(sync_pages)
    async with aclosing(aiter(pages)) as async_pages:
        return [page async for page in async_pages]


async def test_list_returns_the_pager_paginate_returns(
    client: service_api.Client,
) -> None:
    pager = client.shipments.list(page_size=5)
    assert isinstance(pager, service_api.Pager)
    assert repr(pager) == repr(
        service_api.paginate(list_shipments, client, page_size=5)
    )
    assert repr(client.devices.list()) == "Pager(list_devices, page_size=50)"


async def test_the_awaited_doors_list_with_the_same_pager(
    twin: str, resource: str, client: service_api.Client, mock: RunningMock
) -> None:
    pager = getattr(client.aio, resource).list(page_size=9)
    assert type(pager) is service_api.Pager
    assert repr(pager) == repr(getattr(client, resource).list(page_size=9))
    items = await all_items(twin, getattr(client.aio, resource), page_size=9)
    assert ids_of(items, resource) == dataset_ids(mock, resource)


async def test_one_page_by_hand_stays_the_module_function(
    twin: str, client: service_api.Client, mock: RunningMock
) -> None:
    if twin == "sync":
        page = list_shipments.sync(client=client, page_number=2, page_size=4)
    else:
        page = await list_shipments.asyncio(client=client, page_number=2, page_size=4)
    assert type(page) is ShipmentPage
    assert ids_of(page.data, "shipments") == dataset_ids(mock, "shipments")[4:8]


async def test_list_yields_every_item(
    twin: str, resource: str, client: service_api.Client, mock: RunningMock
) -> None:
    items = await all_items(twin, getattr(client, resource), page_size=7)
    assert all(type(item) is RESOURCES[resource][0] for item in items)
    expected = dataset_ids(mock, resource)
    assert ids_of(items, resource) == expected
    assert len(expected) > 7  # more than one page was needed
    assert served_pages(mock, resource, -(-len(expected) // 7)) == -(
        -len(expected) // 7
    )


async def test_list_passes_its_options_on(
    twin: str, client: service_api.Client, mock: RunningMock
) -> None:
    items = await all_items(
        twin, client.devices, page_size=5, start_page=3, max_items=7, concurrency=2
    )
    assert ids_of(items, "devices") == dataset_ids(mock, "devices")[10:17]
    # pages 3 and 4 hold the 7 items; concurrency may fetch a page ahead, no more than that
    assert 2 <= served_pages(mock, "devices", 2) <= 4


async def test_pages_are_typed_pages_in_order(
    twin: str, resource: str, client: service_api.Client, mock: RunningMock
) -> None:
    pages = await all_pages(twin, getattr(client, resource), page_size=10, max_pages=3)
    assert [page.number for page in pages] == [1, 2, 3]
    assert all(isinstance(page, service_api.Page) for page in pages)
    assert all(type(page.model) is RESOURCES[resource][1] for page in pages)
    items = [item for page in pages for item in page.items]
    assert ids_of(items, resource) == dataset_ids(mock, resource)[:30]
    assert {page.total_records for page in pages} == {len(dataset_ids(mock, resource))}


async def test_a_child_client_for_another_account_has_the_accessors(
    twin: str, client: service_api.Client, mock: RunningMock
) -> None:
    child = client.with_account("acct-2")
    try:
        items = await all_items(twin, child.shipments, max_items=5)
    finally:
        await (
            child.aclose()
        )  # its own async pool: left to the garbage collector, it warns
    assert ids_of(items, "shipments") == dataset_ids(mock, "shipments", "acct-2")[:5]
    assert (
        dataset_ids(mock, "shipments", "acct-2")[:5]
        != dataset_ids(mock, "shipments")[:5]
    )


async def test_a_bad_option_is_refused_before_any_request(
    twin: str, client: service_api.Client, mock: RunningMock
) -> None:
    with pytest.raises(ValueError, match="page_size must be an integer of at least 1"):
        await all_items(twin, client.shipments, page_size=0)
    with pytest.raises(ValueError, match="concurrency"):
        await all_pages(twin, client.devices, concurrency=0)
    assert mock.service.count() == 0


async def test_a_failing_page_raises_the_typed_error(
    twin: str, mock: RunningMock
) -> None:
    wrong = service_api.Client(
        mock.base_url, DEMO_CLIENT_ID, DEMO_CLIENT_SECRET, "no-such"
    )
    async with wrong:
        with wrong, pytest.raises(service_api.ApiStatusError) as caught:
            await all_items(twin, wrong.shipments)
    assert caught.value.status_code in (400, 403)


# -- the generated package alone --------------------------------------------------------


@pytest.fixture
def plain_client(mock: RunningMock) -> service_api_client.Client:
    """A generated client with a token obtained by hand: no overlay behind it."""
    with service_api_client.Client(base_url=mock.base_url) as anonymous:
        answer = authenticate.sync(
            client=anonymous,
            body=TokenRequest(DEMO_CLIENT_ID, DEMO_CLIENT_SECRET, "client_credentials"),
        )
    assert isinstance(answer, TokenResponse)
    token = answer.access_token
    return service_api_client.Client(
        base_url=mock.base_url,
        headers={"Authorization": f"Bearer {token}", "x-service-account-id": "acct-1"},
    )


async def test_a_plain_generated_client_gets_one_page_by_hand(
    twin: str, plain_client: service_api_client.Client, mock: RunningMock
) -> None:
    async with plain_client:
        with plain_client:
            if twin == "sync":
                page = list_devices.sync(client=plain_client, page_size=3)
            else:
                page = await list_devices.asyncio(client=plain_client, page_size=3)
    assert type(page) is DevicePage
    assert ids_of(page.data, "devices") == dataset_ids(mock, "devices")[:3]


def test_a_plain_generated_client_cannot_page(
    plain_client: service_api_client.Client, mock: RunningMock
) -> None:
    with pytest.raises(
        TypeError, match=r"needs service_api\.Client, not Client.*list_shipments"
    ):
        plain_client.shipments.list()
    assert mock.service.count("listShipments") == 0


def test_the_registry_names_every_list_endpoint_with_its_models_and_id() -> None:
    # The seed's two, whatever else the spec gains; sorted by name.
    assert {"devices", "shipments"} <= set(LIST_ENDPOINTS)
    assert list(LIST_ENDPOINTS) == sorted(LIST_ENDPOINTS)
    assert LIST_ENDPOINTS["shipments"] == ListEndpoint(
        "shipments", list_shipments, ShipmentPage, Shipment, "shipmentId"
    )
    assert LIST_ENDPOINTS["devices"] == ListEndpoint(
        "devices", list_devices, DevicePage, Device, "deviceId"
    )
    for endpoint in LIST_ENDPOINTS.values():
        assert endpoint.module.SUCCESS_MODEL is endpoint.page_model
    assert (
        repr(LIST_ENDPOINTS["devices"])
        == "ListEndpoint(name='devices', id_field='deviceId')"
    )
    with pytest.raises(TypeError):
        LIST_ENDPOINTS["parcels"] = LIST_ENDPOINTS["devices"]  # type: ignore[index]


def test_the_client_hides_none_of_the_doors() -> None:
    """The tags of the list endpoints are among the generated client's properties, beside
    ``aio``, and no method of service_api.Client hides one of them (which tags have doors
    is checked against the spec in tests/codegen)."""
    generated = {
        name
        for name, value in vars(service_api_client.Client).items()
        if isinstance(value, property)
    }
    assert {e.module.__name__.split(".")[-2] for e in LIST_ENDPOINTS.values()} | {
        "aio"
    } <= generated
    for name in generated:
        assert (
            inspect.getattr_static(service_api.Client, name)
            is vars(service_api_client.Client)[name]
        )


# -- one request per call: get, create and their awaited twins ----------------------------

SHIPMENT = {
    "shipmentId": "s-1",
    "status": "open",
    "referenceNumber": "R-1",
    "devices": ["d-1"],
}


def doors_app(received: list[Any]) -> Starlette:
    """A server of the token, ``createShipment`` and ``getShipment``, which answers the
    shipment ids ``gone``, ``moved``, ``html`` and ``list...`` and a body asking ``"answer":
    200`` as a misbehaving service would; ``received`` gets each request body it is sent."""

    async def token(request: Request) -> Response:
        return JSONResponse(
            {"access_token": "t-doors", "token_type": "Bearer", "expires_in": "3600"}
        )

    async def create(request: Request) -> Response:
        body = await request.json()
        received.append(body)
        return JSONResponse(
            {**body, "shipmentId": "s-new"}, status_code=body.get("answer", 201)
        )

    async def get(request: Request) -> Response:
        answers = {
            "gone": JSONResponse(
                {"title": "Not Found", "status": 404}, status_code=404
            ),
            "moved": Response(status_code=302, headers={"location": "/elsewhere"}),
            "html": Response("<html>maintenance</html>", media_type="text/html"),
        }
        shipment_id = request.path_params["shipment_id"]
        if shipment_id.startswith("list"):
            return JSONResponse([SHIPMENT])
        return answers.get(shipment_id, JSONResponse(SHIPMENT))

    return Starlette(
        routes=[
            Route("/public/v3/authenticate", token, methods=["POST"]),
            Route("/public/v3/shipments", create, methods=["POST"]),
            Route("/public/v3/shipments/{shipment_id}", get, methods=["GET"]),
        ]
    )


@pytest.fixture(scope="module")
def doors_server() -> Iterator[tuple[str, list[Any]]]:
    """The base URL of :func:`doors_app` served on loopback, and what it received."""
    received: list[Any] = []
    with serve_asgi(doors_app(received), name="doors") as origin:
        yield f"{origin}/public/v3", received


@pytest.fixture
async def doors_client(
    doors_server: tuple[str, list[Any]],
) -> AsyncIterator[service_api.Client]:
    made = service_api.Client(
        doors_server[0], "cid", "doors-secret", "acct-1", max_retries=0
    )
    async with made:
        with made:
            yield made


async def door(twin: str, client: Any, operation: str, **arguments: Any) -> Any:
    """``client.shipments.<operation>(...)``, or awaited through ``client.aio``."""
    if twin == "sync":
        return getattr(client.shipments, operation)(**arguments)
    return await getattr(client.aio.shipments, operation)(**arguments)


async def test_get_gives_the_record_typed(
    twin: str, doors_client: service_api.Client
) -> None:
    shipment = await door(twin, doors_client, "get", shipment_id="s-1")
    assert type(shipment) is Shipment
    assert (shipment.shipment_id, shipment.devices) == ("s-1", ["d-1"])
    assert shipment["status"] == "open"
    assert shipment.to_dict() == SHIPMENT


async def test_create_sends_the_body_and_gives_the_created_record(
    twin: str, doors_client: service_api.Client, doors_server: tuple[str, list[Any]]
) -> None:
    body = Shipment(devices=["d-7"])
    body["referenceNumber"] = f"R-{twin}"
    created = await door(twin, doors_client, "create", body=body)
    assert type(created) is Shipment
    assert (created.shipment_id, created.devices, created["referenceNumber"]) == (
        "s-new",
        ["d-7"],
        f"R-{twin}",
    )
    assert doors_server[1][-1] == {"devices": ["d-7"], "referenceNumber": f"R-{twin}"}


@pytest.mark.parametrize(
    ("operation", "arguments", "error", "status"),
    [
        ("get", {"shipment_id": "gone"}, service_api.NotFoundError, 404),
        ("get", {"shipment_id": "moved"}, service_api.ApiStatusError, 302),
        (
            "create",
            {"answer": 200},
            service_api.ApiStatusError,
            200,
        ),  # 201 is the success
    ],
)
async def test_any_other_status_raises_the_typed_error(
    twin: str,
    doors_client: service_api.Client,
    operation: str,
    arguments: dict[str, Any],
    error: type[service_api.ApiStatusError],
    status: int,
) -> None:
    if operation == "create":
        body = Shipment()
        body["answer"] = arguments["answer"]
        arguments = {"body": body}
    with pytest.raises(error) as caught:
        await door(twin, doors_client, operation, **arguments)
    assert caught.value.status_code == status
    assert type(caught.value) is error


async def test_a_success_that_is_not_its_model_raises_invalid_response(
    twin: str, doors_client: service_api.Client
) -> None:
    with pytest.raises(service_api.InvalidResponseError, match="not valid JSON"):
        await door(twin, doors_client, "get", shipment_id="html")
    with pytest.raises(service_api.InvalidResponseError) as caught:
        await door(twin, doors_client, "get", shipment_id="list")
    assert str(caught.value) == (
        "GET /public/v3/shipments/list: unreadable answer"
        " (TypeError: Shipment.from_dict: expected a JSON object, got list)"
    )
    assert isinstance(caught.value.__cause__, TypeError)
    assert caught.value.request is not None
    assert caught.value.request.url.path == "/public/v3/shipments/list"
    # The message is bounded whatever the path and the reason.
    with pytest.raises(service_api.InvalidResponseError) as caught:
        await door(twin, doors_client, "get", shipment_id="list" + "-" * 400)
    assert len(str(caught.value)) == 300


async def test_the_plain_generated_client_raises_unexpected_status(
    twin: str, doors_server: tuple[str, list[Any]]
) -> None:
    plain = service_api_client.Client(base_url=doors_server[0])
    async with plain:
        with plain:
            assert (
                await door(twin, plain, "get", shipment_id="s-1")
            ).shipment_id == "s-1"
            for shipment_id, status in (("gone", 404), ("moved", 302)):
                with pytest.raises(UnexpectedStatus) as caught:
                    await door(twin, plain, "get", shipment_id=shipment_id)
                assert caught.value.status_code == status
            with pytest.raises(json.JSONDecodeError):
                await door(twin, plain, "get", shipment_id="html")


async def test_a_created_shipment_reads_back_by_its_id_from_the_mock(
    twin: str, client: service_api.Client, mock: RunningMock
) -> None:
    created = await door(twin, client, "create", body=Shipment(devices=["d-1"]))
    assert type(created) is Shipment
    assert isinstance(created.shipment_id, str)
    assert created.devices == ["d-1"]
    again = await door(twin, client, "get", shipment_id=created.shipment_id)
    assert again.to_dict() == created.to_dict()
    assert mock.service.count("createShipment", status=201) == 1
    with pytest.raises(service_api.NotFoundError):
        await door(twin, client, "get", shipment_id="no-such-shipment")
