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
from collections.abc import Callable
from datetime import UTC, datetime
from http import HTTPStatus
from typing import Any
from urllib.parse import urlencode

import anyio
import attrs
import httpx
from starlette.datastructures import UploadFile
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route, Router
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from service_api_spec import PAGE_PARAMETERS, Answer, Operation, Parameter, is_json

from ._data import seeded
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
    error = schemas.error(parameter.pointer, value) if parameter.pointer else None
    if error is not None:
        shown = ",".join(given)[:50]
        raise _Refused(400, f"The value '{shown}' is not valid for {name}: {error}.")
    return value


def _given(parameter: Parameter, request: Request, path: dict[str, str]) -> list[str]:
    """The strings sent for ``parameter``, where it is sent."""
    name = parameter.name
    if parameter.location == "query":
        return request.query_params.getlist(name)
    if parameter.location == "header" and name.lower() not in _OWN_HEADERS:
        return request.headers.getlist(name)
    found = {"path": path, "cookie": request.cookies}.get(parameter.location, {})
    return [found[name]] if name in found else []


def _parameters(
    schemas: Schemas, op: Operation, request: Request, path: dict[str, str]
) -> dict[str, Any]:
    values: dict[str, Any] = {}
    for parameter in op.parameters:
        given = tuple(_given(parameter, request, path))
        if given:
            try:
                values[parameter.name] = _convert(schemas, parameter, given)
            except TypeError:  # an enum of lists or objects: no key of the cache
                values[parameter.name] = _convert.__wrapped__(schemas, parameter, given)
        elif parameter.required:
            raise _Refused(400, f"{parameter.name} is required.")
    return values


async def _json_body(schemas: Schemas, op: Operation, request: Request) -> Any:
    """The request's JSON body, checked against the operation's schema; else a 400 naming
    what does not fit. None where the operation takes no JSON body, or none was sent."""
    declared = op.body
    if declared is None or not is_json(declared.media):
        return None
    raw = await request.body()
    if not raw.strip() and not declared.required:
        return None
    if not is_json(_media_type(request)):
        raise _Refused(400, f"The body must be {declared.media}.")
    try:
        value = json.loads(raw)
        # NaN and infinities are no JSON: they could not be sent back.
        encode_json(value)
    except (ValueError, RecursionError):
        raise _Refused(400, "The body is not JSON.") from None
    error = schemas.error(declared.pointer, value) if declared.pointer else None
    if error is not None:
        raise _Refused(400, f"The body does not fit its schema: {error}")
    return value


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

_CONTROL = {"GET": ("counts", "tokens"), "POST": ("revoke", "faults", "clock", "reset")}


async def _control(state: MockState, request: Request) -> Response:
    name = request.url.path.rpartition("/")[2]
    try:
        if name == "counts":
            by_op = state.counts().items()
            return JSONResponse(
                {op: {str(c): n for c, n in by.items()} for op, by in by_op}
            )
        if name == "tokens":
            return JSONResponse({"tokens": state.issued_tokens()})
        raw = await request.body()
        body = json.loads(raw) if raw.strip() else {}
        if not isinstance(body, dict):
            raise ValueError("The body must be a JSON object.")
        if name == "faults":
            config = state.set_faults(**body)
            return JSONResponse({name: getattr(config, name) for name in FAULT_FIELDS})
        if name == "clock":
            advance = body.get("advance")
            if isinstance(advance, bool) or not isinstance(advance, int | float):
                raise ValueError('Expected {"advance": <seconds>}.')
            return JSONResponse({"offset": state.advance_clock(float(advance))})
        if name == "revoke":
            state.revoke_tokens()
        else:
            state.reset(**body)
        return Response(status_code=204)
    except (TypeError, ValueError) as exc:  # JSON that is not, settings that are not
        body = problem_body(400, str(exc)[:300])
        return JSONResponse(
            body, status_code=400, media_type="application/problem+json"
        )


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
    item: str | None


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

    # ---- requests --------------------------------------------------------------------

    async def serve(
        self, op: Operation, request: Request, path: dict[str, str]
    ) -> Response:
        try:
            if op.kind == "token":
                return await self.authenticate(op, request)
            account = self.account(op, request)
            values = _parameters(self.schemas, op, request, path)
            body = await _json_body(self.schemas, op, request)
            item = list(path.values())[-1] if path else None
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
        place = Collection(resource.name, call.account, parents)
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
        if index is None:
            detail = f"No record of {place.resource} has the identifier {call.item!r}."
            raise _Refused(404, detail)
        stored = state.records(place)[0][index]
        record = stored
        if op.kind in ("replace", "update"):
            record = {**(stored if op.kind == "update" else {}), **body}
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
        return self.state.spec.match(raw.removeprefix(API_PREFIX))

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
        return await self.handler.serve(operation, Request(scope, receive), path)

    def log(self, method: str, path: str, shown: str, started: float) -> None:
        elapsed_ms = (time.perf_counter() - started) * 1000.0
        # Method, path and status only: never headers or bodies, which carry tokens and secrets.
        logger.info("%s %s %s %.1fms", method, path, shown, elapsed_ms)


def build_app(state: MockState) -> ASGIApp:
    """The mock's ASGI application over ``state`` (whose spec says what it serves).

    Example::

        app = build_app(MockState(MockConfig(), load_spec()))
    """
    control = functools.partial(_control, state)
    routes = [
        Route(f"{CONTROL_PREFIX}/{name}", control, methods=[method])
        for method, names in _CONTROL.items()
        for name in names
    ]
    # A bare Router rather than a Starlette application: the application's error
    # middleware would answer 500 before the front door could step in.
    return MockApp(state, ApiHandler(state), Router(routes=routes))
