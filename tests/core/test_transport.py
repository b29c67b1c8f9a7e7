"""The guarded transports: credentials stay on the base origin, redirects included."""

import asyncio
import contextlib
import gzip
import http.client
import http.server
import threading
import time
import urllib.parse
from collections.abc import AsyncIterator, Callable, Iterator

import httpx
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response
from starlette.routing import Route

import service_api
from service_api import testing
from service_api._errors import MAX_BODY_CHARS
from service_api._pools import proxy_routes
from service_api._transport import (
    TOKEN_ERROR_EXTENSION,
    GuardedTransport,
    ServiceResponse,
)
from service_api_client.api.shipments import list_shipments
from service_api_client.models.shipment_page import ShipmentPage
from service_api_mock import DEMO_CLIENT_ID, DEMO_CLIENT_SECRET, RunningMock, serve_asgi

TOKEN = "redirect-test-token-0123"


class RecordingServer:
    """A tiny ASGI server on its own loopback port that records request headers."""

    def __init__(self) -> None:
        self.seen: list[dict[str, str]] = []
        self.token_requests: list[dict[str, str]] = []
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
        self.token_requests.append(dict(request.headers))
        return JSONResponse(
            {"access_token": TOKEN, "token_type": "Bearer", "expires_in": "3600"}
        )

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


@pytest.mark.parametrize(
    ("base", "url", "same"),
    [
        ("https://h/public/v3", "https://H:443/y", True),
        ("https://h:443/public/v3", "https://h/y", True),
        ("http://h/public/v3", "https://h/x", False),
        ("http://h:8080/public/v3", "http://h:8081/x", False),
        ("https://h/public/v3", "https://h.evil/x", False),
    ],
)
def test_the_origin_makes_default_ports_explicit(
    base: str, url: str, same: bool
) -> None:
    guard = GuardedTransport(None, base_url=httpx.URL(base))
    request = httpx.Request("GET", url, headers={"authorization": "Bearer t"})
    guard.strip_credentials(request)
    assert ("authorization" in request.headers) is same


def test_guard_strips_credentials_off_origin() -> None:
    guard = GuardedTransport(None, base_url=httpx.URL("https://api.test/public/v3"))
    creds = {"authorization": "Bearer t", "x-service-account-id": "a"}
    same = httpx.Request("GET", "https://api.test/public/v3/x", headers=creds)
    guard.strip_credentials(same)
    assert set(creds) <= set(same.headers)
    elsewhere = httpx.Request("GET", "https://cdn.test/x", headers=creds)
    guard.strip_credentials(elsewhere)
    assert not set(creds) & set(elsewhere.headers)


def test_sync_off_origin_redirect_carries_no_credentials(
    servers: tuple[RecordingServer, RecordingServer],
) -> None:
    base, other = servers
    with service_api.Client(
        f"{base.url}/public/v3", "cid", "redirect-secret", "acct-1"
    ) as client:
        response = client.get_httpx_client().get("/hop", follow_redirects=True)
    assert response.json() == {"ok": True}
    assert base.seen[0]["authorization"] == f"Bearer {TOKEN}"
    assert base.seen[0]["x-service-account-id"] == "acct-1"
    # The token request is built without the account header; it never gets one.
    assert len(base.token_requests) == 1
    assert "x-service-account-id" not in base.token_requests[0]
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
        response = await client.get_async_httpx_client().get(
            "/hop", follow_redirects=True
        )
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
        max_response_bytes=max_response_bytes,
    )
    return transport, transport


def read_through(transport: GuardedTransport, twin: str) -> bytes:
    """The body of one GET through ``transport``, read by the ``twin`` side."""
    request = httpx.Request("GET", f"{BASE}/shipments")

    async def aread() -> bytes:
        return await (await transport.handle_async_request(request)).aread()

    return (
        transport.handle_request(request).read()
        if twin == "sync"
        else asyncio.run(aread())
    )


@pytest.mark.parametrize(
    ("status", "headers"),
    [(200, None), (500, None), (200, {"content-length": str(50 * 1024)})],
    ids=["success", "error", "declared-length"],
)
def test_a_body_past_the_limit_is_refused_and_its_stream_closed(
    twin: str, status: int, headers: dict[str, str] | None
) -> None:
    # An error body is refused like any other; a declared length changes nothing either.
    stream = Chunks(50)
    with pytest.raises(
        service_api.InvalidResponseError, match="larger than 10240 bytes"
    ):
        read_through(guarded(status, stream, headers=headers)[0], twin)
    assert stream.sent == 11  # the chunk that crossed the limit, and not one more
    assert stream.closed


def test_a_body_of_exactly_the_limit_is_read_whole(twin: str) -> None:
    assert len(read_through(guarded(200, Chunks(10))[0], twin)) == 10 * 1024


def test_one_byte_past_the_limit_is_refused(twin: str) -> None:
    stream = Chunks(1, size=10 * 1024 + 1)
    with pytest.raises(
        service_api.InvalidResponseError, match="larger than 10240 bytes"
    ):
        read_through(guarded(200, stream)[0], twin)
    assert stream.closed


@pytest.mark.parametrize(("chunks", "whole"), [(8 * 1024, True), (8 * 1024 + 1, False)])
def test_the_default_bound_is_8_mib(chunks: int, whole: bool) -> None:
    def answer(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, stream=Chunks(chunks))

    transport = GuardedTransport(httpx.MockTransport(answer), base_url=httpx.URL(BASE))
    response = transport.handle_request(httpx.Request("GET", f"{BASE}/shipments"))
    with (
        contextlib.nullcontext()
        if whole
        else pytest.raises(
            service_api.InvalidResponseError,
            match=f"larger than {8 * 1024 * 1024} bytes",
        )
    ):
        assert len(response.read()) == 8 * 1024 * 1024


def get_shipments(client: service_api.Client, twin: str) -> None:
    if twin == "sync":
        client.get_httpx_client().get("/shipments")
    else:

        async def get() -> None:
            await client.get_async_httpx_client().get("/shipments")

        asyncio.run(get())


@pytest.mark.parametrize("path", ["/authenticate", "/shipments"])
def test_a_token_or_error_body_past_the_bound_is_typed_and_its_stream_closed(
    path: str, twin: str
) -> None:
    # One bound for every body: the token response is read inside the auth flow, the
    # error body inside send; each closes its stream, which drops the connection.
    streams: list[Chunks] = []

    def answer(request: httpx.Request) -> httpx.Response:
        if request.url.path.endswith("/authenticate") and path != "/authenticate":
            token = {
                "access_token": "t-1",
                "token_type": "Bearer",
                "expires_in": "3600",
            }
            return httpx.Response(200, json=token)
        streams.append(Chunks(50))
        return httpx.Response(
            200 if path == "/authenticate" else 503, stream=streams[-1]
        )

    args = {"transport": httpx.MockTransport(answer)}
    client = service_api.Client(
        BASE,
        "cid",
        "s3cret",
        max_retries=0,
        max_response_bytes=10 * 1024,
        httpx_args=args,
    )
    with (
        client,
        pytest.raises(service_api.InvalidResponseError, match="larger than 10240"),
    ):
        get_shipments(client, twin)
    assert [(stream.sent, stream.closed) for stream in streams] == [(11, True)]


def test_a_streamed_error_body_past_the_bound_closes_its_stream() -> None:
    stream = Chunks(50)

    def answer(request: httpx.Request) -> httpx.Response:
        if request.url.path.endswith("/authenticate"):
            token = {
                "access_token": "t-1",
                "token_type": "Bearer",
                "expires_in": "3600",
            }
            return httpx.Response(200, json=token)
        return httpx.Response(503, stream=stream)

    args = {"transport": httpx.MockTransport(answer)}
    client = service_api.Client(
        BASE,
        "cid",
        "s3cret",
        max_retries=0,
        max_response_bytes=10 * 1024,
        httpx_args=args,
    )
    # The client's send reads the error body before the block is entered.
    with (
        client,
        pytest.raises(service_api.InvalidResponseError, match="larger than 10240"),
        client.get_httpx_client().stream("GET", "/shipments"),
    ):
        pass
    assert (stream.sent, stream.closed) == (11, True)


def test_max_response_bytes_must_be_positive() -> None:
    # Checked once, where the setting is given: the transport trusts the client.
    with pytest.raises(ValueError, match="max_response_bytes"):
        service_api.Client(BASE, "cid", "s3cret", max_response_bytes=0)


# ---- the token request stays home ---------------------------------------------------------


def test_a_token_request_off_the_base_origin_is_never_sent() -> None:
    sent: list[httpx.Request] = []

    def answer(request: httpx.Request) -> httpx.Response:
        sent.append(request)
        return httpx.Response(200)

    transport = GuardedTransport(httpx.MockTransport(answer), base_url=httpx.URL(BASE))
    stray = httpx.Request(
        "POST", "https://evil.test/steal", extensions=TOKEN_EXTENSIONS
    )
    with pytest.raises(service_api.TokenResponseError, match=r"evil\.test"):
        transport.handle_request(stray)
    assert sent == []


@pytest.mark.parametrize("extensions", [TOKEN_EXTENSIONS, {}])
def test_a_token_request_that_fails_keeps_its_typed_error_for_the_auth_flow(
    extensions: dict[str, object], twin: str
) -> None:
    def refuse(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("[Errno 111] refused", request=request)

    transport = GuardedTransport(httpx.MockTransport(refuse), base_url=httpx.URL(BASE))
    request = httpx.Request("POST", f"{BASE}/authenticate", extensions=extensions)

    def send() -> httpx.Response:
        if twin == "sync":
            return transport.handle_request(request)
        return asyncio.run(transport.handle_async_request(request))

    with pytest.raises(httpx.ConnectError):  # httpx's own error goes on up
        send()
    kept = request.extensions.get(TOKEN_ERROR_EXTENSION)
    if extensions:  # a token request: its waiters read the typed error
        assert isinstance(kept, service_api.ApiConnectionError)
        assert "no answer for POST https://api.test/public/v3/authenticate" in str(kept)
    else:
        assert kept is None


def redirecting_token_endpoint(seen: list[str]) -> httpx.MockTransport:
    def answer(request: httpx.Request) -> httpx.Response:
        seen.append(f"{request.url.host} {request.content!r}")
        if request.url.host == "api.test":
            return httpx.Response(307, headers={"location": "https://evil.test/steal"})
        return httpx.Response(200, json={"access_token": "t", "token_type": "Bearer"})

    return httpx.MockTransport(answer)


@pytest.mark.parametrize(
    ("follow_redirects", "error", "message"),
    [
        # Not followed, a 3xx is the token endpoint's error status.
        (False, service_api.ApiStatusError, "307 Temporary Redirect for POST"),
        # Followed, the guard refuses to send the token request off the base origin.
        (
            True,
            service_api.TokenResponseError,
            r"never leaves the base origin \(evil\.test\)",
        ),
    ],
)
def test_a_redirected_token_request_ends_typed_and_never_leaves_the_origin(
    follow_redirects: bool, error: type[Exception], message: str, twin: str
) -> None:
    seen: list[str] = []
    transport = redirecting_token_endpoint(seen)
    args = {"transport": transport, "follow_redirects": follow_redirects}
    with (
        service_api.Client(BASE, "cid", "redirect-secret", httpx_args=args) as client,
        pytest.raises(error, match=message),
    ):
        get_shipments(client, twin)
    assert len(seen) == 1
    assert seen[0].startswith("api.test ")


# ---- one JSON parse -----------------------------------------------------------------------


def test_json_of_a_body_that_is_not_json_is_an_invalid_response_error() -> None:
    request = httpx.Request("GET", f"{BASE}/shipments")
    response = ServiceResponse(200, content=b"{broken", request=request)
    with pytest.raises(
        service_api.InvalidResponseError, match="not valid JSON"
    ) as info:
        response.json()
    assert isinstance(info.value, ValueError)
    assert ServiceResponse(200, content=b'{"a": [1]}', request=request).json() == {
        "a": [1]
    }


def test_json_of_a_body_nested_too_deeply_is_an_invalid_response_error() -> None:
    request = httpx.Request("GET", f"{BASE}/shipments")
    nested = ServiceResponse(200, content=b"[" * 5000 + b"]" * 5000, request=request)
    with pytest.raises(service_api.InvalidResponseError, match="not valid JSON"):
        nested.json()


def gzip_bomb(request: httpx.Request) -> httpx.Response:
    # 1 MiB of zeros compresses to about 1 KiB: small on the wire, large once inflated.
    body = gzip.compress(b"0" * 2**20)
    return httpx.Response(200, content=body, headers={"content-encoding": "gzip"})


def test_sync_a_compressed_body_counts_what_it_inflates_to() -> None:
    transport = GuardedTransport(
        httpx.MockTransport(gzip_bomb),
        base_url=httpx.URL(BASE),
        max_response_bytes=65536,
    )
    response = transport.handle_request(httpx.Request("GET", f"{BASE}/shipments"))
    with pytest.raises(
        service_api.InvalidResponseError, match="larger than 65536 bytes"
    ):
        response.read()


@pytest.mark.anyio
async def test_async_a_compressed_body_counts_what_it_inflates_to() -> None:
    transport = GuardedTransport(
        httpx.MockTransport(gzip_bomb),
        base_url=httpx.URL(BASE),
        max_response_bytes=65536,
    )
    response = await transport.handle_async_request(
        httpx.Request("GET", f"{BASE}/shipments")
    )
    with pytest.raises(
        service_api.InvalidResponseError, match="larger than 65536 bytes"
    ):
        await response.aread()


@pytest.mark.parametrize(
    ("max_response_bytes", "error"),
    [(65536, service_api.InvalidResponseError), (2**23, service_api.ServerError)],
)
def test_a_compressed_error_body_counts_what_it_inflates_to(
    max_response_bytes: int, error: type[service_api.ServiceApiError], twin: str
) -> None:
    # Gzip twice: a few hundred bytes on the wire, 4 MiB once inflated. Past the bound
    # the answer is refused; within it, the error keeps its status and MAX_BODY_CHARS.
    body = gzip.compress(gzip.compress(b"0" * 2**22))
    assert len(body) < 65536

    def answer(request: httpx.Request) -> httpx.Response:
        if request.url.path.endswith("/authenticate"):
            token = {
                "access_token": "t-1",
                "token_type": "Bearer",
                "expires_in": "3600",
            }
            return httpx.Response(200, json=token)
        return httpx.Response(
            503, content=body, headers={"content-encoding": "gzip, gzip"}
        )

    mock = {"transport": httpx.MockTransport(answer)}
    client = service_api.Client(
        BASE,
        "id",
        "secret",
        None,
        max_retries=0,
        max_response_bytes=max_response_bytes,
        httpx_args=mock,
    )
    with client, pytest.raises(error) as caught:
        get_shipments(client, twin)
    if isinstance(caught.value, service_api.ServerError):
        assert caught.value.body == "0" * MAX_BODY_CHARS
    else:
        assert "larger than 65536 bytes" in str(caught.value)


def test_a_compressed_body_within_the_limit_is_read_whole() -> None:
    transport = GuardedTransport(
        httpx.MockTransport(gzip_bomb),
        base_url=httpx.URL(BASE),
        max_response_bytes=2**21,
    )
    response = transport.handle_request(httpx.Request("GET", f"{BASE}/shipments"))
    assert response.read() == b"0" * 2**20


# ---- through a forward proxy --------------------------------------------------------------


class ForwardProxy:
    """A plain-HTTP forward proxy on loopback (absolute-form requests) that records what
    passed through it: method, absolute URL, and whether credentials went along."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, str, bool]] = []
        proxy = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def forward(self) -> None:
                target = urllib.parse.urlsplit(self.path)
                body = self.rfile.read(int(self.headers.get("content-length") or 0))
                proxy.seen.append(
                    (self.command, self.path, "authorization" in self.headers)
                )
                upstream = http.client.HTTPConnection(
                    target.hostname or "", target.port, timeout=10
                )
                path = target.path + (f"?{target.query}" if target.query else "")
                hop = {"proxy-connection", "connection", "keep-alive"}
                headers = {
                    k: v for k, v in self.headers.items() if k.lower() not in hop
                }
                upstream.request(self.command, path, body=body or None, headers=headers)
                answer = upstream.getresponse()
                data = answer.read()
                upstream.close()
                self.send_response(answer.status, answer.reason)
                skip = hop | {"transfer-encoding", "content-length"}
                for name, value in answer.getheaders():
                    if name.lower() not in skip:
                        self.send_header(name, value)
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = forward

            def log_message(self, format: str, *args: object) -> None:
                pass

        self._server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        # A short poll so that shutdown() returns at once.
        self._thread = threading.Thread(
            target=self._server.serve_forever,
            kwargs={"poll_interval": 0.01},
            daemon=True,
        )

    def paths(self) -> list[str]:
        return [
            f"{method} {urllib.parse.urlsplit(url).path}"
            for method, url, _ in self.seen
        ]

    def __enter__(self) -> "ForwardProxy":
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(10)


@pytest.fixture
def proxy(monkeypatch: pytest.MonkeyPatch) -> Iterator[ForwardProxy]:
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY"):
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.lower(), raising=False)
    with ForwardProxy() as running:
        yield running


def test_sync_proxy_argument_carries_every_request(
    proxy: ForwardProxy, mock: RunningMock
) -> None:
    with service_api.Client(
        mock.base_url, DEMO_CLIENT_ID, DEMO_CLIENT_SECRET, "acct-1", proxy=proxy.url
    ) as client:
        page = list_shipments.sync(client=client, page_size=5)
    assert isinstance(page, ShipmentPage)
    assert proxy.paths() == ["POST /public/v3/authenticate", "GET /public/v3/shipments"]
    assert proxy.seen[1][1].startswith(mock.base_url)  # absolute-form, to the service


@pytest.mark.parametrize("variable", ["HTTP_PROXY", "ALL_PROXY", "http_proxy"])
def test_proxy_from_the_environment(
    proxy: ForwardProxy,
    mock: RunningMock,
    monkeypatch: pytest.MonkeyPatch,
    variable: str,
) -> None:
    monkeypatch.setenv(variable, proxy.url)
    with service_api.Client(
        mock.base_url, DEMO_CLIENT_ID, DEMO_CLIENT_SECRET, "acct-1"
    ) as client:
        list_shipments.sync(client=client, page_size=5)
    assert proxy.paths() == ["POST /public/v3/authenticate", "GET /public/v3/shipments"]


@pytest.mark.anyio
async def test_async_proxy_from_the_environment(
    proxy: ForwardProxy, mock: RunningMock, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HTTP_PROXY", proxy.url)
    async with service_api.Client(
        mock.base_url, DEMO_CLIENT_ID, DEMO_CLIENT_SECRET, "acct-1"
    ) as client:
        assert isinstance(await list_shipments.asyncio(client=client), ShipmentPage)
    assert proxy.paths() == ["POST /public/v3/authenticate", "GET /public/v3/shipments"]


@pytest.mark.parametrize("no_proxy", ["127.0.0.1", "*"])
def test_no_proxy_bypasses_the_proxy(
    proxy: ForwardProxy,
    mock: RunningMock,
    monkeypatch: pytest.MonkeyPatch,
    no_proxy: str,
) -> None:
    monkeypatch.setenv("HTTP_PROXY", proxy.url)
    monkeypatch.setenv("NO_PROXY", no_proxy)
    with service_api.Client(
        mock.base_url, DEMO_CLIENT_ID, DEMO_CLIENT_SECRET, "acct-1"
    ) as client:
        assert isinstance(list_shipments.sync(client=client), ShipmentPage)
    assert proxy.seen == []
    assert mock.service.count("listShipments", 200) == 1


def test_trust_env_false_ignores_the_environment(
    proxy: ForwardProxy, mock: RunningMock, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HTTP_PROXY", proxy.url)
    args = {"trust_env": False}
    with service_api.Client(
        mock.base_url, DEMO_CLIENT_ID, DEMO_CLIENT_SECRET, "acct-1", httpx_args=args
    ) as client:
        list_shipments.sync(client=client)
    assert proxy.seen == []


def test_retries_and_the_size_bound_apply_through_a_proxy(
    proxy: ForwardProxy, mock: RunningMock
) -> None:
    with service_api.Client(
        mock.base_url,
        DEMO_CLIENT_ID,
        DEMO_CLIENT_SECRET,
        "acct-1",
        proxy=proxy.url,
        max_response_bytes=4096,
    ) as client:
        with pytest.raises(
            service_api.InvalidResponseError, match="larger than 4096 bytes"
        ):
            list_shipments.sync(client=client, page_size=50)
        mock.service.set_faults(fault_rate=1.0, retry_after=0.25)
        with (
            testing.no_retry_sleep() as delays,
            pytest.raises((service_api.ServerError, service_api.RateLimitError)),
        ):
            list_shipments.sync(client=client, page_size=1)
    retries = service_api.RetryPolicy().max_retries  # the default
    assert delays == [0.25] * retries
    assert proxy.paths()[-1 - retries :] == ["GET /public/v3/shipments"] * (1 + retries)


def test_off_origin_redirect_through_a_proxy_carries_no_credentials(
    proxy: ForwardProxy, servers: tuple[RecordingServer, RecordingServer]
) -> None:
    base, other = servers
    with service_api.Client(
        f"{base.url}/public/v3", "cid", "redirect-secret", "acct-1", proxy=proxy.url
    ) as client:
        response = client.get_httpx_client().get("/hop", follow_redirects=True)
    assert response.json() == {"ok": True}
    assert [has_credentials for _, _, has_credentials in proxy.seen] == [
        False,
        True,
        False,
    ]
    assert "authorization" not in other.seen[0]
    assert "x-service-account-id" not in other.seen[0]


def test_a_proxy_in_httpx_args_is_guarded_too(
    proxy: ForwardProxy, mock: RunningMock
) -> None:
    args = {"proxy": httpx.Proxy(proxy.url)}
    with service_api.Client(
        mock.base_url, DEMO_CLIENT_ID, DEMO_CLIENT_SECRET, "acct-1", httpx_args=args
    ) as client:
        transport = client.get_httpx_client()._transport_for_url(
            httpx.URL(mock.base_url)
        )
        assert isinstance(transport, GuardedTransport)
        list_shipments.sync(client=client)
    assert proxy.paths() == ["POST /public/v3/authenticate", "GET /public/v3/shipments"]


# ---- no way around the guard: mounts and other ways to give a transport ---------------------

GUARD_BASE = "https://api.test/public/v3"


class MountedService:
    """Answers for a mount: a token, then ``statuses`` (503 with Retry-After) or a page of
    ``page_bytes``; records what reached it."""

    def __init__(
        self, statuses: list[int] | None = None, page_bytes: int = 100
    ) -> None:
        self.statuses = statuses or []
        self.page_bytes = page_bytes
        self.seen: list[httpx.Request] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.seen.append(request)
        if request.url.path.endswith("/authenticate"):
            return httpx.Response(
                200,
                json={
                    "access_token": TOKEN,
                    "token_type": "Bearer",
                    "expires_in": "3600",
                },
            )
        if request.url.path.endswith("/hop"):
            return httpx.Response(
                302, headers={"location": "https://elsewhere.test/grab"}
            )
        if self.statuses:
            return httpx.Response(self.statuses.pop(0), headers={"retry-after": "0.5"})
        padding = "x" * self.page_bytes
        return httpx.Response(
            200,
            json={
                "totalRecords": 0,
                "pageNumber": 1,
                "pageSize": 50,
                "data": [],
                "p": padding,
            },
        )


def mounted_client(mounts: dict[str, object], **kwargs: object) -> service_api.Client:
    return service_api.Client(
        GUARD_BASE,
        "cid",
        "mount-secret",
        "acct-1",
        httpx_args={"mounts": mounts},
        **kwargs,  # type: ignore[arg-type]
    )


def test_sync_a_mount_for_the_api_is_size_bounded_and_retried() -> None:
    service = MountedService(statuses=[503, 503], page_bytes=10_000)
    transport = httpx.MockTransport(service)
    with mounted_client(
        {"https://api.test": transport}, max_response_bytes=4096
    ) as client:
        assert isinstance(
            client.get_httpx_client()._transport_for_url(httpx.URL(GUARD_BASE)),
            GuardedTransport,
        )
        with (
            testing.no_retry_sleep() as delays,
            pytest.raises(
                service_api.InvalidResponseError, match="larger than 4096 bytes"
            ),
        ):
            list_shipments.sync(client=client)
    assert delays == [0.5, 0.5]
    assert len(service.seen) == 1 + 3


@pytest.mark.anyio
async def test_async_a_mount_for_the_api_is_size_bounded_and_retried() -> None:
    service = MountedService(statuses=[503], page_bytes=10_000)
    transport = httpx.MockTransport(service)
    async with mounted_client({"all://": transport}, max_response_bytes=4096) as client:
        with (
            testing.no_retry_sleep() as delays,
            pytest.raises(
                service_api.InvalidResponseError, match="larger than 4096 bytes"
            ),
        ):
            await list_shipments.asyncio(client=client)
    assert delays == [0.5]
    assert len(service.seen) == 1 + 2


@pytest.mark.parametrize("twin_side", ["sync", "async"])
def test_a_mount_for_another_origin_gets_no_credentials(twin_side: str) -> None:
    api = MountedService()
    elsewhere = MountedService()
    mounts = {
        "https://api.test": httpx.MockTransport(api),
        "https://elsewhere.test": httpx.MockTransport(elsewhere),
    }
    client = service_api.Client(
        GUARD_BASE,
        "cid",
        "mount-secret",
        "acct-1",
        httpx_args={"mounts": mounts, "follow_redirects": True},
    )
    with client:
        if twin_side == "sync":
            client.get_httpx_client().get("/hop")
        else:

            async def hop() -> None:
                await client.get_async_httpx_client().get("/hop")

            asyncio.run(hop())
    (grabbed,) = elsewhere.seen
    assert grabbed.url.path == "/grab"
    assert "authorization" not in grabbed.headers
    assert "x-service-account-id" not in grabbed.headers
    assert api.seen[-1].headers["authorization"] == f"Bearer {TOKEN}"


def test_a_sync_only_mount_refuses_async_calls_clearly() -> None:
    with (
        httpx.HTTPTransport() as sync_only,
        mounted_client({"all://": sync_only}) as client,
    ):

        async def call() -> None:
            await list_shipments.asyncio(client=client)

        with pytest.raises(
            TypeError, match=r"\(HTTPTransport\) serves sync requests only"
        ):
            asyncio.run(call())


def test_a_proxy_with_a_transport_is_refused() -> None:
    transport = httpx.MockTransport(MountedService())
    with pytest.raises(TypeError, match="proxy or httpx_args 'transport'"):
        service_api.Client(
            GUARD_BASE,
            "cid",
            "mount-secret",
            proxy="http://127.0.0.1:3",
            httpx_args={"transport": transport},
        )


@pytest.mark.parametrize(
    ("args", "named"),
    [
        ({"app": object()}, "'app'"),
        ({"app": object(), "auth": ("user", "password")}, "'app', 'auth'"),
        ({"base_url": "https://elsewhere.test"}, "'base_url'"),
        ({"proxies": {"all://": "http://127.0.0.1:3"}}, "'proxies'"),
        (
            {
                "transport": httpx.MockTransport(MountedService()),
                "proxy": "http://127.0.0.1:3",
            },
            "'transport' and 'proxy'",
        ),
        ({"mounts": {"all://": "http://127.0.0.1:3"}}, "'mounts'"),
        ({"mounts": [("all://", None)]}, "'mounts'"),
    ],
)
def test_httpx_args_that_would_bypass_the_guard_are_refused(
    args: dict[str, object], named: str
) -> None:
    with pytest.raises(TypeError, match=named):
        service_api.Client(GUARD_BASE, "cid", "mount-secret", httpx_args=args)


# ---- the client-side rate limit -----------------------------------------------------------


class Limiter:
    """A limiter that asks for ``waits`` (one per call) before granting, and records what
    it is told."""

    def __init__(self, *waits: float) -> None:
        self.waits = list(waits)
        self.asked = 0
        self.observed: list[tuple[int, str | None]] = []

    def try_acquire(self) -> float:
        self.asked += 1
        return self.waits.pop(0) if self.waits else 0.0

    def observe(self, response: httpx.Response) -> None:
        self.observed.append(
            (response.status_code, response.headers.get("retry-after"))
        )


def limited(limiter: Limiter) -> GuardedTransport:
    def answer(request: httpx.Request) -> httpx.Response:
        if request.url.path.endswith("/busy"):
            return httpx.Response(429, headers={"retry-after": "7"})
        return httpx.Response(200, json={})

    return GuardedTransport(
        httpx.MockTransport(answer), base_url=httpx.URL(BASE), limiter=limiter
    )


def test_sync_each_request_waits_for_the_limiter_which_learns_each_answer(
    patch_for_this_thread: Callable[..., None],
) -> None:
    slept: list[float] = []
    patch_for_this_thread(time, "sleep", slept.append)
    limiter = Limiter(0.5, 0.25)
    transport = limited(limiter)
    assert (
        transport.handle_request(httpx.Request("GET", f"{BASE}/busy")).status_code
        == 429
    )
    assert slept == [0.5, 0.25]  # until the limiter grants the request
    transport.handle_request(httpx.Request("GET", f"{BASE}/shipments"))
    assert slept == [0.5, 0.25]
    assert limiter.observed == [(429, "7"), (200, None)]
    assert limiter.asked == 4  # until granted, for each request


@pytest.mark.anyio
async def test_async_each_request_waits_for_the_limiter_which_learns_each_answer(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    slept: list[float] = []
    this_loop, real_sleep = asyncio.get_running_loop(), asyncio.sleep

    async def sleep(seconds: float) -> None:  # another loop still sleeps
        if asyncio.get_running_loop() is this_loop:
            slept.append(seconds)
        else:
            await real_sleep(seconds)

    monkeypatch.setattr(asyncio, "sleep", sleep)
    limiter = Limiter(0.5, 0.25)
    transport = limited(limiter)
    busy = await transport.handle_async_request(httpx.Request("GET", f"{BASE}/busy"))
    assert busy.status_code == 429
    assert slept == [0.5, 0.25]
    await transport.handle_async_request(httpx.Request("GET", f"{BASE}/shipments"))
    assert slept == [0.5, 0.25]
    assert limiter.observed == [(429, "7"), (200, None)]
    assert limiter.asked == 4


# ---- the routes, as httpx would take them ------------------------------------------------------


@pytest.fixture
def clean_proxy_environment(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY"):
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.lower(), raising=False)
    return monkeypatch


def test_a_proxy_given_carries_every_url_whatever_the_environment(
    clean_proxy_environment: pytest.MonkeyPatch,
) -> None:
    clean_proxy_environment.setenv("HTTPS_PROXY", "http://env-proxy:3128")
    given = httpx.Proxy("http://mine:8080")
    assert proxy_routes(given, True) == {"all://": given}
    routes = proxy_routes("http://mine:8080", True)
    assert list(routes) == ["all://"]
    assert str(routes["all://"].url) == "http://mine:8080"  # type: ignore[union-attr]


def test_the_environment_s_proxies_and_exceptions_become_url_patterns(
    clean_proxy_environment: pytest.MonkeyPatch,
) -> None:
    clean_proxy_environment.setenv(
        "HTTPS_PROXY", "env-proxy:3128"
    )  # no scheme: http://
    clean_proxy_environment.setenv(
        "NO_PROXY", "example.com, ::1,10.0.0.7,http://internal"
    )
    routes = proxy_routes(None, True)
    proxies = {k: str(p.url) for k, p in routes.items() if p is not None}
    assert proxies == {"https://": "http://env-proxy:3128"}
    bypassed = {k for k, p in routes.items() if p is None}
    assert bypassed == {
        "all://*example.com",
        "all://[::1]",
        "all://*10.0.0.7",
        "http://internal",
    }
    # Each is a pattern httpx routes by as meant: a domain with its subdomains, an IPv6 host.
    for pattern, url in [
        ("all://*example.com", "https://api.example.com/x"),
        ("all://*example.com", "http://example.com/x"),
        ("all://[::1]", "https://[::1]:8443/x"),
    ]:
        assert answered_by_mount(pattern, url), (pattern, url)
    assert not answered_by_mount("all://*example.com", "https://example.org/x")
    assert proxy_routes(None, False) == {}


def answered_by_mount(pattern: str, url: str) -> bool:
    """Whether httpx sends ``url`` to the transport mounted at ``pattern``."""
    default = httpx.MockTransport(lambda request: httpx.Response(200, text="default"))
    mounted = httpx.MockTransport(lambda request: httpx.Response(200, text="mounted"))
    with httpx.Client(transport=default, mounts={pattern: mounted}) as client:
        return client.get(url).text == "mounted"


def test_no_proxy_star_bypasses_every_proxy(
    clean_proxy_environment: pytest.MonkeyPatch,
) -> None:
    clean_proxy_environment.setenv("ALL_PROXY", "http://env-proxy:3128")
    clean_proxy_environment.setenv("NO_PROXY", "internal, *")
    assert proxy_routes(None, True) == {}
