"""Type-checked by mypy --strict: one call of an endpoint gives its success model, with
no cast and no union, sync and async; a record's fields are typed as the spec says.
``assert_type`` fails the type check if the generated signatures drift.

Importing it is the only runtime test; nothing here talks to a server.
"""

import datetime
from typing import assert_type

import service_api
from service_api_client.api.authentication import authenticate
from service_api_client.api.devices import list_devices
from service_api_client.api.shipments import list_shipments
from service_api_client.models import (
    Address,
    Device,
    DevicePage,
    Shipment,
    ShipmentLeg,
    ShipmentPage,
    TokenRequest,
    TokenResponse,
)
from service_api_client.types import Unset


def one_page(client: service_api.Client) -> list[Shipment]:
    page = list_shipments.sync_or_raise(client=client, page_size=10)
    assert_type(page, ShipmentPage)
    assert_type(page.data, list[Shipment])
    return page.data


async def one_page_async(client: service_api.Client) -> list[Device]:
    page = await list_devices.asyncio_or_raise(client=client, page_number=2)
    assert_type(page, DevicePage)
    return page.data


def token(client: service_api.Client) -> str:
    body = TokenRequest(client_id="my-client", client_secret="x", grant_type="client_credentials")
    answer = authenticate.sync_or_raise(client=client, body=body)
    assert_type(answer, TokenResponse)
    return answer.token_type


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
    assert callable(one_page)
