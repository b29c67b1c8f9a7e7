"""The client against a hostile service that issues tokens (``hostile_auth_app``).

Each misbehaviour gets a typed error or a documented safe behaviour, within a bounded
number of requests and seconds, with no credential sent anywhere but the base origin.
"""

from __future__ import annotations

import json
import ssl
import time
import tracemalloc
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from hostile_auth_app import (
    CLIENT_ID,
    HTML,
    SECRET,
    TOKEN,
    AuthHostileState,
    create_auth_app,
    create_recording_app,
    serve,
)

import service_api
from service_api import testing
from service_api_client.api.shipments import list_shipments

MAX_RETRIES = 2
# A client that caps what it reads would stay far below this for a 50 MB answer.
MEMORY_BOUND = 16 * 1024 * 1024


@pytest.fixture(scope="module")
def servers() -> Iterator[tuple[AuthHostileState, str, AuthHostileState, str]]:
    state, foreign = AuthHostileState(), AuthHostileState()
    with (
        serve(create_auth_app(state)) as origin,
        serve(create_recording_app(foreign)) as other,
    ):
        yield state, origin, foreign, other


@pytest.fixture
def state(
    servers: tuple[AuthHostileState, str, AuthHostileState, str],
    request: pytest.FixtureRequest,
) -> AuthHostileState:
    guard = request.config.pluginmanager.get_plugin("leak_guard")
    if guard is not None:
        guard.register_secret(TOKEN, "issued token")
        guard.register_secret(SECRET, "client secret")
    servers[0].reset()
    servers[2].reset()
    return servers[0]


@pytest.fixture
def origin(servers: tuple[AuthHostileState, str, AuthHostileState, str]) -> str:
    return servers[1]


@pytest.fixture
def foreign(
    servers: tuple[AuthHostileState, str, AuthHostileState, str],
) -> tuple[AuthHostileState, str]:
    return servers[2], servers[3]


# Loading the CA bundle is the slow part of building a client; loopback never uses it.
TLS = ssl.create_default_context()


def make_client(origin: str, **kwargs: Any) -> service_api.Client:
    kwargs.setdefault("retry", service_api.RetryPolicy(max_retries=MAX_RETRIES))
    kwargs["httpx_args"] = {"verify": TLS, **kwargs.get("httpx_args", {})}
    return service_api.Client(
        f"{origin}/public/v3", CLIENT_ID, SECRET, "acct-1", **kwargs
    )


# ---- bodies ------------------------------------------------------------------------------


def test_sync_html_page_stops_pagination_with_a_typed_error(
    state: AuthHostileState, origin: str
) -> None:
    state.reset("html_200")
    with (
        make_client(origin) as client,
        pytest.raises(service_api.InvalidResponseError) as info,
    ):
        list(service_api.paginate(list_shipments, client))
    assert info.value.page_number == 1
    assert state.count("/shipments") == 1


@pytest.mark.anyio
async def test_async_html_page_stops_pagination_with_a_typed_error(
    state: AuthHostileState, origin: str
) -> None:
    state.reset("html_200")
    async with make_client(origin) as client:
        with pytest.raises(service_api.InvalidResponseError) as info:
            [item async for item in client.shipments.list()]
    assert info.value.page_number == 1
    assert state.count("/shipments") == 1


def test_sync_html_429_is_retried_then_a_rate_limit_error(
    state: AuthHostileState, origin: str
) -> None:
    state.reset("html_429")
    with (
        make_client(origin) as client,
        testing.no_retry_sleep(),
        pytest.raises(service_api.RateLimitError) as info,
    ):
        list_shipments.sync(client=client)
    assert info.value.retry_after == 0.0
    assert info.value.body == HTML
    assert state.count("/shipments") == MAX_RETRIES + 1


@pytest.mark.anyio
async def test_async_html_503_without_retry_after_is_a_server_error(
    state: AuthHostileState, origin: str
) -> None:
    state.reset("html_503")
    async with make_client(origin) as client:
        with (
            testing.no_retry_sleep() as delays,
            pytest.raises(service_api.ServerError) as info,
        ):
            await list_shipments.asyncio(client=client)
    assert info.value.retry_after is None
    assert (
        len(delays) == MAX_RETRIES
    )  # backed off on its own, a bounded number of times
    assert state.count("/shipments") == MAX_RETRIES + 1


def peak_memory_of(call: Any) -> tuple[int, BaseException | None]:
    """Peak bytes Python allocated while ``call()`` ran, and what it raised."""
    tracemalloc.start()
    raised: BaseException | None = None
    try:
        call()
    except Exception as exc:
        raised = exc
    finally:
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    return peak, raised


def test_a_50_mb_page_is_refused_without_holding_it_in_memory(
    state: AuthHostileState, origin: str
) -> None:
    state.reset("huge_body")
    with make_client(origin) as client:
        client.get_httpx_client()  # built outside the measurement
        peak, raised = peak_memory_of(lambda: list_shipments.sync(client=client))
    assert isinstance(raised, service_api.ServiceApiError), repr(raised)
    assert peak < MEMORY_BOUND, f"peak {peak / 2**20:.0f} MiB to refuse a 50 MiB answer"


def test_a_50_mb_error_body_is_refused_without_holding_it_in_memory(
    state: AuthHostileState, origin: str
) -> None:
    # Every body has the one bound: an error body past it is an unusable answer too.
    state.reset("huge_error")
    with make_client(origin, max_retries=0, retry=None) as client:
        client.get_httpx_client()
        peak, raised = peak_memory_of(lambda: list_shipments.sync(client=client))
    assert isinstance(raised, service_api.InvalidResponseError), repr(raised)
    assert "larger than 8388608 bytes" in str(raised)
    assert peak < MEMORY_BOUND, f"peak {peak / 2**20:.0f} MiB for a 50 MiB error body"


# ---- 401 and www-authenticate -------------------------------------------------------------


def test_sync_401_forever_refreshes_once_then_raises(
    state: AuthHostileState, origin: str
) -> None:
    state.reset("unauthorized_forever")
    with make_client(origin) as client, pytest.raises(service_api.AuthenticationError):
        list_shipments.sync(client=client)
    assert state.count("/authenticate") == 2
    assert state.count("/shipments") == 2


@pytest.mark.anyio
async def test_async_401_forever_refreshes_once_then_raises(
    state: AuthHostileState, origin: str
) -> None:
    state.reset("unauthorized_forever")
    async with make_client(origin) as client:
        with pytest.raises(service_api.AuthenticationError):
            await list_shipments.asyncio(client=client)
    assert state.count("/authenticate") == 2
    assert state.count("/shipments") == 2


MALFORMED_CHALLENGES = [
    'Bearer error="invalid_token',
    "Bearer error=",
    '"""',
    'Basic realm="service"',
    "Bearer ,,,,=,=,",
    "Bearer error=invalid_token, error_description=\"The token expired at '13/45/2024 99:99:99'\"",
    'Bearer error="invalid_token", error_description="The token expired at \'02/30/99999 1:2:3\'"',
    "Bearer " + "a=" * 5000,
    'Bearer error="\\"\\\\\\"", error_description=\\',
]


@pytest.mark.parametrize("challenge", MALFORMED_CHALLENGES)
def test_malformed_www_authenticate_is_a_typed_error_after_at_most_one_replay(
    state: AuthHostileState, origin: str, challenge: str
) -> None:
    state.reset("www_authenticate", www_authenticate=challenge)
    with (
        make_client(origin) as client,
        pytest.raises(service_api.AuthenticationError) as info,
    ):
        list_shipments.sync(client=client)
    assert info.value.status_code == 401
    assert state.count("/shipments") <= 2
    assert state.count("/authenticate") <= 2


# ---- token responses ----------------------------------------------------------------------


def token(**fields: Any) -> str:
    body: dict[str, Any] = {
        "access_token": TOKEN,
        "token_type": "Bearer",
        "expires_in": "3600",
    }
    for name, value in fields.items():
        if value is ...:
            del body[name]
        else:
            body[name] = value
    return json.dumps(body)


BAD_TOKEN_BODIES = {
    "expires_in not an integer": token(expires_in="soon"),
    "expires_in a float": token(expires_in=3.5),
    "expires_in a decimal string": token(expires_in="3600.0"),
    "expires_in negative": token(expires_in="-5"),
    "expires_in negative number": token(expires_in=-5),
    "expires_in zero": token(expires_in="0"),
    "expires_in absurdly large": token(expires_in="9" * 40),
    "expires_in a year": token(expires_in=str(366 * 24 * 3600)),
    "expires_in null": token(expires_in=None),
    "expires_in missing": token(expires_in=...),
    "expires_in true": token(expires_in=True),
    "access_token missing": token(access_token=...),
    "access_token empty": token(access_token=""),
    "access_token a number": token(access_token=12345678),
    "access_token with a newline": token(access_token=TOKEN + "\r\nX-Injected: 1"),
    "token_type not Bearer": token(token_type="MAC"),
    "an HTML page": HTML,
    "a JSON list": "[]",
    "JSON null": "null",
}


@pytest.mark.parametrize("body", BAD_TOKEN_BODIES.values(), ids=BAD_TOKEN_BODIES.keys())
def test_sync_unusable_token_response_is_a_token_response_error(
    state: AuthHostileState, origin: str, body: str
) -> None:
    state.reset("token_body", token_body=body)
    with (
        make_client(origin) as client,
        pytest.raises(service_api.TokenResponseError) as info,
    ):
        list_shipments.sync(client=client)
    assert TOKEN not in str(info.value)
    assert state.count("/shipments") == 0  # no request went out with a doubtful token


@pytest.mark.anyio
@pytest.mark.parametrize(
    "name", ["expires_in absurdly large", "expires_in negative", "access_token missing"]
)
async def test_async_unusable_token_response_is_a_token_response_error(
    state: AuthHostileState, origin: str, name: str
) -> None:
    state.reset("token_body", token_body=BAD_TOKEN_BODIES[name])
    async with make_client(origin) as client:
        with pytest.raises(service_api.TokenResponseError):
            await list_shipments.asyncio(client=client)
    assert state.count("/shipments") == 0


@pytest.mark.parametrize("follow_redirects", [False, True])
def test_a_redirected_token_request_never_carries_the_secret_to_another_origin(
    state: AuthHostileState,
    origin: str,
    foreign: tuple[AuthHostileState, str],
    follow_redirects: bool,
) -> None:
    foreign_state, foreign_origin = foreign
    state.reset("token_redirect", redirect_to=f"{foreign_origin}/steal")
    with (
        make_client(
            origin, httpx_args={"follow_redirects": follow_redirects}
        ) as client,
        pytest.raises(service_api.ServiceApiError),
    ):
        list_shipments.sync(client=client)
    assert [s for s in foreign_state.seen if s.body_has_secret or s.authorization] == []


# ---- no answer ----------------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["list_hangs", "token_hangs"])
def test_sync_a_server_that_never_answers_times_out(
    state: AuthHostileState, origin: str, mode: str
) -> None:
    state.reset(mode, hang=30.0)
    started = time.monotonic()
    with (
        make_client(
            origin, timeout=0.3, retry=service_api.RetryPolicy(max_retries=1)
        ) as client,
        testing.no_retry_sleep(),
        pytest.raises(service_api.ApiTimeoutError),
    ):
        list_shipments.sync(client=client)
    assert time.monotonic() - started < 5.0


@pytest.mark.anyio
@pytest.mark.parametrize("mode", ["list_hangs", "token_hangs"])
async def test_async_a_server_that_never_answers_times_out(
    state: AuthHostileState, origin: str, mode: str
) -> None:
    state.reset(mode, hang=30.0)
    started = time.monotonic()
    async with make_client(
        origin, timeout=0.3, retry=service_api.RetryPolicy(max_retries=1)
    ) as client:
        with testing.no_retry_sleep(), pytest.raises(service_api.ApiTimeoutError):
            await list_shipments.asyncio(client=client)
    assert time.monotonic() - started < 5.0


def test_the_honest_mode_works_so_the_failures_above_are_the_servers(
    state: AuthHostileState, origin: str
) -> None:
    with make_client(origin) as client:
        page = list_shipments.sync(client=client)
    assert page is not None
    assert [s.authorization for s in state.seen] == [None, f"Bearer {TOKEN}"]
    assert httpx.URL(origin).host == "127.0.0.1"
