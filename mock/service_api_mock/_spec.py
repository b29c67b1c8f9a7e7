"""What the mock serves, read from ``openapi.yaml`` when it starts.

Every operation of the spec must have one of the shapes the mock knows:

- ``token``: ``POST`` without security, whose form has ``client_id``, ``client_secret`` and
  ``grant_type`` (the ``/authenticate`` of the seed);
- ``list``: ``GET`` on a collection (``/things``) answering the page envelope;
- ``create``: ``POST`` on a collection with a JSON body;
- ``get``, ``replace``, ``update``, ``delete``: ``GET``, ``PUT``, ``PATCH``, ``DELETE`` on an
  item path (``/things/{thingId}``).

Each status the mock may send for an operation (its success, 401 and 403 from its security,
400 for bad input, 404 for an unknown id, 429 and 503 from the faults) must be declared
with a body the mock can build. Anything else is a :class:`SpecError` naming the operation
and the reason, raised as the spec loads: a spec the mock cannot serve never becomes a mock
that answers 500.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from http import HTTPStatus
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import attrs
import yaml
from jsonschema import Draft202012Validator  # type: ignore[import-untyped]  # no stubs kept
from jsonschema.protocols import Validator  # type: ignore[import-untyped]
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012

from ._data import REALISTIC, sample_record

__all__ = [
    "DEFAULT_SPEC",
    "ApiSpec",
    "Operation",
    "SpecError",
    "load_spec",
    "problem_body",
]

_HERE = Path(__file__).resolve().parent
# A wheel carries a copy of the spec inside the package; a checkout has the project's own.
DEFAULT_SPEC = next(
    (
        p
        for p in (_HERE / "openapi.yaml", _HERE.parents[1] / "openapi.yaml")
        if p.is_file()
    ),
    _HERE / "openapi.yaml",
)
_URI = "urn:service-api-mock:spec"
_METHODS = ("get", "put", "post", "delete", "patch", "head", "options", "trace")
_ITEM_KINDS = {"GET": "get", "PUT": "replace", "PATCH": "update", "DELETE": "delete"}
_PAGE_PARAMETERS = {"pageNumber", "pageSize"}
_SCALARS = {"string", "integer", "number", "boolean"}
_SEGMENT = re.compile(r"[A-Za-z0-9._~-]+")
_PARAMETER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")
_OAUTH_SAMPLE = {"error": "invalid_request", "error_description": "sample"}
_TOKEN_SAMPLE = {"access_token": "sample", "token_type": "Bearer", "expires_in": "3600"}
# Why each error status can be sent, to say so when a spec does not declare it.
_REASONS = {
    400: "for bad input",
    401: "for a missing or expired token",
    404: "for an unknown id",
}
_REASONS |= {
    403: "for another's account",
    429: "for the quota and faults",
    503: "for faults",
}


class SpecError(ValueError):
    """The spec has an operation the mock cannot serve; the message names it and says why.

    Example::

        try:
            load_spec("openapi.yaml")
        except SpecError as exc:
            print(exc)  # listAlerts: declares no 403 response, which the mock answers ...
    """


def problem_body(status: int, detail: str) -> dict[str, Any]:
    """The RFC 9457 problem details ASP.NET Core answers 400, 403 and 404 with.

    Example::

        problem_body(404, "No shipment has this identifier.")  # title "Not Found"
    """
    kind = f"https://tools.ietf.org/html/rfc9110#section-15.5.{status - 399}"
    return {
        "type": kind,
        "title": HTTPStatus(status).phrase,
        "status": status,
        "detail": detail,
    }


def is_json(media: str) -> bool:
    """Whether the media type ``media`` is JSON: ``application/json`` or a ``+json`` type.

    Example::

        is_json("application/problem+json")  # True
    """
    return media == "application/json" or media.endswith("+json")


@attrs.frozen
class Parameter:
    """A query parameter, or the item path's identifier, with its schema.

    Example::

        Parameter("pageSize", False, ("integer",), validator)
    """

    name: str
    required: bool
    types: tuple[str, ...]
    validator: Validator = attrs.field(repr=False, eq=False)


@attrs.frozen
class RecordType:
    """The records of one collection path: their schema and their identifier field.

    Example::

        RecordType("shipments", "#/components/...", "shipmentId", ("string",), True)
    """

    name: str
    pointer: str
    id_field: str | None
    id_types: tuple[str, ...]
    realistic: bool


@attrs.frozen
class Operation:
    """One operation of the spec and how the mock answers it. ``answers`` maps each status
    the mock may send to the media type of its body (``None``: no body).

    Example::

        spec.operations[0].operation_id  # "authenticate"
    """

    operation_id: str
    method: str
    path: str
    kind: str
    resource: str
    bearer: bool
    account_header: str | None
    success: int
    answers: Mapping[int, str | None]
    parameters: tuple[Parameter, ...] = ()
    item_parameter: Parameter | None = None
    body: Validator | None = attrs.field(default=None, repr=False)
    body_required: bool = False
    filters: tuple[str, ...] = ()


@attrs.frozen
class ApiSpec:
    """A spec the mock can serve: its operations, record types and routes.

    Example::

        spec = load_spec()
        spec.match("/shipments/abc")  # ({"GET": <getShipment>}, "abc")
    """

    path: Path
    document: SpecDocument = attrs.field(repr=False)
    operations: tuple[Operation, ...]
    resources: Mapping[str, RecordType]
    routes: tuple[tuple[re.Pattern[str], dict[str, Operation]], ...] = attrs.field(
        repr=False
    )

    def match(self, path: str) -> tuple[dict[str, Operation], str | None] | None:
        """The operations of the path template ``path`` (percent-encoded, as sent) fits, by
        method, and its identifier, decoded: an encoded ``/`` stays in the identifier."""
        for pattern, by_method in self.routes:
            found = pattern.fullmatch(path)
            if found is not None:
                return by_method, unquote(found.group(1)) if pattern.groups else None
        return None


def _escape(key: str) -> str:
    return key.replace("~", "~0").replace("/", "~1")


def _pattern(segment: str) -> str:
    return "([^/]*)" if _PARAMETER.fullmatch(segment) else re.escape(segment)


def _json_type(content: Mapping[str, Any]) -> str | None:
    return next((m for m in content if is_json(m)), None)


class SpecDocument:
    """The spec's document: nodes by JSON pointer, local ``$ref``s followed; validators.

    Example::

        SpecDocument(document).at("#/components/schemas/Shipment")  # (schema, its pointer)
    """

    def __init__(self, document: Mapping[str, Any]) -> None:
        self.document = document
        resource = Resource.from_contents(
            dict(document), default_specification=DRAFT202012
        )
        self.registry: Registry[Any] = Registry().with_resource(_URI, resource)

    def at(self, pointer: str, seen: int = 0) -> tuple[Any, str]:
        """The node at ``pointer`` and its own pointer, after the ``$ref``s on the way."""
        node: Any = self.document
        where = "#"
        for part in pointer.removeprefix("#").split("/")[1:]:
            key: Any = part.replace("~1", "/").replace("~0", "~")
            if isinstance(node, list) and key.isdigit():
                key = int(key)
            if key not in (node if isinstance(node, Mapping) else range(len(node))):
                raise SpecError(f"{pointer}: points nowhere")
            node, where = self.resolve(node[key], f"{where}/{part}", seen)
        return node, where

    def resolve(self, node: Any, where: str = "#", seen: int = 0) -> tuple[Any, str]:
        """``node`` found at ``where``, or what its ``$ref`` points to, and its pointer."""
        if isinstance(node, Mapping) and isinstance(node.get("$ref"), str):
            if not node["$ref"].startswith("#/") or seen > 32:
                raise SpecError(f"{where}: only local $refs that end are served")
            return self.at(node["$ref"], seen + 1)
        return node, where

    def validator(self, pointer: str) -> Validator:
        return Draft202012Validator(
            {"$ref": f"{_URI}{pointer}"},
            registry=self.registry,
            format_checker=Draft202012Validator.FORMAT_CHECKER,
        )

    def types(self, pointer: str) -> tuple[str, ...]:
        """The JSON types the schema at ``pointer`` declares; a string if it declares none."""
        declared = self.at(pointer)[0].get("type", "string")
        return tuple([declared] if isinstance(declared, str) else declared)

    def schema_of(self, pointer: str) -> tuple[str | None, str | None]:
        """The JSON media type of the response or body at ``pointer``, and its schema."""
        content: Mapping[str, Any] = self.at(pointer)[0].get("content") or {}
        media = _json_type(content)
        if media is None or "schema" not in content[media]:
            return media, None
        return media, self.at(f"{pointer}/content/{_escape(media)}/schema")[1]


class _Reading:
    """One operation as the spec declares it, read into an :class:`Operation`."""

    def __init__(self, doc: SpecDocument, path: str, method: str) -> None:
        self.doc, self.path, self.method = doc, path, method.upper()
        self.pointer = f"#/paths/{_escape(path)}/{method}"
        self.op: Mapping[str, Any] = doc.at(self.pointer)[0]
        self.id = str(self.op.get("operationId") or f"{self.method} {path}")
        segments = path.strip("/").split("/")
        last = _PARAMETER.fullmatch(segments[-1])
        literal = segments[:-1] if last else segments
        if not all(_SEGMENT.fullmatch(s) for s in literal):
            raise self.error(f"path {path} is neither /things nor /things/{{thingId}}")
        self.collection = "/".join(literal)
        self.item = last.group(1) if last else None
        codes = sorted(str(c) for c in self.op.get("responses") or {})
        success = [c for c in codes if c.isdigit() and c.startswith("2")]
        if not success:
            raise self.error("declares no 2xx status to answer with")
        self.success = int(success[0])
        self.media, self.schema = doc.schema_of(
            f"{self.pointer}/responses/{success[0]}"
        )
        body = (
            doc.at(f"{self.pointer}/requestBody")[0] if "requestBody" in self.op else {}
        )
        self.body = doc.schema_of(f"{self.pointer}/requestBody")[1] if body else None
        self.body_required = bool(body.get("required"))

    def error(self, reason: str) -> SpecError:
        return SpecError(f"{self.id}: {reason}")

    def media_for(self, status: int, sample: object) -> str | None:
        """The media type the mock answers ``status`` with; ``sample`` must fit its schema."""
        responses = self.op.get("responses") or {}
        keys = [
            k for k in (str(status), f"{status // 100}XX", "default") if k in responses
        ]
        if not keys:
            reason = f"declares no {status} response, which the mock answers {_REASONS[status]}"
            raise self.error(reason)
        response, pointer = self.doc.at(f"{self.pointer}/responses/{keys[0]}")
        content: Mapping[str, Any] = response.get("content") or {}
        media = _json_type(content) or next(
            (m for m in ("text/html", "text/plain") if m in content), None
        )
        if content and media is None:
            raise self.error(
                f"answers {status} only as {', '.join(content)}, not JSON or text"
            )
        if media is not None and "schema" in content[media]:
            body = sample if is_json(media) else "text"
            self.check(
                f"{pointer}/content/{_escape(media)}/schema", body, f"its {status} body"
            )
        return media

    def check(self, pointer: str, value: object, what: str) -> None:
        error = next(iter(self.doc.validator(pointer).iter_errors(value)), None)
        if error is not None:
            where = "/".join(str(p) for p in error.absolute_path) or "(root)"
            raise self.error(
                f"{what} does not fit its schema at {where}: {error.message}"
            )

    def parameters(self) -> dict[tuple[str, str], Parameter]:
        """The path's and the operation's parameters by (name, place), the latter winning."""
        found: dict[tuple[str, str], Parameter] = {}
        for owner in (f"#/paths/{_escape(self.path)}", self.pointer):
            for index, _ in enumerate(self.doc.at(owner)[0].get("parameters") or ()):
                param, where = self.doc.at(f"{owner}/parameters/{index}")
                name, place = str(param.get("name")), str(param.get("in"))
                types = (
                    self.doc.types(f"{where}/schema")
                    if "schema" in param
                    else ("array",)
                )
                if (
                    place not in ("query", "path")
                    or not set(types) - {"null"} <= _SCALARS
                ):
                    raise self.error(
                        f"parameter {name} is not a scalar in the query or path"
                    )
                schema = self.doc.validator(f"{where}/schema")
                found[(name, place)] = Parameter(
                    name, bool(param.get("required")), types, schema
                )
        return found

    def security(self) -> tuple[bool, str | None]:
        document = self.doc.document
        requirements = self.op.get("security", document.get("security")) or [{}]
        schemes = document.get("components", {}).get("securitySchemes", {})
        bearer, header = False, None
        for name in requirements[0]:
            scheme = schemes.get(name) or {}
            if (
                scheme.get("type") == "http"
                and str(scheme.get("scheme")).lower() == "bearer"
            ):
                bearer = True
            elif scheme.get("type") == "apiKey" and scheme.get("in") == "header":
                header = str(scheme.get("name")).lower()
            else:
                raise self.error(
                    f"security scheme {name} is neither bearer nor a header key"
                )
        if header is not None and not bearer:
            raise self.error("an account header without a bearer token is not served")
        return bearer, header

    def is_token(self) -> bool:
        try:
            form = self.doc.at(
                f"{self.pointer}/requestBody/content/multipart~1form-data/schema"
            )
        except SpecError:
            return False
        fields = set(form[0].get("properties") or {})
        return self.method == "POST" and fields >= {
            "client_id",
            "client_secret",
            "grant_type",
        }


def _record_types(doc: SpecDocument, readings: list[_Reading]) -> dict[str, RecordType]:
    # Where the records of each collection are described: the list's items, else the
    # record a get answers, else a create's body.
    found: dict[str, str] = {}
    for reading in sorted(
        readings, key=lambda r: (r.item is not None, r.method != "GET")
    ):
        if (
            reading.method == "GET"
            and reading.item is None
            and reading.schema is not None
        ):
            envelope, where = doc.at(reading.schema)
            if "items" in (envelope.get("properties") or {}).get("data", {}):
                found.setdefault(
                    reading.collection, doc.at(f"{where}/properties/data/items")[1]
                )
        elif reading.schema or reading.body:
            found.setdefault(reading.collection, str(reading.schema or reading.body))
    items = {r.collection: r.item for r in readings if r.item}
    out: dict[str, RecordType] = {}
    for name, pointer in found.items():
        names = list(doc.at(pointer)[0].get("properties") or {})
        ids = [n for n in names if n == items.get(name)] or [
            n for n in names if n.endswith("Id")
        ]
        id_field = ids[0] if len(ids) == 1 else None
        id_types = (
            doc.types(f"{pointer}/properties/{_escape(id_field)}") if id_field else ()
        )
        # The richer records of shipments and devices, as long as the spec's schema takes them.
        rich = REALISTIC[name](0, "sample", 1)[0] if name in REALISTIC else None
        realistic = (
            rich is not None
            and id_field in rich
            and doc.validator(pointer).is_valid(rich)
        )
        out[name] = RecordType(name, pointer, id_field, id_types, realistic)
    return out


def _operation(r: _Reading, resources: Mapping[str, RecordType]) -> Operation:
    bearer, header = r.security()
    params = r.parameters()
    query = tuple(p for (_, place), p in params.items() if place == "query")
    item = next((p for (_, place), p in params.items() if place == "path"), None)
    if not bearer and r.is_token():
        if r.schema is None:
            raise r.error("answers a token without a JSON schema")
        r.check(r.schema, _TOKEN_SAMPLE, "the token answer")
        answers = {s: r.media_for(s, _OAUTH_SAMPLE) for s in (400, 401, 429, 503)}
        return Operation(
            r.id, r.method, r.path, "token", "", False, None, r.success, answers
        )
    resource = resources.get(r.collection)
    if resource is None:
        raise r.error(f"no schema describes the records of /{r.collection}")
    statuses = (
        {429, 503} | ({401} if bearer else set()) | ({400, 403} if header else set())
    )
    statuses |= {400} if query or item or r.body else set()
    try:
        sample = sample_record(r.doc, resource)
    except ValueError as exc:
        raise r.error(f"cannot build a record of {resource.name}: {exc}") from None
    r.check(resource.pointer, sample, f"a built record of {resource.name}")
    if resource.id_field is None and (r.item is not None or r.method == "POST"):
        raise r.error(
            f"the records of /{r.collection} have no one ...Id field to find them by"
        )
    if r.item is None and r.method == "GET":
        kind = "list"
        if r.schema is None or not {p.name for p in query} >= _PAGE_PARAMETERS:
            raise r.error(
                "a list must take pageNumber and pageSize and answer the page envelope"
            )
        page = {"totalRecords": 1, "pageNumber": 1, "pageSize": 1, "data": [sample]}
        r.check(r.schema, page, "the page envelope")
    elif r.item is None and r.method == "POST" and r.body is not None:
        kind = "create"
    elif r.item is not None and r.method in _ITEM_KINDS:
        kind = _ITEM_KINDS[r.method]
        statuses.add(404)
        if kind in ("replace", "update") and r.body is None:
            raise r.error(f"a {r.method} needs a JSON request body")
        if kind == "get" and r.schema is None:
            raise r.error(
                f"answers {r.success} without a JSON schema the mock can build"
            )
        if kind == "get" and r.schema is not None:
            r.check(r.schema, sample, "a record")
    else:
        raise r.error(f"{r.method} {r.path} is none of the shapes the mock serves")
    answers = {s: r.media_for(s, problem_body(s, "sample")) for s in sorted(statuses)}
    fields = r.doc.at(resource.pointer)[0].get("properties") or {}
    filters = tuple(
        p.name for p in query if p.name not in _PAGE_PARAMETERS and p.name in fields
    )
    body = None if r.body is None else r.doc.validator(r.body)
    return Operation(
        r.id,
        r.method,
        r.path,
        kind,
        resource.name,
        bearer,
        header,
        r.success,
        {**answers, r.success: r.media},
        query,
        item,
        body,
        r.body_required,
        filters,
    )


@functools.lru_cache(maxsize=16)
def _load(path: Path, _mtime_ns: int) -> ApiSpec:
    try:
        loader = getattr(
            yaml, "CSafeLoader", yaml.SafeLoader
        )  # libyaml's when built with it
        document = yaml.load(path.read_text(encoding="utf-8"), Loader=loader)  # noqa: S506
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise SpecError(f"{path}: cannot be read as YAML: {exc}") from None
    if not isinstance(document, dict) or not isinstance(document.get("paths"), dict):
        raise SpecError(f"{path}: not an OpenAPI document with paths")
    doc = SpecDocument(document)
    paths = document["paths"]
    readings = [
        _Reading(doc, str(p), m) for p in paths for m in _METHODS if m in paths[p]
    ]
    resources = _record_types(doc, readings)
    operations = tuple(_operation(r, resources) for r in readings)
    routes: dict[str, dict[str, Operation]] = {}
    for operation in operations:
        routes.setdefault(operation.path, {})[operation.method] = operation
    # Literal paths first, so /things/search is not taken for /things/{thingId}.
    ordered = sorted(routes.items(), key=lambda kv: ("{" in kv[0], kv[0]))
    compiled = tuple(
        (re.compile("/".join(_pattern(s) for s in p.split("/"))), m) for p, m in ordered
    )
    return ApiSpec(path, doc, operations, resources, compiled)


def load_spec(path: Path | str | None = None) -> ApiSpec:
    """Read and check the spec at ``path`` (default: the project's ``openapi.yaml``).

    Loading the same unchanged file again is free. Raises :class:`SpecError` for a spec
    the mock cannot serve.

    Example::

        spec = load_spec("openapi.yaml")
        [op.operation_id for op in spec.operations]
    """
    resolved = Path(path if path is not None else DEFAULT_SPEC).resolve()
    try:
        mtime = resolved.stat().st_mtime_ns
    except OSError as exc:
        raise SpecError(f"{resolved}: cannot be read: {exc.strerror}") from None
    return _load(resolved, mtime)
