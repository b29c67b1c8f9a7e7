"""Specs that differ in one way each: the "true" spec a mock serves, the spec checked,
and what the check must report and write. Used by the tests and by the bench figures.

The *base* is the project's ``openapi.yaml`` with the fields the mock's demo records
carry declared (:data:`DEMO_FIELDS`): checked against the mock serving the base, it has
no difference. A true spec is the base with a *marker* and one or more plants: the
marker (a ``maxLength`` that the demo records' ``mode`` and ``locationMethod`` break)
makes the mock build every record from the true spec's schema, so that what a plant
adds or removes is what the mock serves; a shape cannot see a ``maxLength``, so the
marker is no difference itself. A plant edits the true spec, or the checked one (a
status, a header, a body the checked spec lacks), or names a *variant*: what the
loopback server changes in the mock's answers (see :class:`Served`), for what a spec
cannot make the mock do (a required field left out, a link missing, an account header
not checked).

Example::

    true, checked = specs([PLANTS["new-date-time"]])
    with serving(true) as base_url: ...
"""

from __future__ import annotations

import contextlib
import copy
import json
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs

import httpx
import yaml

from service_api_mock import DEMO_ACCOUNTS, MockService, serve_asgi
from service_api_mock._server import MOCK_OPTIONS
from service_api_spec import Operation, Spec, load_spec, unescape
from service_api_speccheck._compare import _label

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
    """One difference: ``true`` edits the served spec, ``checked`` the checked one,
    ``variant`` names what the server changes (:data:`VARIANTS`); the report must have
    each of ``findings`` (kind, where) and the patch exactly ``edits`` (kind, pointer,
    key: the key added, the name made optional, None for a widening or a value set);
    ``difference``: whether it is one (a note is not); ``refutes``: an x-assumed it must
    refute; ``faults``: the mock's faults it needs; ``prism``: whether Stoplight Prism
    serving the true spec shows it too (it answers a GET 200, or 4XX to a request its
    parameters refuse, never 403 or 404). Plants of one ``target`` exclude
    each other.
    """

    name: str
    target: str
    findings: tuple[tuple[str, str], ...]
    edits: tuple[tuple[str, str, str | None], ...]
    true: Callable[[Document], None] = lambda document: None
    checked: Callable[[Document], None] = lambda document: None
    refutes: str | None = None
    faults: dict[str, Any] = field(default_factory=dict)
    variant: str = ""
    difference: bool = True
    prism: bool = True  # Prism serves it: it needs no answer but a 200 or a 400

    @property
    def fixed(self) -> bool:
        """Whether --write fixes it: a difference with edits."""
        return self.difference and bool(self.edits)


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
        ((kind, f"{schema}.{name}"),),
        (("add", pointer, name),),
        true=_add(schema, name, value),
    )


def _widened(schema: str, name: str, value: Document, kind: str) -> Plant:
    pointer = f"#/components/schemas/{schema}/properties/{name}"
    return Plant(
        f"{kind} {name}",
        f"{schema}.{name}",
        ((kind, f"{schema}.{name}"),),
        (("widen", pointer, None),),
        true=_set(schema, name, value),
    )


def _walk(spec: Spec) -> tuple[list[Operation], set[str]]:
    given: set[str] = set()
    found = []
    for op in sorted(spec.lists, key=lambda op: op.path.count("{")):
        if _parameters(op) <= given:
            found.append(op)
            resource = spec.resources[str(op.resource)]
            if resource.id_field is not None:
                given.add(resource.item_parameter or resource.id_field)
    return found, given


def _parameters(op: Operation) -> set[str]:
    return set(re.findall(r"\{(.*?)\}", op.path))


def reached(spec: Spec) -> list[Operation]:
    """The lists of ``spec`` whose pages the check asks for: those whose every path
    parameter a list reached before gives (parents first: a list whose records carry
    their identifier field gives its item parameter, or that field where it has no
    item path); a list under a parent no list gives is not asked."""
    return _walk(spec)[0]


def asked(spec: Spec) -> set[str]:
    """The operations of ``spec`` the check sends a GET to: the lists it reaches, and
    each get of records whose identifier field the spec model knows and whose path
    the lists fill (its own item parameter with a listed identifier, or one of
    nobody's)."""
    lists, given = _walk(spec)
    gets = {
        op.operation_id
        for op in spec.operations
        if op.kind == "get"
        and (resource := spec.resources[str(op.resource)]).id_field is not None
        and _parameters(op) <= given | {resource.item_parameter}
    }
    return gets | {op.operation_id for op in lists}


# The lists of openapi.yaml the check asks pages of, and their page schemas (where
# each is written), read from it.
_SPEC = load_spec(ROOT / "openapi.yaml")
_LISTS = sorted(op.operation_id for op in reached(_SPEC))
# Those that take the pageSize parameter the plant of a maximum edits, and those that
# send the account header.
_SIZED = sorted(
    op.operation_id
    for op in reached(_SPEC)
    if any(
        _SPEC.document.at(p.pointer)[1] == "#/components/parameters/pageSize/schema"
        for p in op.parameters
        if p.pointer
    )
)
_ACCOUNTED = sorted(op.operation_id for op in reached(_SPEC) if op.account_header)
_PAGES = sorted(
    {
        _SPEC.document.at(str(op.success.pointer))[1]
        for op in reached(_SPEC)
        if op.success and op.success.pointer
    }
)
_ERROR_BODY = {
    "type": "object",
    "required": ["error", "code", "traceId"],
    "properties": {
        "error": {"type": "string"},
        "code": {"type": "integer"},
        "traceId": {"type": "string"},
    },
}
#: The account header of the lists, which the "no account check" variant fills in.
ACCOUNT_HEADER = str(_SPEC.lists[0].account_header)

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
        (("never seen", "Shipment.referenceNumber"),),
        (),
        true=_drop(lambda d: schemas(d)["Shipment"]["properties"], "referenceNumber"),
        difference=False,
    ),
    _widened(
        "Shipment", "status", {"type": ["string", "null"], "examples": [None]}, "null"
    ),
    _widened("Device", "model", {"type": "integer"}, "type"),
    _widened("Shipment", "createdAt", {"type": "string"}, "format"),
    Plant(
        "type latitude",
        "Coordinates.latitude",
        (("type", "Coordinates.latitude"),),
        (("widen", "#/components/schemas/Coordinates/properties/latitude", None),),
        true=_set("Coordinates", "latitude", {"type": "string"}),
        refutes="#/components/schemas/Coordinates/properties/latitude",
    ),
    Plant(
        "status 403 of listDevices",
        "listDevices 403",
        (("status", "listDevices 403"),),
        (("add", "#/paths/~1devices/get/responses", "403"),),
        checked=_drop(lambda d: d["paths"]["/devices"]["get"]["responses"], "403"),
        prism=False,
    ),
    Plant(
        "status 404 of getShipment",
        "404",
        (("status", "getShipment 404"),),
        (("add", "#/paths/~1shipments~1{shipmentId}/get/responses", "404"),),
        checked=_drop(
            lambda d: d["paths"]["/shipments/{shipmentId}"]["get"]["responses"], "404"
        ),
        prism=False,
    ),
    Plant(
        "a body where none is declared",
        "404",
        (("content type", "responses/NotFound application/problem+json"),),
        (
            (
                "add",
                "#/components/responses/NotFound/content",
                "application/problem+json",
            ),
        ),
        checked=_drop(lambda d: responses(d)["NotFound"], "content"),
        prism=False,
    ),
    Plant(
        "content type of 403",
        "Forbidden",
        (("content type", "responses/Forbidden application/json"),),
        (("add", "#/components/responses/Forbidden/content", "application/json"),),
        true=lambda d: responses(d)["Forbidden"].update(
            content={
                "application/json": {
                    "schema": {"$ref": "#/components/schemas/ProblemDetails"}
                }
            }
        ),
        prism=False,
    ),
    Plant(
        "error body field",
        "ProblemDetails.detail",
        (("undeclared field", "ProblemDetails.detail"),),
        (("add", "#/components/schemas/ProblemDetails/properties", "detail"),),
        checked=_drop(lambda d: schemas(d)["ProblemDetails"]["properties"], "detail"),
    ),
    Plant(  # two on one answer: two findings, two edits
        "www-authenticate and x-request-id",
        "Unauthorized",
        (
            ("header", "responses/Unauthorized www-authenticate"),
            ("header", "responses/Unauthorized x-request-id"),
        ),
        (
            ("add", "#/components/responses/Unauthorized/headers", "www-authenticate"),
            ("add", "#/components/responses/Unauthorized/headers", "x-request-id"),
        ),
        checked=lambda d: responses(d)["Unauthorized"].pop("headers"),
        variant="a request id on 401",
    ),
    Plant(
        "retry-after of 429",
        "TooManyRequests",
        (("header", "responses/TooManyRequests retry-after"),),
        (("add", "#/components/responses/TooManyRequests/headers", "retry-after"),),
        checked=_drop(
            lambda d: responses(d)["TooManyRequests"]["headers"], "Retry-After"
        ),
        faults={"fault_rate": 0.25, "retry_after": 0.0},
    ),
    Plant(  # what the checked spec requires, the service never sends
        "required referenceNumber never sent",
        "Shipment.referenceNumber",
        (("required", "Shipment.referenceNumber"),),
        (("unrequire", "#/components/schemas/Shipment/required", "referenceNumber"),),
        true=_drop(lambda d: schemas(d)["Shipment"]["properties"], "referenceNumber"),
        checked=lambda d: (
            schemas(d)["Shipment"].setdefault("required", []).append("referenceNumber")
        ),
    ),
    Plant(
        "required pageNumber never sent",
        "pageNumber",
        tuple(("required", _label(f"{page}/properties/pageNumber")) for page in _PAGES),
        tuple(("unrequire", f"{page}/required", "pageNumber") for page in _PAGES),
        variant="no pageNumber",
    ),
    Plant(
        "a pageSize maximum of 20",
        "pageSize",
        tuple(("page size", f"{op} pageSize") for op in _SIZED),
        (
            ("set", "#/components/parameters/pageSize/schema/maximum", None),
            ("set", "#/components/parameters/pageSize/schema/default", None),
        ),
        true=lambda d: d["components"]["parameters"]["pageSize"]["schema"].update(
            maximum=20, default=20
        ),
    ),
    Plant(
        "a probe without the account header answered 200",
        "account",
        tuple(("probe", f"{op} no account header") for op in _ACCOUNTED),
        (),
        variant="no account check",
    ),
    Plant(
        "next missing",
        "next",
        tuple(("paging", f"{op} pages") for op in _LISTS),
        (),
        variant="no next",
    ),
    Plant(
        "a 404 body of its own",
        "404",
        (("body", "responses/NotFound"),),
        (
            ("add", "#/components/schemas", "NotFound"),
            (
                "set",
                "#/components/responses/NotFound/content/application~1problem+json/schema",
                None,
            ),
        ),
        true=lambda d: (
            responses(d)["NotFound"]["content"]["application/problem+json"].update(
                schema={"$ref": "#/components/schemas/ErrorBody"}
            )
            or schemas(d).update(ErrorBody=_ERROR_BODY)
        ),
        prism=False,
    ),
    Plant(
        "a field in a few records",
        "Shipment.remark",
        (("rare field", "Shipment.remark"),),
        (),
        variant="a field in a few records",
        difference=False,
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
    """A patch's edits ``(pointer, action, value)`` as :attr:`Plant.edits` names them:
    ``("add", parent pointer, key)``, ``("unrequire", pointer, name)``, ``("widen",
    pointer, None)``, ``("set", pointer, None)``."""
    named: set[tuple[str, str, str | None]] = set()
    for pointer, action, value in edits:
        parent, _, key = pointer.rpartition("/")
        if action == "add":
            named.add((action, parent, unescape(key)))
        elif action == "unrequire":
            named.add((action, pointer, value))
        else:
            named.add((action, pointer, None))
    return named


def dump(document: Document, path: Path) -> Path:
    """Write ``document`` to ``path`` as YAML, in the order of its keys."""
    path.write_text(yaml.safe_dump(document, sort_keys=False, width=4096), "utf-8")
    return path


#: What a variant changes in the mock's answers (each page of a list: a 200 whose JSON
#: body holds a ``data`` list), or in the requests it gets.
VARIANTS = {
    "no pageNumber": "pages leave out pageNumber",
    "no next": "pages leave out next",
    "a field in a few records": "the first record of page 1 of shipments has a remark",
    "no account check": "a GET without the account header is of the first demo account",
    "a request id on 401": "a 401 carries x-request-id",
}


class Served:
    """One loopback server whose app is the mock of the spec served now (a mock's spec
    is fixed: each spec gets a :class:`MockService` of its own, swapped in), changed by
    the :data:`VARIANTS` named."""

    def __init__(self) -> None:
        self.service: MockService | None = None
        self.variants: frozenset[str] = frozenset()

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        assert self.service is not None
        app = self.service.app
        if scope["type"] != "http" or not self.variants:
            await app(scope, receive, send)
            return
        header = ACCOUNT_HEADER.lower().encode()
        sent = {name for name, _ in scope["headers"]}
        unchecked = "no account check" in self.variants and scope["method"] == "GET"
        if unchecked and header not in sent:
            account = DEMO_ACCOUNTS[0].encode()
            scope = {**scope, "headers": [*scope["headers"], (header, account)]}
        started: dict[str, Any] = {}
        chunks: list[bytes] = []

        async def changed(message: Any) -> None:
            if message["type"] == "http.response.start":
                started.update(message)
                return
            chunks.append(message.get("body", b""))
            if message.get("more_body"):
                return
            body = self.change(scope, started["status"], b"".join(chunks))
            headers = [(k, v) for k, v in started["headers"] if k != b"content-length"]
            headers.append((b"content-length", str(len(body)).encode()))
            if "a request id on 401" in self.variants and started["status"] == 401:
                headers.append((b"x-request-id", b"req-1"))
            await send({**started, "headers": headers})
            await send({"type": "http.response.body", "body": body})

        await app(scope, receive, changed)

    def change(self, scope: Any, status: int, body: bytes) -> bytes:
        """``body`` of a page as the variants change it; any other as it is."""
        try:
            page = json.loads(body) if status == 200 else None
        except ValueError:
            return body
        if not isinstance(page, dict) or not isinstance(page.get("data"), list):
            return body
        if "no pageNumber" in self.variants:
            page.pop("pageNumber", None)
        if "no next" in self.variants:
            page.pop("next", None)
        asked = parse_qs(scope.get("query_string", b"").decode())
        first = asked.get("pageNumber", ["1"])[0] == "1"
        few = "a field in a few records" in self.variants
        if few and first and scope["path"].endswith("/shipments") and page["data"]:
            page["data"][0]["remark"] = "checked by hand"
        return json.dumps(page).encode()

    def serve(
        self,
        spec: Path,
        faults: dict[str, Any] | None = None,
        variants: Sequence[str] = (),
    ) -> MockService:
        """Serve the mock of ``spec`` from now on, with ``faults`` and ``variants``."""
        self.service = MockService(spec=spec)
        self.variants = frozenset(variants)
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
    a body its schema refuses (jsonschema, every keyword and the formats it checks, on
    the schema as the spec model gives it as JSON Schema).

    The requests, sent with plain httpx: the first page of every list the check asks
    pages of (:func:`reached`), a get of a listed record and of none, and each such list
    with no account, an account of nobody and an invalid token; every operation is
    taken from the spec.
    """
    from jsonschema import Draft202012Validator  # type: ignore[import-untyped]

    from service_api_mock import DEMO_CLIENT_ID, DEMO_CLIENT_SECRET
    from service_api_spec import escape, load_spec

    model = load_spec(spec)
    document = model.document
    form = {"client_id": DEMO_CLIENT_ID, "client_secret": DEMO_CLIENT_SECRET}
    form["grant_type"] = "client_credentials"
    found: list[str] = []
    (token_op,) = (op for op in model.operations if op.kind == "token")
    with httpx.Client(base_url=base_url, timeout=30) as http:
        files = {k: (None, v) for k, v in form.items()}
        for _ in range(50):  # past the faults a plant asks for (a 429 now and then)
            token = http.post(token_op.path, files=files)
            if token.status_code == 200:
                break
        headers = {"authorization": f"Bearer {token.json()['access_token']}"}
        mine = {**headers, "x-service-account-id": account}
        asked = [(token_op, token)]
        for op in reached(model):  # the lists the check can see
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
            # As the spec model reads it: a 3.0 ``nullable`` in either dialect, and
            # an answer's schema without its writeOnly properties.
            schema = model.schemas.json_schema(
                f"{pointer}/content/{escape(media)}/schema", "reading"
            )
            validator = Draft202012Validator(
                schema, format_checker=Draft202012Validator.FORMAT_CHECKER
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
