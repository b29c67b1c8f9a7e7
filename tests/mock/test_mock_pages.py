"""Pagination exactly as the seed describes it, in process."""

import math
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from service_api_mock import MockService

pytestmark = pytest.mark.anyio


def headers(token: str, account: str = "acct-1") -> dict[str, str]:
    return {"authorization": f"Bearer {token}", "x-service-account-id": account}


def query(url: str) -> dict[str, list[str]]:
    return parse_qs(urlsplit(url).query)


async def test_defaults_are_page_1_of_50(client: httpx.AsyncClient, token: str) -> None:
    body = (await client.get("/shipments", headers=headers(token))).json()
    assert (body["totalRecords"], body["pageNumber"], body["pageSize"]) == (120, 1, 50)
    assert len(body["data"]) == 50
    assert "previous" not in body
    assert (
        body["next"] == "http://mock.test/public/v3/shipments?pageSize=50&pageNumber=2"
    )


async def test_page_size_above_50_is_treated_as_50(
    client: httpx.AsyncClient, token: str
) -> None:
    body = (await client.get("/devices?pageSize=51", headers=headers(token))).json()
    assert body["pageSize"] == 50
    assert len(body["data"]) == 50
    assert query(body["next"]) == {"pageSize": ["50"], "pageNumber": ["2"]}


async def test_walking_next_links_returns_the_dataset_in_order(
    client: httpx.AsyncClient, service: MockService, token: str
) -> None:
    seen: list[dict[str, Any]] = []
    url: str | None = "/devices?pageSize=7"
    pages = 0
    while url is not None:
        body = (await client.get(url, headers=headers(token, "acct-2"))).json()
        seen.extend(body["data"])
        url = body.get("next")
        pages += 1
    assert pages == math.ceil(120 / 7)
    assert seen == service.dataset("devices", "acct-2")


async def test_last_page_has_previous_but_no_next(
    client: httpx.AsyncClient, token: str
) -> None:
    body = (await client.get("/shipments?pageNumber=3", headers=headers(token))).json()
    assert len(body["data"]) == 20
    assert "next" not in body
    assert query(body["previous"]) == {"pageSize": ["50"], "pageNumber": ["2"]}


async def test_page_past_the_end_is_empty_200(
    client: httpx.AsyncClient, token: str
) -> None:
    body = (await client.get("/shipments?pageNumber=4", headers=headers(token))).json()
    assert body["data"] == []
    assert body["totalRecords"] == 120
    assert query(body["previous"])["pageNumber"] == ["3"]
    far = (await client.get("/shipments?pageNumber=99", headers=headers(token))).json()
    assert far["data"] == []
    assert "previous" not in far
    assert "next" not in far


async def test_empty_dataset_has_one_empty_page(
    client: httpx.AsyncClient, service: MockService
) -> None:
    service.reset(records=0)
    form = {
        "client_id": (None, "demo-client"),
        "client_secret": (None, "demo-secret"),
        "grant_type": (None, "client_credentials"),
    }
    token = (await client.post("/authenticate", files=form)).json()["access_token"]
    body = (await client.get("/shipments", headers=headers(token))).json()
    assert body == {"totalRecords": 0, "pageNumber": 1, "pageSize": 50, "data": []}


@pytest.mark.parametrize(
    "params",
    [
        "pageNumber=0",
        "pageNumber=-1",
        "pageSize=0",
        "pageNumber=abc",
        "pageSize=1.5",
        "pageNumber=",
        "pageNumber=1&pageNumber=2",
        "pageSize=%201",
        "pageNumber=" + "9" * 5000,
    ],
)
async def test_malformed_paging_values_are_400_problems(
    client: httpx.AsyncClient, token: str, params: str
) -> None:
    response = await client.get(f"/shipments?{params}", headers=headers(token))
    assert response.status_code == 400
    assert response.headers["content-type"] == "application/problem+json"
    assert response.json()["status"] == 400


async def test_links_follow_the_requests_own_host(
    service: MockService, token: str, client: httpx.AsyncClient
) -> None:
    transport = httpx.ASGITransport(app=service.app)
    async with httpx.AsyncClient(
        transport=transport, base_url="https://elsewhere:9443"
    ) as other:
        body = (await other.get("/public/v3/devices", headers=headers(token))).json()
    assert body["next"].startswith("https://elsewhere:9443/public/v3/devices?")


@given(
    records=st.integers(min_value=0, max_value=130),
    size=st.integers(min_value=1, max_value=80),
    number=st.integers(min_value=1, max_value=40),
)
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_envelope_laws(records: int, size: int, number: int) -> None:
    # Through the app in a fresh event loop per example: hypothesis drives sync tests.
    import anyio

    service = MockService()
    service.reset(records=records)

    async def fetch() -> dict[str, Any]:
        transport = httpx.ASGITransport(app=service.app)
        async with httpx.AsyncClient(
            transport=transport, base_url="http://m/public/v3"
        ) as c:
            form = {
                "client_id": (None, "demo-client"),
                "client_secret": (None, "demo-secret"),
                "grant_type": (None, "client_credentials"),
            }
            token = (await c.post("/authenticate", files=form)).json()["access_token"]
            url = f"/shipments?pageSize={size}&pageNumber={number}"
            body: dict[str, Any] = (await c.get(url, headers=headers(token))).json()
            return body

    body = anyio.run(fetch)
    effective = min(size, 50)
    last = math.ceil(records / effective)
    assert body["totalRecords"] == records
    assert body["pageSize"] == effective
    assert body["pageNumber"] == number
    dataset = service.dataset("shipments", "acct-1")
    assert body["data"] == dataset[(number - 1) * effective : number * effective]
    assert ("next" in body) == (number + 1 <= last)
    assert ("previous" in body) == (2 <= number <= last + 1)
