"""The bearer token's lifecycle: fetch, cache, refresh, replay after a 401.

:class:`TokenAuth` is an ``httpx.Auth`` whose :meth:`TokenAuth.auth_flow` is written
once, without I/O, for ``httpx.Client`` and ``httpx.AsyncClient`` alike (httpx's
documented pattern): it yields the ``POST /authenticate`` request itself when it
needs a token, then the real request, and after a 401 at most one refresh and one
replay.

Single flight. All clients of one integration share a :class:`TokenState`. When
the flow wants a token, the drivers (:meth:`TokenAuth.sync_auth_flow`,
:meth:`TokenAuth.async_auth_flow`, the only places that wait) *claim* the fetch:
the first claimer sends ``/authenticate``; the others wait until it finishes
(threads on a ``threading.Condition``, asyncio tasks on a future of their own loop
completed thread-safely, so any mix of threads and event loops works without
spinning), then send ``None`` into the flow, which reads the new token. A
generation counter tells a request that failed with an older token to replay with
the current one instead of fetching again.
"""

from __future__ import annotations

import asyncio
import contextlib
import enum
import logging
import threading
import time
from collections.abc import AsyncGenerator, Callable, Generator
from typing import Any

import attrs
import httpx

from service_api._errors import (
    InvalidCredentialsError,
    ServiceApiError,
    TokenResponseError,
    error_from_response,
    redacted_request,
)
from service_api._www_authenticate import parse_www_authenticate
from service_api_client.models.token_request import TokenRequest

logger = logging.getLogger("service_api")

#: Request extension marking the ``/authenticate`` request; its value is the token
#: generation the flow waits for. The transports read it too (retryable, no account header).
TOKEN_REQUEST_EXTENSION = "service_api.token_request"  # noqa: S105 - a name, not a secret
#: Longest token lifetime accepted: a week. The service issues 3600 s tokens; a
#: larger value is more likely a unit mistake (milliseconds) than a real lifetime.
MAX_TOKEN_LIFETIME = 7 * 24 * 3600
#: Shortest token lifetime accepted, in seconds.
MIN_TOKEN_LIFETIME = 1
# A token is a header value: printable ASCII without spaces (RFC 6750 b64token
# plus what real services send). Anything else could inject headers.
_TOKEN_CHARS = frozenset(chr(c) for c in range(0x21, 0x7F))


def effective_skew(refresh_skew: float, lifetime: float) -> float:
    """The refresh margin actually used for a token living ``lifetime`` seconds.

    ``refresh_skew`` is clamped to half the lifetime: a 2-second token with the
    default 60-second skew is refreshed after 1 second instead of before every call.

    Example::

        effective_skew(60.0, 3600)   # 60.0
        effective_skew(60.0, 2)      # 1.0
    """
    return max(0.0, min(refresh_skew, lifetime / 2.0))


@attrs.frozen
class IssuedToken:
    """A validated token response: the token and its lifetime in seconds."""

    access_token: str = attrs.field(repr=False)
    lifetime: int


def parse_token_response(response: httpx.Response) -> IssuedToken:
    """Validate the answer of ``POST /authenticate``; messages never contain the token.

    Raises :class:`InvalidCredentialsError` for 400/401, the typed status error for
    other failures, :class:`TokenResponseError` for an unusable 200.

    Example::

        issued = parse_token_response(response)
        issued.lifetime   # 3600
    """
    request = redacted_request(response.request)
    if response.status_code in (400, 401):
        error = _oauth_error(response)
        raise InvalidCredentialsError(
            f"the service refused the client credentials ({response.status_code}"
            + (f" {error}" if error else "")
            + ")",
            status_code=response.status_code,
            headers=response.headers,
            body=response.text,
            request=request,
            error=error,
        )
    if response.status_code != 200:
        raise error_from_response(response)
    try:
        data = response.json()
    except ValueError:
        raise TokenResponseError("token response is not JSON", request=request) from None
    if not isinstance(data, dict):
        raise TokenResponseError("token response is not a JSON object", request=request)
    token = data.get("access_token")
    if not isinstance(token, str) or not token:
        raise TokenResponseError("token response has no access_token", request=request)
    if not set(token) <= _TOKEN_CHARS or len(token) > 8192:
        raise TokenResponseError(
            "token response's access_token is not a valid header value", request=request
        )
    token_type = data.get("token_type")
    if not isinstance(token_type, str) or token_type.lower() != "bearer":
        raise TokenResponseError(
            f"token response's token_type is {str(token_type)[:40]!r}, not Bearer",
            request=request,
        )
    expires_in = data.get("expires_in")
    lifetime = _lifetime(expires_in)
    if lifetime is None:
        raise TokenResponseError(
            f"token response's expires_in is {str(expires_in)[:40]!r}, not an integer "
            f"between {MIN_TOKEN_LIFETIME} and {MAX_TOKEN_LIFETIME} seconds",
            request=request,
        )
    return IssuedToken(access_token=token, lifetime=lifetime)


def _lifetime(value: object) -> int | None:
    # The spec says a string holding an integer; a JSON integer is accepted too.
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        seconds = value
    elif isinstance(value, str) and value.strip().isascii() and value.strip().isdigit():
        seconds = int(value.strip())
    else:
        return None
    return seconds if MIN_TOKEN_LIFETIME <= seconds <= MAX_TOKEN_LIFETIME else None


def _oauth_error(response: httpx.Response) -> str | None:
    try:
        data = response.json()
    except ValueError:
        return None
    error = data.get("error") if isinstance(data, dict) else None
    return error[:100] if isinstance(error, str) else None


class _Claim(enum.Enum):
    READY = "ready"  # a good enough token is there: use it
    FETCH = "fetch"  # the caller fetches; it must call finish_fetch
    BUSY = "busy"  # another caller is fetching: wait for it


@attrs.frozen
class _Use:
    token: str = attrs.field(repr=False)
    generation: int


@attrs.frozen
class _NeedToken:
    generation: int  # the generation a new token will have at least


class TokenState:
    """The token shared by every client of one integration, and the fetch in progress.

    Thread-safe; every method holds the lock only briefly (never across I/O).

    Example::

        state = TokenState(refresh_skew=60.0)
        auth = TokenAuth(base_url, client_id, client_secret, state=state)
    """

    def __init__(self, *, refresh_skew: float = 60.0) -> None:
        if refresh_skew < 0:
            raise ValueError("refresh_skew must be >= 0")
        self.refresh_skew = float(refresh_skew)
        self._lock = threading.Lock()
        self._fetch_done = threading.Condition(self._lock)
        self._token: str | None = None
        self._generation = 0
        self._refresh_at = 0.0
        self._fetching = False
        self._round = 0  # counts finished fetches, so waiters know theirs is over
        self._failures: dict[int, ServiceApiError] = {}
        self._async_waiters: list[tuple[asyncio.AbstractEventLoop, asyncio.Future[None]]] = []

    def __repr__(self) -> str:
        with self._lock:
            return (
                f"TokenState(generation={self._generation}, "
                f"has_token={self._token is not None}, fetching={self._fetching})"
            )

    @property
    def generation(self) -> int:
        """How many tokens were stored so far; 0 before the first."""
        with self._lock:
            return self._generation

    def current_token(self) -> str | None:
        """The token held, if any (for redacting messages; never log it)."""
        with self._lock:
            return self._token

    def lookup(self, now: float, min_generation: int = 0) -> _Use | _NeedToken:
        """The token to use, or the generation of the token to wait for."""
        with self._lock:
            if self._fresh(now, min_generation):
                assert self._token is not None
                return _Use(self._token, self._generation)
            return _NeedToken(max(min_generation, self._generation + 1))

    def store(self, issued: IssuedToken, *, sent_at: float) -> int:
        """Keep a new token; its lifetime counts from when its request was sent."""
        skew = effective_skew(self.refresh_skew, issued.lifetime)
        with self._lock:
            self._token = issued.access_token
            self._generation += 1
            self._refresh_at = sent_at + issued.lifetime - skew
            return self._generation

    def invalidate(self) -> None:
        """Forget the token (the next request fetches a new one)."""
        with self._lock:
            self._refresh_at = float("-inf")

    def _fresh(self, now: float, min_generation: int) -> bool:
        return (
            self._token is not None
            and self._generation >= min_generation
            and now < self._refresh_at
        )

    def claim(self, generation: int, now: float) -> tuple[_Claim, int]:
        """Claim the fetch of a token of at least ``generation``; returns the claim and round."""
        with self._lock:
            if self._fresh(now, generation):
                return _Claim.READY, self._round
            if self._fetching:
                return _Claim.BUSY, self._round
            self._fetching = True
            return _Claim.FETCH, self._round

    def finish_fetch(self, failure: BaseException | None) -> None:
        """End the fetch in progress and wake every waiter, in any thread or loop."""
        with self._lock:
            if isinstance(failure, ServiceApiError):
                # Waiters of this round get the same answer instead of asking again
                # (wrong credentials must not turn into one /authenticate per request).
                self._failures = {self._round: failure}
            self._fetching = False
            self._round += 1
            waiters, self._async_waiters = self._async_waiters, []
            self._fetch_done.notify_all()
        for loop, future in waiters:
            # A closed loop raises RuntimeError: nobody is waiting there any more.
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(_resolve, future)

    def failure_of(self, round_: int) -> ServiceApiError | None:
        """The error that ended fetch round ``round_``, if it failed with a typed error."""
        with self._lock:
            return self._failures.get(round_)

    def wait_sync(self, round_: int) -> None:
        """Block the thread until fetch round ``round_`` is over."""
        with self._fetch_done:
            self._fetch_done.wait_for(lambda: self._round != round_)

    async def wait_async(self, round_: int) -> None:
        """Wait, without blocking the event loop, until fetch round ``round_`` is over."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[None] = loop.create_future()
        with self._lock:
            if self._round != round_:
                return
            self._async_waiters.append((loop, future))
        await future


def _resolve(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


class TokenAuth(httpx.Auth):
    """``httpx.Auth`` that keeps a bearer token fresh for one base URL.

    * The first token is fetched lazily and cached in ``state`` (shared between
      clients of the same integration).
    * It is refreshed before use once ``now >= expiry - refresh_skew``, the
      expiry counted from when the ``/authenticate`` request was sent (monotonic
      ``clock``, injectable for tests); the skew is clamped to half the lifetime.
    * On a 401 the token is refreshed once and the request replayed once, unless
      ``www-authenticate`` names an error other than ``invalid_token`` (a
      missing header, another scheme or no ``error`` parameter count as
      ``invalid_token``). A second 401 is returned for the client to raise.

    Example::

        auth = TokenAuth("https://api.example.com/public/v3", "my-client", secret)
        httpx.get("https://api.example.com/public/v3/shipments", auth=auth)
    """

    requires_response_body = True

    def __init__(
        self,
        base_url: str,
        client_id: str,
        client_secret: str,
        *,
        state: TokenState | None = None,
        timeout: httpx.Timeout | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.base_url = str(base_url).rstrip("/")
        self.client_id = client_id
        self._client_secret = client_secret
        self.state = state if state is not None else TokenState()
        self._timeout = timeout if timeout is not None else httpx.Timeout(30.0)
        self._clock = clock

    def __repr__(self) -> str:
        return f"TokenAuth(base_url={self.base_url!r}, client_id={self.client_id!r})"

    @property
    def token_url(self) -> str:
        """Absolute URL of ``POST /authenticate``."""
        return f"{self.base_url}/authenticate"

    def build_token_request(self, generation: int) -> httpx.Request:
        """The ``POST /authenticate`` request, from the generated request model."""
        body = TokenRequest(
            client_id=self.client_id,
            client_secret=self._client_secret,
            grant_type="client_credentials",
        )
        return httpx.Request(
            "POST",
            self.token_url,
            files=body.to_multipart(),
            headers={"accept": "application/json"},
            # Requests yielded by an auth flow skip the client's request building,
            # so the client's timeout must be set here or it would be unlimited.
            extensions={
                "timeout": self._timeout.as_dict(),
                TOKEN_REQUEST_EXTENSION: generation,
            },
        )

    def auth_flow(
        self, request: httpx.Request
    ) -> Generator[httpx.Request, httpx.Response | None, None]:
        """Yield the token request when needed, then ``request``; replay once after a 401.

        Sending ``None`` in answer to a token request means "another request
        fetched a token meanwhile": the flow then reads the shared state again.
        """
        min_generation = 0
        replayed = False
        while True:
            step = self.state.lookup(self._clock(), min_generation)
            if isinstance(step, _NeedToken):
                sent_at = self._clock()
                first = step.generation == 1
                logger.info(
                    "%s bearer token for %s", "fetching" if first else "refreshing", self.client_id
                )
                token_response = yield self.build_token_request(step.generation)
                if token_response is None:
                    continue
                issued = parse_token_response(token_response)
                generation = self.state.store(issued, sent_at=sent_at)
                logger.info(
                    "bearer token #%d for %s received, valid %d s",
                    generation,
                    self.client_id,
                    issued.lifetime,
                )
                continue
            request.headers["Authorization"] = f"Bearer {step.token}"
            response = yield request
            if response is None or response.status_code != 401 or replayed:
                return
            challenge = parse_www_authenticate(response.headers.get("www-authenticate"))
            if challenge.error not in (None, "invalid_token"):
                return
            logger.info(
                "401 (%s) for %s %s: replaying once with a new token",
                challenge.error or "no error given",
                request.method,
                request.url.path,
            )
            replayed = True
            min_generation = step.generation + 1

    def sync_auth_flow(
        self, request: httpx.Request
    ) -> Generator[httpx.Request, httpx.Response, None]:
        """Drive :meth:`auth_flow` for ``httpx.Client``, waiting on other fetches in a thread."""
        flow = self.auth_flow(request)
        outgoing = next(flow)
        while True:
            generation = outgoing.extensions.get(TOKEN_REQUEST_EXTENSION)
            answer: httpx.Response | None
            if generation is None:
                response = yield outgoing
                response.read()
                answer = response
            else:
                claim, round_ = self.state.claim(generation, self._clock())
                if claim is _Claim.BUSY:
                    self.state.wait_sync(round_)
                    _raise_failure(self.state.failure_of(round_))
                    answer = None
                elif claim is _Claim.READY:
                    answer = None
                else:
                    failure: BaseException | None = None
                    try:
                        response = yield outgoing
                        response.read()
                        try:
                            outgoing = flow.send(response)
                        except StopIteration:
                            return
                    except BaseException as exc:
                        failure = exc
                        raise
                    finally:
                        self.state.finish_fetch(failure)
                    continue
            try:
                outgoing = flow.send(answer)
            except StopIteration:
                return

    async def async_auth_flow(
        self, request: httpx.Request
    ) -> AsyncGenerator[httpx.Request, httpx.Response]:
        """Drive :meth:`auth_flow` for ``httpx.AsyncClient``; waiting never blocks the loop."""
        flow = self.auth_flow(request)
        outgoing = next(flow)
        while True:
            generation = outgoing.extensions.get(TOKEN_REQUEST_EXTENSION)
            answer: httpx.Response | None
            if generation is None:
                response = yield outgoing
                await response.aread()
                answer = response
            else:
                claim, round_ = self.state.claim(generation, self._clock())
                if claim is _Claim.BUSY:
                    await self.state.wait_async(round_)
                    _raise_failure(self.state.failure_of(round_))
                    answer = None
                elif claim is _Claim.READY:
                    answer = None
                else:
                    failure: BaseException | None = None
                    try:
                        response = yield outgoing
                        await response.aread()
                        try:
                            outgoing = flow.send(response)
                        except StopIteration:
                            return
                    except BaseException as exc:
                        failure = exc
                        raise
                    finally:
                        self.state.finish_fetch(failure)
                    continue
            try:
                outgoing = flow.send(answer)
            except StopIteration:
                return


def _raise_failure(failure: ServiceApiError | None) -> None:
    if failure is not None:
        raise failure


def token_request_generation(request: httpx.Request) -> Any:
    """The generation a token request is for, or ``None`` for any other request."""
    return request.extensions.get(TOKEN_REQUEST_EXTENSION)
