"""The mock over real loopback HTTP: running_mock, the fixtures, drops, the control API."""

import socket
import subprocess
import sys
import threading
import time

import httpx
import pytest

from service_api_mock import MockService, RunningMock, running_mock

FORM = {
    "client_id": (None, "demo-client"),
    "client_secret": (None, "demo-secret"),
    "grant_type": (None, "client_credentials"),
}


def login(client: httpx.Client, base_url: str) -> dict[str, str]:
    token = client.post(f"{base_url}/authenticate", files=FORM).json()["access_token"]
    return {"authorization": f"Bearer {token}", "x-service-account-id": "acct-1"}


def test_running_mock_serves_and_stops_without_leaks() -> None:
    threads_before = set(threading.enumerate())
    with running_mock(records=7) as server:
        assert server.base_url.startswith("http://127.0.0.1:")
        assert server.base_url.endswith("/public/v3")
        port = int(server.base_url.split(":")[2].split("/")[0])
        with httpx.Client() as client:
            body = client.get(
                f"{server.base_url}/devices", headers=login(client, server.base_url)
            )
        assert body.json()["totalRecords"] == 7
        assert server.service.count("listDevices", 200) == 1
    assert set(threading.enumerate()) <= threads_before
    # The port is free again: nothing listens on it.
    with socket.socket() as probe:
        probe.settimeout(1)
        with pytest.raises(ConnectionRefusedError):
            probe.connect(("127.0.0.1", port))


def test_a_given_service_is_served_as_is() -> None:
    service = MockService()
    with running_mock(service) as server:
        assert server.service is service
    with pytest.raises(TypeError), running_mock(service, records=3):
        pass


def test_fixture_gives_a_reset_mock_over_http(mock: RunningMock) -> None:
    with httpx.Client() as client:
        auth = login(client, mock.base_url)
        body = client.get(
            f"{mock.base_url}/shipments?pageNumber=2", headers=auth
        ).json()
    assert body["next"] == f"{mock.base_url}/shipments?pageSize=50&pageNumber=3"
    assert body["previous"] == f"{mock.base_url}/shipments?pageSize=50&pageNumber=1"
    assert mock.service.count("authenticate") == 1


def test_fixture_state_does_not_leak_between_tests(mock: RunningMock) -> None:
    assert mock.service.counts() == {}
    assert mock.service.issued_tokens() == []


def test_expired_header_over_http(mock: RunningMock) -> None:
    mock.service.reset(token_ttl=1)
    with httpx.Client() as client:
        auth = login(client, mock.base_url)
        mock.service.advance_clock(1)
        response = client.get(f"{mock.base_url}/devices", headers=auth)
    assert response.status_code == 401
    assert response.headers["content-length"] == "0"
    assert response.headers["www-authenticate"].startswith(
        'Bearer error="invalid_token", error_description="The token expired at \''
    )


def test_dropped_connection_is_a_transport_error_never_a_500(mock: RunningMock) -> None:
    mock.service.set_faults(drop_rate=1.0)
    with httpx.Client() as client:
        for _ in range(3):
            with pytest.raises(httpx.TransportError):
                client.get(f"{mock.base_url}/devices")
        mock.service.set_faults(drop_rate=0.0)
        # The server is still healthy after dropping connections.
        assert client.get(f"{mock.base_url}/devices").status_code == 401
    assert mock.service.count("listDevices", 0) == 3
    assert mock.service.count(status=500) == 0


def test_control_api_over_http(mock: RunningMock) -> None:
    with httpx.Client(base_url=f"{mock.origin}/__mock__") as control:
        assert control.post("/faults", json={"rate_limit": 2}).status_code == 200
        with httpx.Client() as client:
            auth = login(client, mock.base_url)
            statuses = [
                client.get(f"{mock.base_url}/devices", headers=auth).status_code
                for _ in range(3)
            ]
        assert statuses == [200, 429, 429]  # the token request counted too
        assert control.get("/counts").json() == {
            "authenticate": {"200": 1},
            "listDevices": {"200": 1, "429": 2},
        }
        assert control.post("/reset", json={}).status_code == 204
    assert mock.service.counts() == {}


def test_module_runs_and_announces_credentials() -> None:
    with subprocess.Popen(
        [sys.executable, "-m", "service_api_mock", "--port", "0", "--records", "3"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    ) as process:
        try:
            assert process.stdout is not None
            first = process.stdout.readline()
            assert first.startswith("service-api mock listening on http://127.0.0.1:")
            base_url = first.split()[-1]
            credentials = process.stdout.readline()
            assert "client_id=demo-client client_secret=demo-secret" in credentials
            assert "accounts=acct-1, acct-2" in credentials
            deadline = time.monotonic() + 10
            while True:
                try:
                    response = httpx.get(f"{base_url}/devices")
                    break
                except httpx.ConnectError:
                    if time.monotonic() > deadline:
                        raise
                    time.sleep(0.02)
            assert response.status_code == 401
        finally:
            process.terminate()
            process.wait(timeout=10)


def test_help_explains_every_flag() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "service_api_mock", "--help"],
        capture_output=True,
        text=True,
        check=True,
    )
    for flag in (
        "--host",
        "--port",
        "--token-ttl",
        "--records",
        "--seed",
        "--latency-ms",
        "--fault-rate",
        "--drop-rate",
        "--rate-limit",
    ):
        assert flag in result.stdout
