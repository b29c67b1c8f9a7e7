"""The mock's quota: one sliding window per integration, whatever the account or connection."""

import httpx
import pytest

from service_api_mock import (
    DEMO_ACCOUNTS,
    DEMO_CLIENT_ID,
    DEMO_CLIENT_SECRET,
    OTHER_CLIENT_ID,
    OTHER_CLIENT_SECRET,
    MockConfig,
    MockService,
)
from service_api_mock.__main__ import parser

pytestmark = pytest.mark.anyio

BASE = "http://mock.test/public/v3"


def form(client_id: str, secret: str) -> dict[str, tuple[None, str]]:
    return {
        "client_id": (None, client_id),
        "client_secret": (None, secret),
        "grant_type": (None, "client_credentials"),
    }


def headers(token: str, account: str = "acct-1") -> dict[str, str]:
    return {"authorization": f"Bearer {token}", "x-service-account-id": account}


async def test_the_quota_is_shared_by_every_account_and_connection(
    service: MockService, token: str
) -> None:
    service.set_faults(rate_limit=4)
    transport = httpx.ASGITransport(app=service.app)
    async with (
        httpx.AsyncClient(transport=transport, base_url=BASE) as first,
        httpx.AsyncClient(transport=transport, base_url=BASE) as second,
    ):
        statuses = [
            (await conn.get("/shipments", headers=headers(token, account))).status_code
            for conn, account in [
                (first, DEMO_ACCOUNTS[0]),
                (second, DEMO_ACCOUNTS[1]),
                (first, DEMO_ACCOUNTS[1]),
                (second, DEMO_ACCOUNTS[0]),
                (first, DEMO_ACCOUNTS[0]),
                (second, DEMO_ACCOUNTS[1]),
            ]
        ]
    assert statuses == [200, 200, 200, 200, 429, 429]
    assert service.count("listShipments", 429) == 2


async def test_a_refusal_is_html_with_a_whole_retry_after(
    client: httpx.AsyncClient, service: MockService, token: str
) -> None:
    service.set_faults(rate_limit=1)
    assert (await client.get("/devices", headers=headers(token))).status_code == 200
    refused = await client.get("/devices", headers=headers(token))
    assert refused.status_code == 429
    assert refused.headers["content-type"].startswith("text/html")
    assert "<html>" in refused.text
    assert refused.headers["retry-after"].isdigit()
    assert 1 <= int(refused.headers["retry-after"]) <= 60


async def test_a_short_window_scales_the_quota_down_in_time(
    client: httpx.AsyncClient, service: MockService, token: str
) -> None:
    # 600 per minute over 1 s: 10 requests per second.
    service.set_faults(rate_limit=600, rate_window=1.0)
    statuses = [
        (await client.get("/devices", headers=headers(token))).status_code
        for _ in range(12)
    ]
    assert statuses == [200] * 10 + [429] * 2
    refused = await client.get("/devices", headers=headers(token))
    assert refused.headers["retry-after"] == "1"
    service.advance_clock(1.0)
    statuses = [
        (await client.get("/devices", headers=headers(token))).status_code
        for _ in range(11)
    ]
    assert statuses == [200] * 10 + [429]


async def test_refused_requests_do_not_count(
    client: httpx.AsyncClient, service: MockService, token: str
) -> None:
    service.set_faults(rate_limit=120, rate_window=1.0)  # 2 per second
    for _ in range(10):
        await client.get("/devices", headers=headers(token))
    service.advance_clock(1.0)
    statuses = [
        (await client.get("/devices", headers=headers(token))).status_code
        for _ in range(3)
    ]
    assert statuses == [200, 200, 429]


async def test_each_integration_has_its_own_quota(
    client: httpx.AsyncClient, service: MockService, token: str
) -> None:
    service.set_faults(rate_limit=1)
    assert (await client.get("/devices", headers=headers(token))).status_code == 200
    assert (await client.get("/devices", headers=headers(token))).status_code == 429
    other = await client.post(
        "/authenticate", files=form(OTHER_CLIENT_ID, OTHER_CLIENT_SECRET)
    )
    assert other.status_code == 200
    other_token = other.json()["access_token"]
    assert (
        await client.get("/devices", headers=headers(other_token, "acct-3"))
    ).status_code == 429
    # The token request of the other integration took its only slot; ours is still full.
    assert (
        await client.post(
            "/authenticate", files=form(DEMO_CLIENT_ID, DEMO_CLIENT_SECRET)
        )
    ).status_code == 429


def test_the_window_must_be_positive() -> None:
    with pytest.raises(ValueError, match="rate_window"):
        MockConfig(rate_window=0)


def test_the_command_line_takes_the_window() -> None:
    args = parser().parse_args(["--rate-limit", "600", "--rate-window", "6"])
    assert (args.rate_limit, args.rate_window) == (600, 6.0)
