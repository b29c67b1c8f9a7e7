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
from pathlib import Path
from typing import Any

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
    "Parameter",
    "RecordType",
    "SpecError",
    "load_spec",
    "problem_body",
]

_HERE = Path(__file__).resolve().parent
# A wheel carries a copy of the spec inside the package; a checkout has the project's own.
DEFAULT_SPEC = next(
    (p for p in (_HERE / "openapi.yaml", _HERE.parents[1] / "openapi.yaml") if p.is_file()),
    _HERE / "openapi.yaml",
)
_URI = "urn:service-api-mock:spec"
_METHODS = ("get", "put", "post", "delete", "patch", "head", "options", "trace")
_ITEM_KINDS = {"get": "get", "put": "replace", "patch": "update", "delete": "delete"}
_PAGE_PARAMETERS = ("pageNumber", "pageSize")
_TOKEN_FIELDS = {"client_id", "client_secret", "grant_type"}
_SCALARS = {"string", "integer", "number", "boolean"}
_SEGMENT = re.compile(r"[A-Za-z0-9._~-]+")
_PARAMETER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")


class SpecError(ValueError):
    """The spec has an operation the mock cannot serve; the message names it and says why.

    Example::

        try:
            load_spec(Path("openapi.yaml"))
        except SpecError as exc:
            print(exc)  # listAlerts: declares no 403 response, which ...
    """


def problem_body(status: int, title: str, detail: str) -> dict[str, Any]:
    """The RFC 9457 problem details ASP.NET Core answers 400, 403 and 404 with.

    Example::

        problem_body(404, "Not Found", "No shipment has this identifier.")
    """
    return {
        "type": f"https://tools.ietf.org/html/rfc9110#section-15.5.{status - 399}",
        "title": title,
        "status": status,
        "detail": detail,
    }


_OAUTH_SAMPLE = {"error": "invalid_request", "error_description": "sample"}
_TOKEN_SAMPLE = {"access_token": "sample", "token_type": "Bearer", "expires_in": "3600"}
# Why each error status can be sent, to say so when a spec does not declare it.
_REASONS = {
    400: "for bad input or an omitted account header",
    401: "for a missing, unknown or expired token",
    403: "for an account the credentials do not work for",
    404: "for an identifier no record has",
    429: "when the quota or an injected fault refuses a request",
    503: "when an injected fault refuses a request",
}


def _escape(key: str) -> str:
    return key.replace("~", "~0").replace("/", "~1")


@attrs.frozen
class Parameter:
    """A query or header parameter, or the path's one identifier, with its schema.

    Example::

        Parameter("pageSize", "query", False, ("integer",), validator)
    """

    name: str
    location: str
    required: bool
    types: tuple[str, ...]
    validator: Validator = attrs.field(repr=False)


@attrs.frozen
class RecordType:
    """The records of one collection path: their schema and their identifier field.

    Example::

        RecordType("shipments", "#/components/...", "shipmentId", ("string",), True, validator)
    """

    name: str
    pointer: str
    id_field: str | None
    id_types: tuple[str, ...]
    realistic: bool
    validator: Validator = attrs.field(repr=False)


@attrs.frozen
class Operation:
    """One operation of the spec and how the mock answers it.

    ``answers`` maps each status the mock may send to the media type of its body
    (``None``: no body).

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
    answer_schema: Validator | None = attrs.field(default=None, repr=False)
    filters: tuple[str, ...] = ()


@attrs.frozen
class ApiSpec:
    """A spec the mock can serve: its operations, record types and routes.

    Example::

        spec = load_spec(DEFAULT_SPEC)
        spec.match("/shipments/abc")  # ({"GET": <getShipment>}, "abc")
    """

    path: Path
    document: Mapping[str, Any] = attrs.field(repr=False)
    operations: tuple[Operation, ...]
    resources: Mapping[str, RecordType]
    _routes: tuple[tuple[re.Pattern[str], dict[str, Operation]], ...] = attrs.field(repr=False)

    def match(self, path: str) -> tuple[dict[str, Operation], str | None] | None:
        """The operations of the path template ``path`` fits (by method), and its identifier."""
        for pattern, by_method in self._routes:
            found = pattern.fullmatch(path)
            if found is not None:
                return by_method, found.group(1) if pattern.groups else None
        return None


class _Reader:
    """Walks the document, following local ``$ref``s, keeping JSON pointers for validators."""

    def __init__(self, document: Mapping[str, Any]) -> None:
        self.document = document
        self.registry: Registry[Any] = Registry().with_resource(
            _URI, Resource.from_contents(dict(document), default_specification=DRAFT202012)
        )

    def deref(self, node: Any, pointer: str) -> tuple[Any, str]:
        for _ in range(32):
            if not (isinstance(node, Mapping) and isinstance(node.get("$ref"), str)):
                return node, pointer
            ref: str = node["$ref"]
            if not ref.startswith("#/"):
                raise SpecError(f"{pointer}: only local $refs are served, not {ref!r}")
            node, pointer = self.document, "#"
            for part in ref[2:].split("/"):
                node, pointer = self.deref(node, pointer)
                key = part.replace("~1", "/").replace("~0", "~")
                if not isinstance(node, Mapping) or key not in node:
                    raise SpecError(f"{pointer}: $ref {ref!r} points nowhere")
                node, pointer = node[key], f"{pointer}/{part}"
        raise SpecError(f"{pointer}: $refs go round in circles")

    def validator(self, pointer: str) -> Validator:
        return Draft202012Validator(
            {"$ref": f"{_URI}{pointer}"},
            registry=self.registry,
            format_checker=Draft202012Validator.FORMAT_CHECKER,
        )

    def types(self, schema: Any, pointer: str) -> tuple[str, ...]:
        schema, _ = self.deref(schema, pointer)
        declared = schema.get("type", ()) if isinstance(schema, Mapping) else ()
        return tuple(t for t in ([declared] if isinstance(declared, str) else declared))


def _json_type(content: Mapping[str, Any]) -> str | None:
    return next((m for m in content if m == "application/json" or m.endswith("+json")), None)


class _OperationReader:
    def __init__(self, reader: _Reader, path: str, method: str, op: Mapping[str, Any]) -> None:
        self.reader = reader
        self.path = path
        self.method = method.upper()
        self.op = op
        self.id = str(op.get("operationId") or f"{self.method} {path}")
        self.pointer = f"#/paths/{_escape(path)}/{method}"

    def error(self, reason: str) -> SpecError:
        return SpecError(f"{self.id}: {reason}")

    def responses(self) -> dict[str, tuple[Any, str]]:
        responses = self.op.get("responses") or {}
        return {
            str(code): self.reader.deref(node, f"{self.pointer}/responses/{_escape(str(code))}")
            for code, node in responses.items()
        }

    def declared(self, status: int) -> tuple[Any, str] | None:
        responses = self.responses()
        for key in (str(status), f"{status // 100}XX", "default"):
            if key in responses:
                return responses[key]
        return None

    def media(self, status: int, sample: object) -> str | None:
        """The media type the mock answers ``status`` with; ``sample`` must fit its schema."""
        declared = self.declared(status)
        if declared is None:
            raise self.error(
                f"declares no {status} response, which the mock answers {_REASONS[status]}"
            )
        response, pointer = declared
        content: Mapping[str, Any] = response.get("content") or {}
        if not content:
            return None
        media = _json_type(content) or next(
            (m for m in ("text/html", "text/plain") if m in content), None
        )
        if media is None:
            raise self.error(f"answers {status} only as {', '.join(content)}, not JSON or text")
        body = sample if _json_type({media: 0}) else "text"
        if "schema" in content[media]:
            found = self.reader.validator(f"{pointer}/content/{_escape(media)}/schema")
            error = next(iter(found.iter_errors(body)), None)
            if error is not None:
                raise self.error(
                    f"its {status} body ({media}) cannot take what the mock sends: {error.message}"
                )
        return media

    def success(self) -> tuple[int, str | None, str | None]:
        """The success status, its media type and its schema's pointer (``None``: no body)."""
        codes = sorted(int(c) for c in self.responses() if c.isdigit() and c.startswith("2"))
        if not codes:
            raise self.error("declares no 2xx status to answer with")
        response, pointer = self.responses()[str(codes[0])]
        content: Mapping[str, Any] = response.get("content") or {}
        media = _json_type(content)
        if media is None or "schema" not in content[media]:
            return codes[0], None, None
        return codes[0], media, f"{pointer}/content/{_escape(media)}/schema"

    def parameters(self, path_item: Mapping[str, Any]) -> list[tuple[Mapping[str, Any], str]]:
        found: dict[tuple[str, str], tuple[Mapping[str, Any], str]] = {}
        base = f"#/paths/{_escape(self.path)}"
        for owner, pointer in ((path_item, base), (self.op, self.pointer)):
            for index, node in enumerate(owner.get("parameters") or ()):
                param, where = self.reader.deref(node, f"{pointer}/parameters/{index}")
                found[(param.get("name"), param.get("in"))] = (param, where)
        return list(found.values())

    def parameter(self, param: Mapping[str, Any], where: str) -> Parameter:
        name, location = str(param.get("name")), str(param.get("in"))
        if "schema" not in param:
            raise self.error(f"parameter {name} has no schema")
        types = self.reader.types(param["schema"], f"{where}/schema")
        if not set(types) - {"null"} or not set(types) - {"null"} <= _SCALARS:
            raise self.error(f"parameter {name} is not a string, integer, number or boolean")
        if location not in ("query", "header", "path"):
            raise self.error(f"parameter {name} is in {location}; query, header, path are served")
        validator = self.reader.validator(f"{where}/schema")
        return Parameter(name, location, bool(param.get("required")), types, validator)

    def security(self, document: Mapping[str, Any]) -> tuple[bool, str | None]:
        requirements = self.op.get("security", document.get("security")) or []
        schemes = document.get("components", {}).get("securitySchemes", {})
        bearer, header = False, None
        for name in requirements[0] if requirements else {}:
            scheme = schemes.get(name) or {}
            if scheme.get("type") == "http" and str(scheme.get("scheme")).lower() == "bearer":
                bearer = True
            elif scheme.get("type") == "apiKey" and scheme.get("in") == "header":
                header = str(scheme.get("name")).lower()
            else:
                raise self.error(f"security scheme {name} is neither bearer nor a header key")
        if header is not None and not bearer:
            raise self.error("an account header without a bearer token is not served")
        return bearer, header

    def body(self) -> tuple[str | None, Mapping[str, Any], bool]:
        """The request body: its schema's pointer, the media types, whether it is required."""
        node = self.op.get("requestBody")
        if node is None:
            return None, {}, False
        body, pointer = self.reader.deref(node, f"{self.pointer}/requestBody")
        content: Mapping[str, Any] = body.get("content") or {}
        media = _json_type(content)
        schema = None if media is None else f"{pointer}/content/{_escape(media)}/schema"
        return schema, content, bool(body.get("required"))


def _token_form(op: _OperationReader, content: Mapping[str, Any]) -> bool:
    for media in ("multipart/form-data", "application/x-www-form-urlencoded"):
        if media in content and "schema" in content[media]:
            schema, _ = op.reader.deref(content[media]["schema"], op.pointer)
            return set(schema.get("properties") or {}) >= _TOKEN_FIELDS
    return False


def _route(path: str, op: _OperationReader) -> tuple[str, str | None]:
    """The collection path and the item path's parameter name (``None``: a collection)."""
    segments = path.strip("/").split("/")
    last = _PARAMETER.fullmatch(segments[-1])
    literal = segments[:-1] if last else segments
    if not path.startswith("/") or not all(_SEGMENT.fullmatch(s) for s in literal):
        raise op.error(f"path {path} is neither /things nor /things/{{thingId}}")
    return "/" + "/".join(literal), (last.group(1) if last else None)


def _pattern(segment: str) -> str:
    return "([^/]+)" if _PARAMETER.fullmatch(segment) else re.escape(segment)


def _id_field(schema: Mapping[str, Any], preferred: str | None) -> str | None:
    names = list(schema.get("properties") or {})
    if preferred in names:
        return preferred
    ids = [n for n in names if n.endswith("Id") or n == "id"]
    return ids[0] if len(ids) == 1 else None


@functools.lru_cache(maxsize=16)
def _load(path: Path, _mtime_ns: int) -> ApiSpec:
    try:
        document = yaml.load(path.read_text(encoding="utf-8"), Loader=yaml.CSafeLoader)
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise SpecError(f"{path}: cannot be read as YAML: {exc}") from None
    if not isinstance(document, dict) or not isinstance(document.get("paths"), dict):
        raise SpecError(f"{path}: not an OpenAPI document with paths")
    reader = _Reader(document)
    readers: list[tuple[_OperationReader, str, str | None]] = []
    records: dict[str, tuple[str, str | None]] = {}  # resource -> item schema pointer, id param
    for path_key, path_item in document["paths"].items():
        for method in _METHODS:
            if method in path_item:
                op = _OperationReader(reader, str(path_key), method, path_item[method])
                collection, item_param = _route(op.path, op)
                readers.append((op, collection, item_param))
    # First pass: where each collection's records are described (list, get, then bodies).
    for op, collection, item_param in readers:
        _, _, schema = op.success()
        if op.method == "GET" and item_param is None and schema is not None:
            envelope, where = reader.deref({"$ref": schema}, schema)
            items = (envelope.get("properties") or {}).get("data", {}).get("items")
            if items is not None:
                records[collection] = (f"{where}/properties/data/items", item_param)
    for op, collection, item_param in readers:
        _, _, schema = op.success()
        body, _, _ = op.body()
        if item_param is not None and collection in records:
            records[collection] = (records[collection][0], records[collection][1] or item_param)
        elif op.method in ("GET", "POST", "PUT") and (schema or body):
            records.setdefault(collection, (str(schema or body), item_param))
    resources: dict[str, RecordType] = {}
    for collection, (pointer, id_param) in records.items():
        schema, _ = reader.deref({"$ref": pointer}, pointer)
        name = collection.strip("/")
        id_field = _id_field(schema, id_param)
        id_types = reader.types(schema["properties"][id_field], pointer) if id_field else ()
        validator = reader.validator(pointer)
        # The richer records of shipments and devices, as long as the spec's schema takes them.
        rich = REALISTIC[name](0, "sample", 1)[0] if name in REALISTIC else None
        realistic = rich is not None and id_field in rich and validator.is_valid(rich)
        resources[name] = RecordType(name, pointer, id_field, id_types, realistic, validator)
    operations = tuple(
        _operation(op, collection, item_param, resources, document)
        for op, collection, item_param in readers
    )
    routes: dict[str, dict[str, Operation]] = {}
    for operation in operations:
        routes.setdefault(operation.path, {})[operation.method] = operation
    # Literal paths first, so /things/search is not taken for /things/{thingId}.
    ordered = sorted(routes.items(), key=lambda kv: ("{" in kv[0], kv[0]))
    compiled = tuple(
        (re.compile("/".join(_pattern(s) for s in p.split("/"))), m) for p, m in ordered
    )
    return ApiSpec(path, document, operations, resources, compiled)


def _operation(
    op: _OperationReader,
    collection: str,
    item_param: str | None,
    resources: Mapping[str, RecordType],
    document: Mapping[str, Any],
) -> Operation:
    bearer, header = op.security(document)
    success, media, schema = op.success()
    body, content, body_required = op.body()
    resource = resources.get(collection.strip("/"))
    params = [op.parameter(p, w) for p, w in op.parameters(op.reader.document["paths"][op.path])]
    item = next((p for p in params if p.location == "path"), None)
    others = tuple(p for p in params if p.location != "path")
    statuses = {429, 503} | ({401} if bearer else set()) | ({400, 403} if header else set())
    if others or body is not None:
        statuses.add(400)
    if op.method == "POST" and not bearer and _token_form(op, content):
        if media is None or schema is None:
            raise op.error("answers a token without a JSON schema")
        _check(op, op.reader.validator(schema), _TOKEN_SAMPLE, "the token answer")
        answers = {s: op.media(s, _OAUTH_SAMPLE) for s in (400, 401, 429, 503)}
        return Operation(op.id, op.method, op.path, "token", "", False, None, success, answers)
    if resource is None:
        raise op.error(f"no schema describes the records of {collection}")
    if item_param is None and op.method == "GET":
        kind = "list"
        where = op.reader.deref({"$ref": schema}, str(schema))[1] if schema else ""
        if schema is None or resource.pointer != f"{where}/properties/data/items":
            raise op.error("a GET on a collection must answer the page envelope (data, ...)")
        names = {p.name for p in others}
        if not set(_PAGE_PARAMETERS) <= names:
            raise op.error("a list must take the pageNumber and pageSize query parameters")
        envelope = {"totalRecords": 1, "pageNumber": 1, "pageSize": 1}
        sample = {**envelope, "data": [_sample(op, resource, document)]}
        _check(op, op.reader.validator(schema), sample, "the page envelope")
    elif item_param is None and op.method == "POST" and body is not None:
        kind = "create"
    elif item_param is not None and op.method.lower() in _ITEM_KINDS:
        kind = _ITEM_KINDS[op.method.lower()]
        statuses.add(404)
        if resource.id_field is None:
            raise op.error(f"the records of {collection} have no one identifier field")
        if kind in ("replace", "update") and body is None:
            raise op.error(f"a {op.method} needs a JSON request body")
    else:
        raise op.error(f"{op.method} {op.path} is none of the shapes the mock serves")
    if kind in ("list", "get") and schema is None:
        raise op.error(f"answers {success} without a JSON schema the mock can build")
    if kind == "get" and schema is not None:
        sample = _sample(op, resource, document)
        _check(op, op.reader.validator(schema), sample, "a record")
    answers = {s: op.media(s, problem_body(s, "Sample", "sample")) for s in sorted(statuses)}
    answers[success] = media
    filters = tuple(
        p.name
        for p in others
        if p.location == "query"
        and p.name not in _PAGE_PARAMETERS
        and p.name in _properties(op, resource)
    )
    return Operation(
        op.id,
        op.method,
        op.path,
        kind,
        resource.name,
        bearer,
        header,
        success,
        answers,
        others,
        item,
        None if body is None else op.reader.validator(body),
        body_required,
        None if schema is None else op.reader.validator(schema),
        filters if kind == "list" else (),
    )


def _properties(op: _OperationReader, resource: RecordType) -> Mapping[str, Any]:
    schema, _ = op.reader.deref({"$ref": resource.pointer}, resource.pointer)
    return schema.get("properties") or {}


def _sample(op: _OperationReader, resource: RecordType, document: Mapping[str, Any]) -> Any:
    try:
        record = sample_record(document, resource)
    except ValueError as exc:
        raise op.error(f"cannot build a record of {resource.name}: {exc}") from None
    _check(op, resource.validator, record, f"a built record of {resource.name}")
    return record


def _check(op: _OperationReader, validator: Validator, value: object, what: str) -> None:
    error = next(iter(validator.iter_errors(value)), None)
    if error is not None:
        path = "/".join(str(p) for p in error.absolute_path) or "(root)"
        raise op.error(f"{what} does not fit its schema at {path}: {error.message}")


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
