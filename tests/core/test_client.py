"""The client against the mock over loopback HTTP, in sync/async pairs."""

import asyncio
import contextlib
import json
import logging
import socket
import subprocess
import sys
import threading
import time
import types
from collections.abc import Callable, Iterator
from typing import Any

import attrs
import httpx
import pytest
import uvicorn

import service_api
import service_api._client
from service_api import testing
from service_api_client.api.shipments import list_shipments
from service_api_client.models.shipment_page import ShipmentPage
from service_api_mock import (
    DEMO_CLIENT_ID,
    DEMO_CLIENT_SECRET,
    MockConfig,
    MockService,
    RunningMock,
    running_mock,
)


def make_client(
    mock: RunningMock, account: str | None = "acct-1", **kwargs: object
) -> service_api.Client:
    return service_api.Client(
        mock.base_url,
        DEMO_CLIENT_ID,
        DEMO_CLIENT_SECRET,
        account,
        **kwargs,  # type: ignore[arg-type]
    )


# The mock's faults are 503 or 429, both with Retry-After.
RETRYABLE = (service_api.ServerError, service_api.RateLimitError)


def ids(mock: RunningMock, account: str) -> list[str]:
    return [s["shipmentId"] for s in mock.service.dataset("shipments", account)[:50]]


@pytest.fixture
def client(mock: RunningMock) -> Iterator[service_api.Client]:
    with make_client(mock) as c:
        yield c


def test_repr_shows_no_secret(client: service_api.Client) -> None:
    assert repr(client) == (
        f"Client(base_url={client._base_url!r}, client_id='demo-client', account_id='acct-1')"
    )
    assert DEMO_CLIENT_SECRET not in repr(client) + str(client)


def test_the_token_is_refreshed_60_s_before_it_expires_by_default() -> None:
    # The documented default; a token of a shorter life is refreshed halfway (test_auth).
    client = service_api.Client("https://api.test/public/v3", "cid", "s3cret")
    assert client._shared.auth.skew == 60.0
    assert (
        service_api.Client(
            client._base_url, "cid", "s3cret", refresh_skew=5.0
        )._shared.auth.skew
        == 5.0
    )


def test_a_source_tree_not_installed_sends_an_unknown_version() -> None:
    script = (
        "import importlib.metadata as metadata\n"
        "def version(name):\n"
        "    raise metadata.PackageNotFoundError(name)\n"
        "metadata.version = version\n"
        "from service_api import _client\n"
        "print(_client._AGENT)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert done.stdout.startswith("service-api/0+unknown python/")


def test_sync_call_returns_the_parsed_page_with_one_token(
    mock: RunningMock, client: service_api.Client
) -> None:
    for _ in range(3):
        page = list_shipments.sync(client=client, page_size=5)
        assert isinstance(page, ShipmentPage)
    assert mock.service.count("authenticate") == 1
    assert mock.service.count("listShipments", 200) == 3


@pytest.mark.anyio
async def test_async_call_returns_the_parsed_page_with_one_token(
    mock: RunningMock,
) -> None:
    async with make_client(mock) as client:
        for _ in range(3):
            page = await list_shipments.asyncio(client=client, page_size=5)
            assert isinstance(page, ShipmentPage)
    assert mock.service.count("authenticate") == 1


def test_sync_expired_token_is_refreshed_and_replayed(
    mock: RunningMock, client: service_api.Client
) -> None:
    mock.service.reset(token_ttl=2)
    assert isinstance(list_shipments.sync(client=client), ShipmentPage)
    mock.service.advance_clock(5)
    assert isinstance(list_shipments.sync(client=client), ShipmentPage)
    assert mock.service.count("listShipments", 401) == 1
    assert mock.service.count("authenticate") == 2


@pytest.mark.anyio
async def test_async_expired_token_is_refreshed_and_replayed(mock: RunningMock) -> None:
    mock.service.reset(token_ttl=2)
    async with make_client(mock) as client:
        await list_shipments.asyncio(client=client)
        mock.service.advance_clock(5)
        assert isinstance(await list_shipments.asyncio(client=client), ShipmentPage)
    assert mock.service.count("listShipments", 401) == 1
    assert mock.service.count("authenticate") == 2


def test_sync_revoked_token_is_refreshed(
    mock: RunningMock, client: service_api.Client
) -> None:
    list_shipments.sync(client=client)
    mock.service.revoke_tokens()
    assert isinstance(list_shipments.sync(client=client), ShipmentPage)
    assert mock.service.count("authenticate") == 2


@pytest.mark.anyio
async def test_async_revoked_token_is_refreshed(mock: RunningMock) -> None:
    async with make_client(mock) as client:
        await list_shipments.asyncio(client=client)
        mock.service.revoke_tokens()
        assert isinstance(await list_shipments.asyncio(client=client), ShipmentPage)
    assert mock.service.count("authenticate") == 2


def test_sync_wrong_credentials(mock: RunningMock) -> None:
    with (
        service_api.Client(
            mock.base_url, DEMO_CLIENT_ID, "wrong-secret-123", "acct-1"
        ) as bad,
        pytest.raises(service_api.InvalidCredentialsError) as info,
    ):
        list_shipments.sync(client=bad)
    assert "wrong-secret-123" not in str(info.value)
    assert mock.service.count("listShipments") == 0


@pytest.mark.anyio
async def test_async_wrong_credentials(mock: RunningMock) -> None:
    async with service_api.Client(
        mock.base_url, "nobody", "wrong-secret-123", "acct-1"
    ) as bad:
        with pytest.raises(service_api.InvalidCredentialsError):
            await list_shipments.asyncio(client=bad)


def test_sync_status_errors_are_typed(
    mock: RunningMock, client: service_api.Client
) -> None:
    with pytest.raises(service_api.PermissionDeniedError) as info:
        list_shipments.sync(client=client.with_account("acct-9"))
    assert info.value.status_code == 403
    assert "authorization" not in str(info.value).lower()
    assert info.value.request is not None
    assert info.value.request.headers["authorization"] == "[redacted]"
    with pytest.raises(service_api.BadRequestError):
        list_shipments.sync(client=client.with_account(None))


@pytest.mark.anyio
async def test_async_status_errors_are_typed(mock: RunningMock) -> None:
    async with make_client(mock, "acct-9") as client:
        with pytest.raises(service_api.PermissionDeniedError):
            await list_shipments.asyncio(client=client)


def test_with_account_shares_the_token(
    mock: RunningMock, client: service_api.Client
) -> None:
    other = client.with_account("acct-2")
    assert other.account_id == "acct-2"
    first = list_shipments.sync(client=client)
    second = list_shipments.sync(client=other)
    assert isinstance(first, ShipmentPage)
    assert isinstance(second, ShipmentPage)
    assert [s.shipment_id for s in first.data] == ids(mock, "acct-1")
    assert [s.shipment_id for s in second.data] == ids(mock, "acct-2")
    assert mock.service.count("authenticate") == 1
    other.close()


def test_an_explicit_account_header_wins(
    mock: RunningMock, client: service_api.Client
) -> None:
    response = client.get_httpx_client().get(
        "/shipments", headers={"x-service-account-id": "acct-2"}
    )
    assert [s["shipmentId"] for s in response.json()["data"]] == ids(mock, "acct-2")


def test_sync_retry_after_is_honoured(
    mock: RunningMock, client: service_api.Client
) -> None:
    list_shipments.sync(client=client)  # token first: faults apply to every operation
    mock.service.set_faults(fault_rate=1.0, retry_after=1.5)
    with testing.no_retry_sleep() as delays, pytest.raises(RETRYABLE) as info:
        list_shipments.sync(client=client)
    retries = service_api.RetryPolicy().max_retries  # the default
    assert delays == [1.5] * retries
    assert getattr(info.value, "retry_after", None) == 1.5
    assert mock.service.count("listShipments") == 1 + 1 + retries


@pytest.mark.anyio
async def test_async_retry_after_is_honoured(mock: RunningMock) -> None:
    async with make_client(
        mock, retry=service_api.RetryPolicy(max_retries=1)
    ) as client:
        await list_shipments.asyncio(client=client)
        mock.service.set_faults(fault_rate=1.0, retry_after=2.0)
        with testing.no_retry_sleep() as delays, pytest.raises(RETRYABLE):
            await list_shipments.asyncio(client=client)
    assert delays == [2.0]
    assert mock.service.count("listShipments") == 1 + 2


def test_retry_after_beyond_the_cap_raises_at_once(mock: RunningMock) -> None:
    policy = service_api.RetryPolicy(max_retry_after=1.0)
    with make_client(mock, retry=policy) as client:
        list_shipments.sync(client=client)
        mock.service.set_faults(fault_rate=1.0, retry_after=30)
        with testing.no_retry_sleep() as delays, pytest.raises(RETRYABLE):
            list_shipments.sync(client=client)
    assert delays == []
    assert mock.service.count("listShipments") == 1 + 1


def closed_port() -> int:
    """A loopback port nothing listens at: bound, then closed."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


def call(client: service_api.Client, twin: str) -> ShipmentPage:
    """One page of shipments through the sync function or its async twin."""
    if twin == "sync":
        page = list_shipments.sync(client=client)
    else:
        page = asyncio.run(list_shipments.asyncio(client=client))
    assert isinstance(page, ShipmentPage)
    return page


@contextlib.contextmanager
def serve_on(port: int, service: MockService) -> Iterator[None]:
    """Serve ``service`` on a loopback port of the test's choosing (the mock's own
    fixtures take a free one): a service that stops and comes back where it was."""
    config = uvicorn.Config(
        service.app, host="127.0.0.1", port=port, log_level="warning", lifespan="off"
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        assert thread.is_alive(), "stopped while starting"
        assert time.monotonic() < deadline, "did not start in time"
        time.sleep(0.01)
    try:
        yield
    finally:
        server.should_exit = True
        thread.join(20)


@pytest.mark.parametrize(
    ("policy", "ceilings"),
    [
        # At most 3 retries of at most 0.5 s each, whatever the policy allows beyond.
        (service_api.RetryPolicy(), [0.25, 0.5, 0.5]),
        (service_api.RetryPolicy(initial_delay=5.0, max_retries=20), [0.5, 0.5, 0.5]),
        (service_api.RetryPolicy(max_retries=2), [0.25, 0.5]),
        (service_api.RetryPolicy(max_retries=0), []),
        (service_api.RetryPolicy(initial_delay=0.1, max_delay=0.3), [0.1, 0.2, 0.3]),
    ],
)
def test_a_refused_first_connection_gives_up_soon_saying_nothing_listens(
    twin: str,
    policy: service_api.RetryPolicy,
    ceilings: list[float],
    caplog: pytest.LogCaptureFixture,
) -> None:
    base_url = f"http://127.0.0.1:{closed_port()}/public/v3"
    client = service_api.Client(base_url, "cid", "some-secret-1", retry=policy)
    with (
        client,
        testing.no_retry_sleep() as delays,
        pytest.raises(service_api.ApiConnectionError) as info,
    ):
        call(client, twin)
    assert len(delays) == len(ceilings)
    assert all(0 <= delay <= most for delay, most in zip(delays, ceilings, strict=True))
    exact = service_api.Client(
        base_url, "cid", "some-secret-1", retry=attrs.evolve(policy, jitter=False)
    )
    with (
        exact,
        testing.no_retry_sleep() as delays,
        pytest.raises(service_api.ApiConnectionError, match="nothing listens"),
    ):
        call(exact, twin)
    assert delays == ceilings
    error = info.value
    assert str(error) == (
        f"nothing listens at the base URL {base_url} "
        f"(connection refused for POST {base_url}/authenticate)"
    )
    assert type(error) is service_api.ApiConnectionError
    assert isinstance(error.__cause__, httpx.ConnectError)
    assert error.request is not None
    assert str(error.request.url) == f"{base_url}/authenticate"
    assert "some-secret-1" not in str(error)
    # Each retry says so at WARNING, naming the request that failed: the token request.
    retries = [r for r in caplog.records if r.getMessage().startswith("retrying")]
    assert [r.levelno for r in retries] == [logging.WARNING] * 2 * len(ceilings)
    assert all(
        r.getMessage().startswith(
            "retrying POST /public/v3/authenticate after ApiConnectionError in "
        )
        for r in retries
    )


def test_a_refused_first_connection_of_a_child_has_the_short_budget_too() -> None:
    base_url = f"http://127.0.0.1:{closed_port()}/public/v3"
    with service_api.Client(base_url, "cid", "some-secret-1", "acct-1") as client:
        child = client.with_account("acct-2").with_options(max_retries=6)
        with (
            testing.no_retry_sleep() as delays,
            pytest.raises(service_api.ApiConnectionError, match="nothing listens"),
        ):
            list_shipments.sync(client=child)
    assert len(delays) == 3


def test_refused_connections_after_an_answer_keep_the_whole_budget(twin: str) -> None:
    policy = service_api.RetryPolicy(max_retries=4, jitter=False)
    with running_mock() as server:
        client = make_client(server, retry=policy)
        call(client, twin)  # the service answered this client
    # Stopped now: what refuses the connection was listening, and may come back.
    with (
        client,
        testing.no_retry_sleep() as delays,
        pytest.raises(service_api.ApiConnectionError) as info,
    ):
        call(client, twin)
    assert delays == [0.25, 0.5, 1.0, 2.0]
    assert str(info.value).startswith(f"no answer for GET {server.base_url}/shipments")
    assert "nothing listens" not in str(info.value)


def test_an_answer_to_a_child_counts_for_the_whole_family_of_clients() -> None:
    with running_mock() as server:
        client = make_client(server, max_retries=4)
        list_shipments.sync(client=client.with_account("acct-2"))
    with (
        client,
        testing.no_retry_sleep() as delays,
        pytest.raises(service_api.ApiConnectionError, match="no answer for GET"),
    ):
        list_shipments.sync(client=client.with_options(timeout=5.0))
    assert len(delays) == 4


def test_an_error_answer_counts_as_an_answer() -> None:
    with running_mock() as server:
        client = make_client(server, max_retries=4)
        server.service.set_faults(fault_rate=1.0, retry_after=0.001)
        with testing.no_retry_sleep(), pytest.raises(RETRYABLE):
            list_shipments.sync(client=client)
    with (
        client,
        testing.no_retry_sleep() as delays,
        pytest.raises(service_api.ApiConnectionError, match="no answer for"),
    ):
        list_shipments.sync(client=client)
    assert len(delays) == 4


class RestartAtFirstRetry(logging.Handler):
    """Brings the service back up when the client logs its first retry, before it sleeps:
    the next attempt finds it listening again."""

    def __init__(self, port: int, service: MockService) -> None:
        super().__init__(logging.WARNING)
        self.port, self.service = port, service
        self.serving = contextlib.ExitStack()
        self.retries: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.retries.append(record.getMessage())
        if len(self.retries) == 1:
            self.serving.enter_context(serve_on(self.port, self.service))


def test_a_service_that_comes_back_heals_the_retries(twin: str) -> None:
    port = closed_port()
    service = MockService(MockConfig())
    base_url = f"http://127.0.0.1:{port}/public/v3"
    client = service_api.Client(base_url, DEMO_CLIENT_ID, DEMO_CLIENT_SECRET, "acct-1")
    with serve_on(port, service):
        first = call(client, twin)
    restart = RestartAtFirstRetry(port, service)
    logger = logging.getLogger("service_api")
    logger.addHandler(restart)
    try:
        with client, restart.serving, testing.no_retry_sleep():
            assert call(client, twin) == first
    finally:
        logger.removeHandler(restart)
    assert len(restart.retries) == 1
    assert restart.retries[0].startswith(
        "retrying GET /public/v3/shipments after ApiConnectionError in "
    )


def test_storm_of_threads_and_tasks_makes_one_token_request(
    mock: RunningMock, client: service_api.Client
) -> None:
    """50 asyncio tasks and 8 threads share one client whose token the server expired."""
    list_shipments.sync(client=client, page_size=1)
    mock.service.advance_clock(3600 * 2)  # the server sees the cached token as expired
    assert mock.service.count("authenticate") == 1
    results: list[object] = []
    start = threading.Barrier(9)

    def in_thread() -> None:
        start.wait(10)
        results.append(list_shipments.sync(client=client, page_size=1))

    async def tasks() -> None:
        start.wait(10)
        pages = await asyncio.gather(
            *(list_shipments.asyncio(client=client, page_size=1) for _ in range(50))
        )
        results.extend(pages)
        await client.aclose()

    threads = [threading.Thread(target=in_thread) for _ in range(8)]
    for thread in threads:
        thread.start()
    asyncio.run(tasks())
    for thread in threads:
        thread.join(30)
    assert len(results) == 58
    assert all(isinstance(page, ShipmentPage) for page in results)
    assert (
        mock.service.count("authenticate") == 2
    )  # the first token and exactly one refresh


def test_two_event_loops_in_two_threads_share_one_fetch(
    mock: RunningMock, client: service_api.Client
) -> None:
    results: list[object] = []
    start = threading.Barrier(2)

    def loop_in_thread(c: service_api.Client) -> None:
        async def run() -> None:
            start.wait(10)
            pages = await asyncio.gather(
                *(list_shipments.asyncio(client=c, page_size=1) for _ in range(20))
            )
            results.extend(pages)
            await c.aclose()

        asyncio.run(run())

    threads = [
        threading.Thread(target=loop_in_thread, args=(client.with_account(account),))
        for account in ("acct-1", "acct-2")
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert len(results) == 40
    assert mock.service.count("authenticate") == 1


# ---- response size, JSON checks, the shared pool ------------------------------------------


def test_sync_a_page_over_max_response_bytes_is_a_typed_error(
    mock: RunningMock,
) -> None:
    with (
        make_client(mock, max_response_bytes=4096) as client,
        pytest.raises(service_api.InvalidResponseError, match="larger than 4096 bytes"),
    ):
        list_shipments.sync(client=client, page_size=50)
    assert (
        mock.service.count("listShipments") == 1
    )  # not retried: it would be as large again


@pytest.mark.anyio
async def test_async_a_page_over_max_response_bytes_is_a_typed_error(
    mock: RunningMock,
) -> None:
    async with make_client(mock, max_response_bytes=4096) as client:
        with pytest.raises(
            service_api.InvalidResponseError, match="larger than 4096 bytes"
        ):
            await list_shipments.asyncio(client=client, page_size=50)
    assert mock.service.count("listShipments") == 1


def broken_json_service(request: httpx.Request) -> httpx.Response:
    if request.url.path.endswith("/authenticate"):
        return httpx.Response(
            200,
            json={
                "access_token": "t0k3n",
                "token_type": "Bearer",
                "expires_in": "3600",
            },
        )
    return httpx.Response(
        200, content=b'{"data": [', headers={"content-type": "application/json"}
    )


def test_sync_a_2xx_body_that_is_not_json_is_a_typed_error_in_generated_calls() -> None:
    transport = httpx.MockTransport(broken_json_service)
    with (
        service_api.Client(
            "https://api.test/public/v3",
            "cid",
            "s3cret",
            httpx_args={"transport": transport},
        ) as client,
        pytest.raises(service_api.InvalidResponseError, match="not valid JSON"),
    ):
        list_shipments.sync(client=client)


@pytest.mark.anyio
async def test_async_a_2xx_body_that_is_not_json_is_a_typed_error_in_generated_calls() -> (
    None
):
    transport = httpx.MockTransport(broken_json_service)
    async with service_api.Client(
        "https://api.test/public/v3",
        "cid",
        "s3cret",
        httpx_args={"transport": transport},
    ) as client:
        with pytest.raises(service_api.InvalidResponseError, match="not valid JSON"):
            await list_shipments.asyncio(client=client)


def test_a_generated_call_parses_each_page_once(
    mock: RunningMock, client: service_api.Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    list_shipments.sync(
        client=client
    )  # the token is fetched (and its answer parsed) here
    parsed: list[int] = []
    loads = json.loads

    def counting_loads(text: str | bytes, **kwargs: Any) -> Any:
        parsed.append(len(text))
        return loads(text, **kwargs)

    monkeypatch.setattr(json, "loads", counting_loads)
    page = list_shipments.sync(client=client, page_number=2)
    assert isinstance(page, ShipmentPage)
    assert len(parsed) == 1


def test_closing_the_original_first_closes_the_shared_pool_its_child_used() -> None:
    closed: list[bool] = []

    class Pool(httpx.MockTransport):
        def close(self) -> None:
            closed.append(True)

    pool = Pool(broken_json_service)
    root = service_api.Client(
        "https://api.test/public/v3", "cid", "s3cret", httpx_args={"transport": pool}
    )
    child = root.with_account("acct-2")
    child.get_httpx_client().get("/authenticate")
    root.close()  # never sent anything itself
    assert closed == [True]
    child.close()  # closing the child afterwards is harmless and closes nothing more
    assert closed == [True]


def test_closing_a_child_leaves_the_shared_pool_to_the_original(
    mock: RunningMock,
) -> None:
    with make_client(mock) as root:
        with root.with_account("acct-2") as child:
            list_shipments.sync(client=child)
        page = list_shipments.sync(client=root)  # the pool the child used still works
    assert isinstance(page, ShipmentPage)


# ---- retries above authentication -----------------------------------------------------------


class RotatingService:
    """Issues tok-1, tok-2, ...; accepts only the newest; revokes it while asking a wait.

    The script below is the failure of retries under authentication: the first request
    meets a revoked token (401, refresh), its replay a 429, and the token is rotated
    while the client waits; the retry must fetch again instead of failing.
    """

    def __init__(self, script: list[str]) -> None:
        self.issued = 0
        self.script = script  # per list call: "401", "429+rotate" or "200"
        self.seen: list[str] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        if request.url.path.endswith("/authenticate"):
            self.issued += 1
            token = f"tok-{self.issued}"
            return httpx.Response(
                200,
                json={
                    "access_token": token,
                    "token_type": "Bearer",
                    "expires_in": "3600",
                },
            )
        self.seen.append(request.headers["authorization"].removeprefix("Bearer "))
        step = self.script.pop(0)
        if step == "401":
            return httpx.Response(
                401, headers={"www-authenticate": 'Bearer error="invalid_token"'}
            )
        if step == "429+rotate":
            self.issued += 1  # the service rotated: the token in use is now refused
            return httpx.Response(429, headers={"retry-after": "1"})
        return httpx.Response(200, json={"ok": True})


def rotating_client(service: RotatingService) -> service_api.Client:
    transport = httpx.MockTransport(service)
    return service_api.Client(
        "https://api.test/public/v3",
        "cid",
        "s3cret-value",
        httpx_args={"transport": transport},
    )


SCRIPT = ["401", "429+rotate", "401", "200"]


def test_sync_a_token_rotated_during_retry_after_is_refreshed_by_the_retry() -> None:
    service = RotatingService(list(SCRIPT))
    with rotating_client(service) as client, testing.no_retry_sleep() as delays:
        response = client.get_httpx_client().get("/shipments")
    assert response.json() == {"ok": True}
    assert delays == [1.0]
    # 401 -> refresh -> 429 (rotated) -> retry with the token of that moment -> 401 ->
    # refresh -> 200: three token requests, each retry attempt with its own refresh.
    assert service.seen == ["tok-1", "tok-2", "tok-2", "tok-4"]


@pytest.mark.anyio
async def test_async_a_token_rotated_during_retry_after_is_refreshed_by_the_retry() -> (
    None
):
    service = RotatingService(list(SCRIPT))
    async with rotating_client(service) as client:
        with testing.no_retry_sleep() as delays:
            response = await client.get_async_httpx_client().get("/shipments")
    assert response.json() == {"ok": True}
    assert delays == [1.0]
    assert service.seen == ["tok-1", "tok-2", "tok-2", "tok-4"]


def test_401_forever_between_retries_ends_after_a_bounded_number_of_token_requests() -> (
    None
):
    # Each attempt refreshes while the refused token is new, at most twice; a 401 is not
    # retried.
    service = RotatingService(["429+rotate", "401", "401", "401"])
    with (
        rotating_client(service) as client,
        testing.no_retry_sleep(),
        pytest.raises(service_api.AuthenticationError),
    ):
        client.get_httpx_client().get("/shipments")
    assert service.seen == ["tok-1", "tok-1", "tok-3", "tok-4"]
    assert service.issued == 4  # the first token, 1 rotation, 2 refreshes


def test_retries_are_logged_at_warning_and_refreshes_at_info(
    mock: RunningMock, client: service_api.Client, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="service_api")
    list_shipments.sync(client=client)
    mock.service.revoke_tokens()
    mock.service.set_faults(fault_rate=1.0, retry_after=0.5)
    with testing.no_retry_sleep(), pytest.raises(RETRYABLE):
        list_shipments.sync(client=client)
    mine = [r for r in caplog.records if r.name == "service_api"]
    retries = [r.getMessage() for r in mine if r.getMessage().startswith("retrying")]
    last = client.retry_policy.max_retries
    # Each retry says which one it is, counting from 1, of how many.
    assert [m.partition(" s (")[2] for m in retries] == [
        f"retry {n} of {last})" for n in range(1, last + 1)
    ]
    assert all(
        m.startswith("retrying GET /public/v3/shipments after ") for m in retries
    )
    # A retry waited out is news even to a script that set no logging up: WARNING.
    assert {r.levelno for r in mine if r.getMessage().startswith("retrying")} == {
        logging.WARNING
    }
    tokens = [r for r in mine if "token" in r.getMessage()]
    assert tokens
    assert {r.levelno for r in tokens} == {logging.INFO}


def test_a_debug_line_gives_each_answer_s_time(
    caplog: pytest.LogCaptureFixture, patch_for_this_thread: Callable[..., None]
) -> None:
    clock = iter([100.0, 100.042, 200.0, 200.25])  # the two answers: 42 ms and 250 ms
    client = service_api.Client(
        "https://api.test/public/v3",
        "cid",
        "s3cret",
        httpx_args={"transport": httpx.MockTransport(answer_token_then_404)},
    )
    caplog.set_level(logging.DEBUG, logger="service_api")
    patch_for_this_thread(time, "monotonic", lambda: next(clock))
    with client, pytest.raises(service_api.NotFoundError):
        client.get_httpx_client().get("/shipments")
    lines = [r.getMessage() for r in caplog.records if " -> " in r.getMessage()]
    assert lines == ["GET https://api.test/public/v3/shipments -> 404 in 42 ms"]


def answer_token_then_404(request: httpx.Request) -> httpx.Response:
    if request.url.path.endswith("/authenticate"):
        token = {"access_token": "tk", "token_type": "Bearer", "expires_in": "3600"}
        return httpx.Response(200, json=token)
    return httpx.Response(int(request.url.params.get("status", "404")))


@pytest.mark.parametrize("status", [400, 401, 404, 500])
def test_only_a_404_says_the_base_url_may_lack_its_prefix(status: int) -> None:
    for base, hinted in [
        ("https://api.test/v3", status == 404),
        ("https://api.test/public/v3", False),
    ]:
        client = service_api.Client(
            base,
            "cid",
            "s3cret",
            max_retries=0,
            httpx_args={"transport": httpx.MockTransport(answer_token_then_404)},
        )
        with client, pytest.raises(service_api.ApiStatusError) as info:
            client.get_httpx_client().get("/shipments", params={"status": status})
        assert info.value.status_code == status
        assert ("lacks its /public/v3 prefix" in str(info.value)) is hinted, base


@pytest.mark.parametrize("status", [200, 302, 399, 400])
def test_every_answer_below_400_is_given_back_and_the_rest_raise(
    status: int, twin: str
) -> None:
    client = service_api.Client(
        "https://api.test/public/v3",
        "cid",
        "s3cret",
        max_retries=0,
        httpx_args={"transport": httpx.MockTransport(answer_token_then_404)},
    )

    async def get() -> httpx.Response:
        async with client:
            return await client.get_async_httpx_client().get(
                "/x", params={"status": status}
            )

    with client, contextlib.ExitStack() as stack:
        if status >= 400:
            stack.enter_context(pytest.raises(service_api.BadRequestError))
        if twin == "sync":
            response = client.get_httpx_client().get("/x", params={"status": status})
        else:
            response = asyncio.run(get())
        assert response.status_code == status


# ---- one client, any event loop ---------------------------------------------------------------


def loop_pools(client: service_api.Client) -> Any:
    """The client's per-loop pools of the direct route."""
    return client._shared.loop_pools[None]


def test_one_client_serves_consecutive_asyncio_runs_sharing_its_token(
    mock: RunningMock,
) -> None:
    client = make_client(mock)

    async def fetch() -> tuple[asyncio.AbstractEventLoop, Any]:
        page = await list_shipments.asyncio(client=client)
        assert isinstance(page, ShipmentPage)
        loop = asyncio.get_running_loop()
        return loop, loop_pools(client)._open[loop][0]  # the loop's pool the call used

    first_loop, first_pool = asyncio.run(fetch())
    second_loop, second_pool = asyncio.run(
        fetch()
    )  # used to raise "Event loop is closed"
    assert second_pool is not first_pool
    for pool in (first_pool, second_pool):
        # closed inside its loop when asyncio.run ended it
        assert pool._pool.connections == []
    asyncio.run(fetch())
    assert first_loop not in loop_pools(client)._open  # nothing kept for a dead loop
    assert second_loop not in loop_pools(client)._open
    assert mock.service.count("authenticate") == 1  # one token for every loop
    client.close()


def test_async_with_in_each_asyncio_run(mock: RunningMock) -> None:
    client = make_client(mock)

    async def run() -> None:
        async with client:
            assert isinstance(await list_shipments.asyncio(client=client), ShipmentPage)

    asyncio.run(run())
    asyncio.run(run())
    assert mock.service.count("listShipments", 200) == 2
    assert mock.service.count("authenticate") == 1


def test_a_sync_only_transport_serves_sync_calls_and_refuses_async_ones(
    mock: RunningMock,
) -> None:
    sent: list[str] = []

    class Recording(httpx.HTTPTransport):
        def handle_request(self, request: httpx.Request) -> httpx.Response:
            sent.append(request.url.path)
            return super().handle_request(request)

    client = make_client(mock, httpx_args={"transport": Recording()})

    async def fetch() -> object:
        return await list_shipments.asyncio(client=client)

    assert isinstance(list_shipments.sync(client=client), ShipmentPage)
    # A default pool for the other side would send around the user's transport.
    with pytest.raises(TypeError, match=r"\(Recording\) serves sync requests only"):
        asyncio.run(fetch())
    assert sent == ["/public/v3/authenticate", "/public/v3/shipments"]
    assert mock.service.count("listShipments", 200) == 1
    client.close()


@pytest.mark.anyio
async def test_an_async_only_transport_refuses_sync_calls(mock: RunningMock) -> None:
    app_transport = httpx.ASGITransport(app=mock.service.app)
    async with make_client(mock, httpx_args={"transport": app_transport}) as client:
        assert isinstance(await list_shipments.asyncio(client=client), ShipmentPage)
        with pytest.raises(
            TypeError, match=r"\(ASGITransport\) serves async requests only"
        ):
            list_shipments.sync(client=client)
    assert mock.service.count("listShipments", 200) == 1


@pytest.mark.anyio
async def test_async_401_forever_with_a_new_token_each_time_ends_after_three_token_requests() -> (
    None
):
    service = RotatingService(["401"] * 3)
    async with rotating_client(service) as client:
        with pytest.raises(service_api.AuthenticationError):
            await client.get_async_httpx_client().get("/shipments")
    assert service.seen == ["tok-1", "tok-2", "tok-3"]
    assert service.issued == 3


def test_a_call_after_close_opens_the_pools_again(mock: RunningMock) -> None:
    client = make_client(mock)
    list_shipments.sync(client=client)
    pool: Any = client._shared.sync_pools[None]  # the direct route's sync pool
    assert pool._pool.connections
    client.close()
    assert pool._pool.connections == []  # closed
    assert isinstance(list_shipments.sync(client=client), ShipmentPage)
    assert pool._pool.connections  # open again
    client.close()
    assert pool._pool.connections == []
    assert mock.service.count("authenticate") == 1  # the token outlives the pools


# No connection stays open after an answer: what a loop closed by hand (never finalizing
# its async generators) pins is the bookkeeping, not a socket.
NO_KEEP_ALIVE = {"limits": httpx.Limits(max_keepalive_connections=0)}


def test_close_then_a_loop_closed_by_hand_leaves_the_client_usable(
    mock: RunningMock,
) -> None:
    client = make_client(mock, httpx_args=NO_KEEP_ALIVE)
    loop = asyncio.new_event_loop()
    try:
        assert isinstance(
            loop.run_until_complete(list_shipments.asyncio(client=client)), ShipmentPage
        )
        client.close()  # the loop's pool is left to the loop, which may send again
        assert loop in loop_pools(client)._open
    finally:
        loop.close()  # by hand: the loop never learns to close the pool
    assert isinstance(list_shipments.sync(client=client), ShipmentPage)
    client.close()
    assert loop not in loop_pools(client)._open  # dropped, once its loop is closed


def test_a_loop_closed_by_hand_is_dropped_when_another_loop_opens_its_pool(
    mock: RunningMock,
) -> None:
    client = make_client(mock, httpx_args=NO_KEEP_ALIVE)
    loop = asyncio.new_event_loop()
    try:
        assert isinstance(
            loop.run_until_complete(list_shipments.asyncio(client=client)), ShipmentPage
        )
    finally:
        loop.close()
    assert (
        loop in loop_pools(client)._open
    )  # nothing told the client that the loop ended
    assert isinstance(asyncio.run(list_shipments.asyncio(client=client)), ShipmentPage)
    assert loop not in loop_pools(client)._open
    assert loop_pools(client)._open == {}  # and asyncio.run's loop closed its own
    client.close()


# ---- writes are sent again only where they cannot have taken effect ---------------------------


class FailingOnce:
    """A service whose first answer to the API request is ``failure`` (an answer or an
    exception raised before or after the request was sent), then 201; it counts the
    requests that reached it."""

    def __init__(self, failure: httpx.Response | Exception) -> None:
        self.failure, self.received = failure, 0

    def __call__(self, request: httpx.Request) -> httpx.Response:
        if request.url.path.endswith("/authenticate"):
            token = {"access_token": "tk", "token_type": "Bearer", "expires_in": "3600"}
            return httpx.Response(200, json=token)
        outcome, self.failure = self.failure, httpx.Response(201)
        if isinstance(outcome, httpx.ConnectError | httpx.ConnectTimeout):
            raise outcome  # never reached the service
        self.received += 1
        if isinstance(outcome, Exception):
            raise outcome  # reached it: the answer was lost
        return outcome


WRITE_OUTCOMES: dict[str, tuple[httpx.Response | Exception, bool]] = {
    # outcome: (the first failure, whether a POST or PATCH is sent again after it)
    "429": (httpx.Response(429, headers={"retry-after": "0"}), True),
    "503": (httpx.Response(503, headers={"retry-after": "0"}), False),
    "connection refused": (httpx.ConnectError("refused"), True),
    "connect timeout": (httpx.ConnectTimeout("no connection"), True),
    "dropped after the request was read": (
        httpx.RemoteProtocolError("disconnected"),
        False,
    ),
    "read timeout": (httpx.ReadTimeout("no answer"), False),
}


@pytest.mark.parametrize("method", ["POST", "PATCH", "PUT", "DELETE"])
@pytest.mark.parametrize("outcome", sorted(WRITE_OUTCOMES))
def test_a_write_is_sent_again_only_where_it_cannot_have_taken_effect(
    method: str, outcome: str, twin: str
) -> None:
    failure, again = WRITE_OUTCOMES[outcome]
    again = again or method in ("PUT", "DELETE")  # idempotent: retried like GET
    service = FailingOnce(failure)
    client = service_api.Client(
        "https://api.test/public/v3",
        "cid",
        "s3cret",
        max_retries=2,
        httpx_args={"transport": httpx.MockTransport(service)},
    )

    async def send() -> httpx.Response:
        async with client:
            return await client.get_async_httpx_client().request(
                method, "/shipments", json={}
            )

    with client, testing.no_retry_sleep(), contextlib.ExitStack() as stack:
        if not again:
            stack.enter_context(pytest.raises(service_api.ServiceApiError))
        if twin == "sync":
            response = client.get_httpx_client().request(method, "/shipments", json={})
        else:
            response = asyncio.run(send())
        assert response.status_code == 201
    reached_before = isinstance(
        failure, httpx.Response | httpx.RemoteProtocolError | httpx.ReadTimeout
    )
    assert service.received == (1 + reached_before if again else 1)


@pytest.mark.parametrize(
    "failure", [httpx.ReadTimeout("slow"), httpx.RemoteProtocolError("gone")]
)
def test_a_failed_token_request_is_sent_again_for_a_write_too(
    failure: Exception,
) -> None:
    token_requests = []

    def service(request: httpx.Request) -> httpx.Response:
        if request.url.path.endswith("/authenticate"):
            token_requests.append(request)
            if len(token_requests) == 1:
                raise failure
            token = {"access_token": "tk", "token_type": "Bearer", "expires_in": "3600"}
            return httpx.Response(200, json=token)
        return httpx.Response(201)

    transport = httpx.MockTransport(service)
    with (
        service_api.Client(
            "https://api.test/public/v3",
            "cid",
            "s3cret",
            httpx_args={"transport": transport},
        ) as client,
        testing.no_retry_sleep(),
    ):
        assert client.get_httpx_client().post("/shipments", json={}).status_code == 201
    assert len(token_requests) == 2


@pytest.mark.parametrize("account", ["", "acct\n1", "acct\x001"])
def test_an_empty_or_unprintable_account_is_refused(account: str) -> None:
    with pytest.raises(ValueError, match="non-empty printable"):
        service_api.Client("https://api.test/public/v3", "cid", "s3cret", account)
    with service_api.Client(
        "https://api.test/public/v3", "cid", "s3cret", "acct-1"
    ) as client:
        with pytest.raises(ValueError, match="non-empty printable"):
            client.with_account(account)
        with pytest.raises(ValueError, match="non-empty printable"):
            client.with_options(headers={"x-service-account-id": account})


def test_a_debug_line_gives_each_answer_s_time_in_both_twins(
    caplog: pytest.LogCaptureFixture, twin: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Sent at 0.25 s, answered at 0.75 s: 500 ms (where 0.75 % 0.25 is 0). The client's
    # own clock only: the event loop keeps the real one.
    clock = iter([0.25, 0.75])
    fake_time = types.SimpleNamespace(monotonic=lambda: next(clock), sleep=time.sleep)
    monkeypatch.setattr(service_api._client, "time", fake_time)
    client = service_api.Client(
        "https://api.test/public/v3",
        "cid",
        "s3cret",
        httpx_args={"transport": httpx.MockTransport(answer_token_then_404)},
    )
    caplog.set_level(logging.DEBUG, logger="service_api")

    async def get() -> httpx.Response:
        async with client:
            return await client.get_async_httpx_client().get(
                "/x", params={"status": 200}
            )

    with client:
        if twin == "sync":
            client.get_httpx_client().get("/x", params={"status": 200})
        else:
            asyncio.run(get())
    lines = [r.getMessage() for r in caplog.records if " -> " in r.getMessage()]
    assert lines == ["GET https://api.test/public/v3/x?status=200 -> 200 in 500 ms"]


@pytest.mark.parametrize(
    ("base", "hinted"),
    [("https://api.test/v3", True), ("https://api.test/public/v3/", False)],
)
def test_a_404_from_the_token_endpoint_hints_at_the_prefix_only_when_it_lacks(
    base: str, hinted: bool
) -> None:
    transport = httpx.MockTransport(lambda request: httpx.Response(404))
    client = service_api.Client(
        base, "cid", "s3cret", httpx_args={"transport": transport}
    )
    with client, pytest.raises(service_api.NotFoundError) as info:
        client.get_httpx_client().get("/shipments")
    assert ("lacks its /public/v3 prefix" in str(info.value)) is hinted


def test_the_least_max_response_bytes_is_1() -> None:
    for refused in (0, -1):
        with pytest.raises(ValueError, match="max_response_bytes must be at least 1"):
            service_api.Client(
                "https://api.test/public/v3", "cid", "s", max_response_bytes=refused
            )
    args = {"transport": httpx.MockTransport(answer_token_then_404)}
    client = service_api.Client(
        "https://api.test/public/v3", "cid", "s", max_response_bytes=1, httpx_args=args
    )
    # Taken, and it bounds every answer, the token answer included, to a byte.
    with (
        client,
        pytest.raises(service_api.InvalidResponseError, match="larger than 1 bytes"),
    ):
        client.get_httpx_client().get("/x")
