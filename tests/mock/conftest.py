"""Fixtures for the mock's own tests: an in-process service and a client bound to it."""

from collections.abc import AsyncIterator

import httpx
import pytest

from service_api_mock import DEMO_CLIENT_ID, DEMO_CLIENT_SECRET, MockConfig, MockService

FORM = {
    "client_id": (None, DEMO_CLIENT_ID),
    "client_secret": (None, DEMO_CLIENT_SECRET),
    "grant_type": (None, "client_credentials"),
}


@pytest.fixture
def service() -> MockService:
    return MockService(MockConfig(records=120, seed=0))


@pytest.fixture
async def client(service: MockService) -> AsyncIterator[httpx.AsyncClient]:
    transport = httpx.ASGITransport(app=service.app)
    async with httpx.AsyncClient(
        transport=transport, base_url="http://mock.test/public/v3"
    ) as client:
        yield client


@pytest.fixture
async def token(client: httpx.AsyncClient) -> str:
    response = await client.post("/authenticate", files=FORM)
    assert response.status_code == 200
    value: str = response.json()["access_token"]
    return value
