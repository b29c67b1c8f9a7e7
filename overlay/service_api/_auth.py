"""The bearer token's lifecycle: fetch, cache, refresh, replay after a 401.

:meth:`TokenAuth.auth_flow` is written once, without I/O, for ``httpx.Client`` and
``httpx.AsyncClient`` (httpx's documented pattern): it yields ``POST /authenticate``
when it needs a token, then the request, and after a 401 a refresh and a replay.

Single flight: all clients of one integration share a :class:`TokenState`. The first
flow that wants a token leads the refresh, a ``concurrent.futures.Future`` that the
others (in any thread or event loop) wait for, then read the new token. A 401
invalidates the token that drew it, compared by value, so a 401 for an older token
replays with the current one instead of fetching again. The flow yields that future
to its driver (:meth:`~TokenAuth.sync_auth_flow`, :meth:`~TokenAuth.async_auth_flow`),
which waits in its own way: those two differ only in the waiting and the reading.

No wait can hang. On the leader's own thread only a waiter in the leader's running
loop waits: a sync waiter there (sync code called from a coroutine while a task of that
loop leads) would block the thread the leader needs, and a waiter in another loop would
wait for a loop that cannot run meanwhile. Any other waiter waits at most
:data:`MAX_REFRESH_WAIT` (the leader's event loop may have stopped for good). A waiter
that did not get a finished refresh fetches a token alone, without the token store (the
leader may hold its lock) and leaving the leader's refresh to the leader. When httpx
closes a flow whose token request failed (a timeout, a refused connection), the driver
hands the typed error to the waiters: they fail at once, as for refused credentials,
and their own retries claim again (one new leader).
"""

import asyncio
import collections
import concurrent.futures
import contextlib
import copy
import logging
import re
import threading
import time
from collections.abc import AsyncGenerator, Callable, Generator
from typing import TypeVar

import attrs
import httpx

from service_api import _errors as errors
from service_api._protocols import StoredToken, TokenStore
from service_api._transport import TOKEN_ERROR_EXTENSION
from service_api_client.models.token_request import TokenRequest

logger = logging.getLogger("service_api")
_T = TypeVar("_T")
_Flow = Generator["httpx.Request | _Refresh", "httpx.Response | None", None]
_AsyncDriver = AsyncGenerator[httpx.Request, httpx.Response]

#: Longest token lifetime accepted: a week (a larger value is likely milliseconds).
MAX_TOKEN_LIFETIME = 7 * 24 * 3600
#: Refreshes one attempt may make after 401s, each for a token other than those already
#: refused: a token rotated between a refresh and its replay is survived, and "401
#: forever" ends after at most 1 + this many token requests (2 when the same token is
#: issued again).
MAX_REFRESHES = 2
#: Replays one attempt may make in all, counting those for tokens that had worked before
#: (revoked ones, which do not count against ``MAX_REFRESHES``): a burst of revocations is
#: survived, and "401 forever" still ends.
MAX_REPLAYS = 8
#: Longest wait, in seconds, for a token fetch another flow leads; a waiter that waited
#: that long (the leader's event loop stopped, say) fetches a token on its own.
MAX_REFRESH_WAIT = 120.0
# A token is a header value: printable ASCII without spaces, or it could inject headers.
_TOKEN = re.compile(r"[!-~]{1,8192}")
WHOLE = f"not an integer between 1 and {MAX_TOKEN_LIFETIME} seconds"
BASE_URL_HINT = "; the base URL probably lacks its /public/v3 prefix"


class _Refresh(concurrent.futures.Future["errors.ServiceApiError | None"]):
    """One token fetch in progress; its result is the typed error it ended with, if any.
    ``thread`` and ``loop`` are the leader's: on that thread, only a waiter in that
    (running) loop can wait without blocking the leader or waiting for a stopped loop."""

    def __init__(self) -> None:
        super().__init__()
        self.thread, self.loop = threading.get_ident(), None
        with contextlib.suppress(RuntimeError):  # raised outside a running loop
            self.loop = asyncio.get_running_loop()
        self.set_running_or_notify_cancel()  # a cancelled waiter cannot cancel it

    def can_wait(self, loop: asyncio.AbstractEventLoop | None) -> bool:
        """Whether a waiter in this thread, in ``loop`` (``None``: a sync one), can wait."""
        return self.thread != threading.get_ident() or (loop is not None and loop is self.loop)


@attrs.frozen
class _Lead:
    """What :meth:`TokenState.claim` gives the flow that leads (and must finish) ``refresh``."""

    refresh: _Refresh


def _own_copy(error: errors.ServiceApiError) -> errors.ServiceApiError:
    """A copy of ``error`` for one caller, with notes of its own (``at_page()``)."""
    copied = copy.copy(error)
    copied.__cause__, copied.__notes__ = error.__cause__, list(getattr(error, "__notes__", []))
    return copied


@attrs.frozen
class IssuedToken:
    """A validated token response: the token and its lifetime in seconds."""

    access_token: str = attrs.field(repr=False)
    lifetime: int


def parse_token_response(response: httpx.Response) -> IssuedToken:
    """Validate the answer of ``POST /authenticate`` (JSON whatever its content type);
    messages never contain the token.

    Example::

        parse_token_response(response).lifetime   # 3600
    """
    request, status = response.request, response.status_code
    if status in (400, 401):  # RFC 6749: a malformed or refused client authentication
        error = errors.InvalidCredentialsError("", response=response)  # reads the error code
        code = f" {error.error}" if error.error else ""
        why = f"the service refused the client credentials ({status}{code}) for POST {request.url}"
        raise errors.InvalidCredentialsError(why, response=response)
    if status != 200:
        raise errors.error_from_response(response, hint=BASE_URL_HINT if status == 404 else "")
    try:
        data = response.json()
    except ValueError:
        raise errors.TokenResponseError("token response is not JSON", request=request) from None
    fields = data if isinstance(data, dict) else {}
    token, kind, expires_in = (fields.get(k) for k in ("access_token", "token_type", "expires_in"))
    # The spec says a string holding an integer; a JSON integer is accepted too.
    lifetime = int(str(expires_in)) if re.fullmatch(r"\s*[0-9]{1,9}\s*", str(expires_in)) else 0
    problems = (  # the first problem found is the one reported
        (not isinstance(data, dict), "is not a JSON object"),
        (not isinstance(token, str) or not token, "has no access_token"),
        (not _TOKEN.fullmatch(str(token)), "'s access_token is not a valid header value"),
        (str(kind).lower() != "bearer", f"'s token_type is {str(kind)[:40]!r}, not Bearer"),
        (not 1 <= lifetime <= MAX_TOKEN_LIFETIME, f"'s expires_in is {expires_in!r:.40}, {WHOLE}"),
    )
    if what := next((what for found, what in problems if found), None):
        raise errors.TokenResponseError(f"token response {what}", request=request)
    return IssuedToken(access_token=str(token), lifetime=lifetime)


@attrs.define(repr=False, eq=False)
class TokenState:
    """The token shared by every client of one integration, and the fetch in progress.

    Thread-safe; the lock is never held across I/O. ``refused`` is the last token a
    401 invalidated, ``stored`` the number of tokens stored so far (for the log),
    ``proven`` the last tokens that got a successful answer.

    Example::

        auth = TokenAuth(base_url, client_id, secret, state=TokenState(refresh_skew=60.0))
    """

    refresh_skew: float = attrs.field(default=60.0, kw_only=True, validator=attrs.validators.ge(0))
    refused: str | None = attrs.field(default=None, init=False)
    stored: int = attrs.field(default=0, init=False)
    proven: collections.deque[str] = attrs.field(
        factory=lambda: collections.deque(maxlen=8), init=False
    )
    _token: str | None = attrs.field(default=None, init=False)
    _refresh_at: float = attrs.field(default=0.0, init=False)
    _refresh: _Refresh | None = attrs.field(default=None, init=False)
    _lock: threading.Lock = attrs.field(factory=threading.Lock, init=False)

    def claim(self, now: float) -> str | _Refresh | _Lead:
        """The token if it is fresh, else the fetch under way, else a new fetch that
        the caller leads (on its thread) and must :meth:`finish`."""
        with self._lock:
            if self._token is not None and now < self._refresh_at:
                return self._token
            if self._refresh is not None:
                return self._refresh
            self._refresh = _Refresh()
            return _Lead(self._refresh)

    def store(self, token: str, lifetime: float, *, sent_at: float) -> int:
        """Keep a new token and return its number; its lifetime counts from when its
        request was sent, less a margin of at most half the lifetime (a short-lived
        token is still used)."""
        with self._lock:
            self._token, self.stored = token, self.stored + 1
            self._refresh_at = sent_at + lifetime - min(self.refresh_skew, lifetime / 2)
            return self.stored

    def invalidate(self, token: str) -> None:
        """Forget ``token`` if it is still the current one (a 401 for an older token
        says nothing about the current one)."""
        with self._lock:
            self.refused = token
            if self._token == token:
                self._refresh_at = float("-inf")

    def finish(self, refresh: _Refresh, error: BaseException | None) -> None:
        """End ``refresh`` (never a newer one) and wake its waiters; a typed error is
        theirs too (wrong credentials must not turn into one ``/authenticate`` per
        request), as a copy taken now, before the leader's caller adds to it."""
        with self._lock:
            if self._refresh is refresh:
                self._refresh = None
        refresh.set_result(_own_copy(error) if isinstance(error, errors.ServiceApiError) else None)


def _without_slash(url: object) -> str:
    return str(url).rstrip("/")


@attrs.define(repr=False, eq=False)
class TokenAuth(httpx.Auth):
    """``httpx.Auth`` that keeps a bearer token fresh for one base URL (see the README);
    its repr is the default one, so that it shows no secret.

    Example::

        auth = TokenAuth("https://api.example.com/public/v3", "my-client", secret)
        httpx.get("https://api.example.com/public/v3/shipments", auth=auth)
    """

    base_url: str = attrs.field(converter=_without_slash)
    client_id: str
    _client_secret: str
    state: TokenState = attrs.field(factory=TokenState, kw_only=True)
    _timeout: httpx.Timeout = attrs.field(factory=lambda: httpx.Timeout(30.0), kw_only=True)
    _clock: Callable[[], float] = attrs.field(default=time.monotonic, kw_only=True)
    _token_store: TokenStore | None = attrs.field(default=None, kw_only=True)
    _store_failed: bool = attrs.field(default=False, init=False)

    def build_token_request(self) -> httpx.Request:
        """The ``POST /authenticate`` request, from the generated request model; it
        accepts ``text/plain`` as the service's own client does (the seed)."""
        form = TokenRequest(self.client_id, self._client_secret, "client_credentials")
        # Requests yielded by an auth flow skip the client's request building,
        # so the client's timeout must be set here or it would be unlimited.
        extensions = {"timeout": self._timeout.as_dict(), errors.TOKEN_REQUEST_EXTENSION: True}
        url, headers = f"{self.base_url}/authenticate", {"accept": "text/plain"}
        return httpx.Request(
            "POST", url, files=form.to_multipart(), headers=headers, extensions=extensions
        )

    def auth_flow(self, request: httpx.Request) -> _Flow:  # type: ignore[override]
        """Yield the token request when this flow leads a fetch, a :data:`_Refresh` to
        wait for when another flow does (what the driver sends back after it is not
        read), then ``request``; after a 401 for a token not refused before, refresh
        and replay (at most ``MAX_REFRESHES`` times).

        Only the two drivers below call it, hence the wider type than httpx's.
        """
        refused: list[str] = []
        while True:
            token = self.state.claim(self._clock())
            if isinstance(token, _Lead):
                yield from self._fetch(token.refresh, self._token_store)
            elif isinstance(token, _Refresh):
                yield token  # the driver waits for it, at most MAX_REFRESH_WAIT
                if not token.done():  # fetch alone, for a refresh nobody waits for
                    yield from self._fetch(_Refresh(), None)
                elif (error := token.result()) is not None:
                    raise _own_copy(error) from error.__cause__  # at_page() is per caller
            else:
                request.headers["Authorization"] = f"Bearer {token}"
                response = yield request
                if response is None or response.status_code != 401 or token in refused:
                    if (
                        response is not None
                        and response.status_code < 400
                        and token not in self.state.proven
                    ):
                        self.state.proven.append(token)  # it works: a later 401 is a revocation
                    return
                code = errors.challenge(response.headers, "error")
                # Only tokens that never worked count against MAX_REFRESHES: a server that
                # refuses every token is given up on soon, a revoked token is replaced.
                never_worked = sum(t not in self.state.proven for t in refused)
                limit = never_worked >= MAX_REFRESHES or len(refused) >= MAX_REPLAYS
                if limit or code not in (None, "invalid_token"):
                    return
                logger.info("401 for %s: replaying with a new token", request.url)
                self.state.invalidate(token)
                refused.append(token)

    def _fetch(self, refresh: _Refresh, store: TokenStore | None) -> _Flow:
        """Adopt the store's token (for its remaining lifetime), or fetch one and save it
        there, under the store's lock; then finish ``refresh``, with the typed error the
        fetch ended with. When sending the token request fails, httpx closes the flow
        (``GeneratorExit``): the transport recorded the error on the request."""
        token_request, error = self.build_token_request(), None
        try:
            with contextlib.ExitStack() as stack:  # the waiters hear once the lock is free
                self._use(store, lambda store: stack.enter_context(store.lock()))
                stored = self._use(store, lambda store: store.load())
                lifetime = stored.expires_at - time.time() if stored else 0.0
                if stored and stored.access_token != self.state.refused and lifetime > 0:
                    self.state.store(stored.access_token, lifetime, sent_at=self._clock())
                    return
                sent_at = self._clock()
                logger.info("fetching a bearer token for %s", self.client_id)
                response = yield token_request
                assert response is not None  # the drivers answer every request
                issued = parse_token_response(response)
                token, lifetime = issued.access_token, issued.lifetime
                n = self.state.store(token, lifetime, sent_at=sent_at)
                logger.info("bearer token #%d for %s, valid %d s", n, self.client_id, lifetime)
                expires_at = time.time() + lifetime - (self._clock() - sent_at)
                self._use(store, lambda store: store.save(StoredToken(token, expires_at)))
        except BaseException as exc:
            error = token_request.extensions.get(TOKEN_ERROR_EXTENSION, exc)
            raise
        finally:
            self.state.finish(refresh, error)

    def _use(self, store: TokenStore | None, action: Callable[[TokenStore], _T]) -> _T | None:
        """``action(store)``, or ``None`` without a store or when the store fails
        (a broken store falls back to fetching; said once)."""
        try:
            return None if store is None else action(store)
        except Exception as exc:
            if not self._store_failed:
                self._store_failed = True
                logger.warning("token store unusable (%s): fetching tokens", type(exc).__name__)
            return None

    def sync_auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response]:
        """Drive the flow for ``httpx.Client``, waiting on other fetches in the thread
        (not on its own thread, where the leader is a task of this thread's event loop)."""
        with contextlib.closing(self.auth_flow(request)) as flow:
            answer = None
            while (step := _advance(flow, answer)) is not None:
                if isinstance(step, httpx.Request):
                    answer = yield step
                    if errors.is_token_request(step):
                        answer.read()
                elif step.can_wait(None):
                    concurrent.futures.wait([step], timeout=MAX_REFRESH_WAIT)

    async def async_auth_flow(self, request: httpx.Request) -> _AsyncDriver:
        """Drive the flow for ``httpx.AsyncClient``; waiting never blocks the loop."""
        with contextlib.closing(self.auth_flow(request)) as flow:
            answer = None
            while (step := _advance(flow, answer)) is not None:
                if isinstance(step, httpx.Request):
                    answer = yield step
                    if errors.is_token_request(step):
                        await answer.aread()
                elif step.can_wait(asyncio.get_running_loop()):
                    # On timeout the wrapper is cancelled, never the refresh (it runs).
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(asyncio.wrap_future(step), MAX_REFRESH_WAIT)


def _advance(flow: _Flow, answer: httpx.Response | None) -> httpx.Request | _Refresh | None:
    """The flow's next step, or ``None`` when it is over."""
    with contextlib.suppress(StopIteration):
        return flow.send(answer)
    return None
