"""The ASGI app: the spec's operations under ``/public/v3``, the control API under ``/__mock__``.

A thin front door finds the operation of each request in the spec (a path the spec has,
with a method it does not declare, is a 405 whose ``Allow`` lists the declared ones). It
times and logs every request, counts it per operationId and status, injects the configured
faults, and turns any exception into a 503 so that the mock never answers 500 (the fuzz
tests flag a 503 as loudly as a 500, so a bug cannot hide behind it). Then one handler
serves each shape of operation (see ``_spec.py``) for any resource.
"""

from __future__ import annotations

import functools
import json
import logging
import math
import re
import time
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

from ._spec import Operation, Parameter, is_json, problem_body
from ._state import FAULT_FIELDS, MockState, encode_json

__all__ = ["API_PREFIX", "CONTROL_PREFIX", "build_app"]

logger = logging.getLogger("service_api_mock")

API_PREFIX = "/public/v3"
CONTROL_PREFIX = "/__mock__"

DEFAULT_PAGE_SIZE = 50
MAX_PAGE_SIZE = 50
# Python refuses to parse integers of more than 4300 digits; no page is that far anyway.
_INTEGER = re.compile(r"[+-]?[0-9]{1,4000}")
_NUMBER = re.compile(r"[+-]?([0-9]{1,300}(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]{1,3})?")
_EXPIRED = (
    'Bearer error="invalid_token", error_description="The token expired at \'{}\'"'
)
_NO_STORE = {"cache-control": "no-store", "pragma": "no-cache"}


# ---- small response builders ---------------------------------------------------------


def _seconds_header(seconds: float) -> str:
    # Whole seconds are the HTTP form; a fraction is kept so tests can ask for short waits.
    # Milliseconds at most, and no trailing zeros or point: 2.0 is "2", 1.0004 is "1".
    return f"{seconds:.3f}".rstrip("0").rstrip(".")


def answer(
    op: Operation,
    status: int,
    detail: str = "",
    headers: dict[str, str] | None = None,
    body: object = None,
) -> Response:
    """``status`` as ``op`` declares it: a JSON problem (or ``body``), HTML, text or nothing.

    Example::

        answer(op, 404, "No shipment has this identifier.")
    """
    media = op.answers[status]
    if media is None:
        return Response(status_code=status, headers=headers)
    title = HTTPStatus(status).phrase
    if is_json(media):
        content = encode_json(
            body if body is not None else problem_body(status, detail)
        )
    elif media == "text/html":
        content = f"<html><body><h1>{status} {title}</h1></body></html>".encode()
    else:
        content = title.encode()
    return Response(content, status_code=status, media_type=media, headers=headers)


def _retry_after(op: Operation, status: int, seconds: float) -> Response:
    return answer(op, status, headers={"retry-after": _seconds_header(seconds)})


def _media_type(request: Request) -> str:
    return request.headers.get("content-type", "").split(";")[0].strip().lower()


def _bearer_token(request: Request) -> str:
    # Like ASP.NET's JwtBearer: a header of another scheme, or without a token, is no token.
    scheme, _, token = request.headers.get("authorization", "").strip().partition(" ")
    return token.strip() if scheme.lower() == "bearer" else ""


class _Refused(Exception):
    """Raised by a handler for a request the spec's declared error answers."""

    def __init__(
        self, status: int, detail: str = "", headers: dict[str, str] | None = None
    ):
        super().__init__(detail)
        self.status, self.detail, self.headers = status, detail, headers


@functools.lru_cache(
    maxsize=4096
)  # a listing sends the same few values again and again
def _coerce(parameter: Parameter, raw: str) -> Any:
    """The value of ``raw`` for ``parameter``; a 400 if its schema refuses it."""
    value: Any = None
    kinds = parameter.types
    if "integer" in kinds and _INTEGER.fullmatch(raw):
        value = int(raw)
    elif "number" in kinds and _NUMBER.fullmatch(raw) and math.isfinite(float(raw)):
        value = float(raw)
    elif "boolean" in kinds and raw in ("true", "false"):
        value = raw == "true"
    elif "string" in kinds:
        value = raw
    error = next(iter(parameter.validator.iter_errors(value)), None)
    if error is not None:
        reason = (
            f"{' or '.join(kinds)} expected" if value is None else error.message[:200]
        )
        raise _Refused(
            400, f"The value '{raw[:50]}' is not valid for {parameter.name}: {reason}."
        )
    return value


def _parameters(op: Operation, request: Request) -> dict[str, Any]:
    values: dict[str, Any] = {}
    for parameter in op.parameters:
        given = request.query_params.getlist(parameter.name)
        if len(given) > 1:
            raise _Refused(400, f"{parameter.name} is given more than once.")
        if given:
            values[parameter.name] = _coerce(parameter, given[0])
        elif parameter.required:
            raise _Refused(400, f"{parameter.name} is required.")
    return values


async def _json_body(op: Operation, request: Request) -> dict[str, Any]:
    """The request's JSON object, checked against the operation's schema; else a 400."""
    raw = await request.body()
    if op.body is None or (not raw.strip() and not op.body_required):
        return {}
    if not is_json(_media_type(request)):
        raise _Refused(400, "The body must be application/json.")
    try:
        value = json.loads(raw)
    except (ValueError, RecursionError):
        raise _Refused(400, "The body is not JSON.") from None
    error = next(iter(op.body.iter_errors(value)), None)
    if error is not None:
        where = "/".join(str(p) for p in error.absolute_path) or "the body"
        raise _Refused(400, f"{where}: {error.message[:200]}")
    if not isinstance(value, dict):
        raise _Refused(400, "A record is a JSON object.")
    return value


def _page_url(request: Request, size: int, number: int, filters: dict[str, str]) -> str:
    # Built from the request's own scheme and host, so links work on whatever port the
    # mock happens to listen on; the filters go along.
    query = urlencode({"pageSize": size, "pageNumber": number, **filters})
    return str(request.url.replace(query=query))


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


# ---- the front door and the public API ------------------------------------------------


@attrs.frozen
class _FrontDoor:
    """The ASGI app: finds, times, logs and counts each request and injects the faults (the
    front door), then serves it by its operation's shape (the public API) or hands it to
    the control API's router."""

    state: MockState
    router: ASGIApp  # the control API

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            # Lifespan and websockets: nothing to serve (uvicorn goes on without lifespan).
            return
        started = time.perf_counter()
        method: str = scope["method"]
        path: str = scope["path"]
        found = None
        if path.startswith(f"{API_PREFIX}/"):
            raw = scope.get("raw_path", b"").decode("latin-1") or path
            found = self.state.spec.match(raw.removeprefix(API_PREFIX))
        operation = None if found is None else found[0].get(method)
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

        plan = None if operation is None else self.state.plan_faults()
        if plan is not None and plan.delay > 0:
            await anyio.sleep(plan.delay)
        if plan is not None and operation is not None and plan.drop:
            self.state.record(operation.operation_id, 0)
            self._log(method, path, "dropped", started)
            await _drop_connection(receive, send)
            return
        try:
            response: ASGIApp = self.router
            if found is not None and operation is None:
                # The path is the spec's, the method is not: 405 with the declared ones.
                response = Response(
                    status_code=405, headers={"allow": ", ".join(found[0])}
                )
            elif found is not None and operation is not None and plan is not None:
                if plan.status is not None:
                    response = _retry_after(
                        operation, plan.status, self.state.config.retry_after
                    )
                else:
                    response = await self.serve(
                        operation, Request(scope, receive), found[1]
                    )
            await response(scope, receive, send_and_note)
        except Exception:
            logger.exception("%s %s failed; answering 503", method, path)
            if not status:
                fallback = Response(status_code=503, headers={"retry-after": "1"})
                if operation is not None:
                    fallback = _retry_after(operation, 503, 1.0)
                await fallback(scope, receive, send_and_note)
        self._log(method, path, str(status), started)

    def _log(self, method: str, path: str, shown: str, started: float) -> None:
        elapsed_ms = (time.perf_counter() - started) * 1000.0
        # Method, path and status only: never headers or bodies, which carry tokens and secrets.
        logger.info("%s %s %s %.1fms", method, path, shown, elapsed_ms)

    async def serve(
        self, op: Operation, request: Request, item: str | None
    ) -> Response:
        try:
            if op.kind == "token":
                return await self.authenticate(op, request)
            account = self._account(op, request)
            values = _parameters(op, request)
            if op.kind == "list":
                return self._page(op, request, account, values)
            return await self._record(op, request, account, item)
        except _Refused as refused:
            return answer(op, refused.status, refused.detail, refused.headers)

    def _account(self, op: Operation, request: Request) -> str:
        """Checks the bearer token, the quota and the account header; the account."""
        if not op.bearer:
            return ""
        token = _bearer_token(request)
        issued = self.state.token(token)
        if issued is None or self.state.now() >= issued.expires_at:
            challenge = 'Bearer error="invalid_token"' if token else "Bearer"
            if issued is not None:
                moment = datetime.fromtimestamp(issued.expires_at, UTC)
                challenge = _EXPIRED.format(moment.strftime("%m/%d/%Y %H:%M:%S"))
            raise _Refused(401, headers={"www-authenticate": challenge})
        self._count_against_quota(issued.client_id)
        if op.account_header is None:
            return ""
        given = request.headers.get(op.account_header)
        if given is None:
            raise _Refused(400, f"The {op.account_header} header is required.")
        if given not in self.state.accounts_of(issued.client_id):
            raise _Refused(403, "The credentials are not associated with this account.")
        return given

    def _count_against_quota(self, client_id: str) -> None:
        wait = self.state.rate_limit_wait(client_id)
        if wait is not None:
            raise _Refused(
                429, headers={"retry-after": _seconds_header(math.ceil(wait) or 1)}
            )

    async def authenticate(self, op: Operation, request: Request) -> Response:
        def oauth(status: int, error: str, description: str) -> Response:
            body = {"error": error, "error_description": description}
            return answer(op, status, headers=_NO_STORE, body=body)

        if _media_type(request) != "multipart/form-data":
            return oauth(
                400, "invalid_request", "The body must be multipart/form-data."
            )
        fields: dict[str, str] = {}
        try:
            async with request.form() as form:
                for name in ("client_id", "client_secret", "grant_type"):
                    value = form.get(name)
                    if isinstance(value, UploadFile):
                        value = (await value.read()).decode()
                    if value is not None:
                        fields[name] = value
        except Exception:
            # Any failure to read the body is the request's fault: a broken boundary,
            # bytes that are not UTF-8, too many parts...
            return oauth(400, "invalid_request", "The multipart body cannot be read.")
        # Only an absent field is malformed: an empty ID or secret is valid form data
        # that names no integration, hence invalid_client below.
        missing = [
            n for n in ("client_id", "client_secret", "grant_type") if n not in fields
        ]
        if missing:
            return oauth(
                400, "invalid_request", f"Missing form field(s): {', '.join(missing)}."
            )
        if fields["grant_type"] != "client_credentials":
            detail = "Only grant_type client_credentials is supported."
            return oauth(400, "unsupported_grant_type", detail)
        client_id = fields["client_id"]
        if not self.state.check_client(client_id, fields["client_secret"]):
            return oauth(401, "invalid_client", "The client credentials are invalid.")
        self._count_against_quota(client_id)
        token = self.state.issue_token(client_id)
        # expires_in is a whole number of seconds in a string; rounding down keeps a
        # client that trusts it on the safe side of a fractional test TTL.
        ttl = str(int(self.state.config.token_ttl))
        body = {"access_token": token, "token_type": "Bearer", "expires_in": ttl}
        return JSONResponse(body, status_code=op.success, headers=_NO_STORE)

    def _page(
        self, op: Operation, request: Request, account: str, values: dict[str, Any]
    ) -> Response:
        number: int = values.get("pageNumber", 1)
        size: int = min(values.get("pageSize", DEFAULT_PAGE_SIZE), MAX_PAGE_SIZE)
        filters = {f: values[f] for f in op.filters if f in values}
        rows, records = self.state.records(op.resource, account)
        if filters:
            pairs = zip(rows, records, strict=True)
            records = [
                e for r, e in pairs if all(r.get(f) == v for f, v in filters.items())
            ]
        total = len(records)
        last_page = math.ceil(total / size)
        start = (number - 1) * size
        given = {f: request.query_params[f] for f in filters}
        envelope: dict[str, Any] = {
            "totalRecords": total,
            "pageNumber": number,
            "pageSize": size,
        }
        if number + 1 <= last_page:
            envelope["next"] = _page_url(request, size, number + 1, given)
        if 1 <= number - 1 <= last_page:
            envelope["previous"] = _page_url(request, size, number - 1, given)
        page = records[start : start + size] if start < total else []
        # The envelope is encoded, then the page's pre-encoded records are spliced in as
        # "data" before its closing brace: the same JSON, without re-encoding records.
        body = encode_json(envelope)[:-1] + b',"data":[' + b",".join(page) + b"]}"
        return Response(body, status_code=op.success, media_type=op.answers[op.success])

    async def _record(
        self, op: Operation, request: Request, account: str, item: str | None
    ) -> Response:
        state, resource, kind = self.state, op.resource, op.kind
        record_id = (
            None if op.item_parameter is None else _coerce(op.item_parameter, str(item))
        )
        body = await _json_body(op, request)
        if kind == "create":
            record = state.create(resource, account, body)
        else:
            index = state.find(resource, account, record_id)
            if index is None:
                raise _Refused(
                    404, f"No record of {resource} has the identifier {item!r}."
                )
            id_field = str(state.spec.resources[resource].id_field)
            record = state.records(resource, account)[0][index]
            if kind in ("replace", "update"):
                record = {
                    **(record if kind == "update" else {}),
                    **body,
                    id_field: record_id,
                }
            if kind != "get":
                state.store(
                    resource, account, index, None if kind == "delete" else record
                )
        return answer(op, op.success, body=record)


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
    return _FrontDoor(state, Router(routes=routes))
