"""codegen/generate.sh: operations added to a copy of the spec get their one door with no
hand edit, typed, on ``client.<tag>`` and awaited on ``client.aio.<tag>``: a list endpoint
``client.<tag>.list()`` (``client.<tag>.list_<name>()`` for another of the tag) and its
entry in the registry ``service_api_client.api.LIST_ENDPOINTS``; ``<verb><Thing>`` under
``things`` ``client.things.<verb>()`` for get, create, update, replace and delete; any
other its snake_case name; an operation outside the spec's security (``security: []``)
none."""

import os
import shutil
import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
# The generator and its ruff post-hooks are console scripts of this interpreter's environment.
ENV = {
    **os.environ,
    "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
}

PAGE_PARAMETERS = [
    {"$ref": "#/components/parameters/pageNumber"},
    {"$ref": "#/components/parameters/pageSize"},
]


def envelope_of(item: str) -> dict[str, Any]:
    return {
        "type": "object",
        "required": ["totalRecords", "pageNumber", "pageSize", "data"],
        "properties": {
            "totalRecords": {"type": "integer"},
            "pageNumber": {"type": "integer"},
            "pageSize": {"type": "integer"},
            "data": {
                "type": "array",
                "items": {"$ref": f"#/components/schemas/{item}"},
            },
        },
    }


def answer(schema: str) -> dict[str, Any]:
    content = {
        "application/json": {"schema": {"$ref": f"#/components/schemas/{schema}"}}
    }
    return {"200": {"description": "OK", "content": content}}


def body(schema: str) -> dict[str, Any]:
    content = {
        "application/json": {"schema": {"$ref": f"#/components/schemas/{schema}"}}
    }
    return {"required": True, "content": content}


ALERT_ID = {
    "name": "alertId",
    "in": "path",
    "required": True,
    "schema": {"type": "string"},
}

NEW_PATHS = {
    # The tag's own list endpoint, with a filter of its own: alerts.list(severity=...).
    "/alerts": {
        "get": {
            "operationId": "listAlerts",
            "tags": ["alerts"],
            "summary": "List the alerts of the account",
            "parameters": [
                *PAGE_PARAMETERS,
                {"name": "severity", "in": "query", "schema": {"type": "string"}},
            ],
            "responses": answer("AlertPage"),
        },
        "post": {
            "operationId": "createAlert",
            "tags": ["alerts"],
            "requestBody": body("Alert"),
            "responses": {"201": answer("Alert")["200"]},
        },
    },
    # A second list endpoint of the tag: alerts.list_alert_rules().
    "/alert-rules": {
        "get": {
            "operationId": "listAlertRules",
            "tags": ["alerts"],
            "summary": "List the alert rules",
            "parameters": PAGE_PARAMETERS,
            "responses": answer("AlertRulePage"),
        }
    },
    # Not list endpoints: one object; an envelope without the paging parameters.
    "/alerts/{alertId}": {
        "parameters": [ALERT_ID],
        "get": {
            "operationId": "getAlert",
            "tags": ["alerts"],
            "responses": answer("Alert"),
        },
        "put": {
            "operationId": "replaceAlert",
            "tags": ["alerts"],
            "requestBody": body("Alert"),
            "responses": answer("Alert"),
        },
        "delete": {
            "operationId": "deleteAlert",
            "tags": ["alerts"],
            "responses": {"204": {"description": "Deleted."}},
        },
    },
    "/alerts/{alertId}/acknowledgement": {
        "post": {
            "operationId": "acknowledgeAlert",
            "tags": ["alerts"],
            "parameters": [
                ALERT_ID,
                {"name": "note", "in": "query", "schema": {"type": "string"}},
            ],
            "responses": answer("Alert"),
        }
    },
    # The singular of the tag: addresses/address, categories/category.
    "/addresses/{addressId}": {
        "get": {
            "operationId": "getAddress",
            "tags": ["addresses"],
            "parameters": [
                {
                    "name": "addressId",
                    "in": "path",
                    "required": True,
                    "schema": {"type": "string"},
                }
            ],
            "responses": answer("Address"),
        }
    },
    "/categories": {
        "post": {
            "operationId": "createCategory",
            "tags": ["categories"],
            "requestBody": body("AlertRule"),
            "responses": {"201": answer("AlertRule")["200"]},
        }
    },
    # Outside the spec's security, like the token request: the client's own job, no door.
    "/health": {
        "get": {
            "operationId": "getHealth",
            "tags": ["health"],
            "security": [],
            "responses": answer("AlertRule"),
        }
    },
    "/notes": {
        "get": {
            "operationId": "listNotes",
            "tags": ["notes"],
            "responses": answer("AlertPage"),
        }
    },
}

NEW_SCHEMAS = {
    # One ``...Id`` field: the registry names it; none (AlertRule): the registry says None.
    "Alert": {"type": "object", "properties": {"alertId": {"type": "string"}}},
    "AlertRule": {"type": "object", "properties": {"name": {"type": "string"}}},
    "AlertPage": envelope_of("Alert"),
    "AlertRulePage": envelope_of("AlertRule"),
}


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The package generated from a copy of the spec that gained the paths above."""
    work = tmp_path_factory.mktemp("resources")
    spec = yaml.safe_load((ROOT / "openapi.yaml").read_text())
    spec["paths"].update(NEW_PATHS)
    spec["components"]["schemas"].update(NEW_SCHEMAS)
    (work / "openapi.yaml").write_text(yaml.safe_dump(spec, sort_keys=False))
    shutil.copytree(ROOT / "codegen", work / "codegen")
    subprocess.run(
        [str(work / "codegen" / "generate.sh"), str(work / "out")], check=True, env=ENV
    )
    return work / "out"


def methods_of(source: str, name: str) -> set[str]:
    """The names of the methods of class ``name`` in ``source``."""
    body = source.split(f"\nclass {name}:", 1)[1].split("\nclass ", 1)[0]
    return {
        line.split("(")[0].split()[-1] for line in body.splitlines() if " def " in line
    }


def test_every_operation_gets_its_door(generated: Path) -> None:
    package = generated / "service_api_client"
    source = (package / "api/alerts/__init__.py").read_text()
    doors = {
        "list",
        "list_alert_rules",
        "create",
        "get",
        "replace",
        "delete",
        "acknowledge_alert",
    }
    assert methods_of(source, "AlertsResource") == {"__init__", *doors}
    assert methods_of(source, "AsyncAlertsResource") == {"__init__", *doors}
    # Every option and the endpoint's own query parameter, typed in the signature.
    assert (
        "        severity: str | Unset = UNSET,\n    ) -> ListPager[AlertPage, Alert]:"
        in source
    )
    assert "key: Callable[[AlertRule], Hashable | None] | None = None," in source
    assert (
        "    async def delete(\n        self,\n        *,\n        alert_id: str,\n    ) -> None:"
        in source
    )
    for tag, resource, door in [
        ("addresses", "AddressesResource", "get"),
        ("categories", "CategoriesResource", "create"),
        ("notes", "NotesResource", "list_notes"),  # no page parameters: one call
    ]:
        assert methods_of(
            (package / f"api/{tag}/__init__.py").read_text(), resource
        ) == {
            "__init__",
            door,
        }
    client = (package / "client.py").read_text()
    for tag in ("alerts", "addresses", "categories", "notes"):
        assert f"    def {tag}(self) -> " in client
    # The operation outside the spec's security is left to the generated module alone.
    assert "class " not in (package / "api/health/__init__.py").read_text()
    assert (package / "api/health/get_health.py").exists()


# Run in a child interpreter: importing a second copy of service_api_client here would
# leave other tests holding modules that are no longer the ones in sys.modules.
RUNTIME_CHECK = """
import asyncio
import json
import sys
sys.path.insert(0, sys.argv[1])
import httpx
import service_api_client
import service_api
from service_api_client.api import LIST_ENDPOINTS
from service_api_client.api.alerts import AlertsResource, list_alert_rules, list_alerts
from service_api_client.models import Alert, AlertPage, AlertRule, AlertRulePage

assert service_api_client.__file__.startswith(sys.argv[1]), service_api_client.__file__
ALERTS = [{"alertId": f"a-{n}"} for n in range(5)]
seen = []

def serve(request):
    seen.append(request.url.params)
    number = int(request.url.params["pageNumber"])
    size = int(request.url.params["pageSize"])
    data = ALERTS[(number - 1) * size : number * size]
    if request.url.path == "/alert-rules":
        data = [{"name": "r"}]
    return httpx.Response(200, json={
        "totalRecords": len(ALERTS), "pageNumber": number, "pageSize": size, "data": data,
    })

assert list(LIST_ENDPOINTS) == ["alert-rules", "alerts", "devices", "shipments"]
alert_entry, rules_entry = LIST_ENDPOINTS["alerts"], LIST_ENDPOINTS["alert-rules"]
assert (alert_entry.name, alert_entry.module, alert_entry.page_model) == (
    "alerts", list_alerts, AlertPage
), alert_entry
assert (alert_entry.item_model, alert_entry.id_field) == (Alert, "alertId"), alert_entry
assert (rules_entry.module, rules_entry.item_model, rules_entry.id_field) == (
    list_alert_rules, AlertRule, None
), rules_entry
# The attribute of the id, in the endpoint module: what paginate drops repeats by.
assert (list_alerts.ID_ATTRIBUTE, list_alert_rules.ID_ATTRIBUTE) == ("alert_id", None)

args = {"base_url": "http://127.0.0.1:9", "httpx_args": {"transport": httpx.MockTransport(serve)}}
plain = service_api_client.Client(**args)
assert type(plain.alerts) is AlertsResource
page = list_alerts.sync(client=plain, page_size=2, severity="high")
assert [a.alert_id for a in page.data] == ["a-0", "a-1"], page
assert seen[-1]["severity"] == "high", seen
try:
    plain.alerts.list()
except TypeError as exc:
    assert "service_api.Client" in str(exc), exc
else:
    raise AssertionError("a plain client paged")

# The overlay's client, on the same transport: its token request is answered too.
def serve_all(request):
    if request.url.path.endswith("/authenticate"):
        token = {"access_token": "t", "token_type": "Bearer", "expires_in": 3600}
        return httpx.Response(200, json=token)
    return serve(request)

paging = service_api.Client(
    "http://127.0.0.1:9", "cid", "secret", "acct-1",
    httpx_args={"transport": httpx.MockTransport(serve_all)},
)
seen.clear()
alerts = list(paging.alerts.list(page_size=2, severity="low"))
assert [a.alert_id for a in alerts] == [f"a-{n}" for n in range(5)], alerts
assert [p["pageNumber"] for p in seen] == ["1", "2", "3"], seen
assert all(p["severity"] == "low" for p in seen), seen
numbers = [p.number for p in paging.alerts.list(page_size=4).pages()]
assert numbers == [1, 2], numbers
rules = list(paging.alerts.list_alert_rules())
assert [r.name for r in rules] == ["r"], rules

# One request per call: the doors of the other operations, with either client.
def serve_doors(request):
    path, method, sent = request.url.path, request.method, request.content
    if path.endswith("/authenticate"):
        return serve_all(request)
    parts = path.split("/")
    if method == "POST" and path == "/alerts":
        return httpx.Response(201, json={**json.loads(sent), "alertId": "a-new"})
    if method == "PUT":
        return httpx.Response(200, content=sent)
    if method == "DELETE":
        return httpx.Response(204 if parts[2] != "a-odd" else 200)
    if path.endswith("/acknowledgement"):
        return httpx.Response(200, json={"alertId": parts[2], "note": request.url.params["note"]})
    if path.startswith("/alerts/"):
        return httpx.Response(200, json={"alertId": parts[2]})
    if path == "/addresses/ad-1":
        return httpx.Response(200, json={"street": "Main St 1"})
    if path == "/categories":
        return httpx.Response(201, json=json.loads(sent))
    assert path == "/notes", path
    empty = {"totalRecords": 0, "pageNumber": 1, "pageSize": 50, "data": []}
    return httpx.Response(200, json=empty)

plain_doors = service_api_client.Client(
    base_url="http://127.0.0.1:9", httpx_args={"transport": httpx.MockTransport(serve_doors)}
)
paging_doors = service_api.Client(
    "http://127.0.0.1:9", "cid", "secret", "acct-1",
    httpx_args={"transport": httpx.MockTransport(serve_doors)},
)
for doors in (plain_doors, paging_doors):
    assert doors.alerts.get(alert_id="a-1").alert_id == "a-1"
    assert asyncio.run(doors.aio.alerts.get(alert_id="a-2")).alert_id == "a-2"
    created = doors.alerts.create(body=Alert(alert_id="ignored"))
    assert type(created) is Alert and created.alert_id == "a-new", created
    assert doors.alerts.replace(alert_id="a-1", body=Alert(alert_id="a-1")).alert_id == "a-1"
    assert doors.alerts.delete(alert_id="a-1") is None
    assert asyncio.run(doors.aio.alerts.delete(alert_id="a-1")) is None
    acknowledged = doors.alerts.acknowledge_alert(alert_id="a-3", note="seen")
    assert (acknowledged.alert_id, acknowledged["note"]) == ("a-3", "seen"), acknowledged
    assert doors.addresses.get(address_id="ad-1").street == "Main St 1"
    assert doors.categories.create(body=AlertRule(name="c")).name == "c"
    assert type(doors.notes.list_notes()) is AlertPage
try:
    plain_doors.alerts.delete(alert_id="a-odd")
except service_api_client.errors.UnexpectedStatus as exc:
    assert exc.status_code == 200, exc
else:
    raise AssertionError("a 200 for a 204 passed")
try:
    paging_doors.alerts.delete(alert_id="a-odd")
except service_api.ApiStatusError as exc:
    assert exc.status_code == 200, exc
else:
    raise AssertionError("a 200 for a 204 passed")
paging.close()
paging_doors.close()
"""


def test_the_new_accessors_and_registry_entries_work(generated: Path) -> None:
    subprocess.run([sys.executable, "-c", RUNTIME_CHECK, str(generated)], check=True)


TYPED_USE = """
from collections.abc import AsyncGenerator, Generator
from typing import assert_type

from service_api_client import Client
from service_api_client.api import LIST_ENDPOINTS, ListEndpoint
from service_api_client.client import ListPage, ListPager
from service_api_client.models import Address, Alert, AlertPage, AlertRule, AlertRulePage


async def use(client: Client) -> None:
    assert_type(client.alerts.list(severity="high"), ListPager[AlertPage, Alert])
    for alert in client.alerts.list(severity="high", max_items=3):
        assert_type(alert, Alert)
    async for rule in client.alerts.list_alert_rules(page_size=5):
        assert_type(rule, AlertRule)
    assert_type(iter(client.alerts.list()), Generator[Alert, None, None])
    assert_type(aiter(client.alerts.list_alert_rules()), AsyncGenerator[AlertRule, None])
    for page in client.alerts.list(max_pages=2).pages():
        assert_type(page, ListPage[AlertPage, Alert])
    async for rules in client.alerts.list_alert_rules().pages():
        assert_type(rules.items[0], AlertRule)
        assert_type(rules.model, AlertRulePage)
    assert_type(LIST_ENDPOINTS["alerts"], ListEndpoint)
    client.alerts.list(severity=3)  # type: ignore[arg-type]
    client.alerts.iterate()  # type: ignore[attr-defined]
    assert_type(client.alerts.get(alert_id="a-1"), Alert)
    assert_type(await client.aio.alerts.create(body=Alert()), Alert)
    assert_type(await client.aio.alerts.replace(alert_id="a-1", body=Alert()), Alert)
    assert_type(client.alerts.acknowledge_alert(alert_id="a-1", note="seen"), Alert)
    assert_type(client.addresses.get(address_id="ad-1"), Address)
    assert_type(client.categories.create(body=AlertRule()), AlertRule)
    assert_type(client.notes.list_notes(), AlertPage)
    client.alerts.delete(alert_id=1)  # type: ignore[arg-type]
    client.alerts.acknowledge_alert(alert_id="a-1", note=3)  # type: ignore[arg-type]
"""


def test_the_new_accessors_type_check(generated: Path, tmp_path: Path) -> None:
    (tmp_path / "use_alerts.py").write_text(textwrap.dedent(TYPED_USE))
    result = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-incremental", "use_alerts.py"],
        capture_output=True,
        text=True,
        check=False,
        cwd=tmp_path,
        env={**ENV, "MYPYPATH": str(generated)},
    )
    assert result.returncode == 0, result.stdout + result.stderr


def _door_shared(spec: dict[str, Any]) -> None:
    spec["paths"]["/shipments/{shipmentId}/latest"] = {
        "get": {
            "operationId": "get",  # its own name, which getShipment's door already is
            "tags": ["shipments"],
            "parameters": [ALERT_ID | {"name": "shipmentId"}],
            "responses": answer("Shipment"),
        }
    }


def _client_attribute_hidden(spec: dict[str, Any]) -> None:
    spec["paths"]["/shipments/{shipmentId}"]["get"]["tags"] = ["token"]


def _method_hidden(spec: dict[str, Any]) -> None:
    spec["components"]["schemas"]["Shipment"]["properties"]["keys"] = {"type": "string"}


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (_method_hidden, "the field keys of Shipment would hide its method keys()"),
        (
            _door_shared,
            "the operations get_shipment and get of the tag shipments would both be"
            " client.shipments.get(); rename one (operationId)",
        ),
        (
            _client_attribute_hidden,
            "the tag token would hide the client's own attribute client.token; rename the tag",
        ),
    ],
)
def test_a_spec_the_doors_cannot_serve_fails_generation_saying_why(
    tmp_path: Path, edit: Callable[[dict[str, Any]], None], message: str
) -> None:
    spec = yaml.safe_load((ROOT / "openapi.yaml").read_text())
    edit(spec)
    (tmp_path / "openapi.yaml").write_text(yaml.safe_dump(spec, sort_keys=False))
    shutil.copytree(ROOT / "codegen", tmp_path / "codegen")
    result = subprocess.run(
        [str(tmp_path / "codegen" / "generate.sh"), str(tmp_path / "out")],
        capture_output=True,
        text=True,
        check=False,
        env=ENV,
    )
    assert result.returncode == 1
    assert message in " ".join(result.stderr.split())
    assert not (tmp_path / "out").exists()
