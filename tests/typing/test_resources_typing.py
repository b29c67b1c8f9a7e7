"""Type-checked by mypy --strict: the one door per list endpoint,
``client.<tag>.list(**options)``, is typed from the spec, with no cast: its items are
the endpoint's model with ``for`` and ``async for``, its pages are typed pages. Each
result is checked with ``assert_type``, so the check fails if a type drifts either wider
(``Any`` would pass an assignment but not ``assert_type``) or narrower.

Importing it is the only runtime test; nothing here talks to a server.
"""

from collections.abc import AsyncGenerator, Generator, Sequence
from contextlib import aclosing, closing
from typing import assert_type

import service_api
import service_api_client
from service_api_client.api import LIST_ENDPOINTS, ListEndpoint, ListParameter
from service_api_client.api.devices import DevicesResource
from service_api_client.api.shipments import ShipmentsResource
from service_api_client.client import ListPage, ListPager, ListPages
from service_api_client.models import Device, DevicePage, Shipment, ShipmentPage


def items(client: service_api.Client) -> list[str]:
    shipments = client.shipments.list(
        page_size=20, start_page=2, max_items=100, max_pages=5, concurrency=4
    )
    assert_type(shipments, ListPager[ShipmentPage, Shipment])
    for shipment in shipments:
        assert_type(shipment, Shipment)
    assert_type(iter(client.devices.list()), Generator[Device, None, None])
    with closing(iter(shipments)) as found:
        return [s.shipment_id for s in found if isinstance(s.shipment_id, str)]


async def items_async(client: service_api.Client) -> list[Device]:
    async for shipment in client.shipments.list(key=lambda s: s.shipment_id):
        assert_type(shipment, Shipment)
    devices = aiter(client.devices.list(max_items=10))
    assert_type(devices, AsyncGenerator[Device, None])
    async with aclosing(devices):
        return [device async for device in devices]


def pages(client: service_api.Client) -> int:
    total = 0
    paged = client.shipments.list(max_pages=3).pages()
    assert_type(paged, ListPages[ShipmentPage, Shipment])
    for page in paged:
        assert_type(page, ListPage[ShipmentPage, Shipment])
        model: ShipmentPage = page.model
        found: Sequence[Shipment] = page.items
        number: int = page.number
        total += len(found) + number + model.page_size + page.total_records
    return total


async def pages_async(client: service_api.Client) -> list[Sequence[Device]]:
    found: list[Sequence[Device]] = []
    async for page in client.devices.list().pages():
        assert_type(page, ListPage[DevicePage, Device])
        assert_type(page.model, DevicePage)
        assert_type(page.items, Sequence[Device])
        found.append(page.items)
    return found


def a_plain_generated_client_has_them_too(
    client: service_api_client.Client,
) -> ListPager[ShipmentPage, Shipment]:
    assert_type(client.devices, DevicesResource)
    shipments: ShipmentsResource = client.shipments
    return (
        shipments.list()
    )  # typed alike; raises TypeError at run time (needs service_api)


def registry() -> str | None:
    endpoint = LIST_ENDPOINTS["shipments"]
    assert_type(endpoint, ListEndpoint)
    assert_type(endpoint.id_field, str | None)
    # Its parameters but the page ones: what a command line offers (--shipment-id).
    assert_type(endpoint.parameters, tuple[ListParameter, ...])
    for parameter in endpoint.parameters:
        assert_type(parameter.python_name, str)
        assert_type(parameter.required, bool)
    return endpoint.id_field


def refused(client: service_api.Client) -> None:
    client.shipments.list(page_size="10")  # type: ignore[arg-type]
    client.shipments.list(page_number=1)  # type: ignore[call-arg]
    client.shipments.list(10)  # type: ignore[call-arg]
    client.shipments.list(key=lambda d: d.device_id)  # type: ignore[attr-defined]
    client.shipments.iterate()  # type: ignore[attr-defined]
    client.shipments.alist()  # type: ignore[attr-defined]
    client.shipments.apages()  # type: ignore[attr-defined]


def the_package_pager_is_a_list_pager(
    pager: service_api.Pager[ShipmentPage],
) -> ListPager[ShipmentPage, Shipment]:
    # What service_api.Client's hook returns must be what the accessors promise.
    return pager


def the_package_page_is_a_list_page(
    page: service_api.Page[ShipmentPage],
) -> ListPage[ShipmentPage, Shipment]:
    return page


def another_model_is_not(
    page: service_api.Page[DevicePage],
) -> ListPage[ShipmentPage, Shipment]:
    return page  # type: ignore[return-value]


def test_module_imports() -> None:
    assert callable(items)
