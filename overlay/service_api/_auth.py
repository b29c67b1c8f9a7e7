"""The bearer token's lifecycle: fetch, cache, refresh, replay after a 401.

:meth:`TokenAuth.auth_flow` is written once, without I/O, for ``httpx.Client`` and
``httpx.AsyncClient`` (httpx's documented pattern): it yields ``POST /authenticate``
when it needs a token, then the request, and after a 401 a refresh and a replay.

Single flight: all clients of one integration share a :class:`TokenState`. The
first flow that wants a token starts a :class:`_Refresh` (an event, its error, the
event loops waiting); the others wait for it, then read the new token. A 401
invalidates the token that drew it, compared by value, so a 401 for an older token
replays with the current one instead of fetching again. The driver
(:meth:`TokenAuth._steps`) is written once around a sync or async wait.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import logging
import threading
import time
from collections.abc import AsyncGenerator, Callable, Generator
from typing import TypeVar

import attrs
import httpx

from service_api._errors import (
    TOKEN_REQUEST_EXTENSION,
    InvalidCredentialsError,
    ServiceApiError,
    TokenResponseError,
    error_from_response,
)
from service_api._token_store import StoredToken, TokenStore
from service_api._www_authenticate import parse_www_authenticate
from service_api_client.models.token_request import TokenRequest

logger = logging.getLogger("service_api")
_T = TypeVar("_T")

#: Longest token lifetime accepted: a week (a larger value is likely milliseconds).
MAX_TOKEN_LIFETIME = 7 * 24 * 3600
#: Shortest token lifetime accepted, in seconds.
MIN_TOKEN_LIFETIME = 1
#: Refreshes one attempt may make after 401s, each for a token other than those already
#: refused: a token rotated between a refresh and its replay is survived, and "401
#: forever" ends after at most 1 + this many token requests (2 when the same token is
#: issued again).
MAX_REFRESHES = 2
# A token is a header value: printable ASCII without spaces, or it could inject headers.
_TOKEN_CHARS = frozenset(chr(c) for c in range(0x21, 0x7F))
BASE_URL_HINT = "; the base URL probably lacks its /public/v3 prefix"


def effective_skew(refresh_skew: float, lifetime: float) -> float:
    """The refresh margin used for a token living ``lifetime`` s: at most half of it.

    Example::

        effective_skew(60.0, 2)   # 1.0
    """
    return max(0.0, min(refresh_skew, lifetime / 2.0))


@attrs.frozen
class IssuedToken:
    """A validated token response: the token and its lifetime in seconds."""

    access_token: str = attrs.field(repr=False)
    lifetime: int


def parse_token_response(response: httpx.Response) -> IssuedToken:
    """Validate the answer of ``POST /authenticate``; messages never contain the token.

    Example::

        parse_token_response(response).lifetime   # 3600
    """
    request, status = response.request, response.status_code
    if status in (400, 401):
        code = InvalidCredentialsError("", response=response).error  # for the message
        raise InvalidCredentialsError(
            f"the service refused the client credentials ({status}{f' {code}' if code else ''})"
            f" for POST {request.url}",
            response=response,
        )
    if status != 200:
        raise error_from_response(response, hint=BASE_URL_HINT if status == 404 else "")

    def bad(what: str) -> TokenResponseError:
        return TokenResponseError(f"token response {what}", request=request)

    try:
        data = response.json()
    except ValueError:
        raise bad("is not JSON") from None
    if not isinstance(data, dict):
        raise bad("is not a JSON object")
    token, token_type, expires_in = (
        data.get(k) for k in ("access_token", "token_type", "expires_in")
    )
    if not isinstance(token, str) or not token:
        raise bad("has no access_token")
    if not set(token) <= _TOKEN_CHARS or len(token) > 8192:
        raise bad("'s access_token is not a valid header value")
    if not isinstance(token_type, str) or token_type.lower() != "bearer":
        raise bad(f"'s token_type is {str(token_type)[:40]!r}, not Bearer")
    # The spec says a string holding an integer; a JSON integer is accepted too.
    text = "" if isinstance(expires_in, bool) else str(expires_in).strip()
    lifetime = int(text) if text.isascii() and text.isdigit() else 0
    if not MIN_TOKEN_LIFETIME <= lifetime <= MAX_TOKEN_LIFETIME:
        raise bad(
            f"'s expires_in is {str(expires_in)[:40]!r}, not an integer "
            f"between {MIN_TOKEN_LIFETIME} and {MAX_TOKEN_LIFETIME} seconds"
        )
    return IssuedToken(access_token=token, lifetime=lifetime)


class _Refresh:
    """One token fetch in progress: who waits for it, and how it ended."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._done = threading.Event()
        self._loops: list[tuple[asyncio.AbstractEventLoop, asyncio.Future[None]]] = []
        self.error: ServiceApiError | None = None

    def finish(self, error: BaseException | None) -> None:
        """Wake every waiter, in any thread or loop; a typed error is theirs too."""
        with self._lock:
            # Waiters get the same answer instead of asking again (wrong credentials
            # must not turn into one /authenticate per request).
            self.error = error if isinstance(error, ServiceApiError) else None
            self._done.set()
            loops, self._loops = self._loops, []
        for loop, future in loops:
            with contextlib.suppress(RuntimeError):  # a closed loop: nobody waits there
                loop.call_soon_threadsafe(_resolve, future)

    def wait(self) -> None:
        """Block the thread until the fetch is over."""
        self._done.wait()

    async def wait_async(self) -> None:
        """Wait, without blocking the event loop, until the fetch is over."""
        loop = asyncio.get_running_loop()
        future = loop.create_future()
        with self._lock:
            if self._done.is_set():
                return
            self._loops.append((loop, future))
        await future


def _resolve(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


class TokenState:
    """The token shared by every client of one integration, and the fetch in progress.

    Thread-safe; the lock is never held across I/O.

    Example::

        auth = TokenAuth(base_url, client_id, secret, state=TokenState(refresh_skew=60.0))
    """

    def __init__(self, *, refresh_skew: float = 60.0) -> None:
        if refresh_skew < 0:
            raise ValueError("refresh_skew must be >= 0")
        self.refresh_skew = float(refresh_skew)
        self._lock = threading.Lock()
        self._token: str | None = None
        self._refresh_at = 0.0
        self._expires_at = 0.0
        self._refresh: _Refresh | None = None
        self.refused: str | None = None  # the last token a 401 invalidated
        self.stored = 0  # tokens stored so far, to number them in the log

    def __repr__(self) -> str:
        return f"TokenState(has_token={self._token is not None})"

    def token(self, now: float) -> str | None:
        """The token to use now, or ``None`` when a new one is needed."""
        with self._lock:
            return self._token if now < self._refresh_at else None

    def store(self, token: str, lifetime: float, *, sent_at: float) -> None:
        """Keep a new token; its lifetime counts from when its request was sent."""
        with self._lock:
            self._token = token
            self.stored += 1
            self._expires_at = sent_at + lifetime
            self._refresh_at = sent_at + lifetime - effective_skew(self.refresh_skew, lifetime)

    def invalidate(self, token: str) -> None:
        """Forget ``token`` if it is still the current one (a 401 for an older token
        says nothing about the current one)."""
        with self._lock:
            self.refused = token
            if self._token == token:
                self._refresh_at = float("-inf")

    def remaining(self, now: float) -> tuple[str | None, float]:
        """The current token and the seconds it has left (for a token store)."""
        with self._lock:
            return self._token, self._expires_at - now

    def claim(self, now: float) -> tuple[_Refresh | None, bool]:
        """``(None, False)`` if a token is fresh; else the fetch and whether the caller leads it."""
        with self._lock:
            if self._token is not None and now < self._refresh_at:
                return None, False
            if self._refresh is not None:
                return self._refresh, False
            self._refresh = _Refresh()
            return self._refresh, True

    def finish(self, refresh: _Refresh, error: BaseException | None) -> None:
        """End the fetch ``refresh`` and wake its waiters."""
        with self._lock:
            self._refresh = None
        refresh.finish(error)


class TokenAuth(httpx.Auth):
    """``httpx.Auth`` that keeps a bearer token fresh for one base URL (see the README).

    Example::

        auth = TokenAuth("https://api.example.com/public/v3", "my-client", secret)
        httpx.get("https://api.example.com/public/v3/shipments", auth=auth)
    """

    def __init__(
        self,
        base_url: str,
        client_id: str,
        client_secret: str,
        *,
        state: TokenState | None = None,
        timeout: httpx.Timeout | None = None,
        clock: Callable[[], float] = time.monotonic,
        token_store: TokenStore | None = None,
    ) -> None:
        self.base_url = str(base_url).rstrip("/")
        self.client_id = client_id
        self._client_secret = client_secret
        self.state = state if state is not None else TokenState()
        self._timeout = timeout if timeout is not None else httpx.Timeout(30.0)
        self._clock = clock
        self._store = token_store
        self._store_failed = False

    def __repr__(self) -> str:
        return f"TokenAuth(base_url={self.base_url!r}, client_id={self.client_id!r})"

    def build_token_request(self) -> httpx.Request:
        """The ``POST /authenticate`` request, from the generated request model."""
        body = TokenRequest(
            client_id=self.client_id,
            client_secret=self._client_secret,
            grant_type="client_credentials",
        )
        return httpx.Request(
            "POST",
            f"{self.base_url}/authenticate",
            files=body.to_multipart(),
            headers={"accept": "application/json"},
            # Requests yielded by an auth flow skip the client's request building,
            # so the client's timeout must be set here or it would be unlimited.
            extensions={"timeout": self._timeout.as_dict(), TOKEN_REQUEST_EXTENSION: True},
        )

    def auth_flow(
        self, request: httpx.Request
    ) -> Generator[httpx.Request, httpx.Response | None, None]:
        """Yield the token request when needed, then ``request``; after a 401 for a token
        not refused before, refresh and replay (at most ``MAX_REFRESHES`` times).

        ``None`` in answer to a token request means "another flow fetched a token".
        """
        refused: list[str] = []
        while True:
            token = self.state.token(self._clock())
            if token is None:
                sent_at = self._clock()
                logger.info("fetching a bearer token for %s", self.client_id)
                token_response = yield self.build_token_request()
                if token_response is not None:
                    issued = parse_token_response(token_response)
                    self.state.store(issued.access_token, issued.lifetime, sent_at=sent_at)
                    logger.info(
                        "bearer token #%d for %s received, valid %d s",
                        self.state.stored,
                        self.client_id,
                        issued.lifetime,
                    )
                continue
            request.headers["Authorization"] = f"Bearer {token}"
            response = yield request
            if response is None or response.status_code != 401 or token in refused:
                return
            error = parse_www_authenticate(response.headers.get("www-authenticate")).error
            if len(refused) >= MAX_REFRESHES or error not in (None, "invalid_token"):
                return
            logger.info("401 for %s %s: replaying with a new token", request.method, request.url)
            self.state.invalidate(token)
            refused.append(token)

    def _steps(
        self, request: httpx.Request
    ) -> Generator[httpx.Request | _Refresh, httpx.Response | None, None]:
        """:meth:`auth_flow` with single flight: yields requests to send, or a
        :class:`_Refresh` to wait for (the drivers do the sending and the waiting)."""
        flow = self.auth_flow(request)
        outgoing = next(flow)
        while True:
            answer: httpx.Response | None = None
            if TOKEN_REQUEST_EXTENSION not in outgoing.extensions:
                answer = yield outgoing
            else:
                refresh, leader = self.state.claim(self._clock())
                if refresh is not None and not leader:
                    yield refresh
                    if refresh.error is not None:
                        # A copy: each caller's error records its own page (at_page).
                        raise copy.copy(refresh.error) from refresh.error.__cause__
                elif refresh is not None:
                    try:
                        with contextlib.ExitStack() as stack:
                            self._use_store(lambda store: stack.enter_context(store.lock()))
                            answer = None if self._adopt_stored() else (yield outgoing)
                            outgoing = flow.send(answer)  # parses and stores a fetched token
                            if answer is not None:
                                self._save_to_store()
                    except BaseException as exc:
                        self.state.finish(refresh, exc)
                        raise
                    self.state.finish(refresh, None)
                    continue
            try:
                outgoing = flow.send(answer)
            except StopIteration:
                return

    def sync_auth_flow(
        self, request: httpx.Request
    ) -> Generator[httpx.Request, httpx.Response, None]:
        """Drive the flow for ``httpx.Client``, waiting on other fetches in the thread."""
        with contextlib.closing(self._steps(request)) as steps:
            step = next(steps)
            while True:
                answer: httpx.Response | None = None
                if isinstance(step, _Refresh):
                    step.wait()
                else:
                    answer = yield step
                    if TOKEN_REQUEST_EXTENSION in step.extensions:
                        answer.read()
                try:
                    step = steps.send(answer)
                except StopIteration:
                    return

    async def async_auth_flow(
        self, request: httpx.Request
    ) -> AsyncGenerator[httpx.Request, httpx.Response]:
        """Drive the flow for ``httpx.AsyncClient``; waiting never blocks the loop."""
        with contextlib.closing(self._steps(request)) as steps:
            step = next(steps)
            while True:
                answer: httpx.Response | None = None
                if isinstance(step, _Refresh):
                    await step.wait_async()
                else:
                    answer = yield step
                    if TOKEN_REQUEST_EXTENSION in step.extensions:
                        await answer.aread()
                try:
                    step = steps.send(answer)
                except StopIteration:
                    return

    # -- the token store hook: consulted under its lock before fetching, written after --

    def _use_store(self, action: Callable[[TokenStore], _T]) -> _T | None:
        """``action(store)``, or ``None`` without a store or when the store fails
        (a broken store falls back to fetching; said once)."""
        if self._store is None:
            return None
        try:
            return action(self._store)
        except Exception as exc:
            if not self._store_failed:
                self._store_failed = True
                logger.warning("token store unusable (%s): fetching tokens", type(exc).__name__)
            return None

    def _adopt_stored(self) -> bool:
        """Take a token another process stored, unless it is the one just refused."""
        stored = self._use_store(lambda store: store.load())
        if stored is None or stored.access_token == self.state.refused:
            return False
        lifetime = stored.expires_at - time.time()
        if lifetime <= effective_skew(self.state.refresh_skew, lifetime):
            return False
        self.state.store(stored.access_token, lifetime, sent_at=self._clock())
        return True

    def _save_to_store(self) -> None:
        token, remaining = self.state.remaining(self._clock())
        if token is not None:
            self._use_store(lambda store: store.save(StoredToken(token, time.time() + remaining)))
