"""codegen/generate.py: operations added to a copy of the spec get their one door with no
hand edit, typed, on ``client.<tag>`` and awaited on ``client.aio.<tag>``, named by the
spec model (service_api_spec): a list endpoint ``client.<tag>.list()``
(``client.<tag>.list_<name>()`` for another of the tag) and its entry in the registry
``service_api_client.api.LIST_ENDPOINTS``; ``<verb><Thing>`` of the resource ``things``
``client.things.<verb>()`` for get, create, update, replace and delete; any other its
snake_case name; the token request none. A name that would clash is resolved, never a
failure."""

import re
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
import yaml
from openapi_python_client.strings import ClassName
from spec_copy import ROOT, SpecCopy, generate_copy

from service_api_spec import load_spec

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
    # A plain array beside the tag's list(): list[...] in a class with a method list.
    "/alerts/{alertId}/history": {
        "get": {
            "operationId": "listAlertHistory",
            "tags": ["alerts"],
            "parameters": [
                ALERT_ID,
                {
                    "name": "kinds",
                    "in": "query",
                    "schema": {"type": "array", "items": {"type": "string"}},
                },
            ],
            "responses": {
                "200": {
                    "description": "OK",
                    "content": {
                        "application/json": {
                            "schema": {
                                "type": "array",
                                "items": {"$ref": "#/components/schemas/Alert"},
                            }
                        }
                    },
                }
            },
        }
    },
    # The singular of the tag: addresses/address; a POST on a collection is its create
    # even where nothing lists or reads it (categories).
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
    # Outside the spec's security, but not the token request: a door as any other.
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
def spec() -> dict[str, Any]:
    """A copy of the spec that gained the paths above."""
    spec: dict[str, Any] = yaml.safe_load((ROOT / "openapi.yaml").read_text())
    spec["paths"].update(NEW_PATHS)
    spec["components"]["schemas"].update(NEW_SCHEMAS)
    return spec


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory, spec: dict[str, Any]) -> Path:
    """The package generated from that copy."""
    return generate_copy(tmp_path_factory.mktemp("resources"), spec).generated


def methods_of(source: str, name: str) -> set[str]:
    """The names of the methods of class ``name`` in ``source``."""
    body = source.split(f"\nclass {name}(Resource):", 1)[1].split("\nclass ", 1)[0]
    return {
        line.split("(")[0].split()[-1] for line in body.splitlines() if " def " in line
    }


def test_every_operation_gets_the_door_the_spec_model_names(
    generated: Path, spec: dict[str, Any], tmp_path: Path
) -> None:
    (tmp_path / "openapi.yaml").write_text(yaml.safe_dump(spec), "utf-8")
    model = load_spec(tmp_path / "openapi.yaml")
    package = generated / "service_api_client"
    for name, tag in model.tags.items():
        doors = {op.door for op in model.operations if op.tag == name and op.door}
        init = (package / "api" / tag.module / "__init__.py").read_text()
        if not doors:  # the token request's tag: the generated module alone
            assert "class " not in init
            continue
        # Named as the generator names classes (``api_2010_call`` -> ``Api2010Call``).
        for name in (
            str(ClassName(f"{tag.module}_resource", "field_")),
            str(ClassName(f"async_{tag.module}_resource", "field_")),
        ):
            assert methods_of(init, name) == doors, (name, doors)
    assert {op.door for op in model.operations if op.tag == "alerts"} >= {
        "list",
        "list_alert_rules",
        "create",
        "get",
        "replace",
        "delete",
        "acknowledge_alert",
        "list_alert_history",
    }
    source = (package / "api/alerts/__init__.py").read_text()
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
    # In a class with a method list, the builtin is written in full.
    assert "kinds: builtins.list[str] | Unset = UNSET," in source
    assert ") -> builtins.list[Alert]:" in source
    client = (package / "client.py").read_text()
    for attribute in ("alerts", "addresses", "categories", "notes", "health"):
        assert f"    def {attribute}(self) -> " in client


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

assert {"alert-rules", "alerts"} <= set(LIST_ENDPOINTS), LIST_ENDPOINTS
assert list(LIST_ENDPOINTS) == sorted(LIST_ENDPOINTS)
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
    if path.endswith("/history"):
        assert request.url.params.get_list("kinds") == ["raised", "cleared"], request.url
        return httpx.Response(200, json=[{"alertId": parts[2]}, {"alertId": "a-0"}])
    if path.endswith("/acknowledgement"):
        return httpx.Response(200, json={"alertId": parts[2], "note": request.url.params["note"]})
    if path.startswith("/alerts/"):
        return httpx.Response(200, json={"alertId": parts[2]})
    if path == "/addresses/ad-1":
        return httpx.Response(200, json={"street": "Main St 1"})
    if path == "/health":
        return httpx.Response(200, json={"name": "up"})
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
    history = doors.alerts.list_alert_history(alert_id="a-5", kinds=["raised", "cleared"])
    assert [a.alert_id for a in history] == ["a-5", "a-0"], history
    assert doors.health.get_health().name == "up"
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
print("checked", len(seen), "requests")
"""


def test_the_new_accessors_and_registry_entries_work(generated: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-c", RUNTIME_CHECK, str(generated)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    # A failed check in the child is its AssertionError, line and values, here.
    assert done.returncode == 0, done.stderr[-4000:]
    # Every check ran: the last line comes after them all, with what was served.
    last = done.stdout.splitlines()[-1]
    assert re.fullmatch(r"checked [1-9][0-9]* requests", last), done.stdout


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
    assert_type(client.alerts.list_alert_history(alert_id="a-1"), list[Alert])
    assert_type(await client.aio.alerts.list_alert_history(alert_id="a-1"), list[Alert])
    assert_type(client.notes.list_notes(), AlertPage)
    client.alerts.delete(alert_id=1)  # type: ignore[arg-type]
    client.alerts.acknowledge_alert(alert_id="a-1", note=3)  # type: ignore[arg-type]
"""


def test_the_new_accessors_type_check(generated: Path) -> None:
    copy = SpecCopy(root=generated.parent / "repo", generated=generated)
    result = copy.type_check(textwrap.dedent(TYPED_USE))
    assert result.returncode == 0, result.stdout + result.stderr


def test_names_that_would_clash_are_resolved(tmp_path: Path) -> None:
    """An operation named as another's door keeps its own name (and the method after
    it); a tag named as a client attribute is ``<tag>_api``; a field named as a model's
    method is its attribute with a ``_``: the client imports, every door is there."""
    spec: dict[str, Any] = yaml.safe_load((ROOT / "openapi.yaml").read_text())
    spec["paths"]["/shipments/{shipmentId}/latest"] = {
        "get": {
            "operationId": "get",  # its own name, which getShipment's door already is
            "tags": ["shipments"],
            "parameters": [ALERT_ID | {"name": "shipmentId"}],
            "responses": answer("Shipment"),
        }
    }
    spec["paths"]["/devices"]["get"]["tags"] = ["token"]
    spec["components"]["schemas"]["Shipment"]["properties"]["keys"] = {"type": "string"}
    made = generate_copy(tmp_path, spec)
    check = (
        "from service_api_client import Client;"
        "from service_api_client.models import Shipment;"
        "c = Client(base_url='http://h');"
        "print(sorted(n for n in dir(c.shipments) if not n.startswith('_')));"
        "print(sorted(n for n in dir(c.token_api) if not n.startswith('_')));"
        "s = Shipment.from_dict({'keys': 'k', 'shipmentId': 's'});"
        "print(s.keys_, list(s.keys()), s.get('keys'))"
    )
    done = subprocess.run(
        [sys.executable, "-c", check],
        env=made.env(),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    shipments, token, record = done.stdout.splitlines()
    model = load_spec(made.spec)
    assert eval(shipments) == sorted(  # noqa: S307
        str(op.door) for op in model.operations if op.tag == "shipments"
    )
    assert {"get", "create", "list"} < set(eval(shipments))  # noqa: S307
    assert eval(token) == [  # noqa: S307
        str(op.door) for op in model.operations if op.tag == "token"
    ]
    assert record == "k ['keys', 'shipmentId'] k"  # in the order sent
