"""Fixtures for the mock's own tests: an in-process service and a client bound to it, and
a copy of the spec with a resource of every shape the mock serves."""

import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from service_api_mock import DEMO_CLIENT_ID, DEMO_CLIENT_SECRET, MockConfig, MockService

# The helpers of tests/spec (a copy of the spec grown by hand, schemathesis driven to a
# success of each operation and link) serve the mock's tests too.
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "spec"))

FORM = {
    "client_id": (None, DEMO_CLIENT_ID),
    "client_secret": (None, DEMO_CLIENT_SECRET),
    "grant_type": (None, "client_credentials"),
}


@pytest.fixture
def service() -> Iterator[MockService]:
    """A mock in process that checks its answers: one that does not fit its schema
    fails the test that met it."""
    service = MockService(MockConfig(records=120, seed=0, validate_answers=True))
    yield service
    assert service.invalid_answers() == []


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


SPEC = Path(__file__).resolve().parents[2] / "openapi.yaml"
ERRORS = {
    code: {"$ref": f"#/components/responses/{name}"}
    for code, name in (
        ("400", "BadRequest"),
        ("401", "Unauthorized"),
        ("403", "Forbidden"),
        ("404", "NotFound"),
        ("429", "TooManyRequests"),
        ("5XX", "ServerError"),
    )
}


def _json(ref: str) -> dict[str, Any]:
    return {
        "content": {
            "application/json": {"schema": {"$ref": f"#/components/schemas/{ref}"}}
        }
    }


@pytest.fixture
def shapes_spec(tmp_path: Path) -> Path:
    """A copy of openapi.yaml with a resource of every shape the mock serves, written to
    ``tmp_path``: ``/alerts`` (list with a ``severity`` filter, get, create, replace, update,
    delete, an integer id, linked create -> get -> update -> delete)."""
    document = yaml.safe_load(SPEC.read_text())
    schemas = document["components"]["schemas"]
    schemas["Alert"] = {
        "type": "object",
        "properties": {
            "alertId": {"type": "integer", "minimum": 1},
            "severity": {"type": "string", "enum": ["low", "high"]},
            "raisedAt": {"type": ["string", "null"], "format": "date-time"},
            "message": {"type": "string", "maxLength": 40},
            "tags": {"type": "array", "items": {"type": "string"}},
        },
        "required": ["severity"],
    }
    schemas["AlertPage"] = {
        **schemas["DevicePage"],
        "properties": {
            **schemas["DevicePage"]["properties"],
            "data": {"type": "array", "items": {"$ref": "#/components/schemas/Alert"}},
        },
    }
    errors = {k: v for k, v in ERRORS.items() if k != "404"}
    item_id = {"alertId": "$response.body#/alertId"}
    link = {"parameters": item_id}
    page = [{"$ref": "#/components/parameters/pageNumber"}]
    page.append({"$ref": "#/components/parameters/pageSize"})
    severity = {
        "name": "severity",
        "in": "query",
        "schema": {"type": "string", "enum": ["low", "high"]},
    }
    path_id = {
        "name": "alertId",
        "in": "path",
        "required": True,
        "schema": {"type": "integer"},
    }
    document["tags"].append({"name": "alerts"})
    document["paths"]["/alerts"] = {
        "get": {
            "operationId": "listAlerts",
            "tags": ["alerts"],
            "parameters": [*page, severity],
            "responses": {
                "200": {"description": "A page.", **_json("AlertPage")},
                **errors,
            },
        },
        "post": {
            "operationId": "createAlert",
            "tags": ["alerts"],
            "requestBody": {"required": True, **_json("Alert")},
            "responses": {
                "201": {
                    "description": "Created.",
                    **_json("Alert"),
                    "links": {
                        "getAlert": {"operationId": "getAlert", **link},
                        "updateAlert": {"operationId": "updateAlert", **link},
                        "deleteAlert": {"operationId": "deleteAlert", **link},
                    },
                },
                **errors,
            },
        },
    }
    with_body = {"requestBody": {"required": True, **_json("Alert")}}
    document["paths"]["/alerts/{alertId}"] = {
        "parameters": [path_id],
        "get": {
            "operationId": "getAlert",
            "responses": {"200": {"description": "One.", **_json("Alert")}, **ERRORS},
        },
        "put": {
            "operationId": "replaceAlert",
            **with_body,
            "responses": {
                "200": {"description": "Replaced.", **_json("Alert")},
                **ERRORS,
            },
        },
        "patch": {
            "operationId": "updateAlert",
            "requestBody": {
                "required": True,
                "content": {
                    "application/json": {
                        "schema": {
                            "type": "object",
                            "properties": schemas["Alert"]["properties"],
                        }
                    }
                },
            },
            "responses": {
                "200": {
                    "description": "Updated.",
                    **_json("Alert"),
                    "links": {"deleteAlert": {"operationId": "deleteAlert", **link}},
                },
                **ERRORS,
            },
        },
        "delete": {
            "operationId": "deleteAlert",
            "responses": {"204": {"description": "Deleted."}, **ERRORS},
        },
    }
    path = tmp_path / "openapi.yaml"
    path.write_text(yaml.safe_dump(document, sort_keys=False))
    return path
