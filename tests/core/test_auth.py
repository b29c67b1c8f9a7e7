"""TokenAuth's flow driven with next()/send(), without network; token response checks."""

import asyncio
import concurrent.futures
import contextlib
import http.server
import json
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

import httpx
import pytest
from leak_guard import register_secret  # type: ignore[import-not-found]  # tests/ is on sys.path

import service_api
from service_api import (
    InvalidCredentialsError,
    ServerError,
    StoredToken,
    TokenResponseError,
    _auth,
)
from service_api._auth import TokenAuth, parse_token_response
from service_api._errors import TOKEN_REQUEST_EXTENSION

BASE = "https://api.example.test/public/v3"
SECRET = "unit-test-secret-value"
JOIN_TIMEOUT = 20.0
_R = TypeVar("_R")


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def token_response(
    request: httpx.Request,
    token: str = "tok-1",  # noqa: S107 - a token of the test's own
    **fields: Any,
) -> httpx.Response:
    body = {
        "access_token": token,
        "token_type": "Bearer",
        "expires_in": "3600",
        **fields,
    }
    return httpx.Response(200, json=body, request=request)


def as_request(step: object) -> httpx.Request:
    """The request a flow step is (a flow yields a future only to wait for another fetch)."""
    assert isinstance(step, httpx.Request)
    return step


def make_auth(clock: FakeClock, skew: float = 60.0) -> TokenAuth:
    return TokenAuth(BASE, "cid", SECRET, skew=skew, clock=clock)


def test_first_request_fetches_a_token_from_the_generated_model() -> None:
    auth = make_auth(FakeClock())
    request = httpx.Request("GET", f"{BASE}/shipments")
    flow = auth.auth_flow(request)
    token_request = as_request(next(flow))
    assert token_request.method == "POST"
    assert str(token_request.url) == f"{BASE}/authenticate"
    assert TOKEN_REQUEST_EXTENSION in token_request.extensions
    assert "timeout" in token_request.extensions
    body = token_request.read()
    assert b'name="grant_type"' in body
    assert b"client_credentials" in body
    assert "authorization" not in token_request.headers
    assert (
        token_request.headers["accept"] == "text/plain"
    )  # as the service's own client
    sent = flow.send(token_response(token_request))
    assert sent is request
    assert request.headers["authorization"] == "Bearer tok-1"
    with pytest.raises(StopIteration):
        flow.send(httpx.Response(200, request=request))


def test_cached_token_is_reused_until_expiry_minus_skew() -> None:
    clock = FakeClock()
    auth = make_auth(clock)
    flow = auth.auth_flow(httpx.Request("GET", f"{BASE}/x"))
    flow.send(token_response(as_request(next(flow))))
    clock.now += 3600 - 60 - 0.001
    assert (
        TOKEN_REQUEST_EXTENSION
        not in as_request(
            next(auth.auth_flow(httpx.Request("GET", f"{BASE}/x")))
        ).extensions
    )
    clock.now += 0.001
    assert (
        TOKEN_REQUEST_EXTENSION
        in as_request(
            next(auth.auth_flow(httpx.Request("GET", f"{BASE}/x")))
        ).extensions
    )


def test_expiry_counts_from_when_the_token_request_was_sent() -> None:
    clock = FakeClock()
    auth = make_auth(clock, skew=0)
    flow = auth.auth_flow(httpx.Request("GET", f"{BASE}/x"))
    token_request = as_request(next(flow))
    clock.now += 100  # a slow /authenticate answer
    flow.send(token_response(token_request))
    clock.now = 1000.0 + 3600 - 0.001
    assert (
        TOKEN_REQUEST_EXTENSION
        not in as_request(
            next(auth.auth_flow(httpx.Request("GET", f"{BASE}/x")))
        ).extensions
    )
    clock.now = 1000.0 + 3600
    assert (
        TOKEN_REQUEST_EXTENSION
        in as_request(
            next(auth.auth_flow(httpx.Request("GET", f"{BASE}/x")))
        ).extensions
    )


@pytest.mark.parametrize(
    ("skew", "expires_in", "refresh_after"), [(60, 3600, 3540), (60, 2, 1), (0, 2, 2)]
)
def test_skew_is_clamped_to_half_the_lifetime(
    skew: float, expires_in: int, refresh_after: float
) -> None:
    clock = FakeClock()
    auth = make_auth(clock, skew=skew)
    flow = auth.auth_flow(httpx.Request("GET", f"{BASE}/x"))
    flow.send(token_response(as_request(next(flow)), expires_in=expires_in))

    def wants_a_token() -> bool:
        step = next(auth.auth_flow(httpx.Request("GET", f"{BASE}/x")))
        return TOKEN_REQUEST_EXTENSION in as_request(step).extensions

    clock.now = 1000.0 + refresh_after - 0.001
    assert not wants_a_token()
    clock.now = 1000.0 + refresh_after
    assert wants_a_token()


def test_the_default_skew_is_60_seconds_as_documented() -> None:
    clock = FakeClock()
    auth = TokenAuth(BASE, "cid", SECRET, clock=clock)
    flow = auth.auth_flow(httpx.Request("GET", f"{BASE}/x"))
    flow.send(token_response(as_request(next(flow)), expires_in=3600))
    clock.now = 1000.0 + 3540 - 0.001
    step = as_request(next(auth.auth_flow(httpx.Request("GET", f"{BASE}/x"))))
    assert step.headers["authorization"] == "Bearer tok-1"
    clock.now = 1000.0 + 3540
    assert (
        TOKEN_REQUEST_EXTENSION
        in as_request(
            next(auth.auth_flow(httpx.Request("GET", f"{BASE}/x")))
        ).extensions
    )


def test_a_negative_skew_is_refused_and_options_are_keywords() -> None:
    with pytest.raises(ValueError, match="skew"):
        TokenAuth(BASE, "cid", SECRET, skew=-1)
    with pytest.raises(TypeError):
        TokenAuth(BASE, "cid", SECRET, 60.0)  # type: ignore[call-arg]
    assert TokenAuth(f"{BASE}//", "cid", SECRET).base_url == BASE


def test_the_token_request_has_the_default_or_the_given_timeout() -> None:
    for auth, timeout in (
        (
            TokenAuth(BASE, "cid", SECRET),
            httpx.Timeout(30.0),
        ),  # as the client's default
        (
            TokenAuth(BASE, "cid", SECRET, timeout=httpx.Timeout(2.5)),
            httpx.Timeout(2.5),
        ),
    ):
        token_request = as_request(
            next(auth.auth_flow(httpx.Request("GET", f"{BASE}/x")))
        )
        assert token_request.extensions["timeout"] == timeout.as_dict()


def test_a_401_refreshes_and_replays_while_each_refused_token_is_new() -> None:
    auth = make_auth(FakeClock())
    request = httpx.Request("GET", f"{BASE}/x")
    flow = auth.auth_flow(request)
    flow.send(token_response(as_request(next(flow)), "tok-1"))
    expired = httpx.Response(
        401,
        headers={"www-authenticate": 'Bearer error="invalid_token"'},
        request=request,
    )
    for new in ("tok-2", "tok-3"):  # rotated again between the refresh and the replay
        refresh = as_request(flow.send(expired))
        assert TOKEN_REQUEST_EXTENSION in refresh.extensions
        assert flow.send(token_response(refresh, new)) is request
        assert request.headers["authorization"] == f"Bearer {new}"
    with pytest.raises(
        StopIteration
    ):  # MAX_REFRESHES reached: the 401 goes to the caller
        flow.send(expired)


def test_revoked_tokens_that_had_worked_are_replaced_up_to_max_replays() -> None:
    """A burst of revocations: each new token works for another request, then is
    revoked before this request's replay. Only tokens that never worked count against
    MAX_REFRESHES; MAX_REPLAYS still ends the flow."""
    auth = make_auth(FakeClock())
    request = httpx.Request("GET", f"{BASE}/x")
    flow = auth.auth_flow(request)
    flow.send(token_response(as_request(next(flow)), "tok-0"))
    revoked = httpx.Response(
        401,
        headers={"www-authenticate": 'Bearer error="invalid_token"'},
        request=request,
    )

    def works_for_another_request(token: str) -> None:
        other = auth.auth_flow(httpx.Request("GET", f"{BASE}/y"))
        assert as_request(next(other)).headers["authorization"] == f"Bearer {token}"
        with pytest.raises(StopIteration):
            other.send(httpx.Response(200))

    works_for_another_request("tok-0")
    for number in range(1, 9):  # "up to eight replays in all" (docs/guides/client.md)
        refresh = as_request(flow.send(revoked))
        assert TOKEN_REQUEST_EXTENSION in refresh.extensions
        assert flow.send(token_response(refresh, f"tok-{number}")) is request
        works_for_another_request(f"tok-{number}")
    assert number > _auth.MAX_REFRESHES
    with pytest.raises(
        StopIteration
    ):  # MAX_REPLAYS reached: the 401 goes to the caller
        flow.send(revoked)


def test_refused_tokens_forgotten_as_proven_count_as_never_worked_at_once() -> None:
    """``proven`` keeps the last eight tokens that worked: when a burst of other tokens
    pushes out two revoked ones this flow refused, it holds three that count as never
    worked, past MAX_REFRESHES, and gives up."""
    auth = make_auth(FakeClock())
    request = httpx.Request("GET", f"{BASE}/x")
    flow = auth.auth_flow(request)
    flow.send(token_response(as_request(next(flow)), "tok-a"))
    for token, new in (("tok-a", "tok-b"), ("tok-b", "tok-c"), (None, "tok-d")):
        if token is not None:  # it works for another request, then is revoked
            other = auth.auth_flow(httpx.Request("GET", f"{BASE}/y"))
            assert as_request(next(other)).headers["authorization"] == f"Bearer {token}"
            with pytest.raises(StopIteration):
                other.send(httpx.Response(200))
        refresh = as_request(flow.send(httpx.Response(401, request=request)))
        assert flow.send(token_response(refresh, new)) is request
    for number in range(8):  # eight newer tokens work: tok-a and tok-b are forgotten
        auth.invalidate(auth.proven[-1] if number else "tok-d")
        other = auth.auth_flow(httpx.Request("GET", f"{BASE}/y"))
        assert (
            other.send(token_response(as_request(next(other)), f"tok-{number}"))
            is not None
        )
        with pytest.raises(StopIteration):
            other.send(httpx.Response(200))
    with pytest.raises(
        StopIteration
    ):  # tok-a, tok-b and tok-c never worked, as far as known
        flow.send(httpx.Response(401, request=request))


def test_a_401_for_a_token_issued_again_is_not_refreshed_again() -> None:
    auth = make_auth(FakeClock())
    request = httpx.Request("GET", f"{BASE}/x")
    flow = auth.auth_flow(request)
    flow.send(token_response(as_request(next(flow)), "tok-same"))
    refresh = as_request(flow.send(httpx.Response(401, request=request)))
    assert flow.send(token_response(refresh, "tok-same")) is request
    with pytest.raises(StopIteration):
        flow.send(httpx.Response(401, request=request))


def test_a_401_naming_another_error_is_not_replayed() -> None:
    auth = make_auth(FakeClock())
    request = httpx.Request("GET", f"{BASE}/x")
    flow = auth.auth_flow(request)
    flow.send(token_response(as_request(next(flow))))
    refused = httpx.Response(
        401,
        headers={"www-authenticate": 'Bearer error="insufficient_scope"'},
        request=request,
    )
    with pytest.raises(StopIteration):
        flow.send(refused)


@pytest.mark.parametrize(("older", "current"), [("tok-1", "tok-2"), ("tok-b", "tok-a")])
def test_a_401_with_an_older_token_replays_with_the_current_one_without_fetching(
    older: str, current: str
) -> None:
    auth = make_auth(FakeClock())
    slow = httpx.Request("GET", f"{BASE}/slow")
    slow_flow = auth.auth_flow(slow)
    slow_flow.send(token_response(as_request(next(slow_flow)), older))
    auth.invalidate(older)  # meanwhile another request refreshed the token
    other = auth.auth_flow(httpx.Request("GET", f"{BASE}/other"))
    other.send(token_response(as_request(next(other)), current))
    replay = slow_flow.send(httpx.Response(401, request=slow))
    assert replay is slow
    assert slow.headers["authorization"] == f"Bearer {current}"


def test_a_flow_waits_for_the_fetch_another_flow_leads_then_uses_its_token() -> None:
    auth = make_auth(FakeClock())
    first = auth.auth_flow(httpx.Request("GET", f"{BASE}/a"))
    second_request = httpx.Request("GET", f"{BASE}/b")
    second = auth.auth_flow(second_request)
    token_request = as_request(next(first))
    assert not isinstance(
        next(second), httpx.Request
    )  # waits for the first one's fetch
    first.send(token_response(token_request, "tok-1"))
    assert second.send(None) is second_request
    assert second_request.headers["authorization"] == "Bearer tok-1"


def test_a_cancelled_async_waiter_does_not_cancel_the_fetch_the_others_wait_for() -> (
    None
):
    auth = make_auth(FakeClock())
    leader = auth.auth_flow(httpx.Request("GET", f"{BASE}/a"))
    token_request = as_request(next(leader))
    request = httpx.Request("GET", f"{BASE}/b")
    follower = auth.auth_flow(request)
    refresh = next(follower)
    assert isinstance(refresh, concurrent.futures.Future)

    async def wait_then_get_cancelled() -> None:
        waiting = asyncio.wrap_future(refresh)
        waiting.cancel()
        await asyncio.sleep(
            0
        )  # one loop turn: the cancellation reaches the fetch, if it can

    asyncio.run(wait_then_get_cancelled())
    assert not refresh.cancelled()
    leader.send(token_response(token_request, "tok-1"))
    assert follower.send(None) is request
    assert request.headers["authorization"] == "Bearer tok-1"


def test_sync_driver_single_flight_across_threads() -> None:
    """Eight threads drive sync_auth_flow; one fetches, the others wait for it."""
    auth = make_auth(FakeClock())
    fetches = 0
    release = threading.Event()
    lock = threading.Lock()
    results: list[str] = []

    def run() -> None:
        nonlocal fetches
        request = httpx.Request("GET", f"{BASE}/x")
        flow = auth.sync_auth_flow(request)
        outgoing = as_request(next(flow))
        while True:
            if TOKEN_REQUEST_EXTENSION in outgoing.extensions:
                with lock:
                    fetches += 1
                assert release.wait(10)
                response = token_response(outgoing, "tok-1")
            else:
                response = httpx.Response(200, request=outgoing)
                results.append(outgoing.headers["authorization"])
            try:
                outgoing = flow.send(response)
            except StopIteration:
                return

    threads = [threading.Thread(target=run) for _ in range(8)]
    for thread in threads:
        thread.start()
    release.set()
    for thread in threads:
        thread.join(10)
    assert fetches == 1
    assert results == ["Bearer tok-1"] * 8


def test_a_401_for_a_token_that_only_got_errors_counts_as_never_worked() -> None:
    """Only an answer below 400 proves a token; a token that only drew a 400 and then
    401s is not taken for a revoked one (which would earn it another refresh)."""
    auth = make_auth(FakeClock())
    request = httpx.Request("GET", f"{BASE}/x")
    flow = auth.auth_flow(request)
    flow.send(token_response(as_request(next(flow)), "tok-1"))
    other = auth.auth_flow(httpx.Request("GET", f"{BASE}/y"))
    next(other)
    with pytest.raises(StopIteration):
        other.send(httpx.Response(400))
    for new in ("tok-2", "tok-3"):
        refresh = as_request(flow.send(httpx.Response(401, request=request)))
        assert flow.send(token_response(refresh, new)) is request
    with pytest.raises(StopIteration):  # MAX_REFRESHES tokens refused that never worked
        flow.send(httpx.Response(401, request=request))


@pytest.mark.parametrize(("status", "refreshes"), [(399, 3), (400, 2)])
def test_an_answer_below_400_proves_a_token_and_400_does_not(
    status: int, refreshes: int
) -> None:
    """A token that got an answer below 400 (even a 399) worked: a 401 for it later is a
    revocation, which earns one refresh more than a token that never worked."""
    auth = make_auth(FakeClock())
    request = httpx.Request("GET", f"{BASE}/x")
    flow = auth.auth_flow(request)
    flow.send(token_response(as_request(next(flow)), "tok-1"))
    other = auth.auth_flow(httpx.Request("GET", f"{BASE}/y"))
    next(other)
    with pytest.raises(StopIteration):
        other.send(httpx.Response(status))
    assert refreshes_until_given_up(flow, request) == refreshes


def refreshes_until_given_up(flow: Any, request: httpx.Request) -> int:
    """How many new tokens the flow fetches while every answer is a 401."""
    for made in range(20):
        try:
            refresh = as_request(flow.send(httpx.Response(401, request=request)))
        except StopIteration:
            return made
        assert flow.send(token_response(refresh, f"tok-{made + 2}")) is request
    raise AssertionError("the flow never gave up")


def test_the_documented_bounds_of_waiting_and_replaying() -> None:
    # docs/guides/client.md, "Tokens": "a caller waits at most 120 s", "up to eight replays".
    assert (_auth.MAX_REFRESH_WAIT, _auth.MAX_REPLAYS) == (120.0, 8)


@pytest.mark.parametrize(
    ("fields", "match"),
    [
        ({"access_token": None}, "has no access_token that is a header value"),
        ({"access_token": "two words"}, "has no access_token that is a header value"),
        ({"token_type": "MAC"}, "not Bearer"),
        ({"token_type": "Basic"}, "not Bearer"),  # sorts before Bearer: none other is
        ({"token_type": "bear"}, "not Bearer"),
        ({"expires_in": "0"}, "expires_in"),
        ({"expires_in": "3600.5"}, "expires_in"),
        ({"expires_in": "99999999"}, "expires_in"),
        ({"expires_in": True}, "expires_in"),
        ({"expires_in": "9" * 5000}, "expires_in"),
        ({"access_token": "x" * 8193}, "has no access_token that is a header value"),
        ({"expires_in": str(7 * 24 * 3600 + 1)}, "not an integer from 1 to 604800"),
    ],
)
def test_bad_token_responses_are_typed_errors(
    fields: dict[str, Any], match: str
) -> None:
    request = httpx.Request("POST", f"{BASE}/authenticate")
    with pytest.raises(TokenResponseError, match=match) as info:
        parse_token_response(token_response(request, "secret-token-xyz", **fields))
    assert "secret-token-xyz" not in str(info.value)


def test_token_type_is_case_insensitive_and_integer_expires_in_is_accepted() -> None:
    request = httpx.Request("POST", f"{BASE}/authenticate")
    assert parse_token_response(
        token_response(request, token_type="bearer", expires_in=60)
    ) == (
        "tok-1",
        60,
    )


@pytest.mark.parametrize("expires_in", [1, 7 * 24 * 3600, " 60 "])
def test_a_lifetime_from_one_second_to_a_week_is_accepted(
    expires_in: int | str,
) -> None:
    request = httpx.Request("POST", f"{BASE}/authenticate")
    response = token_response(request, expires_in=expires_in)
    assert parse_token_response(response) == ("tok-1", int(expires_in))


def test_a_long_token_type_is_cut_to_40_characters_in_the_message() -> None:
    request = httpx.Request("POST", f"{BASE}/authenticate")
    with pytest.raises(TokenResponseError) as info:
        parse_token_response(token_response(request, token_type="M" * 100))
    assert f"token_type is {'M' * 40!r}, not Bearer" in str(info.value)


@pytest.mark.parametrize("status", [101, 201, 204, 302])
def test_only_a_200_carries_a_token(status: int) -> None:
    request = httpx.Request("POST", f"{BASE}/authenticate")
    body = {"access_token": "tok-1", "token_type": "Bearer", "expires_in": "3600"}
    with pytest.raises(service_api.ApiStatusError, match=f"^{status} "):
        parse_token_response(httpx.Response(status, json=body, request=request))


def test_a_404_from_authenticate_names_the_missing_prefix_only_when_it_is_missing() -> (
    None
):
    request = httpx.Request("POST", "https://api.example.test/v3/authenticate")
    with pytest.raises(service_api.NotFoundError, match="lacks its /public/v3 prefix"):
        parse_token_response(httpx.Response(404, request=request))
    with pytest.raises(ServerError) as info:
        parse_token_response(httpx.Response(500, request=request))
    assert "prefix" not in str(info.value)
    with pytest.raises(service_api.NotFoundError) as found:  # the prefix is there
        parse_token_response(
            httpx.Response(404, request=httpx.Request("POST", f"{BASE}/authenticate"))
        )
    assert "prefix" not in str(found.value)


@pytest.mark.parametrize("body", [b"<html>", b"[]", b'"tok"', b"{}"])
def test_not_a_json_object_with_a_token_is_a_token_response_error(body: bytes) -> None:
    request = httpx.Request("POST", f"{BASE}/authenticate")
    with pytest.raises(TokenResponseError, match="has no access_token"):
        parse_token_response(httpx.Response(200, content=body, request=request))


@pytest.mark.parametrize(
    ("status", "code"), [(401, "invalid_client"), (400, "invalid_request"), (400, None)]
)
def test_refused_credentials(status: int, code: str | None) -> None:
    request = httpx.Request("POST", f"{BASE}/authenticate")
    body = json.dumps({"error": code} if code else {}).encode()
    response = httpx.Response(
        status,
        content=body,
        headers={"content-type": "application/json"},
        request=request,
    )
    with pytest.raises(InvalidCredentialsError) as info:
        parse_token_response(response)
    assert (
        type(info.value) is InvalidCredentialsError
    )  # a 400 too: not a BadRequestError
    assert (info.value.status_code, info.value.error) == (status, code)
    assert (
        str(info.value)
        == f"the service refused the client credentials ({status}) for POST {BASE}/authenticate"
    )


def test_the_json_body_is_read_whatever_the_content_type() -> None:
    request = httpx.Request("POST", f"{BASE}/authenticate")
    for content_type in ("text/plain; charset=utf-8", "application/octet-stream", None):
        body = (
            b'{"access_token": "tok-plain", "token_type": "Bearer", "expires_in": "60"}'
        )
        headers = {"content-type": content_type} if content_type else {}
        response = httpx.Response(200, content=body, headers=headers, request=request)
        assert parse_token_response(response) == ("tok-plain", 60)


def test_reprs_show_no_secret() -> None:
    auth = make_auth(FakeClock())
    flow = auth.auth_flow(httpx.Request("GET", f"{BASE}/x"))
    flow.send(token_response(as_request(next(flow)), "tok-secret-1"))
    for text in (repr(auth), str(auth)):
        assert SECRET not in text
        assert "tok-secret-1" not in text


# ---- the token store hook -----------------------------------------------------------------


class MemoryStore:
    """An in-memory ``TokenStore`` that records its calls, or fails them all."""

    def __init__(
        self, token: StoredToken | None = None, *, broken: bool = False
    ) -> None:
        self.token = token
        self.broken = broken
        self.calls: list[str] = []

    def load(self) -> StoredToken | None:
        self.calls.append("load")
        if self.broken:
            raise OSError("store unreachable")
        return self.token

    def save(self, token: StoredToken) -> None:
        self.calls.append("save")
        if self.broken:
            raise OSError("store unreachable")
        self.token = token

    @contextlib.contextmanager
    def lock(self) -> Iterator[None]:
        self.calls.append("lock")
        if self.broken:
            raise OSError("store unreachable")
        yield
        self.calls.append("unlock")


def drive(
    auth: TokenAuth, answers: Callable[[httpx.Request], httpx.Response]
) -> list[str]:
    """Run the sync driver to the end; returns what was sent (``token`` or the auth header)."""
    request = httpx.Request("GET", f"{BASE}/x")
    flow = auth.sync_auth_flow(request)
    sent = []
    outgoing = as_request(next(flow))
    while True:
        is_token = TOKEN_REQUEST_EXTENSION in outgoing.extensions
        sent.append("token" if is_token else outgoing.headers["authorization"])
        try:
            outgoing = flow.send(answers(outgoing))
        except StopIteration:
            return sent


def ok(request: httpx.Request) -> httpx.Response:
    if TOKEN_REQUEST_EXTENSION in request.extensions:
        return token_response(request, "tok-fetched")
    return httpx.Response(200, request=request)


def store_auth(store: MemoryStore) -> TokenAuth:
    return TokenAuth(BASE, "cid", SECRET, clock=FakeClock(), token_store=store)


def test_a_stored_token_is_used_instead_of_fetching() -> None:
    store = MemoryStore(StoredToken("tok-stored", expires_at=time.time() + 3600))
    assert drive(store_auth(store), ok) == ["Bearer tok-stored"]
    assert store.calls == ["lock", "load", "unlock"]


def test_a_stored_token_keeps_its_remaining_lifetime() -> None:
    clock = FakeClock()
    store = MemoryStore(StoredToken("tok-stored", expires_at=time.time() + 600))
    auth = TokenAuth(BASE, "cid", SECRET, clock=clock, token_store=store)
    assert drive(auth, ok) == ["Bearer tok-stored"]
    clock.now += (
        600 - 60 - 5
    )  # short of the refresh time (skew 60 s): still the stored one
    assert drive(auth, ok) == ["Bearer tok-stored"]
    assert store.calls == ["lock", "load", "unlock"]  # no second look at the store
    clock.now += (
        10  # past it: the store is asked again, and holds the token that is due
    )
    assert drive(auth, ok) == ["token", "Bearer tok-fetched"]
    assert store.calls == ["lock", "load", "unlock", "lock", "load", "save", "unlock"]


def test_a_token_another_process_stored_is_adopted_when_ours_is_due() -> None:
    clock = FakeClock()
    store = MemoryStore(StoredToken("tok-stored", expires_at=time.time() + 600))
    auth = TokenAuth(BASE, "cid", SECRET, clock=clock, token_store=store)
    assert drive(auth, ok) == ["Bearer tok-stored"]
    store.token = StoredToken("tok-other", expires_at=time.time() + 3600)
    clock.now += 600 - 60 + 5  # past the refresh time of ours
    assert drive(auth, ok) == ["Bearer tok-other"]
    assert store.calls == ["lock", "load", "unlock"] * 2


@pytest.mark.parametrize(
    ("left", "adopted"), [(54.0, True), (0.9, True), (0.0, False), (-0.5, False)]
)
def test_a_stored_token_is_adopted_while_it_has_time_left(
    left: float, adopted: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(time, "time", lambda: 5000.0)  # the wall clock stands still
    store = MemoryStore(StoredToken("tok-stored", expires_at=5000.0 + left))
    if adopted:
        assert drive(store_auth(store), ok) == ["Bearer tok-stored"]
        assert store.calls == ["lock", "load", "unlock"]
    else:  # not adopted first and then found due: fetched at once
        assert drive(store_auth(store), ok) == ["token", "Bearer tok-fetched"]
        assert store.calls == ["lock", "load", "save", "unlock"]


# Sent at 1000 s or at 60 s on the monotonic clock: from 60, the 100 s taken are not
# the remainder of the clock's reading by the sending time (160 % 60 is 40).
@pytest.mark.parametrize("sent_at", [1000.0, 60.0])
def test_a_saved_token_expires_from_when_its_request_was_sent(sent_at: float) -> None:
    clock = FakeClock()
    clock.now = sent_at
    store = MemoryStore()
    auth = TokenAuth(BASE, "cid", SECRET, clock=clock, token_store=store)

    def slow_token(request: httpx.Request) -> httpx.Response:
        clock.now += 100  # /authenticate took 100 s to answer
        return ok(request)

    assert drive(auth, slow_token) == ["token", "Bearer tok-fetched"]
    assert store.token is not None
    assert 3400 < store.token.expires_at - time.time() <= 3500


def test_a_fetched_token_is_saved_under_the_lock() -> None:
    store = MemoryStore(StoredToken("tok-old", expires_at=time.time() - 1))
    assert drive(store_auth(store), ok) == ["token", "Bearer tok-fetched"]
    assert store.calls == ["lock", "load", "save", "unlock"]
    assert store.token is not None
    assert store.token.access_token == "tok-fetched"
    assert 3500 < store.token.expires_at - time.time() <= 3600


def test_a_stored_token_refused_with_a_401_is_not_taken_again() -> None:
    store = MemoryStore(StoredToken("tok-stored", expires_at=time.time() + 3600))
    auth = store_auth(store)

    def refuse_stored(request: httpx.Request) -> httpx.Response:
        if request.headers.get("authorization") == "Bearer tok-stored":
            return httpx.Response(401, request=request)
        return ok(request)

    assert drive(auth, refuse_stored) == [
        "Bearer tok-stored",
        "token",
        "Bearer tok-fetched",
    ]


def test_a_broken_store_falls_back_to_fetching_with_one_warning(
    caplog: pytest.LogCaptureFixture,
) -> None:
    auth = store_auth(MemoryStore(broken=True))
    assert drive(auth, ok) == ["token", "Bearer tok-fetched"]
    auth.invalidate("tok-fetched")
    assert drive(auth, ok) == ["token", "Bearer tok-fetched"]
    warnings = [r for r in caplog.records if r.levelname == "WARNING"]
    assert len(warnings) == 1
    assert "token store" in warnings[0].getMessage()


def test_waiters_of_a_failed_fetch_get_their_own_copy_of_its_error() -> None:
    auth = make_auth(FakeClock())
    leader = auth.auth_flow(httpx.Request("GET", f"{BASE}/a"))
    follower = auth.auth_flow(httpx.Request("GET", f"{BASE}/b"))
    token_request = next(leader)
    assert isinstance(token_request, httpx.Request)
    assert not isinstance(next(follower), httpx.Request)  # waits for the leader's fetch
    refused = httpx.Response(
        401, json={"error": "invalid_client"}, request=token_request
    )
    with pytest.raises(InvalidCredentialsError) as first:
        leader.send(refused)
    with pytest.raises(InvalidCredentialsError) as second:
        follower.send(None)
    assert second.value is not first.value  # at_page() on one must not move the other
    assert str(second.value) == str(first.value)
    assert second.value.error == "invalid_client"


def test_a_waiter_whose_error_stops_an_iteration_adds_notes_to_its_copy_only() -> None:
    auth = make_auth(FakeClock())
    leader = auth.auth_flow(httpx.Request("GET", f"{BASE}/a"))
    followers = [auth.auth_flow(httpx.Request("GET", f"{BASE}/{n}")) for n in "bc"]
    token_request = as_request(next(leader))
    for follower in followers:
        assert isinstance(next(follower), concurrent.futures.Future)
    with pytest.raises(ServerError) as first:
        leader.send(httpx.Response(503, json={}, request=token_request))
    first.value.at_page(3, items_yielded=100)  # the leader's iteration stops first
    copies = []
    for page, follower in zip((7, 9), followers, strict=True):
        with pytest.raises(ServerError) as waiter:
            follower.send(None)
        waiter.value.at_page(page, items_yielded=0)
        copies.append(waiter.value)
    assert first.value.__notes__ == ["resume with start_page=3"]
    assert [c.__notes__ for c in copies] == [
        [f"resume with start_page={p}"] for p in (7, 9)
    ]


# ---- no wait can hang -----------------------------------------------------------------------


def in_thread(target: Callable[[], _R], timeout: float = JOIN_TIMEOUT) -> _R:
    """``target()`` run in a daemon thread: a hang fails the test instead of hanging it
    (and does not keep the process alive)."""
    outcome: concurrent.futures.Future[_R] = concurrent.futures.Future()

    def run() -> None:
        try:
            outcome.set_result(target())
        except BaseException as exc:  # re-raised in the test's thread
            outcome.set_exception(exc)

    threading.Thread(target=run, daemon=True).start()
    try:
        return outcome.result(timeout)
    except TimeoutError:
        pytest.fail(f"still waiting after {timeout} s")


def test_a_waiter_on_any_other_thread_can_wait_for_the_leader() -> None:
    """Threads are told apart by identity only: a waiter whose thread id is above or
    below the leader's can wait; on the leader's thread only a waiter in its loop can."""
    refresh = _auth._Refresh()  # led from this thread, outside any event loop
    me = threading.get_ident()
    assert not refresh.can_wait(None)
    for leader in (me - 1, me + 1):
        refresh.thread = leader
        assert refresh.can_wait(None)
    loop, other = asyncio.new_event_loop(), asyncio.new_event_loop()
    refresh.thread, refresh.loop = me, loop
    assert refresh.can_wait(loop)
    assert not refresh.can_wait(None)
    assert not refresh.can_wait(other)
    loop.close()
    other.close()


def test_a_waiter_that_gives_up_fetches_alone_and_leaves_the_leaders_refresh() -> None:
    auth = make_auth(FakeClock())
    leader_request = httpx.Request("GET", f"{BASE}/a")
    leader = auth.auth_flow(leader_request)
    token_request = as_request(next(leader))
    request = httpx.Request("GET", f"{BASE}/b")
    follower = auth.auth_flow(request)
    refresh = next(follower)
    assert isinstance(refresh, concurrent.futures.Future)
    own = as_request(
        in_thread(lambda: follower.send(None))
    )  # the driver gave up: fetch alone
    assert TOKEN_REQUEST_EXTENSION in own.extensions
    assert follower.send(token_response(own, "tok-own")) is request
    assert request.headers["authorization"] == "Bearer tok-own"
    assert not refresh.done()  # still the leader's to end
    later = httpx.Request("GET", f"{BASE}/c")
    assert next(auth.auth_flow(later)) is later  # the token is fresh: no wait, no fetch
    assert leader.send(token_response(token_request, "tok-lead")) is leader_request
    assert refresh.done()
    assert refresh.result() is None


def test_the_sync_driver_does_not_wait_for_a_fetch_led_on_its_own_thread() -> None:
    """A sync call inside a coroutine while a task of that loop leads the fetch."""
    auth = make_auth(FakeClock())

    def lead_then_call_sync() -> httpx.Request:
        leader = auth.auth_flow(httpx.Request("GET", f"{BASE}/a"))
        as_request(
            next(leader)
        )  # the leader waits for its answer: this thread is needed
        return as_request(next(auth.sync_auth_flow(httpx.Request("GET", f"{BASE}/b"))))

    assert TOKEN_REQUEST_EXTENSION in in_thread(lead_then_call_sync).extensions


@pytest.mark.parametrize("driver", ["sync", "async"])
def test_waiters_wait_for_another_threads_fetch_at_most_max_refresh_wait(
    driver: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_auth, "MAX_REFRESH_WAIT", 0.05)
    auth = make_auth(FakeClock())
    as_request(
        next(auth.auth_flow(httpx.Request("GET", f"{BASE}/a")))
    )  # never answered

    def first_step() -> httpx.Request:
        request = httpx.Request("GET", f"{BASE}/b")
        if driver == "sync":
            return as_request(next(auth.sync_auth_flow(request)))
        return as_request(asyncio.run(anext(auth.async_auth_flow(request))))

    assert TOKEN_REQUEST_EXTENSION in in_thread(first_step).extensions


# ---- the same over loopback HTTP, through service_api.Client --------------------------------


class TokenServer:
    """A loopback server: ``/authenticate`` issues ``loopback-token-N``; the first
    ``held`` token requests get no answer until ``release`` is set, then a token (or
    a 503 when ``fail_held`` is set); GETs answer 200."""

    def __init__(self, held: int = 0) -> None:
        self.held, self.token_requests, self.fail_held = held, 0, False
        self.accepts: list[str | None] = []  # the accept header of each token request
        self.release, self.token_request_seen = threading.Event(), threading.Event()
        self._lock = threading.Lock()
        server = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: object) -> None:
                pass

            def _send(
                self, body: bytes, content_type: str = "application/json"
            ) -> None:
                self.send_response(200)
                self.send_header("content-type", content_type)
                self.send_header("content-length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("content-length") or 0))
                with server._lock:
                    server.accepts.append(self.headers.get("accept"))
                    server.token_requests += 1
                    number = server.token_requests
                server.token_request_seen.set()
                if number <= server.held:
                    server.release.wait(JOIN_TIMEOUT)
                    if server.fail_held:
                        self.send_response(503)
                        self.send_header("content-length", "0")
                        self.end_headers()
                        return
                token = f"loopback-token-{number}"
                register_secret(token, "loopback token")
                fields = {
                    "access_token": token,
                    "token_type": "Bearer",
                    "expires_in": "3600",
                }
                # As the seed's accept asks: JSON under a text/plain content type.
                self._send(json.dumps(fields).encode(), "text/plain; charset=utf-8")

            def do_GET(self) -> None:
                self._send(b"{}")

        self._server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.base_url = f"http://127.0.0.1:{self._server.server_address[1]}/public/v3"
        threading.Thread(
            target=self._server.serve_forever,
            kwargs={"poll_interval": 0.01},
            daemon=True,
        ).start()

    def close(self) -> None:
        self.release.set()
        self._server.shutdown()
        self._server.server_close()


@pytest.fixture
def token_server() -> Iterator[Callable[[int], TokenServer]]:
    servers: list[TokenServer] = []

    def start(held: int) -> TokenServer:
        servers.append(TokenServer(held))
        return servers[-1]

    yield start
    for server in servers:
        server.close()


def test_a_sync_call_inside_a_coroutine_while_a_task_of_its_loop_fetches(
    token_server: Callable[[int], TokenServer],
) -> None:
    server = token_server(1)
    client = service_api.Client(server.base_url, "cid", SECRET, None)

    async def main() -> tuple[int, int]:
        task = asyncio.create_task(client.get_async_httpx_client().get("/shipments"))
        assert await asyncio.to_thread(server.token_request_seen.wait, JOIN_TIMEOUT)
        status = (
            client.get_httpx_client().get("/shipments").status_code
        )  # sync SDK call
        server.release.set()
        return status, (await task).status_code

    assert in_thread(lambda: asyncio.run(main())) == (200, 200)
    assert server.token_requests == 2  # the task's, and the sync call's own
    client.close()


def test_waiters_stop_waiting_for_a_leader_whose_loop_stopped_for_good(
    token_server: Callable[[int], TokenServer], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_auth, "MAX_REFRESH_WAIT", 0.1)
    server = token_server(1)
    client = service_api.Client(server.base_url, "cid", SECRET, None)
    loop = asyncio.new_event_loop()
    leader = loop.create_task(client.get_async_httpx_client().get("/shipments"))
    loop.run_until_complete(
        asyncio.to_thread(server.token_request_seen.wait, JOIN_TIMEOUT)
    )
    # The loop no longer runs: its task leads a fetch nobody will finish.
    sync_status = in_thread(lambda: client.get_httpx_client().get("/x").status_code)
    assert sync_status == 200
    assert server.token_requests == 2
    client._shared.auth.invalidate("loopback-token-2")  # the next call needs a new one

    async def async_call() -> int:
        response = await client.get_async_httpx_client().get("/x")
        await client.aclose()
        return response.status_code

    assert (
        in_thread(lambda: asyncio.run(async_call())) == 200
    )  # another loop, another thread
    assert server.token_requests == 3
    server.release.set()
    assert (
        loop.run_until_complete(leader).status_code == 200
    )  # it still ends its own fetch
    loop.run_until_complete(client.aclose())
    loop.close()
    client.close()


@pytest.mark.parametrize("driver", ["sync", "async"])
def test_waiters_of_a_token_request_that_timed_out_get_its_error_at_once(
    token_server: Callable[[int], TokenServer], driver: str
) -> None:
    server = token_server(100)  # the token endpoint never answers in time
    client = service_api.Client(
        server.base_url, "cid", SECRET, None, timeout=0.5, max_retries=0
    )

    def sync_call(_: int) -> BaseException | None:
        try:
            client.get_httpx_client().get("/shipments")
        except service_api.ServiceApiError as exc:
            return exc
        return None

    def calls() -> list[BaseException | None]:
        if driver == "sync":
            with concurrent.futures.ThreadPoolExecutor(8) as pool:
                return list(pool.map(sync_call, range(8)))

        async def gathered() -> list[BaseException | None]:
            async_client = client.get_async_httpx_client()
            tasks = [async_client.get("/shipments") for _ in range(8)]
            outcomes = await asyncio.gather(*tasks, return_exceptions=True)
            await client.aclose()
            return [o if isinstance(o, BaseException) else None for o in outcomes]

        return asyncio.run(gathered())

    errors = in_thread(calls)
    assert [type(e) for e in errors] == [service_api.ApiTimeoutError] * 8
    assert (
        server.token_requests == 1
    )  # not one timed-out fetch per caller, one after another
    client.close()


def test_waiters_of_a_failed_token_request_retry_behind_one_new_leader(
    token_server: Callable[[int], TokenServer], monkeypatch: pytest.MonkeyPatch
) -> None:
    server = token_server(1)
    server.fail_held = True  # the first token request fails, once everyone waits for it
    waiting, everyone_waits = 0, threading.Event()
    claim = _auth.TokenAuth.claim

    def counting_claim(auth: TokenAuth, now: float) -> object:
        nonlocal waiting
        outcome, leads = claim(auth, now)
        if not isinstance(outcome, str) and not leads:  # a fetch under way to wait for
            waiting += 1
            if waiting == 7:
                everyone_waits.set()
        return outcome, leads

    monkeypatch.setattr(_auth.TokenAuth, "claim", counting_claim)
    policy = service_api.RetryPolicy(
        max_retries=1, initial_delay=0.001, max_delay=0.001
    )
    client = service_api.Client(server.base_url, "cid", SECRET, None, retry=policy)

    def call(_: int) -> int:
        return client.get_httpx_client().get("/shipments").status_code

    def calls() -> list[int]:
        with concurrent.futures.ThreadPoolExecutor(8) as pool:
            results = pool.map(call, range(8))
            assert everyone_waits.wait(JOIN_TIMEOUT)  # one leads, seven wait for it
            server.release.set()
            return list(results)

    assert in_thread(calls) == [200] * 8
    assert server.token_requests == 2  # the failed one, then one new leader for all
    client.close()


def test_the_async_driver_does_not_wait_for_a_leader_in_another_loop_of_its_thread() -> (
    None
):
    """The leader's loop stopped (run by hand, say) and this thread now runs another."""
    auth = make_auth(FakeClock())

    def lead_in_one_loop_then_wait_in_another() -> httpx.Request:
        leader = auth.auth_flow(httpx.Request("GET", f"{BASE}/a"))

        async def lead() -> None:
            as_request(next(leader))

        asyncio.run(lead())
        request = httpx.Request("GET", f"{BASE}/b")
        return as_request(asyncio.run(anext(auth.async_auth_flow(request))))

    assert (
        TOKEN_REQUEST_EXTENSION
        in in_thread(lead_in_one_loop_then_wait_in_another).extensions
    )


def test_an_async_waiter_in_the_leaders_loop_waits_for_it() -> None:
    auth = make_auth(FakeClock())

    async def leader_and_waiter() -> str:
        leader = auth.auth_flow(httpx.Request("GET", f"{BASE}/a"))
        token_request = as_request(next(leader))
        request = httpx.Request("GET", f"{BASE}/b")
        waiting = asyncio.ensure_future(anext(auth.async_auth_flow(request)))
        await asyncio.sleep(0)  # one loop turn: the waiter claims and waits
        assert not waiting.done()
        leader.send(token_response(token_request, "tok-lead"))
        return as_request(await waiting).headers["authorization"]

    assert in_thread(lambda: asyncio.run(leader_and_waiter())) == "Bearer tok-lead"


# ---- the token-request marker, read by the retry loop ------------------------------------


def test_a_post_is_retried_only_when_its_token_request_failed() -> None:
    """A failed token request never sent the POST it was for: the retry loop sees the
    marker on the error's request and retries; a POST's own 503 is not retried."""
    answers = {"token": [503, 200], "post": [503]}
    seen: list[str] = []

    def handle(request: httpx.Request) -> httpx.Response:
        kind = "token" if request.url.path.endswith("/authenticate") else "post"
        seen.append(kind)
        status = answers[kind].pop(0) if answers[kind] else 200
        if kind == "token" and status == 200:
            return token_response(request, "tok-marker")
        return httpx.Response(status, json={}, request=request)

    policy = service_api.RetryPolicy(max_retries=3)
    args = {"transport": httpx.MockTransport(handle)}
    with (
        service_api.Client(
            BASE, "cid", SECRET, "acct-1", retry=policy, httpx_args=args
        ) as c,
        service_api.testing.no_retry_sleep() as delays,
    ):
        with pytest.raises(ServerError) as info:
            c.get_httpx_client().post("/shipments", json={})
        assert seen == [
            "token",
            "token",
            "post",
        ]  # the token request again, the POST once
        assert len(delays) == 1
        assert info.value.request is not None
        assert TOKEN_REQUEST_EXTENSION not in info.value.request.extensions
        answers["token"] = [
            503
        ] * 9  # now every token request fails: retried, then raised
        c._shared.auth.invalidate("tok-marker")
        with pytest.raises(ServerError) as failed:
            c.get_httpx_client().post("/shipments", json={})
    assert failed.value.request is not None
    assert TOKEN_REQUEST_EXTENSION in failed.value.request.extensions
    assert len(delays) == 1 + 3


def test_the_token_request_accepts_text_plain_and_reads_the_json_it_gets(
    token_server: Callable[[int], TokenServer],
) -> None:
    server = token_server(0)
    with service_api.Client(server.base_url, "cid", SECRET, None) as client:
        assert client.get_httpx_client().get("/shipments").status_code == 200
    assert server.accepts == ["text/plain"]


def test_each_token_auth_is_its_own_and_hashable() -> None:
    # Two with the same settings hold two tokens: they are never equal, and each can key
    # a dict or a set.
    first = TokenAuth(BASE, "cid", SECRET)
    second = TokenAuth(BASE, "cid", SECRET)
    assert first != second
    assert first == first
    assert len({first, second}) == 2
