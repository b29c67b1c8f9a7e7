"""Injected faults: 503/429 with Retry-After, dropped connections, rate limit, latency."""

import logging

import httpx
import pytest

from service_api_mock import MockConfig, MockService

pytestmark = pytest.mark.anyio


def headers(token: str) -> dict[str, str]:
    return {"authorization": f"Bearer {token}", "x-service-account-id": "acct-1"}


async def test_faults_are_off_by_default(client: httpx.AsyncClient, token: str) -> None:
    for _ in range(30):
        assert (await client.get("/devices", headers=headers(token))).status_code == 200


async def test_every_request_faulted_gets_503_or_429_with_retry_after(
    client: httpx.AsyncClient, service: MockService, token: str
) -> None:
    service.set_faults(fault_rate=1.0, retry_after=0.25)
    statuses = set()
    for _ in range(20):
        response = await client.get("/shipments", headers=headers(token))
        statuses.add(response.status_code)
        assert response.headers["retry-after"] == "0.25"
        if response.status_code == 429:
            assert response.headers["content-type"].startswith("text/html")
    assert statuses == {429, 503}
    assert (
        service.count("listShipments", 503) + service.count("listShipments", 429) == 20
    )


@pytest.mark.parametrize(("seconds", "sent"), [(2.0, "2"), (0.5, "0.5"), (1.0004, "1")])
async def test_retry_after_is_a_number_with_no_trailing_point(
    client: httpx.AsyncClient,
    service: MockService,
    token: str,
    seconds: float,
    sent: str,
) -> None:
    service.set_faults(fault_rate=1.0, retry_after=seconds)
    response = await client.get("/devices", headers=headers(token))
    assert response.headers["retry-after"] == sent


async def test_faults_are_deterministic_under_a_seed(client: httpx.AsyncClient) -> None:
    async def run(seed: int) -> list[int]:
        service = MockService(MockConfig(seed=seed, fault_rate=0.5))
        transport = httpx.ASGITransport(app=service.app)
        async with httpx.AsyncClient(
            transport=transport, base_url="http://m/public/v3"
        ) as c:
            return [(await c.get("/devices")).status_code for _ in range(40)]

    first, again, other = await run(3), await run(3), await run(4)
    assert first == again
    assert first != other
    assert {401, 503, 429} <= set(first)


async def test_dropped_request_is_a_transport_error_in_process(
    client: httpx.AsyncClient, service: MockService, token: str
) -> None:
    service.set_faults(drop_rate=1.0)
    with pytest.raises(httpx.TransportError):
        await client.get("/devices", headers=headers(token))
    assert service.count("listDevices", 0) == 1
    assert service.count(status=500) == 0


async def test_rate_limit_answers_429_until_the_minute_passes(
    client: httpx.AsyncClient, service: MockService, token: str
) -> None:
    service.set_faults(rate_limit=3)
    statuses = [
        (await client.get("/devices", headers=headers(token))).status_code
        for _ in range(5)
    ]
    assert statuses == [200, 200, 200, 429, 429]
    limited = await client.get("/devices", headers=headers(token))
    assert 1 <= int(limited.headers["retry-after"]) <= 60
    service.advance_clock(61)
    assert (await client.get("/devices", headers=headers(token))).status_code == 200


async def test_latency_is_added(
    client: httpx.AsyncClient, service: MockService, token: str
) -> None:
    import time

    service.set_faults(latency_ms=40)
    started = time.perf_counter()
    await client.get("/devices", headers=headers(token))
    assert time.perf_counter() - started >= 0.04


async def test_set_faults_changes_only_what_is_given(service: MockService) -> None:
    service.set_faults(fault_rate=0.5, rate_limit=10)
    service.set_faults(latency_ms=5)
    assert (service.config.fault_rate, service.config.rate_limit) == (0.5, 10)
    assert service.config.latency_ms == 5
    service.reset()
    assert (
        service.config.fault_rate,
        service.config.rate_limit,
        service.config.latency_ms,
    ) == (
        0.0,
        None,
        0.0,
    )
    with pytest.raises(ValueError, match="fault_rate"):
        service.set_faults(fault_rate=2.0)


async def test_one_log_line_per_request_without_secrets(
    client: httpx.AsyncClient, service: MockService, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="service_api_mock")
    form = {
        "client_id": (None, "demo-client"),
        "client_secret": (None, "demo-secret"),
        "grant_type": (None, "client_credentials"),
    }
    token = (await client.post("/authenticate", files=form)).json()["access_token"]
    await client.get("/shipments?pageSize=2", headers=headers(token))
    lines = [r.getMessage() for r in caplog.records if r.name == "service_api_mock"]
    assert len(lines) == 2
    assert lines[0].startswith("POST /public/v3/authenticate 200 ")
    assert lines[1].startswith("GET /public/v3/shipments 200 ")
    assert lines[1].endswith("ms")
    assert not any(token in line or "demo-secret" in line for line in lines)


async def test_an_internal_error_is_a_503_never_a_500(
    client: httpx.AsyncClient,
    service: MockService,
    token: str,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    def broken(
        resource: str, account: str
    ) -> tuple[list[dict[str, object]], list[bytes]]:
        raise RuntimeError("a bug in the mock")

    monkeypatch.setattr(service._state, "records", broken)
    with caplog.at_level(logging.ERROR, logger="service_api_mock"):
        response = await client.get("/devices", headers=headers(token))
    assert response.status_code == 503
    assert response.headers["retry-after"] == "1"
    assert service.count("listDevices", 503) == 1
    assert "failed; answering 503" in caplog.text
