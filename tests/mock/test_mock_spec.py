"""What the mock derives from the spec: a copy of openapi.yaml with ``/alerts`` (list with a
filter, get, create, replace, update, delete) is served with no code of its own, in process
and over loopback HTTP, and a spec the mock cannot serve is refused as it loads."""

from __future__ import annotations

import logging
import re
import shutil
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml
from spec_copy import signed_in

from service_api_mock import (
    DEMO_ACCOUNTS,
    MockConfig,
    MockService,
    SpecError,
    running_mock,
)
from service_api_mock.__main__ import main as mock_main
from service_api_spec import load_spec

pytestmark = pytest.mark.anyio

ROOT = Path(__file__).resolve().parents[2]
FORM = {
    "client_id": (None, "demo-client"),
    "client_secret": (None, "demo-secret"),
    "grant_type": (None, "client_credentials"),
}


@pytest.fixture
def shapes(shapes_spec: Path) -> MockService:
    return MockService(MockConfig(records=12, seed=1), spec=shapes_spec)


@pytest.fixture
async def api(shapes: MockService) -> AsyncIterator[httpx.AsyncClient]:
    async with signed_in(shapes.app) as c:
        yield c


# ---- records built from the item schema ---------------------------------------------------


def test_records_follow_the_item_schema_per_seed_resource_and_account(
    shapes_spec: Path,
) -> None:
    service = MockService(MockConfig(records=30, seed=1), spec=shapes_spec)
    alerts = service.dataset("alerts", "acct-1")
    assert [a["alertId"] for a in alerts] == list(range(1, 31))
    assert {a["severity"] for a in alerts} == {"low", "high"}
    assert all(len(a["message"]) <= 40 and isinstance(a["tags"], list) for a in alerts)
    again = MockService(MockConfig(records=30, seed=1), spec=shapes_spec)
    assert again.dataset("alerts", "acct-1") == alerts
    assert service.dataset("alerts", "acct-2") != alerts
    assert (
        MockService(MockConfig(records=30, seed=2), spec=shapes_spec).dataset(
            "alerts", "acct-1"
        )
        != alerts
    )
    # The richer generators stay for shipments and devices.
    assert "referenceNumber" in service.dataset("shipments", "acct-1")[0]


async def test_a_query_parameter_naming_a_field_filters_the_list(
    api: httpx.AsyncClient, shapes: MockService
) -> None:
    high = [a for a in shapes.dataset("alerts", "acct-1") if a["severity"] == "high"]
    body = (await api.get("/alerts", params={"severity": "high", "pageSize": 2})).json()
    assert body["totalRecords"] == len(high)
    assert body["data"] == high[:2]
    assert body["next"].endswith("/alerts?pageSize=2&pageNumber=2&severity=high")
    refused = await api.get("/alerts", params={"severity": "urgent"})
    assert refused.status_code == 400
    assert refused.headers["content-type"] == "application/problem+json"


async def test_get_answers_the_record_or_the_declared_404(
    api: httpx.AsyncClient, shapes: MockService
) -> None:
    record = shapes.dataset("alerts", "acct-1")[3]
    found = await api.get(f"/alerts/{record['alertId']}")
    assert (found.status_code, found.json()) == (200, record)
    missing = await api.get("/alerts/999")
    assert missing.status_code == 404
    assert missing.headers["content-type"] == "application/problem+json"
    assert missing.json()["status"] == 404
    assert (await api.get("/alerts/not-a-number")).status_code == 400
    # Another account's records are not this account's.
    other = shapes.dataset("shipments", "acct-2")[0]["shipmentId"]
    assert (await api.get(f"/shipments/{other}")).status_code == 404


async def test_create_replace_update_delete_are_seen_by_list_and_get(
    api: httpx.AsyncClient, shapes: MockService
) -> None:
    created = await api.post(
        "/alerts", json={"severity": "high", "alertId": 7, "message": "m"}
    )
    assert created.status_code == 201
    alert = created.json()
    assert alert == {"severity": "high", "message": "m", "alertId": 13}
    assert shapes.dataset("alerts", "acct-1")[-1] == alert
    assert (await api.get("/alerts/13")).json() == alert
    assert (await api.get("/alerts", params={"pageSize": 50})).json()[
        "totalRecords"
    ] == 13

    replaced = await api.put("/alerts/13", json={"severity": "low"})
    assert (replaced.status_code, replaced.json()) == (
        200,
        {"severity": "low", "alertId": 13},
    )
    updated = await api.patch("/alerts/13", json={"tags": ["x"]})
    assert updated.json() == {"severity": "low", "alertId": 13, "tags": ["x"]}
    assert (await api.get("/alerts/13")).json() == updated.json()

    deleted = await api.delete("/alerts/13")
    assert (deleted.status_code, deleted.content) == (204, b"")
    assert (await api.get("/alerts/13")).status_code == 404
    assert (await api.delete("/alerts/13")).status_code == 404
    assert len(shapes.dataset("alerts", "acct-1")) == 12
    counts = shapes.counts()
    assert counts["createAlert"] == {201: 1}
    assert counts["deleteAlert"] == {204: 1, 404: 1}


@pytest.mark.parametrize(
    ("method", "path", "body", "headers"),
    [
        ("POST", "/alerts", {"message": "no severity"}, {}),
        ("POST", "/alerts", {"severity": "high", "message": "x" * 41}, {}),
        ("POST", "/alerts", ["not", "an", "object"], {}),
        ("POST", "/alerts", None, {"content-type": "application/json"}),
        ("POST", "/shipments", {"devices": "not a list"}, {}),
        ("PUT", "/alerts/1", {"severity": 3}, {}),
        ("PATCH", "/alerts/1", {"tags": "x"}, {}),
    ],
)
async def test_a_body_that_does_not_fit_gets_the_declared_400(
    api: httpx.AsyncClient,
    shapes: MockService,
    method: str,
    path: str,
    body: Any,
    headers: dict[str, str],
) -> None:
    before = shapes.dataset("alerts", "acct-1")
    content = b"{" if body is None else None
    response = await api.request(
        method,
        path,
        json=body if body is not None else None,
        content=content,
        headers=headers,
    )
    assert response.status_code == 400
    assert response.headers["content-type"] == "application/problem+json"
    assert response.json()["status"] == 400
    assert shapes.dataset("alerts", "acct-1") == before


async def test_the_write_operations_need_the_token_and_the_account(
    shapes: MockService,
) -> None:
    transport = httpx.ASGITransport(app=shapes.app)
    async with httpx.AsyncClient(
        transport=transport, base_url="http://m/public/v3"
    ) as c:
        assert (await c.post("/alerts", json={"severity": "low"})).status_code == 401
        token = (await c.post("/authenticate", files=FORM)).json()["access_token"]
        auth = {"authorization": f"Bearer {token}"}
        omitted = await c.delete("/alerts/1", headers=auth)
        foreign = await c.delete(
            "/alerts/1", headers={**auth, "x-service-account-id": "acct-3"}
        )
    assert (omitted.status_code, foreign.status_code) == (400, 403)
    assert len(shapes.dataset("alerts", "acct-1")) == 12


async def test_faults_quota_revocation_and_the_clock_apply_to_every_operation(
    api: httpx.AsyncClient, shapes: MockService
) -> None:
    shapes.set_faults(fault_rate=1.0, retry_after=2)
    faulted = [await api.post("/alerts", json={"severity": "low"}) for _ in range(6)]
    assert {r.status_code for r in faulted} == {429, 503}
    assert all(r.headers["retry-after"] == "2" for r in faulted)
    assert all(
        r.headers["content-type"].startswith("text/html")
        for r in faulted
        if r.status_code == 429
    )
    assert shapes.count("createAlert") == 6
    shapes.set_faults(fault_rate=0.0, rate_limit=1)
    assert (await api.get("/alerts/1")).status_code == 200
    assert (await api.delete("/alerts/1")).status_code == 429
    shapes.set_faults(rate_limit=None)
    shapes.advance_clock(3600)
    expired = await api.patch("/alerts/2", json={"message": "late"})
    assert expired.status_code == 401
    assert "The token expired at" in expired.headers["www-authenticate"]
    shapes.revoke_tokens()
    assert (await api.get("/alerts/2")).headers[
        "www-authenticate"
    ] == 'Bearer error="invalid_token"'
    assert shapes.counts()["getAlert"] == {200: 1, 401: 1}
    assert len(shapes.dataset("alerts", "acct-1")) == 12


async def test_a_method_the_path_does_not_declare_is_405_with_allow(
    api: httpx.AsyncClient,
) -> None:
    for method, path, allow in (
        ("DELETE", "/shipments", "GET, POST"),
        ("PUT", "/shipments/abc", "GET"),
        ("HEAD", "/devices", "GET"),
        ("GET", "/authenticate", "POST"),
        ("POST", "/alerts/1", "GET, PUT, DELETE, PATCH"),
    ):
        response = await api.request(method, path)
        assert response.status_code == 405, (method, path)
        assert response.headers["allow"] == allow


def test_dataset_and_update_record_work_for_any_resource(
    shapes: MockService, shapes_spec: Path
) -> None:
    served = shapes.update_record("alerts", "acct-2", 0, {"severity": "high"})
    assert shapes.dataset("alerts", "acct-2")[0] == served
    # Every resource of the spec served is named, in order.
    known = ", ".join(sorted(load_spec(shapes_spec).resources))
    assert "alerts" in known
    expected = f"unknown resource 'parcels'; expected one of {known}"
    with pytest.raises(ValueError, match=f"^{re.escape(expected)}$"):
        shapes.dataset("parcels", "acct-1")


# ---- the same over loopback HTTP ------------------------------------------------------------


def test_the_copy_spec_is_served_over_loopback(shapes_spec: Path) -> None:
    with running_mock(spec=shapes_spec, records=5) as server, httpx.Client() as client:
        token = client.post(f"{server.base_url}/authenticate", files=FORM).json()[
            "access_token"
        ]
        client.headers.update({"authorization": f"Bearer {token}"})
        client.headers["x-service-account-id"] = DEMO_ACCOUNTS[0]
        url = f"{server.base_url}/alerts"
        created = client.post(url, json={"severity": "low"}).json()
        assert client.get(f"{url}/{created['alertId']}").json() == created
        listed = client.get(url, params={"severity": "low"}).json()["data"]
        assert listed[-1] == created
        assert (
            client.patch(f"{url}/6", json={"message": "seen"}).json()["message"]
            == "seen"
        )
        assert client.delete(f"{url}/6").status_code == 204
        assert client.get(f"{url}/6").status_code == 404
        not_allowed = client.request("PATCH", url)
        assert (not_allowed.status_code, not_allowed.headers["allow"]) == (
            405,
            "GET, POST",
        )
        assert server.service.count(status=500) == 0


def test_the_command_serves_the_spec_it_is_given(shapes_spec: Path) -> None:
    command = [
        sys.executable,
        "-m",
        "service_api_mock",
        "--spec",
        str(shapes_spec),
        "--port",
        "0",
    ]
    with subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True
    ) as process:
        try:
            assert process.stdout is not None
            base_url = process.stdout.readline().split()[-1]
            with httpx.Client() as client:
                deadline = (
                    time.monotonic() + 10
                )  # announced as bound, listening a moment later
                while True:
                    try:
                        login = client.post(f"{base_url}/authenticate", files=FORM)
                        break
                    except httpx.ConnectError:
                        if time.monotonic() > deadline:
                            raise
                        time.sleep(0.02)
                token = login.json()["access_token"]
                headers = {
                    "authorization": f"Bearer {token}",
                    "x-service-account-id": "acct-2",
                }
                page = client.get(f"{base_url}/alerts", headers=headers).json()
        finally:
            process.terminate()
            process.wait(timeout=10)
    assert page["totalRecords"] == 120
    assert {"alertId", "severity"} <= set(page["data"][0])


# ---- any valid spec is served; what the mock cannot do as declared is a warning ---------


def _edit(spec: dict[str, Any], edit: str) -> None:
    paths = spec["paths"]
    schemas = spec["components"]["schemas"]
    devices = paths["/devices"]["get"]
    if edit == "an action":
        paths["/shipments/{shipmentId}"]["post"] = {
            "operationId": "copyShipment",
            "responses": paths["/shipments/{shipmentId}"]["get"]["responses"],
        }
    elif edit == "a get without a schema":
        del paths["/shipments/{shipmentId}"]["get"]["responses"]["200"]["content"]
    elif edit == "an undeclared 403":
        del devices["responses"]["403"]
    elif edit == "a pattern without examples":
        fields = schemas["Device"]["properties"]
        fields["serial"] = {"type": "string", "pattern": "^SN[0-9]+$"}
        fields["deviceId"]["format"] = "uuid"  # the richer devices do not fit: built
    elif edit == "no identifier":
        del schemas["Shipment"]["properties"]["shipmentId"]
    elif edit == "a sub-resource":
        device = {"name": "deviceId", "in": "path", "required": True}
        device["schema"] = {"type": "string"}
        parameters = [device, *devices["parameters"]]
        readings = {**devices, "operationId": "listReadings", "parameters": parameters}
        paths["/devices/{deviceId}/readings"] = {"get": readings}
    elif edit == "a filter it cannot tie":
        nearby = {"name": "nearby", "in": "query", "schema": {"type": "string"}}
        devices["parameters"].append(nearby)


@pytest.mark.parametrize(
    ("edit", "request_line", "status", "warning"),
    [
        ("an action", "POST /shipments/any", 200, None),
        ("a get without a schema", "GET /shipments/any", 200, None),
        (
            "an undeclared 403",
            "GET /devices",
            403,
            "listDevices: declares no 403 answer, which the mock sends for another's",
        ),
        ("a pattern without examples", "GET /devices", 200, None),
        ("no identifier", "POST /shipments", 201, "shipments: no identifier field"),
        (
            "a sub-resource",
            "GET /devices/{device}/readings",
            200,
            "device-readings: no identifier field",
        ),
        ("a filter it cannot tie", "GET /devices?nearby=here", 200, None),
    ],
)
async def test_a_valid_spec_is_served_and_what_it_cannot_do_is_a_warning(
    tmp_path: Path,
    edit: str,
    request_line: str,
    status: int,
    warning: str | None,
    capsys: pytest.CaptureFixture[str],
    caplog: pytest.LogCaptureFixture,
) -> None:
    # What the spec as it is already makes the mock say: the edit is judged by the
    # warnings it adds.
    before = mock_main(["--check-spec", str(ROOT / "openapi.yaml")], prog="mock")
    assert before == 0
    already = set(capsys.readouterr().err.splitlines())
    spec = yaml.safe_load((ROOT / "openapi.yaml").read_text())
    _edit(spec, edit)
    path = tmp_path / "openapi.yaml"
    path.write_text(yaml.safe_dump(spec, sort_keys=False))
    caplog.set_level(logging.INFO)
    service = MockService(MockConfig(records=5), spec=path)
    assert mock_main(["--check-spec", str(path)], prog="service-api-mock") == 0
    out, said = capsys.readouterr()
    added = [line for line in said.splitlines() if line not in already]
    if edit == "a filter it cannot tie":  # accepted, not applied: listed, no warning
        assert "listDevices: list GET /devices (not applied: nearby)" in out
        assert "listDevices: not applied (tied to no field): nearby" in caplog.text
    if warning is None:
        assert added == []
    else:
        assert any(line.startswith(f"warning: {warning}") for line in added), added
        # Logged as the mock starts, at INFO: make and --check-spec said it; the
        # server's stderr (WARNING and up) is for its requests.
        said_at = {r.levelno for r in caplog.records if warning in r.getMessage()}
        assert said_at == {logging.INFO}
    method, _, target = request_line.partition(" ")
    device = service.dataset("devices", "acct-1")[0]["deviceId"]
    transport = httpx.ASGITransport(app=service.app)
    async with httpx.AsyncClient(
        transport=transport, base_url="http://mock.test/public/v3"
    ) as client:
        token = (await client.post("/authenticate", files=FORM)).json()["access_token"]
        account = "acct-3" if status == 403 else "acct-1"
        headers = {"authorization": f"Bearer {token}", "x-service-account-id": account}
        url = target.replace("{device}", device)
        answered = await client.request(method, url, headers=headers, json={})
    assert answered.status_code == status, answered.text
    if edit == "a sub-resource":
        readings = answered.json()["data"]
        assert len(readings) == 5
        assert {reading["deviceId"] for reading in readings} == {device}
    assert service.count(status=503) == 0


def test_a_dangling_ref_is_a_spec_error_naming_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = yaml.safe_load((ROOT / "openapi.yaml").read_text())
    fields = spec["components"]["schemas"]["Device"]["properties"]
    fields["owner"] = {"$ref": "#/components/schemas/Owner"}
    fields["deviceId"]["format"] = "uuid"  # the richer devices do not fit: built
    path = tmp_path / "openapi.yaml"
    path.write_text(yaml.safe_dump(spec, sort_keys=False))
    reason = "#/components/schemas/Owner points nowhere"
    with pytest.raises(SpecError, match=reason):
        MockService(spec=path)
    assert mock_main(["--check-spec", str(path)], prog="service-api-mock") == 1
    said = capsys.readouterr().err
    assert said.startswith("service-api-mock: error: ")
    assert reason in said
    assert "Traceback" not in said
    assert mock_main(["--spec", str(path), "--port", "0"]) == 1


def test_an_unreadable_spec_is_a_spec_error(tmp_path: Path) -> None:
    for content in ("paths: [", "just text", ""):
        (tmp_path / "bad.yaml").write_text(content)
        with pytest.raises(SpecError, match=r"bad\.yaml"):
            MockService(spec=tmp_path / "bad.yaml")
    with pytest.raises(SpecError, match="cannot be read"):
        MockService(spec=tmp_path / "absent.yaml")


def test_check_spec_lists_the_operations_it_serves(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert mock_main(["--check-spec"]) == 0  # by default the project's spec
    out = capsys.readouterr().out
    spec = yaml.safe_load((ROOT / "openapi.yaml").read_text())
    operation_ids = [
        op["operationId"]
        for item in spec["paths"].values()
        for op in item.values()
        if isinstance(op, dict) and "operationId" in op
    ]
    assert len(operation_ids) >= 5
    assert all(f"  {operation_id}: " in out for operation_id in operation_ids)


@pytest.mark.skipif(shutil.which("make") is None, reason="needs the make tool")
def test_make_checks_the_spec_with_the_mock() -> None:
    done = subprocess.run(
        ["make", "-n", "generated"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert "-m service_api_mock --check-spec openapi.yaml" in done.stdout


# ---- the command line and the extra -----------------------------------------------------


def test_help_names_the_program_it_is_given(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        mock_main(["--help"], prog="service-api-mock")
    out = capsys.readouterr().out
    assert out.startswith("usage: service-api-mock [-h]")
    assert "--spec PATH" in out
    assert "--check-spec [PATH]" in out


@pytest.mark.parametrize("missing", ["yaml", "jsonschema", "starlette"])
def test_importing_without_the_extra_names_it(missing: str) -> None:
    # The package imports (pytest loads its plugin wherever service-api is installed);
    # taking a name from it is what fails, naming the extra.
    code = (
        f"import sys; sys.modules[{missing!r}] = None; import service_api_mock; "
        "from service_api_mock import running_mock"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 1
    assert done.stderr.strip().splitlines()[-1] == (
        f"ImportError: the mock needs the 'mock' extra (no module {missing!r}): "
        "pip install 'service-api[mock]'"
    )
