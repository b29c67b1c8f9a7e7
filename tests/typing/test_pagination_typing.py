"""Type-checked by mypy --strict: ``paginate`` infers the item type from the endpoint
module, with no cast. ``assert_type`` fails the type check if inference drifts.

Importing it is the only runtime test; nothing here talks to a server.
"""

from collections.abc import AsyncGenerator, Generator, Sequence
from contextlib import aclosing, closing
from typing import TypeVar, assert_type

import service_api
from service_api_client.api.devices import list_devices
from service_api_client.api.shipments import list_shipments
from service_api_client.models import Device, DevicePage, Shipment, ShipmentPage

T = TypeVar("T")


def items(client: service_api.Client) -> list[str]:
    shipments = service_api.paginate(
        list_shipments, client, page_size=20, concurrency=4
    )
    assert_type(shipments, service_api.Pager[ShipmentPage])
    iterator = iter(shipments)
    assert_type(iterator, Generator[Shipment, None, None])
    with closing(iterator):
        return [str(s.shipment_id) for s in iterator]


async def pager_both_ways(client: service_api.Client) -> list[Shipment]:
    shipments = service_api.paginate(
        list_shipments, client, key=lambda s: s.shipment_id
    )
    found = [s async for s in shipments]
    for page in shipments.pages():
        assert_type(page, service_api.Page[ShipmentPage])
    async for apage in shipments.pages():
        assert_type(apage.items, Sequence[Shipment])
    return found + list(shipments)


def refused(client: service_api.Client) -> None:
    # Only the endpoint module is an endpoint; its functions are not.
    service_api.paginate(list_shipments.sync, client)  # type: ignore[arg-type]
    service_api.paginate(list_shipments.sync_detailed, client)  # type: ignore[arg-type]


async def async_items(client: service_api.Client) -> list[Device]:
    devices = aiter(service_api.paginate(list_devices, client, max_items=100))
    assert_type(devices, AsyncGenerator[Device, None])
    async with aclosing(devices):
        return [device async for device in devices]


def pages(client: service_api.Client) -> int:
    total = 0
    # The pages are a public type, named as such.
    shipment_pages = service_api.paginate(list_shipments, client, max_pages=3).pages()
    assert_type(shipment_pages, service_api.Pages[ShipmentPage])
    assert_type(shipment_pages.pager, service_api.Pager[ShipmentPage])
    for page in shipment_pages:
        assert_type(page, service_api.Page[ShipmentPage])
        assert_type(page.model, ShipmentPage)
        assert_type(page.items, Sequence[Shipment])
        assert_type(page.number, int)
        total = page.total_records
    return total


async def async_pages(client: service_api.Client) -> list[Sequence[Device]]:
    found: list[Sequence[Device]] = []
    pages = aiter(service_api.paginate(list_devices, client, concurrency=2).pages())
    assert_type(pages, AsyncGenerator[service_api.Page[DevicePage], None])
    async with aclosing(pages):
        async for page in pages:
            assert_type(page.model, DevicePage)
            found.append(page.items)
    return found


def generic_export(
    endpoint: service_api.ListOperation[service_api.PageModel[T]],
    client: service_api.Client,
) -> list[T]:
    return list(service_api.paginate(endpoint, client))


def reuse(client: service_api.Client) -> list[Shipment]:
    return generic_export(list_shipments, client)


def test_module_imports() -> None:
    assert callable(items)
