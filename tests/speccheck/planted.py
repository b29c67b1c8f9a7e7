"""Specs that differ in one way each: the "true" spec a mock serves, the spec checked,
and what the check must report and write. Used by the tests and by the bench figures.

The *base* is the project's ``openapi.yaml`` with the fields the mock's demo records
carry declared (:data:`DEMO_FIELDS`): checked against the mock serving the base, it has
no difference. A true spec is the base with a *marker* and one or more plants: the
marker (a ``maxLength`` that the demo records' ``mode`` and ``locationMethod`` break)
makes the mock build every record from the true spec's schema, so that what a plant
adds or removes is what the mock serves; a shape cannot see a ``maxLength``, so the
marker is no difference itself. A plant edits the true spec, or the checked one (a
status, a header, a body the checked spec lacks).

Example::

    true, checked = specs([PLANTS["new-date-time"]])
    with serving(true) as base_url: ...
"""

from __future__ import annotations

import contextlib
import copy
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import yaml

from service_api_mock import MockService, serve_asgi
from service_api_mock._server import MOCK_OPTIONS
from service_api_spec import unescape

ROOT = Path(__file__).resolve().parents[2]
Document = dict[str, Any]

#: The fields of the mock's demo records that openapi.yaml does not declare.
DEMO_FIELDS = {
    "Shipment": {
        "referenceNumber": {"type": "string"},
        "status": {"type": "string"},
        "createdAt": {"type": "string", "format": "date-time"},
    },
    "ShipmentLeg": {"carrier": {"type": "string"}},
    "Device": {
        "serialNumber": {"type": "string"},
        "model": {"type": "string"},
        "firmwareVersion": {"type": "string"},
    },
}


def project_spec() -> Document:
    """The project's openapi.yaml, read."""
    return read_yaml((ROOT / "openapi.yaml").read_text("utf-8"))


def read_yaml(text: str) -> Document:
    """``text`` read as YAML, by libyaml (several times faster than PyYAML's own)."""
    document: Document = yaml.load(text, Loader=yaml.CSafeLoader)
    return document


def base_spec() -> Document:
    """openapi.yaml with :data:`DEMO_FIELDS` declared."""
    document = project_spec()
    for schema, fields in DEMO_FIELDS.items():
        document["components"]["schemas"][schema]["properties"].update(
            copy.deepcopy(fields)
        )
    return document


def schemas(document: Document) -> Document:
    found: Document = document["components"]["schemas"]
    return found


def responses(document: Document) -> Document:
    found: Document = document["components"]["responses"]
    return found


@dataclass(frozen=True)
class Plant:
    """One difference: ``true`` edits the served spec, ``checked`` the checked one; the
    report must have ``finding`` (kind, where) and the patch exactly ``edit`` (kind,
    pointer, key: None for a widening); ``refutes``: an x-assumed it must refute;
    ``faults``: the mock's faults it needs. Plants of one ``target`` exclude each other.
    """

    name: str
    target: str
    finding: tuple[str, str]
    edit: tuple[str, str, str | None] | None
    true: Callable[[Document], None] = lambda document: None
    checked: Callable[[Document], None] = lambda document: None
    refutes: str | None = None
    faults: dict[str, Any] = field(default_factory=dict)


def _add(schema: str, name: str, value: Document) -> Callable[[Document], None]:
    return lambda document: schemas(document)[schema]["properties"].update(
        {name: value}
    )


def _set(schema: str, name: str, value: Document) -> Callable[[Document], None]:
    return _add(schema, name, value)


def _drop(
    where: Callable[[Document], Document], key: str
) -> Callable[[Document], None]:
    return lambda document: where(document).pop(key)


def _new(
    schema: str, name: str, value: Document, kind: str = "undeclared field"
) -> Plant:
    pointer = f"#/components/schemas/{schema}/properties"
    return Plant(
        f"new {name}",
        f"{schema}.{name}",
        (kind, f"{schema}.{name}"),
        ("add", pointer, name),
        true=_add(schema, name, value),
    )


def _widened(schema: str, name: str, value: Document, kind: str) -> Plant:
    pointer = f"#/components/schemas/{schema}/properties/{name}"
    return Plant(
        f"{kind} {name}",
        f"{schema}.{name}",
        (kind, f"{schema}.{name}"),
        ("widen", pointer, None),
        true=_set(schema, name, value),
    )


_ALL = [
    _new("Shipment", "deliveredAt", {"type": "string", "format": "date-time"}),
    _new("Device", "installedOn", {"type": "string", "format": "date"}),
    _new("ShipmentLeg", "legId", {"type": "string", "format": "uuid"}),
    _new("Shipment", "trackingUrl", {"type": "string", "format": "uri"}),
    _new("Device", "ownerEmail", {"type": "string", "format": "email"}),
    _new("Shipment", "containerCount", {"type": "string", "examples": ["12", "7"]}),
    _new("Device", "signal", {"type": "number"}),
    _new("Shipment", "fragile", {"type": "boolean"}),
    _new(
        "Shipment",
        "dimensions",
        {
            "type": "object",
            "properties": {"length": {"type": "number"}, "unit": {"type": "string"}},
        },
    ),
    _new("Device", "tags", {"type": "array", "items": {"type": "string"}}),
    Plant(
        "never seen referenceNumber",
        "Shipment.referenceNumber",
        ("never seen", "Shipment.referenceNumber"),
        None,
        true=_drop(lambda d: schemas(d)["Shipment"]["properties"], "referenceNumber"),
    ),
    _widened(
        "Shipment", "status", {"type": ["string", "null"], "examples": [None]}, "null"
    ),
    _widened("Device", "model", {"type": "integer"}, "type"),
    _widened("Shipment", "createdAt", {"type": "string"}, "format"),
    Plant(
        "type latitude",
        "Coordinates.latitude",
        ("type", "Coordinates.latitude"),
        ("widen", "#/components/schemas/Coordinates/properties/latitude", None),
        true=_set("Coordinates", "latitude", {"type": "string"}),
        refutes="#/components/schemas/Coordinates/properties/latitude",
    ),
    Plant(
        "status 403 of listDevices",
        "listDevices 403",
        ("status", "listDevices 403"),
        ("add", "#/paths/~1devices/get/responses", "403"),
        checked=_drop(lambda d: d["paths"]["/devices"]["get"]["responses"], "403"),
    ),
    Plant(
        "status 404 of getShipment",
        "404",
        ("status", "getShipment 404"),
        ("add", "#/paths/~1shipments~1{shipmentId}/get/responses", "404"),
        checked=_drop(
            lambda d: d["paths"]["/shipments/{shipmentId}"]["get"]["responses"], "404"
        ),
    ),
    Plant(
        "a body where none is declared",
        "404",
        ("content type", "responses/NotFound"),
        ("add", "#/components/responses/NotFound/content", "application/problem+json"),
        checked=_drop(lambda d: responses(d)["NotFound"], "content"),
    ),
    Plant(
        "content type of 403",
        "Forbidden",
        ("content type", "responses/Forbidden"),
        ("add", "#/components/responses/Forbidden/content", "application/json"),
        true=lambda d: responses(d)["Forbidden"].update(
            content={
                "application/json": {
                    "schema": {"$ref": "#/components/schemas/ProblemDetails"}
                }
            }
        ),
    ),
    Plant(
        "error body field",
        "ProblemDetails.detail",
        ("undeclared field", "ProblemDetails.detail"),
        ("add", "#/components/schemas/ProblemDetails/properties", "detail"),
        checked=_drop(lambda d: schemas(d)["ProblemDetails"]["properties"], "detail"),
    ),
    Plant(
        "www-authenticate",
        "Unauthorized",
        ("header", "responses/Unauthorized"),
        ("add", "#/components/responses/Unauthorized/headers", "www-authenticate"),
        checked=_drop(
            lambda d: responses(d)["Unauthorized"]["headers"], "www-authenticate"
        ),
    ),
    Plant(
        "retry-after of 429",
        "TooManyRequests",
        ("header", "responses/TooManyRequests"),
        ("add", "#/components/responses/TooManyRequests/headers", "retry-after"),
        checked=_drop(
            lambda d: responses(d)["TooManyRequests"]["headers"], "Retry-After"
        ),
        faults={"fault_rate": 0.25, "retry_after": 0.0},
    ),
]
PLANTS = {plant.name: plant for plant in _ALL}
"""Every plant by name."""


def _marked(document: Document) -> Document:
    leg = schemas(document)["ShipmentLeg"]["properties"]["mode"]
    leg.pop("examples", None)
    leg["maxLength"] = 3
    schemas(document)["Device"]["properties"]["locationMethod"]["maxLength"] = 2
    return document


def specs(plants: Sequence[Plant]) -> tuple[Document, Document]:
    """The true spec (the base, marked, with the plants) and the checked one."""
    true, checked = _marked(base_spec()), base_spec()
    for plant in plants:
        plant.true(true)
        plant.checked(checked)
    return true, checked


def edits(edits: Sequence[tuple[str, str, Any]]) -> set[tuple[str, str, str | None]]:
    """A patch's edits ``(pointer, action, value)`` as :attr:`Plant.edit` names them:
    ``("add", parent pointer, key)``, ``("widen", pointer, None)``."""
    named: set[tuple[str, str, str | None]] = set()
    for pointer, action, _ in edits:
        parent, _, key = pointer.rpartition("/")
        if action == "add":
            named.add((action, parent, unescape(key)))
        else:
            named.add((action, pointer, None))
    return named


def dump(document: Document, path: Path) -> Path:
    """Write ``document`` as YAML ruamel.yaml can write back unchanged."""
    path.write_text(yaml.safe_dump(document, sort_keys=False, width=4096), "utf-8")
    return path


class Served:
    """One loopback server whose app is the mock of the spec served now (a mock's spec
    is fixed: each spec gets a :class:`MockService` of its own, swapped in)."""

    def __init__(self) -> None:
        self.service: MockService | None = None

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        assert self.service is not None
        await self.service.app(scope, receive, send)

    def serve(self, spec: Path, faults: dict[str, Any] | None = None) -> MockService:
        """Serve the mock of ``spec`` from now on, with ``faults``."""
        self.service = MockService(spec=spec)
        if faults:
            self.service.set_faults(**faults)
        return self.service


@contextlib.contextmanager
def serving() -> Iterator[tuple[Served, str]]:
    """A :class:`Served` and its base URL, ``http://127.0.0.1:<port>/public/v3``."""
    served = Served()
    with serve_asgi(served, name="spec-check-mock", **MOCK_OPTIONS) as origin:
        yield served, f"{origin}/public/v3"


def disagreements(spec: Path, base_url: str, account: str) -> list[str]:
    """What the service answers that the spec at ``spec`` does not say: a status, a
    content type or a header (``www-authenticate``, ``retry-after``) it does not declare,
    a body its schema refuses (jsonschema, every keyword and the formats it checks).

    The requests, sent with plain httpx: every list's first page, a get of a listed
    record and of none, and each list with no account, an account of nobody and an
    invalid token; every operation is taken from the spec.
    """
    from jsonschema import Draft202012Validator  # type: ignore[import-untyped]
    from referencing import Registry, Resource
    from referencing.jsonschema import DRAFT202012

    from service_api_mock import DEMO_CLIENT_ID, DEMO_CLIENT_SECRET
    from service_api_spec import load_spec

    model = load_spec(spec)
    document = model.document
    resource = Resource.from_contents(
        document.document, default_specification=DRAFT202012
    )
    registry: Any = Registry().with_resource("urn:spec", resource)
    form = {"client_id": DEMO_CLIENT_ID, "client_secret": DEMO_CLIENT_SECRET}
    form["grant_type"] = "client_credentials"
    found: list[str] = []
    (token_op,) = (op for op in model.operations if op.kind == "token")
    with httpx.Client(base_url=base_url, timeout=30) as http:
        files = {k: (None, v) for k, v in form.items()}
        token = http.post(token_op.path, files=files)
        headers = {"authorization": f"Bearer {token.json()['access_token']}"}
        mine = {**headers, "x-service-account-id": account}
        asked = [(token_op, token)]
        for op in model.lists:
            page = http.get(op.path, headers=mine)
            asked.append((op, page))
            nobody = {**mine, "x-service-account-id": "nobody"}
            invalid = {**mine, "authorization": "Bearer invalid"}
            for probe in (nobody, headers, invalid):
                asked.append((op, http.get(op.path, headers=probe)))
            listed = model.resources[str(op.resource)]
            records = page.json().get("data") if page.status_code == 200 else None
            first = (records or [{}])[0]
            for get in model.operations:
                if get.kind != "get" or get.resource != op.resource:
                    continue
                name = f"{{{listed.item_parameter}}}"
                for value in (first.get(str(listed.id_field), "none"), "none"):
                    path = get.path.replace(name, str(value))
                    asked.append((get, http.get(path, headers=mine)))
    for op, response in asked:
        where = f"{op.operation_id} {response.status_code}"
        status = str(response.status_code)
        keys = [k for k in (status, f"{status[0]}XX", "default") if k in op.answers]
        if not keys:
            found.append(f"{where}: status not declared")
            continue
        node, pointer = document.at(f"{op.pointer}/responses/{keys[0]}")
        content = node.get("content") or {}
        media = response.headers.get("content-type", "").split(";")[0].strip()
        if response.content and media not in content:
            found.append(f"{where}: {media} not declared")
        elif response.content and media.endswith("json") and "schema" in content[media]:
            schema = {
                "$ref": f"urn:spec{pointer}/content/{media.replace('/', '~1')}/schema"
            }
            validator = Draft202012Validator(
                schema,
                registry=registry,
                format_checker=Draft202012Validator.FORMAT_CHECKER,
            )
            found += [
                f"{where}: {e.message[:200]}"
                for e in validator.iter_errors(response.json())
            ]
        declared = {str(k).lower() for k in node.get("headers") or {}}
        for name in ("www-authenticate", "retry-after"):
            if name in response.headers and name not in declared:
                found.append(f"{where}: header {name} not declared")
    return found


def with_delete(document: Document) -> Document:
    """``document`` whose shipments can also be deleted (``DELETE`` of the item path),
    its errors those of the get beside it."""
    item = next(path for path in document["paths"] if path.startswith("/shipments/{"))
    get = document["paths"][item]["get"]
    document["paths"][item]["delete"] = {
        "operationId": "deleteShipment",
        "tags": get["tags"],
        "parameters": get["parameters"],
        "responses": {"204": {"description": "Deleted."}}
        | {k: v for k, v in get["responses"].items() if k != "200"},
    }
    return document
