"""The handle and the control API under /__mock__, in process."""

import httpx
import pytest

from service_api_mock import MockConfig, MockService

pytestmark = pytest.mark.anyio

FORM = {
    "client_id": (None, "demo-client"),
    "client_secret": (None, "demo-secret"),
    "grant_type": (None, "client_credentials"),
}


@pytest.fixture
async def control(service: MockService) -> httpx.AsyncClient:
    return httpx.AsyncClient(
        transport=httpx.ASGITransport(app=service.app),
        base_url="http://mock.test/__mock__",
    )


async def test_counts_per_operation_and_status(
    client: httpx.AsyncClient, service: MockService
) -> None:
    await client.post("/authenticate", files=FORM)
    await client.get("/shipments")
    await client.get("/shipments")
    await client.get("/nowhere")
    assert service.counts() == {"authenticate": {200: 1}, "listShipments": {401: 2}}
    assert service.count() == 3
    assert service.count("listShipments") == 2
    assert service.count(status=200) == 1
    assert service.count("listDevices") == 0


async def test_control_api_mirrors_the_handle(
    client: httpx.AsyncClient, control: httpx.AsyncClient, service: MockService
) -> None:
    async with control:
        token = (await client.post("/authenticate", files=FORM)).json()["access_token"]
        assert (await control.get("/counts")).json() == {"authenticate": {"200": 1}}
        assert (await control.get("/tokens")).json() == {"tokens": [token]}
        assert (
            await control.post("/faults", json={"fault_rate": 0.5})
        ).status_code == 200
        assert service.config.fault_rate == 0.5
        assert (await control.post("/faults", json={"nope": 1})).status_code == 400
        assert (
            await control.post("/faults", json={"fault_rate": 7})
        ).status_code == 400
        assert (await control.post("/clock", json={"advance": 10})).json() == {
            "offset": 10.0
        }
        assert (await control.post("/clock", json={"advance": "x"})).status_code == 400
        assert (await control.post("/clock", content=b"{")).status_code == 400
        assert (await control.post("/revoke")).status_code == 204
        assert (await control.post("/reset", json={"records": 7})).status_code == 204
        assert service.config.records == 7
        assert service.config.fault_rate == 0.0
        assert service.counts() == {}
        assert (await control.post("/reset", json={"records": -1})).status_code == 400
        assert (await control.post("/reset", json={"unknown": 1})).status_code == 400
        assert (await control.post("/reset")).status_code == 204
        assert service.config.records == 120


async def test_control_api_is_not_counted_nor_faulted(
    control: httpx.AsyncClient, service: MockService
) -> None:
    service.set_faults(fault_rate=1.0, drop_rate=1.0)
    async with control:
        assert (await control.get("/counts")).status_code == 200
    assert service.count() == 0


async def test_reset_forgets_tokens_and_clock(
    client: httpx.AsyncClient, service: MockService
) -> None:
    token = (await client.post("/authenticate", files=FORM)).json()["access_token"]
    service.advance_clock(5000)
    service.reset()
    assert service.issued_tokens() == []
    response = await client.get(
        "/shipments",
        headers={"authorization": f"Bearer {token}", "x-service-account-id": "acct-1"},
    )
    assert response.headers["www-authenticate"] == 'Bearer error="invalid_token"'


def test_config_validates_and_hides_secrets() -> None:
    with pytest.raises(ValueError, match="drop_rate"):
        MockConfig(drop_rate=-0.1)
    with pytest.raises(ValueError, match="rate_limit"):
        MockConfig(rate_limit=0)
    config = MockConfig(clients={"c": ("hunter2", ("a",))})
    assert config.clients["c"].accounts == ("a",)
    assert "hunter2" not in repr(config)
    assert "demo-secret" not in repr(MockService())


def test_dataset_is_a_copy_and_rejects_unknown_resources(service: MockService) -> None:
    records = service.dataset("shipments", "acct-1")
    records[0]["shipmentId"] = "changed"
    records[0]["shipmentLegs"][0]["mode"] = "Teleport"
    again = service.dataset("shipments", "acct-1")[0]
    assert again["shipmentId"] != "changed"
    assert again["shipmentLegs"][0]["mode"] != "Teleport"
    with pytest.raises(ValueError, match="unknown resource"):
        service.dataset("accounts", "acct-1")


async def test_an_unknown_control_route_is_a_problem_not_a_reset(
    control: httpx.AsyncClient, service: MockService
) -> None:
    service.set_faults(fault_rate=0.5)
    async with control:
        for method in ("GET", "POST"):
            response = await control.request(method, "/records", json={"records": 3})
            assert response.status_code == 404
            assert response.headers["content-type"] == "application/problem+json"
            problem = response.json()
            assert problem["status"] == 404
            assert "/__mock__/records" in problem["detail"]
            assert "POST reset" in problem["detail"]
    # Nothing fell through to a reset: the faults set stay, the records too.
    assert service.config.fault_rate == 0.5
    assert service.config.records == 120


def test_set_faults_changes_only_what_it_is_given(service: MockService) -> None:
    service.set_faults(latency_ms=5.0, rate_limit=10)
    service.set_faults(fault_rate=0.25)
    assert service.config.latency_ms == 5.0
    assert service.config.rate_limit == 10
    assert service.config.fault_rate == 0.25
    service.set_faults(rate_limit=None)
    assert service.config.rate_limit is None
