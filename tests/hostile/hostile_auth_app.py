"""A hostile service with ``/authenticate``: the misbehaviours that need credentials.

``hostile_app`` plays pagination faults to a client without credentials; this one issues
tokens, so it can misbehave around them and around the bodies and timing of answers.
``POST /public/v3/authenticate`` and ``GET /public/v3/{resource}`` follow ``mode``:

==========================  ============================================================
mode                        what the server does
==========================  ============================================================
``honest``                  a token (``expires_in`` "3600"), then one page of 3 records
``html_200``                list answers 200 ``text/html`` (a maintenance page)
``html_429``                list answers 429 ``text/html``, ``Retry-After: 0``
``html_503``                list answers 503 ``text/html``, no ``Retry-After``
``huge_body``               list answers 200 ``application/json``, ``huge_bytes`` of junk,
                            streamed in 1 MiB chunks
``huge_error``              list answers 500 with ``huge_bytes`` of HTML
``unauthorized_forever``    list answers 401 ``Bearer error="invalid_token"`` every time
``www_authenticate``        list answers 401 with ``www_authenticate`` as the header
``list_hangs``              list accepts and never answers (until ``hang`` seconds)
``token_hangs``             ``/authenticate`` accepts and never answers
``token_body``              ``/authenticate`` answers 200 with ``token_body`` (raw text)
``token_redirect``          ``/authenticate`` answers 307 to ``redirect_to``
==========================  ============================================================

Every request is recorded (path, ``Authorization``, whether the body held the secret),
so tests can count calls and check where credentials went. :func:`recording_app` is the
"other origin": it records whatever reaches it.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from service_api_mock import serve_asgi

TOKEN = "hostile-token-7Qv3s9LmX2"
SECRET = "hostile-secret-Zk4pW8nB1"
CLIENT_ID = "hostile-client"
CHUNK = 1 << 20
HTML = "<html><body><h1>Too many requests</h1><p>Please slow down.</p></body></html>"


@dataclass(frozen=True)
class Seen:
    """One request as the server saw it."""

    method: str
    path: str
    authorization: str | None = field(repr=False)  # a token: never in a failure report
    body_has_secret: bool = False


@dataclass
class AuthHostileState:
    """What the server does now, and what it was sent."""

    mode: str = "honest"
    www_authenticate: str = ""
    token_body: str = ""
    redirect_to: str = ""
    huge_bytes: int = 50 * CHUNK
    hang: float = 30.0
    seen: list[Seen] = field(default_factory=list, repr=False)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def reset(self, mode: str = "honest", **settings: Any) -> None:
        with self.lock:
            self.mode = mode
            self.www_authenticate = settings.get("www_authenticate", "")
            self.token_body = settings.get("token_body", "")
            self.redirect_to = settings.get("redirect_to", "")
            self.huge_bytes = settings.get("huge_bytes", 50 * CHUNK)
            self.hang = settings.get("hang", 30.0)
            self.seen = []

    def record(self, seen: Seen) -> None:
        with self.lock:
            self.seen.append(seen)

    def count(self, path_suffix: str) -> int:
        with self.lock:
            return sum(1 for s in self.seen if s.path.endswith(path_suffix))


async def _junk(total: int, filler: bytes) -> AsyncIterator[bytes]:
    chunk = filler * (CHUNK // len(filler))
    sent = 0
    while sent < total:
        piece = chunk[: min(len(chunk), total - sent)]
        sent += len(piece)
        yield piece


async def _record(state: AuthHostileState, request: Request) -> None:
    """Note what reached the server, and whether the secret was in the body."""
    body = await request.body()
    state.record(
        Seen(
            request.method,
            request.url.path,
            request.headers.get("authorization"),
            SECRET.encode() in body,
        )
    )


def create_auth_app(state: AuthHostileState) -> Starlette:
    """The hostile ASGI app, driven by ``state``."""

    async def authenticate(request: Request) -> Response:
        await _record(state, request)
        mode = state.mode
        if mode == "token_hangs":
            await asyncio.sleep(state.hang)
        if mode == "token_body":
            return Response(state.token_body, media_type="application/json")
        if mode == "token_redirect":
            return Response(status_code=307, headers={"location": state.redirect_to})
        return JSONResponse(
            {"access_token": TOKEN, "token_type": "Bearer", "expires_in": "3600"}
        )

    async def listing(request: Request) -> Response:
        await _record(state, request)
        mode = state.mode
        if mode == "html_200":
            return Response(HTML, media_type="text/html")
        if mode == "html_429":
            return Response(
                HTML, 429, media_type="text/html", headers={"retry-after": "0"}
            )
        if mode == "html_503":
            return Response(HTML, 503, media_type="text/html")
        if mode == "huge_body":
            return StreamingResponse(
                _junk(state.huge_bytes, b"x"), media_type="application/json"
            )
        if mode == "huge_error":
            return StreamingResponse(
                _junk(state.huge_bytes, b"<p>error</p>"), 500, media_type="text/html"
            )
        if mode == "unauthorized_forever":
            return Response(
                status_code=401,
                headers={"www-authenticate": 'Bearer error="invalid_token"'},
            )
        if mode == "www_authenticate":
            return Response(
                status_code=401, headers={"www-authenticate": state.www_authenticate}
            )
        if mode == "list_hangs":
            await asyncio.sleep(state.hang)
        data = [{"shipmentId": f"s-{i}", "deviceId": f"d-{i}"} for i in range(3)]
        return JSONResponse(
            {"totalRecords": 3, "pageNumber": 1, "pageSize": 50, "data": data}
        )

    return Starlette(
        routes=[
            Route("/public/v3/authenticate", authenticate, methods=["POST"]),
            Route("/public/v3/{resource:str}", listing, methods=["GET"]),
        ]
    )


def create_recording_app(state: AuthHostileState) -> Starlette:
    """Another origin: records every request that reaches it, answers 200 ``{}``."""

    async def anything(request: Request) -> Response:
        await _record(state, request)
        return JSONResponse({})

    return Starlette(routes=[Route("/{path:path}", anything, methods=["GET", "POST"])])


def serve(app: Starlette) -> contextlib.AbstractContextManager[str]:
    """Serve ``app`` on a free 127.0.0.1 port in a thread; yields its origin."""
    # A hung handler must not hold the session's end for long.
    return serve_asgi(app, name="hostile-auth-server", timeout_graceful_shutdown=1)
