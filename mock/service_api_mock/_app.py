"""The ASGI app: the public API under ``/public/v3``, the control API under ``/__mock__``.

A thin front door wraps a Starlette router. It times and logs every request, counts it
per operation and status, injects the configured faults, and turns any exception into a
503 so that the mock never answers 500 (the fuzz tests flag a 503 as loudly as a 500, so
a bug cannot hide behind it).
"""

from __future__ import annotations

import json
import logging
import math
import re
import time
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
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

from ._state import FAULT_FIELDS, MockState, encode_json

__all__ = ["API_PREFIX", "CONTROL_PREFIX", "OPERATIONS", "build_app"]

logger = logging.getLogger("service_api_mock")

API_PREFIX = "/public/v3"
CONTROL_PREFIX = "/__mock__"

# (method, path) -> operationId of openapi.yaml; used to count and to aim faults.
OPERATIONS: dict[tuple[str, str], str] = {
    ("POST", f"{API_PREFIX}/authenticate"): "authenticate",
    ("GET", f"{API_PREFIX}/shipments"): "listShipments",
    ("GET", f"{API_PREFIX}/devices"): "listDevices",
}

DEFAULT_PAGE_SIZE = 50
MAX_PAGE_SIZE = 50
# Python refuses to parse integers of more than 4300 digits; no page is that far anyway.
_INTEGER = re.compile(r"[+-]?[0-9]{1,4000}")
_EXPIRED = 'Bearer error="invalid_token", error_description="The token expired at \'{}\'"'
_TOO_MANY = "<html><body><h1>429 Too Many Requests</h1></body></html>"

Handler = Callable[[Request], Awaitable[Response]]


# ---- small response builders ---------------------------------------------------------


def _seconds_header(seconds: float) -> str:
    # Whole seconds are the HTTP form; a fraction is kept so tests can ask for short waits.
    if seconds == int(seconds):
        return str(int(seconds))
    return f"{seconds:.3f}".rstrip("0")


def _problem(status: int, title: str, detail: str) -> Response:
    # The shape ASP.NET Core gives 400 and 403 (RFC 9457 problem details).
    section = {400: "15.5.1", 403: "15.5.4"}.get(status, "15.5.1")
    body = {
        "type": f"https://tools.ietf.org/html/rfc9110#section-{section}",
        "title": title,
        "status": status,
        "detail": detail,
    }
    return JSONResponse(body, status_code=status, media_type="application/problem+json")


def _oauth_error(status: int, error: str, description: str) -> Response:
    return JSONResponse(
        {"error": error, "error_description": description},
        status_code=status,
        headers={"cache-control": "no-store", "pragma": "no-cache"},
    )


def _unauthorized(challenge: str) -> Response:
    # Empty body and content-length 0, as the seed shows for an expired token.
    return Response(status_code=401, headers={"www-authenticate": challenge})


def _too_many(retry_after: float) -> Response:
    return Response(
        _TOO_MANY,
        status_code=429,
        media_type="text/html",
        headers={"retry-after": _seconds_header(retry_after)},
    )


def _unavailable(retry_after: float) -> Response:
    return Response(status_code=503, headers={"retry-after": _seconds_header(retry_after)})


def _expired_challenge(expired_at: float) -> str:
    moment = datetime.fromtimestamp(expired_at, UTC)
    return _EXPIRED.format(moment.strftime("%m/%d/%Y %H:%M:%S"))


def _bearer_token(request: Request) -> str | None:
    # Like ASP.NET's JwtBearer: a header of another scheme, or without a token, is no token.
    header = request.headers.get("authorization", "")
    scheme, _, token = header.strip().partition(" ")
    token = token.strip()
    if scheme.lower() != "bearer" or not token:
        return None
    return token


def _page_parameter(request: Request, name: str, default: int) -> int | str:
    """The value of a paging parameter, or the reason it is refused."""
    values = request.query_params.getlist(name)
    if not values:
        return default
    if len(values) > 1:
        return f"{name} is given more than once."
    raw = values[0]
    if not _INTEGER.fullmatch(raw):
        return f"The value '{raw[:50]}' is not valid for {name}: an integer is expected."
    value = int(raw)
    if value < 1:
        return f"{name} must be at least 1, got {value}."
    return value


# ---- the public API ------------------------------------------------------------------


@attrs.frozen
class _PublicApi:
    state: MockState

    async def authenticate(self, request: Request) -> Response:
        media_type = request.headers.get("content-type", "").split(";")[0].strip().lower()
        if media_type != "multipart/form-data":
            return _oauth_error(400, "invalid_request", "The body must be multipart/form-data.")
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
            return _oauth_error(400, "invalid_request", "The multipart body cannot be read.")
        # Only an absent field is malformed: an empty ID or secret is valid form data
        # that names no integration, hence invalid_client below.
        missing = [n for n in ("client_id", "client_secret", "grant_type") if n not in fields]
        if missing:
            return _oauth_error(
                400, "invalid_request", f"Missing form field(s): {', '.join(missing)}."
            )
        if fields["grant_type"] != "client_credentials":
            return _oauth_error(
                400, "unsupported_grant_type", "Only grant_type client_credentials is supported."
            )
        client_id = fields["client_id"]
        if not self.state.check_client(client_id, fields["client_secret"]):
            return _oauth_error(401, "invalid_client", "The client credentials are invalid.")
        wait = self.state.rate_limit_wait(client_id)
        if wait is not None:
            return _too_many(math.ceil(wait) or 1)
        token = self.state.issue_token(client_id)
        # expires_in is a whole number of seconds in a string; rounding down keeps a
        # client that trusts it on the safe side of a fractional test TTL.
        body = {
            "access_token": token,
            "token_type": "Bearer",
            "expires_in": str(int(self.state.config.token_ttl)),
        }
        return JSONResponse(body, headers={"cache-control": "no-store", "pragma": "no-cache"})

    async def list_shipments(self, request: Request) -> Response:
        return self._page(request, "shipments")

    async def list_devices(self, request: Request) -> Response:
        return self._page(request, "devices")

    def _page(self, request: Request, resource: str) -> Response:
        token = _bearer_token(request)
        if token is None:
            return _unauthorized("Bearer")
        check = self.state.check_token(token)
        if check.expired_at is not None:
            return _unauthorized(_expired_challenge(check.expired_at))
        if check.client_id is None:
            return _unauthorized('Bearer error="invalid_token"')
        wait = self.state.rate_limit_wait(check.client_id)
        if wait is not None:
            return _too_many(math.ceil(wait) or 1)
        account = request.headers.get("x-service-account-id")
        if account is None:
            return _problem(400, "Bad Request", "The x-service-account-id header is required.")
        if account not in self.state.accounts_of(check.client_id):
            return _problem(
                403, "Forbidden", "The credentials are not associated with this account."
            )
        number = _page_parameter(request, "pageNumber", 1)
        size = _page_parameter(request, "pageSize", DEFAULT_PAGE_SIZE)
        errors = [v for v in (number, size) if isinstance(v, str)]
        if errors:
            return _problem(400, "One or more validation errors occurred.", " ".join(errors))
        assert isinstance(number, int)
        assert isinstance(size, int)
        size = min(size, MAX_PAGE_SIZE)  # the seed: a larger value is treated as 50
        records = self.state.encoded(resource, account)
        total = len(records)
        last_page = math.ceil(total / size)
        start = (number - 1) * size
        envelope: dict[str, Any] = {"totalRecords": total, "pageNumber": number, "pageSize": size}
        if number + 1 <= last_page:
            envelope["next"] = _page_url(request, size, number + 1)
        if 1 <= number - 1 <= last_page:
            envelope["previous"] = _page_url(request, size, number - 1)
        page = records[start : start + size] if start < total else []
        # The envelope is encoded, then the page's pre-encoded records are spliced in as
        # "data" before its closing brace: the same JSON, without re-encoding records.
        body = encode_json(envelope)[:-1] + b',"data":[' + b",".join(page) + b"]}"
        return Response(body, media_type="application/json")


def _page_url(request: Request, size: int, number: int) -> str:
    # Built from the request's own scheme and host, so links work on whatever port the
    # mock happens to listen on.
    return str(request.url.replace(query=urlencode({"pageSize": size, "pageNumber": number})))


# ---- the control API -----------------------------------------------------------------


@attrs.frozen
class _ControlApi:
    state: MockState

    async def counts(self, request: Request) -> Response:
        counts = self.state.counts()
        return JSONResponse(
            {op: {str(code): n for code, n in by.items()} for op, by in counts.items()}
        )

    async def tokens(self, request: Request) -> Response:
        return JSONResponse({"tokens": self.state.issued_tokens()})

    async def revoke(self, request: Request) -> Response:
        self.state.revoke_tokens()
        return Response(status_code=204)

    async def faults(self, request: Request) -> Response:
        changes = await _json_object(request)
        if isinstance(changes, Response):
            return changes
        try:
            config = self.state.set_faults(**changes)
        except (TypeError, ValueError) as exc:
            return _problem(400, "Bad Request", str(exc))
        return JSONResponse({name: getattr(config, name) for name in FAULT_FIELDS})

    async def clock(self, request: Request) -> Response:
        body = await _json_object(request)
        if isinstance(body, Response):
            return body
        advance = body.get("advance")
        if isinstance(advance, bool) or not isinstance(advance, int | float):
            return _problem(400, "Bad Request", 'Expected {"advance": <seconds>}.')
        try:
            offset = self.state.advance_clock(float(advance))
        except ValueError as exc:
            return _problem(400, "Bad Request", str(exc))
        return JSONResponse({"offset": offset})

    async def reset(self, request: Request) -> Response:
        overrides = await _json_object(request, allow_empty=True)
        if isinstance(overrides, Response):
            return overrides
        try:
            self.state.reset(**overrides)
        except (TypeError, ValueError) as exc:
            return _problem(400, "Bad Request", str(exc))
        return Response(status_code=204)


async def _json_object(request: Request, *, allow_empty: bool = False) -> dict[str, Any] | Response:
    raw = await request.body()
    if not raw.strip() and allow_empty:
        return {}
    try:
        value = json.loads(raw)
    except ValueError:
        return _problem(400, "Bad Request", "The body must be a JSON object.")
    if not isinstance(value, dict):
        return _problem(400, "Bad Request", "The body must be a JSON object.")
    return value


# ---- the front door --------------------------------------------------------------------


class _ConnectionDropped(Exception):
    """Raised inside the front door when a request's connection is cut on purpose."""


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


class _FrontDoor:
    def __init__(self, state: MockState, router: ASGIApp) -> None:
        self._state = state
        self._router = router

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            # Lifespan and websockets: nothing to serve, nothing to fail.
            if scope["type"] == "lifespan":
                await _lifespan(receive, send)
            return
        started = time.perf_counter()
        method: str = scope["method"]
        path: str = scope["path"]
        operation = OPERATIONS.get((method, path))
        status = 0
        response_started = False

        async def send_and_note(message: Message) -> None:
            nonlocal status, response_started
            if message["type"] == "http.response.start":
                status = message["status"]
                response_started = True
                # Counted before the client can see the answer: a test that asserts on
                # counts, or resets, right after a response never races the count.
                if operation is not None:
                    self._state.record(operation, status)
            await send(message)

        try:
            if operation is not None:
                plan = self._state.plan_faults()
                if plan.delay > 0:
                    await anyio.sleep(plan.delay)
                if plan.drop:
                    raise _ConnectionDropped
                if plan.status == 503:
                    await _unavailable(plan.retry_after)(scope, receive, send_and_note)
                elif plan.status == 429:
                    await _too_many(plan.retry_after)(scope, receive, send_and_note)
                else:
                    await self._router(scope, receive, send_and_note)
            else:
                await self._router(scope, receive, send_and_note)
        except _ConnectionDropped:
            if operation is not None:
                self._state.record(operation, 0)
            self._log(method, path, "dropped", started)
            await _drop_connection(receive, send)
            return
        except Exception:
            logger.exception("%s %s failed; answering 503", method, path)
            if not response_started:
                await _unavailable(1.0)(scope, receive, send_and_note)
        self._log(method, path, str(status), started)

    def _log(self, method: str, path: str, shown: str, started: float) -> None:
        elapsed_ms = (time.perf_counter() - started) * 1000.0
        # Method, path and status only: never headers or bodies, which carry tokens and secrets.
        logger.info("%s %s %s %.1fms", method, path, shown, elapsed_ms)


async def _lifespan(receive: Receive, send: Send) -> None:
    while True:
        message = await receive()
        if message["type"] == "lifespan.startup":
            await send({"type": "lifespan.startup.complete"})
        elif message["type"] == "lifespan.shutdown":
            await send({"type": "lifespan.shutdown.complete"})
            return


def build_app(state: MockState) -> ASGIApp:
    """The mock's ASGI application over ``state``.

    Example::

        app = build_app(MockState(MockConfig()))
    """
    public = _PublicApi(state)
    control = _ControlApi(state)
    routes = [
        Route(f"{API_PREFIX}/authenticate", public.authenticate, methods=["POST"]),
        Route(f"{API_PREFIX}/shipments", public.list_shipments, methods=["GET"]),
        Route(f"{API_PREFIX}/devices", public.list_devices, methods=["GET"]),
        Route(f"{CONTROL_PREFIX}/counts", control.counts, methods=["GET"]),
        Route(f"{CONTROL_PREFIX}/tokens", control.tokens, methods=["GET"]),
        Route(f"{CONTROL_PREFIX}/revoke", control.revoke, methods=["POST"]),
        Route(f"{CONTROL_PREFIX}/faults", control.faults, methods=["POST"]),
        Route(f"{CONTROL_PREFIX}/clock", control.clock, methods=["POST"]),
        Route(f"{CONTROL_PREFIX}/reset", control.reset, methods=["POST"]),
    ]
    # A bare Router rather than a Starlette application: the application's error
    # middleware would answer 500 before the front door could step in.
    return _FrontDoor(state, Router(routes=routes))
