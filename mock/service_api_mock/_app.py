"""The ASGI app: the spec's operations under ``/public/v3``, the control API under ``/__mock__``.

:class:`MockApp` finds the operation of each request in the spec (a path the spec has,
with a method it does not declare, is a 405 whose ``Allow`` lists the declared ones). It
times and logs every request, counts it per operationId and status, injects the
configured faults, and turns any exception into a 503 so that the mock never answers 500
(the fuzz tests flag a 503 as loudly as a 500, so a bug cannot hide behind it).

:class:`ApiHandler` then answers the request as the spec model classifies its operation
(see :mod:`service_api_spec`): it checks the token, the account header and every
parameter and body against their schemas, then pages, reads, creates, replaces, updates
or deletes the stored records, or answers data built from the success schema for any
other operation.
"""

from __future__ import annotations

import functools
import json
import logging
import math
import operator
import re
import time
from collections.abc import Awaitable, Callable, Mapping
from datetime import UTC, datetime
from http import HTTPStatus
from typing import Any
from urllib.parse import parse_qsl, unquote_plus, urlencode

import anyio
import attrs
import httpx
from starlette.datastructures import UploadFile
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route, Router
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from service_api_spec import (
    PAGE_PARAMETERS,
    Answer,
    Body,
    Operation,
    Parameter,
    escape,
    is_json,
)

from ._data import seeded
from ._forms import nested, typed
from ._schemas import Schemas
from ._spec import (
    Route as SpecRoute,
)
from ._spec import (
    answer_of,
    fitted,
    input_status,
    problem_body,
    success_of,
)
from ._state import FAULT_FIELDS, Collection, FaultPlan, MockState, encode_json

__all__ = ["API_PREFIX", "CONTROL_PREFIX", "build_app"]

logger = logging.getLogger("service_api_mock")

API_PREFIX = "/public/v3"
CONTROL_PREFIX = "/__mock__"

# Python refuses to parse integers of more than 4300 digits; no page is that far anyway.
_INTEGER = re.compile(r"[+-]?[0-9]{1,4000}")
_NUMBER = re.compile(r"[+-]?([0-9]{1,300}(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]{1,3})?")
_EXPIRED = (
    'Bearer error="invalid_token", error_description="The token expired at \'{}\'"'
)
_NO_STORE = {"cache-control": "no-store", "pragma": "no-cache"}
_TOKEN_FIELDS = ("client_id", "client_secret", "grant_type")
# Header parameters OpenAPI says to ignore: the request's own headers.
_OWN_HEADERS = ("authorization", "accept", "content-type")
# How a record's field stands to a filter's value, by the filter's comparison.
_COMPARE: dict[str, Callable[[Any, Any], bool]] = {
    "gt": operator.gt,
    "ge": operator.ge,
    "lt": operator.lt,
    "le": operator.le,
}


# Bound once: a test that counts the client's json.loads calls, with the mock serving in
# its process, must not count the mock reading back its own answers.
_read_answer = json.JSONDecoder().decode


# ---- reading a request ---------------------------------------------------------------


def _seconds_header(seconds: float) -> str:
    # Whole seconds are the HTTP form; a fraction is kept so tests can ask for short waits.
    # Milliseconds at most, and no trailing zeros or point: 2.0 is "2", 1.0004 is "1".
    return f"{seconds:.3f}".rstrip("0").rstrip(".")


def _media_type(request: Request) -> str:
    return request.headers.get("content-type", "").split(";")[0].strip().lower()


def _bearer_token(request: Request) -> str:
    # Like ASP.NET's JwtBearer: a header of another scheme, or without a token, is no token.
    scheme, _, token = request.headers.get("authorization", "").strip().partition(" ")
    return token.strip() if scheme.lower() == "bearer" else ""


@attrs.define
class _Refused(Exception):
    """Raised for a request the spec's declared error answers: ``status`` 400 is bad
    input, sent as the operation declares it (400, or 422); ``error`` is the OAuth
    error code of a refused token request."""

    status: int
    detail: str = ""
    headers: dict[str, str] | None = None
    error: str = "invalid_request"


def _scalar(raw: str, kind: str) -> Any:
    """``raw`` as a value of ``kind`` where it reads as one, else the text itself (which
    the schema then refuses, or takes)."""
    if kind == "integer" and _INTEGER.fullmatch(raw):
        return int(raw)
    if kind == "number" and _NUMBER.fullmatch(raw) and math.isfinite(float(raw)):
        return float(raw)
    if kind == "boolean" and raw in ("true", "false"):
        return raw == "true"
    if kind == "object":
        try:
            return json.loads(raw)
        except ValueError:
            return raw
    return raw


# Cached: a listing sends the same few values again and again.
@functools.lru_cache(maxsize=4096)
def _convert(schemas: Schemas, parameter: Parameter, given: tuple[str, ...]) -> Any:
    """The value of ``parameter`` from the strings sent; a 400 naming it if its schema
    refuses that value."""
    name = parameter.name
    if parameter.kind == "array":
        # The type its items declare: a list of types, or none, reads them as text.
        kind = schemas.document.get(f"{parameter.pointer}/items/type")
        value: Any = [_scalar(raw, str(kind)) for raw in given]
    elif len(given) > 1:
        raise _Refused(400, f"{name} is given more than once.")
    else:
        value = _scalar(given[0], parameter.kind)
        if parameter.kind == "object" and parameter.pointer is not None:
            value = typed(value, schemas.json_schema(parameter.pointer, "writing"))
    error = None
    if parameter.pointer is not None:
        error = schemas.error(parameter.pointer, value, "writing")
    if error is not None:
        shown = ",".join(given)[:50]
        raise _Refused(400, f"The value '{shown}' is not valid for {name}: {error}.")
    return value


def _given(
    parameter: Parameter, request: Request, path: dict[str, str], others: set[str]
) -> list[str]:
    """The strings sent for ``parameter``, where it is sent (``others``: the names of
    the operation's other query parameters)."""
    name = parameter.name
    if parameter.location == "query":
        delimited = parameter.style != "deepObject" and not parameter.exploded
        if parameter.kind == "array" and delimited:
            return _delimited(parameter, request)
        sent = request.query_params.getlist(name) or _deep_object(parameter, request)
        if not sent and parameter.kind == "object" and parameter.style == "form":
            sent = _free_keys(request, others)
        return sent
    if parameter.location == "header" and name.lower() not in _OWN_HEADERS:
        sent = request.headers.getlist(name)
    else:
        found = {"path": path, "cookie": request.cookies}.get(parameter.location, {})
        sent = [found[name]] if name in found else []
    if parameter.kind == "array":
        # A path's, a header's or a cookie's array is one text, its items split by
        # commas (the only style a path or a header has, a cookie's by default).
        return [item for text in sent for item in text.split(",")]
    return sent


_DELIMITERS = {"spaceDelimited": " ", "pipeDelimited": "|"}


def _delimited(parameter: Parameter, request: Request) -> list[str]:
    """The items of a query array that is not exploded (``ids=1,2``): split at the
    delimiters as sent, then decoded, so an item's own comma (sent as ``%2C``) stays
    in it."""
    delimiter = _DELIMITERS.get(parameter.style, ",")
    raw = request.scope.get("query_string", b"").decode("latin-1")
    items: list[str] = []
    for pair in raw.split("&"):
        key, _, value = pair.partition("=")
        if unquote_plus(key) == parameter.name:
            spaced = (
                value.replace("%20", " ").replace("+", " ")
                if delimiter == " "
                else value
            )
            items += [unquote_plus(item) for item in spaced.split(delimiter)]
    return items


def _free_keys(request: Request, others: set[str]) -> list[str]:
    """An exploded ``form`` object of the query: the parameters no other of the
    operation's names (``?lat=1&long=2``), as JSON text; none if there are none."""
    pairs = [
        (key, value)
        for key, value in request.query_params.multi_items()
        if key not in others and key.split("[")[0] not in others
    ]
    return [json.dumps(dict(pairs))] if pairs else []


def _deep_object(parameter: Parameter, request: Request) -> list[str]:
    """A query parameter sent as a deepObject (``filter[name]=x``, ``ids[]=1``): the
    items of an array, else the object as JSON text (typed as its schema says later)."""
    pairs = [
        (key, value)
        for key, value in request.query_params.multi_items()
        if key.startswith(f"{parameter.name}[")
    ]
    if not pairs:
        return []
    value = nested(pairs).get(parameter.name)
    if parameter.kind == "array" and isinstance(value, dict):
        return [str(v) for _, v in sorted(value.items(), key=lambda kv: kv[0].zfill(9))]
    return [json.dumps(value)]


def _parameters(
    schemas: Schemas, op: Operation, request: Request, path: dict[str, str]
) -> dict[str, Any]:
    values: dict[str, Any] = {}
    names = {p.name for p in op.parameters if p.location == "query"}
    for parameter in op.parameters:
        given = tuple(_given(parameter, request, path, names - {parameter.name}))
        if given:
            try:
                values[parameter.name] = _convert(schemas, parameter, given)
            except TypeError:  # an enum of lists or objects: no key of the cache
                values[parameter.name] = _convert.__wrapped__(schemas, parameter, given)
        elif parameter.required:
            raise _Refused(400, f"{parameter.name} is required.")
    return values


_FORM = "application/x-www-form-urlencoded"
_MULTIPART = "multipart/form-data"
# A multipart body holds at most this many parts: a form, not a flood.
_MAX_PARTS = 1000


async def _body(schemas: Schemas, op: Operation, request: Request) -> Any:
    """The request's body as a JSON value (a JSON body as sent, a form's fields typed
    as its schema says, a file part as its name), checked against the operation's
    schema; else a 400 naming what does not fit. None where the operation takes no
    body, or none was sent; the bytes are not read into a value for any other media
    type (a binary upload)."""
    declared = op.body
    if declared is None:
        return None
    raw = await request.body()
    if not raw.strip():
        if declared.required:
            raise _Refused(400, f"A {declared.media} body is required.")
        return None
    declared = _sent_body(schemas, op, declared, _media_type(request))
    if declared is None:
        return None  # a media type it declares and the mock does not read (XML)
    media, sent = declared.media, _media_type(request)
    wrong = not is_json(sent) if is_json(media) else media in _FORMS and sent != media
    if wrong:
        raise _Refused(400, f"The body must be {media}.")
    if is_json(media):
        value = _json(raw)
    elif media == _FORM:
        value = _form(raw)
    elif media == _MULTIPART:
        value = await _multipart(request)
    else:
        return None
    error = None
    if declared.pointer is not None:
        if not is_json(media):
            value = typed(value, schemas.json_schema(declared.pointer, "writing"))
        error = schemas.error(declared.pointer, value, "writing")
    if error is not None:
        raise _Refused(400, f"The body does not fit its schema: {error}")
    return value


_FORMS = (_FORM, _MULTIPART)


def _sent_body(
    schemas: Schemas, op: Operation, declared: Body, sent: str
) -> Body | None:
    """The body as the operation declares it for the media type ``sent``, where it
    declares more than one: a client may send any of them. None for one the mock does
    not read (XML): taken as sent, unchecked. Else ``declared`` (the one the spec model
    uses), which the request then does not fit."""
    if sent == declared.media:
        return declared
    node, where = schemas.document.at(f"{op.pointer}/requestBody")
    content = node.get("content") if isinstance(node, Mapping) else None
    if not isinstance(content, Mapping) or sent not in content:
        return declared
    if not (is_json(sent) or sent in _FORMS):
        return None
    has_schema = "schema" in (content[sent] or {})
    pointer = f"{where}/content/{escape(sent)}/schema" if has_schema else None
    return Body(sent, pointer, declared.required)


def _json(raw: bytes) -> Any:
    try:
        value = json.loads(raw)
        # NaN and infinities are no JSON: they could not be sent back.
        encode_json(value)
    except (ValueError, RecursionError):
        raise _Refused(400, "The body is not JSON.") from None
    return value


def _form(raw: bytes) -> dict[str, Any]:
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise _Refused(400, "The form is not UTF-8.") from None
    pairs = parse_qsl(text, keep_blank_values=True, max_num_fields=_MAX_PARTS)
    return nested(pairs)


async def _multipart(request: Request) -> dict[str, Any]:
    pairs: list[tuple[str, Any]] = []
    try:
        async with request.form(max_files=_MAX_PARTS, max_fields=_MAX_PARTS) as form:
            for name, part in form.multi_items():
                value: Any = part
                if isinstance(part, UploadFile):
                    value = await _part(part)
                pairs.append((name, value))
    except _Refused:
        raise
    except Exception:
        # Any failure to read the body is the request's fault: a broken boundary,
        # bytes that are not UTF-8, too many parts...
        raise _Refused(400, "The multipart body cannot be read.") from None
    return nested(pairs)


async def _part(part: UploadFile) -> Any:
    """A file part as a JSON value: an object part (sent as JSON) as its value, a file
    as its name (a ``format: binary`` string takes any text)."""
    content = await part.read()
    if is_json(str(part.content_type)):
        return _json(content)
    return part.filename or ""


def _whole(value: Any, default: int) -> int:
    """A page number or size: at least 1; ``default`` if it is none (a spec may declare
    them as text)."""
    return max(value, 1) if isinstance(value, int) else default


def _comparable(value: Any) -> Any:
    """A date-time or a date read as an instant (UTC where it names no zone), so that
    filters compare moments rather than text; any other value as it is."""
    if not isinstance(value, str):
        return value
    try:
        moment = datetime.fromisoformat(value.upper())
    except ValueError:
        return value
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def _holds(field: Any, compare: str, wanted: Any) -> bool:
    """Whether a record's ``field`` passes a filter of ``wanted`` (see
    :class:`service_api_spec.Filter`); values that do not compare do not pass."""
    if isinstance(wanted, list):
        return field in wanted
    if compare not in _COMPARE:
        return bool(field == wanted)
    try:
        return _COMPARE[compare](_comparable(field), _comparable(wanted))
    except TypeError:
        return False


# ---- the control API -----------------------------------------------------------------


def _problem(status: int, detail: str) -> JSONResponse:
    body = problem_body(status, detail[:300])
    return JSONResponse(body, status_code=status, media_type="application/problem+json")


async def _settings(request: Request) -> dict[str, Any]:
    """The JSON object a control request carries (none: an empty one); ValueError if
    it carries something else."""
    raw = await request.body()
    body = json.loads(raw) if raw.strip() else {}
    if not isinstance(body, dict):
        raise ValueError("The body must be a JSON object.")
    return body


def _refusing_bad_settings(
    handler: Callable[[MockState, Request], Awaitable[Response]],
) -> Callable[[MockState, Request], Awaitable[Response]]:
    """``handler`` answering 400 (a problem) for JSON that is not, or settings that are
    not, rather than failing."""

    @functools.wraps(handler)
    async def checked(state: MockState, request: Request) -> Response:
        try:
            return await handler(state, request)
        except (TypeError, ValueError) as exc:
            return _problem(400, str(exc))

    return checked


async def _counts(state: MockState, request: Request) -> Response:
    by_op = state.counts().items()
    return JSONResponse({op: {str(c): n for c, n in by.items()} for op, by in by_op})


async def _tokens(state: MockState, request: Request) -> Response:
    return JSONResponse({"tokens": state.issued_tokens()})


async def _invalid_answers(state: MockState, request: Request) -> Response:
    return JSONResponse({"invalid_answers": state.invalid_answers()})


@_refusing_bad_settings
async def _revoke(state: MockState, request: Request) -> Response:
    await _settings(request)
    state.revoke_tokens()
    return Response(status_code=204)


@_refusing_bad_settings
async def _faults(state: MockState, request: Request) -> Response:
    config = state.set_faults(**await _settings(request))
    return JSONResponse({name: getattr(config, name) for name in FAULT_FIELDS})


@_refusing_bad_settings
async def _clock(state: MockState, request: Request) -> Response:
    advance = (await _settings(request)).get("advance")
    if isinstance(advance, bool) or not isinstance(advance, int | float):
        raise ValueError('Expected {"advance": <seconds>}.')
    return JSONResponse({"offset": state.advance_clock(float(advance))})


@_refusing_bad_settings
async def _reset(state: MockState, request: Request) -> Response:
    state.reset(**await _settings(request))
    return Response(status_code=204)


# Each route of the control API, its method and what answers it.
_CONTROL: tuple[
    tuple[str, str, Callable[[MockState, Request], Awaitable[Response]]], ...
] = (
    ("GET", "counts", _counts),
    ("GET", "tokens", _tokens),
    ("GET", "invalid-answers", _invalid_answers),
    ("POST", "revoke", _revoke),
    ("POST", "faults", _faults),
    ("POST", "clock", _clock),
    ("POST", "reset", _reset),
)


async def _unknown_control(scope: Scope, receive: Receive, send: Send) -> None:
    path = scope.get("path", "")
    known = ", ".join(f"{method} {name}" for method, name, _ in _CONTROL)
    detail = f"{path} is no route of the mock's control API ({known})."
    await _problem(404, detail)(scope, receive, send)


async def _drop_connection(receive: Receive, send: Send) -> None:
    # Under uvicorn ``send`` is a bound method of the request cycle, which holds the
    # socket's transport: aborting it resets the connection before any byte is written,
    # and the server, seeing the client gone, sends nothing (no 500).
    transport = getattr(getattr(send, "__self__", None), "transport", None)
    if transport is not None and hasattr(transport, "abort"):
        transport.abort()
        with anyio.move_on_after(1.0):
            while (await receive())["type"] != "http.disconnect":
                pass
        return
    # In process (httpx.ASGITransport) there is no socket: raise what httpx raises when a
    # server closes the connection without answering, so clients see a transport error.
    raise httpx.RemoteProtocolError("Server disconnected without sending a response.")


# ---- the public API ------------------------------------------------------------------


@attrs.frozen
class Call:
    """One request to one operation, read and checked: the account it acts for, its
    parameters' values by name, its JSON body, and the value of the last path parameter
    (the record's identifier on an item path).

    Example::

        Call(op, request, "acct-1", {"pageSize": 7}, None, None)
    """

    op: Operation
    request: Request
    account: str
    values: dict[str, Any]
    body: Any
    item: Any


@attrs.frozen
class ApiHandler:
    """Answers the requests of the public API from ``state``, as their operations say."""

    state: MockState

    @property
    def schemas(self) -> Schemas:
        return self.state.spec.schemas

    # ---- answers ---------------------------------------------------------------------

    def send(
        self,
        answer: Answer | None,
        status: int,
        value: object,
        headers: dict[str, str] | None = None,
    ) -> Response:
        """``value`` as ``answer`` declares its body: JSON, HTML, text, or nothing; an
        undeclared answer as problem+json."""
        media = "application/problem+json" if answer is None else answer.media
        if media is None:
            return Response(status_code=status, headers=headers)
        title = HTTPStatus(status).phrase
        content = b""
        if is_json(media):
            content = encode_json(value)
        elif media == "text/html":
            content = f"<html><body><h1>{status} {title}</h1></body></html>".encode()
        elif media.startswith("text/"):
            content = title.encode()
        else:
            # Bytes of a binary download (a file, an image): the same for one answer.
            content = f"{status} {title} {media}\n".encode()
        return Response(content, status_code=status, media_type=media, headers=headers)

    def refuse(self, op: Operation, refused: _Refused) -> Response:
        """The error as ``op`` declares it: a problem (an OAuth error for the token), or
        what its schema wants instead."""
        status = refused.status
        if status == 400:
            status = input_status(op)
        preferred = problem_body(status, refused.detail)
        if op.kind == "token":
            preferred = {"error": refused.error, "error_description": refused.detail}
        answer = answer_of(op, status)
        value = fitted(self.schemas, answer, preferred, seeded(op.operation_id, status))
        return self.send(answer, status, value, refused.headers)

    def succeed(self, call: Call, record: dict[str, Any] | None = None) -> Response:
        """The operation's success: ``record`` where the success schema takes it, else
        data built from that schema, the same for the same request path and account."""
        op = call.op
        answer = success_of(op)
        if answer is None:
            return Response(status_code=200)
        value: Any = record
        if record is None or op.operation_id not in self.state.spec.record_answers:
            path = call.request.url.path
            rng = seeded(self.state.config.seed, op.operation_id, call.account, path)
            value = None
            if answer.pointer is not None:
                value = self.schemas.build(answer.pointer, rng, op.operation_id)
        return self.send(answer, answer.code, value)

    def checked(self, op: Operation, response: Response) -> Response:
        """``response`` if its body fits the schema ``op`` declares for its status, else
        a 500 whose problem says why (logged, and kept for the tests to see)."""
        status = response.status_code
        answer = answer_of(op, status)
        if answer is None or answer.pointer is None or not is_json(str(answer.media)):
            return response
        try:
            value = _read_answer(bytes(response.body).decode())
        except ValueError:
            error: str | None = "the body is not JSON"
        else:
            error = self.schemas.error(answer.pointer, value)
        if error is None:
            return response
        reason = (
            f"{op.operation_id}: its {status} answer does not fit its schema: {error}"
        )
        logger.error("%s", reason)
        self.state.note_invalid_answer(reason)
        return JSONResponse(
            problem_body(500, reason),
            status_code=500,
            media_type="application/problem+json",
        )

    # ---- requests --------------------------------------------------------------------

    async def serve(
        self, op: Operation, request: Request, path: dict[str, str]
    ) -> Response:
        try:
            if op.kind == "token":
                return await self.authenticate(op, request)
            account = self.account(op, request)
            values = _parameters(self.schemas, op, request, path)
            body = await _body(self.schemas, op, request)
            # The last path parameter's value, typed as its schema says (7, not "7").
            last = list(path)[-1] if path else None
            item = values.get(last, path[last]) if last is not None else None
            call = Call(op, request, account, values, body, item)
            resource = self.state.spec.resources.get(str(op.resource))
            if op.kind == "list":
                return self.page(call)
            if resource is not None and (resource.id_field or op.kind == "create"):
                return self.record(call)
            return self.succeed(call)
        except _Refused as refused:
            return self.refuse(op, refused)

    def account(self, op: Operation, request: Request) -> str:
        """Checks the bearer token, the quota and the account header; the account."""
        accounts = None
        if op.bearer:
            token = _bearer_token(request)
            issued = self.state.token(token)
            if issued is None or self.state.now() >= issued.expires_at:
                challenge = 'Bearer error="invalid_token"' if token else "Bearer"
                if issued is not None:
                    moment = datetime.fromtimestamp(issued.expires_at, UTC)
                    challenge = _EXPIRED.format(moment.strftime("%m/%d/%Y %H:%M:%S"))
                raise _Refused(401, headers={"www-authenticate": challenge})
            self.count_against_quota(issued.client_id)
            accounts = self.state.accounts_of(issued.client_id)
        if op.account_header is None:
            return ""
        given = request.headers.get(op.account_header)
        if given is None:
            raise _Refused(400, f"The {op.account_header} header is required.")
        if accounts is not None and given not in accounts:
            raise _Refused(403, "The credentials are not associated with this account.")
        return given

    def count_against_quota(self, client_id: str) -> None:
        wait = self.state.rate_limit_wait(client_id)
        if wait is not None:
            retry = _seconds_header(math.ceil(wait) or 1)
            raise _Refused(429, headers={"retry-after": retry})

    async def authenticate(self, op: Operation, request: Request) -> Response:
        declared = op.body.media if op.body is not None else "multipart/form-data"
        if _media_type(request) != declared:
            raise _Refused(400, f"The body must be {declared}.", _NO_STORE)
        fields: dict[str, str] = {}
        try:
            async with request.form() as form:
                for name in _TOKEN_FIELDS:
                    value = form.get(name)
                    if isinstance(value, UploadFile):
                        value = (await value.read()).decode()
                    if value is not None:
                        fields[name] = value
        except Exception:
            # Any failure to read the body is the request's fault: a broken boundary,
            # bytes that are not UTF-8, too many parts...
            detail = "The multipart body cannot be read."
            raise _Refused(400, detail, _NO_STORE) from None
        # Only an absent field is malformed: an empty ID or secret is valid form data
        # that names no integration, hence invalid_client below.
        missing = [name for name in _TOKEN_FIELDS if name not in fields]
        if missing:
            detail = f"Missing form field(s): {', '.join(missing)}."
            raise _Refused(400, detail, _NO_STORE)
        if fields["grant_type"] != "client_credentials":
            detail = "Only grant_type client_credentials is supported."
            raise _Refused(400, detail, _NO_STORE, "unsupported_grant_type")
        client_id = fields["client_id"]
        if not self.state.check_client(client_id, fields["client_secret"]):
            detail = "The client credentials are invalid."
            raise _Refused(401, detail, _NO_STORE, "invalid_client")
        self.count_against_quota(client_id)
        token = self.state.issue_token(client_id)
        # expires_in is a whole number of seconds in a string; rounding down keeps a
        # client that trusts it on the safe side of a fractional test TTL.
        ttl = str(int(self.state.config.token_ttl))
        body = {"access_token": token, "token_type": "Bearer", "expires_in": ttl}
        success = success_of(op)
        status = success.code if success is not None else 200
        return JSONResponse(body, status_code=status, headers=_NO_STORE)

    def place(self, call: Call) -> Collection:
        """Where the records of the call's resource are: under its parents' ids from the
        path. A parent the parent resource does not have is the declared 404, if any."""
        resource = self.state.spec.resources[str(call.op.resource)]
        parents = tuple(call.values.get(name) for name in resource.parent_parameters)
        place = self.state.collection(resource.name, call.account, parents)
        if answer_of(call.op, 404) is not None and not self.state.has_parent(place):
            detail = (
                f"No record of {resource.parent} has the identifier {parents[-1]!r}."
            )
            raise _Refused(404, detail)
        return place

    def page(self, call: Call) -> Response:
        op = call.op
        values = call.values
        number = _whole(values.get("pageNumber"), 1)
        # The spec's page sizes; where it states no default, a page of every record.
        sizes = op.page_size
        size = _whole(values.get("pageSize"), (sizes and sizes.default) or 0)
        if sizes and sizes.maximum is not None:
            size = min(size, sizes.maximum)
        rows, records = self.state.records(self.place(call))
        tests = [
            (f.field, f.compare, values[f.parameter])
            for f in op.filters
            if f.parameter in values
        ]
        if tests:
            pairs = zip(rows, records, strict=True)
            records = [
                encoded
                for row, encoded in pairs
                if all(_holds(row.get(f), compare, v) for f, compare, v in tests)
            ]
        total = len(records)
        size = size or max(total, 1)
        last_page = math.ceil(total / size)
        start = (number - 1) * size
        envelope: dict[str, Any] = {
            **self.state.spec.page_fields.get(op.operation_id, {}),
            "totalRecords": total,
            "pageNumber": number,
            "pageSize": size,
        }
        if number + 1 <= last_page:
            envelope["next"] = self.page_url(call, size, number + 1)
        if 1 <= number - 1 <= last_page:
            envelope["previous"] = self.page_url(call, size, number - 1)
        page = records[start : start + size] if start < total else []
        # The envelope is encoded, then the page's pre-encoded records are spliced in as
        # "data" before its closing brace: the same JSON, without re-encoding records.
        body = encode_json(envelope)[:-1] + b',"data":[' + b",".join(page) + b"]}"
        success = op.success
        assert success is not None  # a list answers a page: the model's rule
        return Response(body, status_code=success.code, media_type=success.media)

    def page_url(self, call: Call, size: int, number: int) -> str:
        # Built from the request's own scheme and host, so links work on whatever port the
        # mock happens to listen on; the other query parameters go along.
        request = call.request
        names = {p.name for p in call.op.parameters if p.location == "query"}
        kept = [
            (name, value)
            for name, value in request.query_params.multi_items()
            if name in names and name not in PAGE_PARAMETERS
        ]
        query = urlencode([("pageSize", size), ("pageNumber", number), *kept])
        return str(request.url.replace(query=query))

    def record(self, call: Call) -> Response:
        op = call.op
        state = self.state
        place = self.place(call)
        body = call.body if call.body is not None else {}
        if not isinstance(body, dict):
            raise _Refused(400, "A record is a JSON object.")
        if op.kind == "create":
            return self.succeed(call, state.create(place, body))
        index = state.find(place, call.item)
        # An id nothing lists names a record all the same where nothing could list it
        # (unless it was deleted), or where the operation declares no 404 to refuse it.
        unlisted = place.resource in state.spec.unlisted
        unlisted = unlisted and not state.deleted(place, call.item)
        if index is None and (unlisted or answer_of(op, 404) is None):
            index = state.adopt(place, call.item)
        if index is None:
            detail = f"No record of {place.resource} has the identifier {call.item!r}."
            raise _Refused(404, detail)
        stored = state.records(place)[0][index]
        record = stored
        if op.kind in ("replace", "update"):
            record = {**(stored if op.kind == "update" else {}), **body}
            rng = seeded(state.config.seed, op.operation_id, call.item)
            record = self.schemas.answerable(
                str(state.spec.resources[place.resource].pointer), record, rng
            )
            resource = state.spec.resources[place.resource]
            # The record stays where it is: its identifier and its parents' ids.
            for name in (resource.id_field, *resource.parent_parameters):
                if name in stored:
                    record[str(name)] = stored[name]
        if op.kind != "get":
            state.store(place, index, None if op.kind == "delete" else record)
        return self.succeed(call, record)


# ---- the front door ------------------------------------------------------------------


@attrs.frozen
class MockApp:
    """The ASGI app: finds, times, logs and counts each request and injects the faults,
    then hands it to the public API's handler or to the control API's router."""

    state: MockState
    handler: ApiHandler
    router: ASGIApp  # the control API

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            # Lifespan and websockets: nothing to serve (uvicorn goes on without lifespan).
            return
        started = time.perf_counter()
        method: str = scope["method"]
        path: str = scope["path"]
        found = self.find(scope)
        operation = None if found is None else found[0].methods.get(method)
        status = 0  # until the answer starts

        async def send_and_note(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
                # Counted before the client can see the answer: a test that asserts on
                # counts, or resets, right after a response never races the count.
                if operation is not None:
                    self.state.record(operation.operation_id, status)
            await send(message)

        plan = None
        if operation is not None:
            plan = self.state.plan_faults()
            if plan.delay > 0:
                await anyio.sleep(plan.delay)
            if plan.drop:
                self.state.record(operation.operation_id, 0)
                self.log(method, path, "dropped", started)
                await _drop_connection(receive, send)
                return
        try:
            response = await self.respond(scope, receive, found, plan)
            await response(scope, receive, send_and_note)
        except Exception:
            logger.exception("%s %s failed; answering 503", method, path)
            if not status:
                fallback = Response(status_code=503, headers={"retry-after": "1"})
                if operation is not None:
                    refused = _Refused(503, headers={"retry-after": "1"})
                    fallback = self.handler.refuse(operation, refused)
                await fallback(scope, receive, send_and_note)
        self.log(method, path, str(status), started)

    def find(self, scope: Scope) -> tuple[SpecRoute, dict[str, str]] | None:
        """The route of the request's path, if it is one of the spec's."""
        path: str = scope["path"]
        if not path.startswith(f"{API_PREFIX}/"):
            return None
        raw = scope.get("raw_path", b"").decode("latin-1") or path
        return self.state.spec.match(raw.removeprefix(API_PREFIX), scope["method"])

    async def respond(
        self,
        scope: Scope,
        receive: Receive,
        found: tuple[SpecRoute, dict[str, str]] | None,
        plan: FaultPlan | None,
    ) -> ASGIApp:
        if found is None:
            return self.router
        route, path = found
        operation = route.methods.get(scope["method"])
        if operation is None or plan is None:
            # The path is the spec's, the method is not: 405 with the declared ones.
            return Response(
                status_code=405, headers={"allow": ", ".join(route.methods)}
            )
        if plan.status is not None:
            retry = _seconds_header(self.state.config.retry_after)
            refused = _Refused(plan.status, headers={"retry-after": retry})
            return self.handler.refuse(operation, refused)
        response = await self.handler.serve(operation, Request(scope, receive), path)
        if self.state.config.validate_answers:
            return self.handler.checked(operation, response)
        return response

    def log(self, method: str, path: str, shown: str, started: float) -> None:
        elapsed_ms = (time.perf_counter() - started) * 1000.0
        # Method, path and status only: never headers or bodies, which carry tokens and secrets.
        logger.info("%s %s %s %.1fms", method, path, shown, elapsed_ms)


def build_app(state: MockState) -> ASGIApp:
    """The mock's ASGI application over ``state`` (whose spec says what it serves).

    Example::

        app = build_app(MockState(MockConfig(), load_spec()))
    """
    routes = [
        Route(
            f"{CONTROL_PREFIX}/{name}",
            functools.partial(handler, state),
            methods=[method],
        )
        for method, name, handler in _CONTROL
    ]
    # A bare Router rather than a Starlette application: the application's error
    # middleware would answer 500 before the front door could step in.
    return MockApp(
        state, ApiHandler(state), Router(routes=routes, default=_unknown_control)
    )
