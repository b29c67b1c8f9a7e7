"""Type-checked by mypy --strict: each operation's door, ``client.<tag>.<verb>(...)`` and
its awaited twin ``client.aio.<tag>.<verb>(...)``, gives the model of the operation's
success, with no cast and no union; its arguments are keyword-only and typed from the
spec; a record's fields are typed as the spec says and read by their JSON names.
``assert_type`` fails the type check if the generated signatures drift.

Importing it is the only runtime test; nothing here talks to a server.
"""

import datetime
from collections.abc import AsyncGenerator, KeysView
from typing import Any, assert_type

import service_api
import service_api_client
from service_api_client.api.shipments import AsyncShipmentsResource, ShipmentsResource
from service_api_client.client import AsyncResources, ListPager
from service_api_client.models import (
    Address,
    Device,
    DevicePage,
    Shipment,
    ShipmentLeg,
    ShipmentPage,
)
from service_api_client.types import Unset


def one_shipment(client: service_api.Client) -> Shipment:
    shipment = client.shipments.get(shipment_id="s-1")
    assert_type(shipment, Shipment)
    created = client.shipments.create(body=Shipment(devices=["d-1"]))
    assert_type(created, Shipment)
    return shipment


async def one_shipment_awaited(client: service_api.Client) -> Shipment:
    assert_type(client.aio, AsyncResources)
    assert_type(client.aio.shipments, AsyncShipmentsResource)
    created = await client.aio.shipments.create(body=Shipment())
    assert_type(created, Shipment)
    shipment = await client.aio.shipments.get(shipment_id="s-1")
    assert_type(shipment, Shipment)
    return shipment


async def lists_awaited(client: service_api.Client) -> list[Device]:
    pager = client.aio.devices.list(max_items=10)
    assert_type(pager, ListPager[DevicePage, Device])
    assert_type(aiter(client.aio.shipments.list()), AsyncGenerator[Shipment, None])
    return [device async for device in pager]


def a_plain_generated_client_has_them_too(
    client: service_api_client.Client,
) -> Shipment:
    assert_type(client.shipments, ShipmentsResource)
    return client.shipments.get(shipment_id="s-1")


async def refused(client: service_api.Client) -> None:
    client.shipments.get("s-1")  # type: ignore[call-arg]
    client.shipments.get(shipment_id=1)  # type: ignore[arg-type]
    client.shipments.get()  # type: ignore[call-arg]
    client.shipments.create(body={"devices": []})  # type: ignore[arg-type]
    unawaited: Shipment = client.aio.shipments.get(shipment_id="s-1")  # type: ignore[assignment]
    assert unawaited
    await client.shipments.get(shipment_id="s-1")  # type: ignore[misc]
    not_a_page: ShipmentPage = client.shipments.get(shipment_id="s-1")  # type: ignore[assignment]
    assert not_a_page


def by_json_name(shipment: Shipment) -> list[str]:
    assert_type(shipment["shipmentId"], Any)
    assert_type(shipment.get("status", "unknown"), Any)
    assert_type("status" in shipment, bool)
    assert_type(shipment.keys(), KeysView[str])
    shipment["referenceNumber"] = "R-1"
    return list(shipment.keys())


def fields(shipment: Shipment, leg: ShipmentLeg, device: Device) -> None:
    # The id: a string when the record has one, never None (see openapi.yaml).
    assert_type(shipment.shipment_id, str | Unset)
    assert_type(device.device_id, str | Unset)
    # Guessed fields: also None when the service sends null.
    assert_type(leg.from_address, Address | None | Unset)
    assert_type(leg.ship_from_date, datetime.datetime | None | Unset)
    assert_type(device.temperature, float | None | Unset)
    if isinstance(shipment.shipment_id, str):
        assert_type(shipment.shipment_id, str)


def test_module_imports() -> None:
    assert callable(one_shipment)
