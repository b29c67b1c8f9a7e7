"""Type-checked by mypy --strict: the resource accessors (``client.shipments.list()``
and friends) are typed from the spec, with no cast. Each result is assigned to an
annotated variable and checked with ``assert_type``, so the check fails if a type drifts
either wider (``Any`` would pass an assignment but not ``assert_type``) or narrower.

Importing it is the only runtime test; nothing here talks to a server.
"""

from collections.abc import AsyncGenerator, Generator, Sequence
from typing import assert_type

import service_api
import service_api_client
from service_api_client.api.devices import DevicesResource
from service_api_client.api.shipments import ShipmentsResource
from service_api_client.client import ListPage
from service_api_client.models import Device, DevicePage, Shipment, ShipmentPage


def one_page(client: service_api.Client) -> int:
    shipments: ShipmentsResource = client.shipments
    page: ShipmentPage = shipments.list(page_number=2, page_size=10)
    assert_type(client.shipments.list(), ShipmentPage)
    assert_type(client.devices.list(page_size=5), DevicePage)
    return page.total_records


async def one_page_async(client: service_api.Client) -> list[Device]:
    devices: DevicesResource = client.devices
    page: DevicePage = await devices.alist(page_size=5)
    assert_type(await client.shipments.alist(), ShipmentPage)
    return page.data


def items(client: service_api.Client) -> list[str]:
    shipments: Generator[Shipment, None, None] = client.shipments.iterate(
        page_size=20, start_page=2, max_items=100, max_pages=5, concurrency=4
    )
    assert_type(client.devices.iterate(), Generator[Device, None, None])
    return [shipment.shipment_id for shipment in shipments if isinstance(shipment.shipment_id, str)]


async def items_async(client: service_api.Client) -> list[Device]:
    devices: AsyncGenerator[Device, None] = client.devices.aiterate(max_items=10)
    assert_type(client.shipments.aiterate(), AsyncGenerator[Shipment, None])
    return [device async for device in devices]


def pages(client: service_api.Client) -> int:
    total = 0
    for page in client.shipments.pages(max_pages=3):
        assert_type(page, ListPage[ShipmentPage, Shipment])
        model: ShipmentPage = page.model
        found: Sequence[Shipment] = page.items
        number: int = page.number
        total += len(found) + number + model.page_size + page.total_records
    return total


async def pages_async(client: service_api.Client) -> list[Sequence[Device]]:
    found: list[Sequence[Device]] = []
    apages: AsyncGenerator[ListPage[DevicePage, Device], None] = client.devices.apages()
    async for page in apages:
        assert_type(page.model, DevicePage)
        found.append(page.items)
    return found


def a_plain_generated_client_has_them_too(client: service_api_client.Client) -> ShipmentPage:
    assert_type(client.devices, DevicesResource)
    return client.shipments.list()


def refused(client: service_api.Client) -> None:
    client.shipments.list(page_size="10")  # type: ignore[arg-type]
    client.shipments.iterate(page_number=1)  # type: ignore[call-arg]
    client.shipments.iterate(10)  # type: ignore[call-arg]
    client.alerts.list()  # type: ignore[attr-defined]


def the_package_page_is_a_list_page(
    page: service_api.Page[ShipmentPage],
) -> ListPage[ShipmentPage, Shipment]:
    # What service_api.Client's paginator yields must be what the accessors promise.
    return page


def another_model_is_not(page: service_api.Page[DevicePage]) -> ListPage[ShipmentPage, Shipment]:
    return page  # type: ignore[return-value]
