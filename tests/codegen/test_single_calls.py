"""``sync_or_raise`` / ``asyncio_or_raise`` with the package's Client, over loopback
HTTP against the mock: the success model, or the package's own typed error."""

import pytest

import service_api
from service_api_client.api.devices import list_devices
from service_api_client.api.shipments import list_shipments
from service_api_client.models import DevicePage, ShipmentPage
from service_api_mock import DEMO_CLIENT_ID, DEMO_CLIENT_SECRET, RunningMock


def _client(mock: RunningMock, account: str = "acct-1") -> service_api.Client:
    return service_api.Client(mock.base_url, DEMO_CLIENT_ID, DEMO_CLIENT_SECRET, account)


def test_sync_or_raise_gives_the_page(mock: RunningMock) -> None:
    with _client(mock) as client:
        page = list_shipments.sync_or_raise(client=client, page_size=7)
    assert type(page) is ShipmentPage
    assert len(page.data) == 7
    assert all(isinstance(s.shipment_id, str) for s in page.data)


@pytest.mark.anyio
async def test_asyncio_or_raise_gives_the_page(mock: RunningMock) -> None:
    async with _client(mock) as client:
        page = await list_devices.asyncio_or_raise(client=client, page_number=2, page_size=3)
    assert type(page) is DevicePage
    assert page.page_number == 2


def test_an_error_is_the_package_typed_error(mock: RunningMock) -> None:
    with (
        _client(mock, account="no-such-account") as client,
        pytest.raises(service_api.ServiceApiError) as caught,
    ):
        list_shipments.sync_or_raise(client=client)
    assert isinstance(caught.value, service_api.ApiStatusError)
    assert caught.value.status_code in (400, 403)
