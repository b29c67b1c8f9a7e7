"""The one door per list endpoint, ``client.<tag>.list(**options)``: its items with
``for`` / ``async for`` and its pages with ``.pages()``, against the mock over loopback
HTTP, sync and async side by side; and the registry ``service_api_client.api.LIST_ENDPOINTS``."""

from __future__ import annotations

import inspect
import time
from collections.abc import AsyncIterator
from contextlib import aclosing, closing
from typing import Any

import pytest

import service_api
import service_api_client
from service_api_client.api import LIST_ENDPOINTS, ListEndpoint
from service_api_client.api.authentication import authenticate
from service_api_client.api.devices import list_devices
from service_api_client.api.shipments import list_shipments
from service_api_client.models import (
    Device,
    DevicePage,
    Shipment,
    ShipmentPage,
    TokenRequest,
)
from service_api_mock import DEMO_CLIENT_ID, DEMO_CLIENT_SECRET, RunningMock

pytestmark = pytest.mark.anyio

# resource: (item model, page model, id attribute, id field on the wire, operationId)
RESOURCES: dict[str, tuple[type[Any], type[Any], str, str, str]] = {
    "shipments": (Shipment, ShipmentPage, "shipment_id", "shipmentId", "listShipments"),
    "devices": (Device, DevicePage, "device_id", "deviceId", "listDevices"),
}


@pytest.fixture
async def client(mock: RunningMock) -> AsyncIterator[service_api.Client]:
    """A client of the mock for acct-1; both connection pools closed at the end."""
    made = service_api.Client(mock.base_url, DEMO_CLIENT_ID, DEMO_CLIENT_SECRET, "acct-1")
    async with made:
        with made:
            yield made


@pytest.fixture(params=sorted(RESOURCES))
def resource(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def dataset_ids(mock: RunningMock, resource: str, account: str = "acct-1") -> list[str]:
    return [row[RESOURCES[resource][3]] for row in mock.service.dataset(resource, account)]


def ids_of(items: list[Any], resource: str) -> list[str]:
    return [getattr(item, RESOURCES[resource][2]) for item in items]


def served_pages(mock: RunningMock, resource: str, expected: int) -> int:
    """Pages the mock served, once it has counted ``expected`` of them or after a
    deadline (it counts a request just after answering it)."""
    operation = RESOURCES[resource][4]
    deadline = time.monotonic() + 5
    while mock.service.count(operation, status=200) < expected and time.monotonic() < deadline:
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


async def test_list_returns_the_pager_paginate_returns(client: service_api.Client) -> None:
    pager = client.shipments.list(page_size=5)
    assert isinstance(pager, service_api.Pager)
    assert repr(pager) == repr(service_api.paginate(list_shipments, client, page_size=5))
    assert repr(client.devices.list()) == "Pager(list_devices, page_size=50)"


async def test_one_page_by_hand_stays_the_module_function(
    twin: str, client: service_api.Client, mock: RunningMock
) -> None:
    if twin == "sync":
        page = list_shipments.sync_or_raise(client=client, page_number=2, page_size=4)
    else:
        page = await list_shipments.asyncio_or_raise(client=client, page_number=2, page_size=4)
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
    assert served_pages(mock, resource, -(-len(expected) // 7)) == -(-len(expected) // 7)


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
        await child.aclose()  # its own async pool: left to the garbage collector, it warns
    assert ids_of(items, "shipments") == dataset_ids(mock, "shipments", "acct-2")[:5]
    assert dataset_ids(mock, "shipments", "acct-2")[:5] != dataset_ids(mock, "shipments")[:5]


async def test_a_bad_option_is_refused_before_any_request(
    twin: str, client: service_api.Client, mock: RunningMock
) -> None:
    with pytest.raises(ValueError, match="page_size must be an integer of at least 1"):
        await all_items(twin, client.shipments, page_size=0)
    with pytest.raises(ValueError, match="concurrency"):
        await all_pages(twin, client.devices, concurrency=0)
    assert mock.service.count() == 0


async def test_a_failing_page_raises_the_typed_error(twin: str, mock: RunningMock) -> None:
    wrong = service_api.Client(mock.base_url, DEMO_CLIENT_ID, DEMO_CLIENT_SECRET, "no-such")
    async with wrong:
        with wrong, pytest.raises(service_api.ApiStatusError) as caught:
            await all_items(twin, wrong.shipments)
    assert caught.value.status_code in (400, 403)


# -- the generated package alone --------------------------------------------------------


@pytest.fixture
def plain_client(mock: RunningMock) -> service_api_client.Client:
    """A generated client with a token obtained by hand: no overlay behind it."""
    with service_api_client.Client(base_url=mock.base_url) as anonymous:
        token = authenticate.sync_or_raise(
            client=anonymous,
            body=TokenRequest(DEMO_CLIENT_ID, DEMO_CLIENT_SECRET, "client_credentials"),
        ).access_token
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
                page = list_devices.sync_or_raise(client=plain_client, page_size=3)
            else:
                page = await list_devices.asyncio_or_raise(client=plain_client, page_size=3)
    assert type(page) is DevicePage
    assert ids_of(page.data, "devices") == dataset_ids(mock, "devices")[:3]


def test_a_plain_generated_client_cannot_page(
    plain_client: service_api_client.Client, mock: RunningMock
) -> None:
    with pytest.raises(TypeError, match=r"needs service_api\.Client, not Client.*list_shipments"):
        plain_client.shipments.list()
    assert mock.service.count("listShipments") == 0


def test_the_registry_names_every_list_endpoint_with_its_models_and_id() -> None:
    assert list(LIST_ENDPOINTS) == ["devices", "shipments"]
    assert LIST_ENDPOINTS["shipments"] == ListEndpoint(
        "shipments", list_shipments, ShipmentPage, Shipment, "shipmentId"
    )
    assert LIST_ENDPOINTS["devices"] == ListEndpoint(
        "devices", list_devices, DevicePage, Device, "deviceId"
    )
    for endpoint in LIST_ENDPOINTS.values():
        assert endpoint.module.SUCCESS_MODEL is endpoint.page_model
    assert repr(LIST_ENDPOINTS["devices"]) == "ListEndpoint(name='devices', id_field='deviceId')"
    with pytest.raises(TypeError):
        LIST_ENDPOINTS["parcels"] = LIST_ENDPOINTS["devices"]  # type: ignore[index]


async def test_every_list_endpoint_has_an_accessor_the_client_does_not_shadow() -> None:
    """The accessors and the registry come from one generation rule, and no method of
    service_api.Client hides a tag's property."""
    generated = {
        name
        for name, value in vars(service_api_client.Client).items()
        if isinstance(value, property)
    }
    tags = {endpoint.module.__name__.split(".")[-2] for endpoint in LIST_ENDPOINTS.values()}
    assert tags == generated == {"devices", "shipments"}
    for tag in tags:
        assert (
            inspect.getattr_static(service_api.Client, tag) is vars(service_api_client.Client)[tag]
        )
