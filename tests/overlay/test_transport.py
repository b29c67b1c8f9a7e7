"""The guarded transports: credentials stay on the base origin, redirects included."""

import threading
import time
from collections.abc import Iterator

import httpx
import pytest
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response
from starlette.routing import Route

import service_api
from service_api._retry import RetryPolicy
from service_api._transport import RequestGuard, origin

TOKEN = "redirect-test-token-0123"


class RecordingServer:
    """A tiny ASGI server on its own loopback port that records request headers."""

    def __init__(self) -> None:
        self.seen: list[dict[str, str]] = []
        self.target = ""  # where /public/v3/hop redirects
        app = Starlette(
            routes=[
                Route("/public/v3/authenticate", self.authenticate, methods=["POST"]),
                Route("/public/v3/hop", self.hop),
                Route("/land", self.land),
            ]
        )
        config = uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning", lifespan="off")
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    async def authenticate(self, request: Request) -> Response:
        return JSONResponse({"access_token": TOKEN, "token_type": "Bearer", "expires_in": "3600"})

    async def hop(self, request: Request) -> Response:
        self.seen.append(dict(request.headers))
        return RedirectResponse(self.target, status_code=307)

    async def land(self, request: Request) -> Response:
        self.seen.append(dict(request.headers))
        return JSONResponse({"ok": True})

    @property
    def url(self) -> str:
        port = self.server.servers[0].sockets[0].getsockname()[1]
        return f"http://127.0.0.1:{port}"

    def __enter__(self) -> "RecordingServer":
        self.thread.start()
        deadline = time.monotonic() + 10
        while not self.server.started:
            assert time.monotonic() < deadline, "server did not start"
            time.sleep(0.01)
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(10)


@pytest.fixture
def servers() -> Iterator[tuple[RecordingServer, RecordingServer]]:
    with RecordingServer() as base, RecordingServer() as other:
        base.target = f"{other.url}/land"
        yield base, other


def test_origin_makes_default_ports_explicit() -> None:
    assert origin(httpx.URL("https://h/x")) == origin(httpx.URL("https://H:443/y"))
    assert origin(httpx.URL("http://h/x")) != origin(httpx.URL("https://h/x"))
    assert origin(httpx.URL("http://h:8080/")) != origin(httpx.URL("http://h:8081/"))


def test_guard_strips_credentials_off_origin_and_the_account_on_token_requests() -> None:
    guard = RequestGuard(httpx.URL("https://api.test/public/v3"), RetryPolicy())
    creds = {"authorization": "Bearer t", "x-service-account-id": "a"}
    same = httpx.Request("GET", "https://api.test/public/v3/x", headers=creds)
    guard.strip_credentials(same)
    assert set(creds) <= set(same.headers)
    elsewhere = httpx.Request("GET", "https://cdn.test/x", headers=creds)
    guard.strip_credentials(elsewhere)
    assert not set(creds) & set(elsewhere.headers)
    token = httpx.Request(
        "POST",
        "https://api.test/public/v3/authenticate",
        headers=creds,
        extensions={"service_api.token_request": 1},
    )
    guard.strip_credentials(token)
    assert "x-service-account-id" not in token.headers


def test_sync_off_origin_redirect_carries_no_credentials(
    servers: tuple[RecordingServer, RecordingServer],
) -> None:
    base, other = servers
    with service_api.Client(f"{base.url}/public/v3", "cid", "redirect-secret", "acct-1") as client:
        response = client.get_httpx_client().get("/hop", follow_redirects=True)
    assert response.json() == {"ok": True}
    assert base.seen[0]["authorization"] == f"Bearer {TOKEN}"
    assert base.seen[0]["x-service-account-id"] == "acct-1"
    assert "authorization" not in other.seen[0]
    assert "x-service-account-id" not in other.seen[0]


@pytest.mark.anyio
async def test_async_off_origin_redirect_carries_no_credentials(
    servers: tuple[RecordingServer, RecordingServer],
) -> None:
    base, other = servers
    async with service_api.Client(
        f"{base.url}/public/v3", "cid", "redirect-secret", "acct-1"
    ) as client:
        response = await client.get_async_httpx_client().get("/hop", follow_redirects=True)
    assert response.json() == {"ok": True}
    assert "authorization" in base.seen[0]
    assert "authorization" not in other.seen[0]
    assert "x-service-account-id" not in other.seen[0]
