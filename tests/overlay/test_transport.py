"""The guarded transports: credentials stay on the base origin, redirects included."""

import gzip
from collections.abc import AsyncIterator, Iterator

import httpx
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response
from starlette.routing import Route

import service_api
from service_api._transport import (
    ERROR_BODY_BYTES,
    TOKEN_RESPONSE_BYTES,
    GuardedTransport,
    ServiceResponse,
    origin,
)
from service_api_mock import serve_asgi

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
        self._serving = serve_asgi(app, name="recording-server")
        self.url = ""

    async def authenticate(self, request: Request) -> Response:
        return JSONResponse({"access_token": TOKEN, "token_type": "Bearer", "expires_in": "3600"})

    async def hop(self, request: Request) -> Response:
        self.seen.append(dict(request.headers))
        return RedirectResponse(self.target, status_code=307)

    async def land(self, request: Request) -> Response:
        self.seen.append(dict(request.headers))
        return JSONResponse({"ok": True})

    def __enter__(self) -> "RecordingServer":
        self.url = self._serving.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self._serving.__exit__(None, None, None)


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
    guard = GuardedTransport(None, base_url=httpx.URL("https://api.test/public/v3"), owner=False)
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


# ---- body size bound ----------------------------------------------------------------------

BASE = "https://api.test/public/v3"
TOKEN_EXTENSIONS = {"service_api.token_request": 1}


class Chunks(httpx.SyncByteStream, httpx.AsyncByteStream):
    """A body of ``count`` chunks of ``size`` bytes that records how far it was read."""

    def __init__(self, count: int, size: int = 1024) -> None:
        self.count = count
        self.size = size
        self.sent = 0
        self.closed = False

    def __iter__(self) -> Iterator[bytes]:
        for _ in range(self.count):
            self.sent += 1
            yield b"x" * self.size

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for chunk in self:
            yield chunk

    def close(self) -> None:
        self.closed = True

    async def aclose(self) -> None:
        self.closed = True


def guarded(
    status: int,
    stream: Chunks,
    *,
    max_response_bytes: int = 10 * 1024,
    headers: dict[str, str] | None = None,
) -> tuple[GuardedTransport, GuardedTransport]:
    def answer(request: httpx.Request) -> httpx.Response:
        return httpx.Response(status, headers=headers, stream=stream)

    transport = GuardedTransport(
        httpx.MockTransport(answer),
        base_url=httpx.URL(BASE),
        owner=True,
        max_response_bytes=max_response_bytes,
    )
    return transport, transport


def test_sync_a_success_body_past_the_limit_is_refused_and_its_stream_closed() -> None:
    stream = Chunks(50)
    transport, _ = guarded(200, stream)
    response = transport.handle_request(httpx.Request("GET", f"{BASE}/shipments"))
    with pytest.raises(service_api.InvalidResponseError, match="larger than 10240 bytes"):
        response.read()
    assert stream.sent == 11  # the chunk that crossed the limit, and not one more
    assert stream.closed


@pytest.mark.anyio
async def test_async_a_success_body_past_the_limit_is_refused_and_its_stream_closed() -> None:
    stream = Chunks(50)
    _, transport = guarded(200, stream)
    response = await transport.handle_async_request(httpx.Request("GET", f"{BASE}/shipments"))
    with pytest.raises(service_api.InvalidResponseError, match="larger than 10240 bytes"):
        await response.aread()
    assert stream.sent == 11
    assert stream.closed


def test_a_body_within_the_limit_is_read_whole() -> None:
    stream = Chunks(10)
    transport, _ = guarded(200, stream)
    response = transport.handle_request(httpx.Request("GET", f"{BASE}/shipments"))
    assert len(response.read()) == 10 * 1024


def test_a_declared_length_past_the_limit_is_refused_before_reading() -> None:
    stream = Chunks(50)
    transport, _ = guarded(200, stream, headers={"content-length": str(50 * 1024)})
    with pytest.raises(service_api.InvalidResponseError, match="larger than"):
        transport.handle_request(httpx.Request("GET", f"{BASE}/shipments"))
    assert stream.sent == 0
    assert stream.closed


@pytest.mark.anyio
async def test_async_an_error_body_is_cut_to_what_the_error_keeps() -> None:
    stream = Chunks(50)
    _, transport = guarded(500, stream)
    response = await transport.handle_async_request(httpx.Request("GET", f"{BASE}/shipments"))
    assert len(await response.aread()) == ERROR_BODY_BYTES
    assert stream.sent == ERROR_BODY_BYTES // 1024 + 1
    assert stream.closed


def test_sync_an_error_body_is_cut_to_what_the_error_keeps() -> None:
    stream = Chunks(50)
    transport, _ = guarded(500, stream)
    response = transport.handle_request(httpx.Request("GET", f"{BASE}/shipments"))
    assert len(response.read()) == ERROR_BODY_BYTES
    assert stream.closed


def test_a_token_response_has_a_limit_of_its_own() -> None:
    stream = Chunks(TOKEN_RESPONSE_BYTES // 1024 + 1)
    transport, _ = guarded(200, stream, max_response_bytes=2**30)
    request = httpx.Request("POST", f"{BASE}/authenticate", extensions=TOKEN_EXTENSIONS)
    response = transport.handle_request(request)
    with pytest.raises(
        service_api.InvalidResponseError, match=f"larger than {TOKEN_RESPONSE_BYTES}"
    ):
        response.read()


def test_max_response_bytes_must_be_positive() -> None:
    with pytest.raises(ValueError, match="max_response_bytes"):
        GuardedTransport(None, base_url=httpx.URL(BASE), owner=False, max_response_bytes=0)


# ---- the token request stays home ---------------------------------------------------------


def test_a_token_request_off_the_base_origin_is_never_sent() -> None:
    sent: list[httpx.Request] = []

    def answer(request: httpx.Request) -> httpx.Response:
        sent.append(request)
        return httpx.Response(200)

    transport = GuardedTransport(httpx.MockTransport(answer), base_url=httpx.URL(BASE), owner=True)
    stray = httpx.Request("POST", "https://evil.test/steal", extensions=TOKEN_EXTENSIONS)
    with pytest.raises(service_api.TokenResponseError, match=r"evil\.test"):
        transport.handle_request(stray)
    assert sent == []


def redirecting_token_endpoint(seen: list[str]) -> httpx.MockTransport:
    def answer(request: httpx.Request) -> httpx.Response:
        seen.append(f"{request.url.host} {request.content!r}")
        if request.url.host == "api.test":
            return httpx.Response(307, headers={"location": "https://evil.test/steal"})
        return httpx.Response(200, json={"access_token": "t", "token_type": "Bearer"})

    return httpx.MockTransport(answer)


def test_sync_a_redirected_token_request_is_refused_even_when_following_redirects() -> None:
    seen: list[str] = []
    transport = redirecting_token_endpoint(seen)
    args = {"transport": transport, "follow_redirects": True}
    with (
        service_api.Client(BASE, "cid", "redirect-secret", httpx_args=args) as client,
        pytest.raises(service_api.TokenResponseError, match="307"),
    ):
        client.get_httpx_client().get("/shipments")
    assert len(seen) == 1
    assert seen[0].startswith("api.test ")


@pytest.mark.anyio
async def test_async_a_redirected_token_request_is_refused_even_when_following_redirects() -> None:
    seen: list[str] = []
    transport = redirecting_token_endpoint(seen)
    args = {"transport": transport, "follow_redirects": True}
    async with service_api.Client(BASE, "cid", "redirect-secret", httpx_args=args) as client:
        with pytest.raises(service_api.TokenResponseError, match="307"):
            await client.get_async_httpx_client().get("/shipments")
    assert len(seen) == 1
    assert seen[0].startswith("api.test ")


# ---- one JSON parse -----------------------------------------------------------------------


def test_json_of_a_body_that_is_not_json_is_an_invalid_response_error() -> None:
    request = httpx.Request("GET", f"{BASE}/shipments")
    response = ServiceResponse(200, content=b"{broken", request=request)
    with pytest.raises(service_api.InvalidResponseError, match="not valid JSON") as info:
        response.json()
    assert isinstance(info.value, ValueError)
    assert ServiceResponse(200, content=b'{"a": [1]}', request=request).json() == {"a": [1]}


def gzip_bomb(request: httpx.Request) -> httpx.Response:
    # 1 MiB of zeros compresses to about 1 KiB: small on the wire, large once inflated.
    body = gzip.compress(b"0" * 2**20)
    return httpx.Response(200, content=body, headers={"content-encoding": "gzip"})


def test_sync_a_compressed_body_counts_what_it_inflates_to() -> None:
    transport = GuardedTransport(
        httpx.MockTransport(gzip_bomb),
        base_url=httpx.URL(BASE),
        owner=True,
        max_response_bytes=65536,
    )
    response = transport.handle_request(httpx.Request("GET", f"{BASE}/shipments"))
    with pytest.raises(service_api.InvalidResponseError, match="larger than 65536 bytes"):
        response.read()


@pytest.mark.anyio
async def test_async_a_compressed_body_counts_what_it_inflates_to() -> None:
    transport = GuardedTransport(
        httpx.MockTransport(gzip_bomb),
        base_url=httpx.URL(BASE),
        owner=True,
        max_response_bytes=65536,
    )
    response = await transport.handle_async_request(httpx.Request("GET", f"{BASE}/shipments"))
    with pytest.raises(service_api.InvalidResponseError, match="larger than 65536 bytes"):
        await response.aread()


def test_a_compressed_body_within_the_limit_is_read_whole() -> None:
    transport = GuardedTransport(
        httpx.MockTransport(gzip_bomb),
        base_url=httpx.URL(BASE),
        owner=True,
        max_response_bytes=2**21,
    )
    response = transport.handle_request(httpx.Request("GET", f"{BASE}/shipments"))
    assert response.read() == b"0" * 2**20
