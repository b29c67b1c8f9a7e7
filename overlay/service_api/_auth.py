"""The bearer token's lifecycle: fetch, cache, refresh, replay after a 401.

:meth:`TokenAuth.auth_flow` is written once, without I/O, for ``httpx.Client`` and
``httpx.AsyncClient`` (httpx's documented pattern): it yields ``POST /authenticate``
when it needs a token, then the request, and after a 401 a refresh and a replay.

Single flight: all clients of one integration share one :class:`TokenAuth`. The first
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
import concurrent.futures
import contextlib
import copy
import operator
import re
import threading
import time
from collections import deque
from collections.abc import AsyncGenerator, Callable, Generator

import attrs
import httpx

from service_api import _errors as errors
from service_api._logs import logger
from service_api._protocols import StoredToken, TokenStore
from service_api._transport import TOKEN_ERROR_EXTENSION
from service_api_client.models.token_request import TokenRequest

_Flow = Generator["httpx.Request | _Refresh", "httpx.Response | None", None]
_AsyncDriver = AsyncGenerator[httpx.Request, httpx.Response]
_StoreAction = Callable[[TokenStore], StoredToken | None]

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
#: What a store without a token gives: an empty token, fetched anew whatever its expiry.
_NO_TOKEN = StoredToken("", 0.0)  # pragma: no mutate
#: Longest wait, in seconds, for a token fetch another flow leads; a waiter that waited
#: that long (the leader's event loop stopped, say) fetches a token on its own.
MAX_REFRESH_WAIT = 120.0


class _Refresh(concurrent.futures.Future["errors.ServiceApiError | None"]):
    """One token fetch in progress; its result is the typed error it ended with, if any.
    ``thread`` and ``loop`` are the leader's: on that thread, only a waiter in that
    (running) loop can wait without blocking the leader or waiting for a stopped loop."""

    def __init__(self) -> None:
        super().__init__()
        self.thread = threading.get_ident()
        self.loop = None
        with contextlib.suppress(RuntimeError):  # raised outside a running loop
            self.loop = asyncio.get_running_loop()
        self.set_running_or_notify_cancel()  # a cancelled waiter cannot cancel it

    def can_wait(self, loop: asyncio.AbstractEventLoop | None) -> bool:
        """Whether a waiter in this thread, in ``loop`` (``None``: a sync one), can wait."""
        # Event loops compare by identity alone: operator.is_ says so.
        return self.thread != threading.get_ident() or (
            loop is not None and operator.is_(loop, self.loop)
        )


def _own_copy(error: errors.ServiceApiError) -> errors.ServiceApiError:
    """A copy of ``error`` for one caller, with notes of its own (``at_page()``)."""
    copied = copy.copy(error)
    copied.__cause__ = error.__cause__
    copied.__notes__ = list(getattr(error, "__notes__", []))
    return copied


def parse_token_response(response: httpx.Response) -> tuple[str, int]:
    """The token and its lifetime in seconds from the answer of ``POST /authenticate``
    (JSON whatever its content type), or a typed error that never contains the token."""
    status = response.status_code
    if status in (400, 401):  # RFC 6749: a malformed or refused client authentication
        why = f"the service refused the client credentials ({status})"
        message = f"{why} for POST {response.request.url}"
        # Its .error has the OAuth code.
        raise errors.InvalidCredentialsError(message, response=response)
    if status != 200:
        raise errors.error_from_response(response)
    data = errors.json_object(response.text)  # not a JSON object: no access_token
    token = data.get("access_token")
    kind = data.get("token_type")
    expires_in = data.get("expires_in")
    # The spec says a string holding an integer; a JSON integer is accepted too.
    lifetime = 0
    if re.fullmatch(r"\s*[0-9]{1,9}\s*", str(expires_in)):
        lifetime = int(str(expires_in))
    # A token is a header value: printable ASCII without spaces, or it could inject headers.
    if not isinstance(token, str) or not re.fullmatch(r"[!-~]{1,8192}", token):
        what = (
            " has no access_token that is a header value (printable ASCII, no spaces)"
        )
    elif str(kind).lower() != "bearer":
        what = f"'s token_type is {str(kind)[:40]!r}, not Bearer"
    elif not 1 <= lifetime <= MAX_TOKEN_LIFETIME:
        what = f"'s expires_in is {expires_in!r:.40}, not an integer from 1 to {MAX_TOKEN_LIFETIME}"
    else:
        return token, lifetime
    message = f"token response{what}"
    raise errors.TokenResponseError(message, request=response.request)


def _without_slash(url: str) -> str:
    return url.rstrip("/")


@attrs.define(repr=False, eq=False)
class TokenAuth(httpx.Auth):
    """``httpx.Auth`` that keeps a bearer token fresh for one base URL (docs/guides/client.md,
    "Tokens"), shared by every client of one integration; its repr is the default one, so that it
    shows no secret. Thread-safe; the lock is never held across I/O. A token is
    refreshed ``skew`` seconds before it expires (at most half its lifetime before);
    ``proven`` holds the last tokens that got a successful answer.

    Example::

        auth = TokenAuth("https://api.example.com/public/v3", "my-client", secret)
        httpx.get("https://api.example.com/public/v3/shipments", auth=auth)
    """

    base_url: str = attrs.field(converter=_without_slash)
    client_id: str
    _client_secret: str
    skew: float = attrs.field(
        default=60.0, kw_only=True, validator=attrs.validators.ge(0)
    )
    _timeout: httpx.Timeout = attrs.field(
        factory=lambda: httpx.Timeout(30.0), kw_only=True
    )
    _clock: Callable[[], float] = attrs.field(default=time.monotonic, kw_only=True)
    _token_store: TokenStore | None = attrs.field(default=None, kw_only=True)
    proven: deque[str] = attrs.field(factory=lambda: deque(maxlen=8), init=False)
    _token: str | None = attrs.field(default=None, init=False)
    _refresh_at: float = attrs.field(default=0.0, init=False)
    _refresh: _Refresh | None = attrs.field(default=None, init=False)
    _lock: threading.Lock = attrs.field(factory=threading.Lock, init=False)
    _store_failed: bool = attrs.field(default=False, init=False)

    def claim(self, now: float) -> tuple[str | _Refresh, bool]:
        """The token if it is fresh, else the fetch under way, else a new fetch that
        the caller leads (on its thread: the flag says so) and must end."""
        with self._lock:
            if self._token is not None and now < self._refresh_at:
                return self._token, False
            leads = self._refresh is None
            self._refresh = self._refresh or _Refresh()
            return self._refresh, leads

    def invalidate(self, token: str) -> None:
        """Forget ``token`` if it is still the current one (a 401 for an older token
        says nothing about the current one)."""
        with self._lock:
            if self._token == token:
                self._refresh_at = float("-inf")

    def auth_flow(self, request: httpx.Request) -> _Flow:  # type: ignore[override]
        """Yield the token request when this flow leads a fetch, a :data:`_Refresh` to
        wait for when another flow does (what the driver sends back after it is not
        read), then ``request``; after a 401 for a token not refused before, refresh
        and replay (see ``MAX_REFRESHES`` and ``MAX_REPLAYS``).

        Only the two drivers below call it, hence the wider type than httpx's.
        """
        refused: list[str] = []
        replays_left = MAX_REPLAYS
        while True:
            token, leads = self.claim(self._clock())
            if isinstance(token, _Refresh) and leads:
                yield from self._fetch(token, self._token_store)
            elif isinstance(token, _Refresh):
                yield token  # the driver waits for it, at most MAX_REFRESH_WAIT
                if not token.done():  # fetch alone, for a refresh nobody waits for
                    yield from self._fetch(_Refresh(), None)
                elif (error := token.result()) is not None:
                    # A copy: at_page() is per caller.
                    raise _own_copy(error) from error.__cause__
            else:
                request.headers["Authorization"] = f"Bearer {token}"
                response = yield request
                assert response is not None  # the drivers answer every request
                if response.status_code < 400 and token not in self.proven:
                    self.proven.append(token)  # it works: a later 401 is a revocation
                code = errors.challenge(response.headers, "error")
                replay = response.status_code == 401 and code in (None, "invalid_token")
                # Only tokens that never worked count against MAX_REFRESHES: a server that
                # refuses every token is given up on soon, a revoked token is replaced.
                never_worked = sum(t not in self.proven for t in refused)
                limit = never_worked >= MAX_REFRESHES or not replays_left
                if not replay or token in refused or limit:
                    return
                logger.info(f"401 for {request.url}: replaying with a new token")
                self.invalidate(token)
                refused.append(token)
                replays_left -= 1

    def _fetch(self, refresh: _Refresh, store: TokenStore | None) -> _Flow:
        """Adopt the store's token (for its remaining lifetime), or fetch one and save it
        there, under the store's lock; then end ``refresh`` and wake its waiters, with
        the typed error the fetch ended with (theirs too: wrong credentials must not
        turn into one ``/authenticate`` per request), copied before the leader's caller
        adds to it. When sending the token request fails, httpx closes the flow
        (``GeneratorExit``): the transport recorded the error on the request."""
        token_request = self._token_request()
        error: errors.ServiceApiError | None = None
        try:
            # The waiters hear once the lock is free.
            with contextlib.ExitStack() as stack:
                self._use(store, lambda store: stack.enter_context(store.lock()))
                stored = self._use(store, lambda store: store.load()) or _NO_TOKEN
                token = stored.access_token
                lifetime = stored.expires_at - time.time()
                sent_at = self._clock()
                # Adopted if still valid and not the token this process holds (that one is
                # due or was refused); else fetched.
                if token in ("", self._token) or lifetime <= 0:
                    response = yield token_request
                    assert response is not None  # the drivers answer every request
                    token, lifetime = parse_token_response(response)
                    logger.info(
                        f"bearer token for {self.client_id}, valid {lifetime} s"
                    )
                    expires_at = time.time() + lifetime - (self._clock() - sent_at)
                    saved = StoredToken(token, expires_at)
                    self._use(store, lambda store: store.save(saved))
                # Its lifetime counts from when its request was sent, less a margin of at
                # most half the lifetime (a short-lived token is still used).
                with self._lock:
                    self._token = token
                    self._refresh_at = sent_at + lifetime - min(self.skew, lifetime / 2)
        except BaseException as exc:
            failed = token_request.extensions.get(TOKEN_ERROR_EXTENSION, exc)
            if isinstance(failed, errors.ServiceApiError):
                error = _own_copy(failed)
            raise
        finally:
            with self._lock:
                # Never a newer one (a refresh is told by identity alone).
                if operator.is_(self._refresh, refresh):
                    self._refresh = None
            refresh.set_result(error)

    def _token_request(self) -> httpx.Request:
        """``POST /authenticate`` with the client credentials, as the seed sends it."""
        form = TokenRequest(self.client_id, self._client_secret, "client_credentials")
        # Requests yielded by an auth flow skip the client's request building,
        # so the client's timeout must be set here or it would be unlimited.
        extensions = {
            "timeout": self._timeout.as_dict(),
            # Read by its presence only (is_token_request), never by its value.
            errors.TOKEN_REQUEST_EXTENSION: True,  # pragma: no mutate
        }
        return httpx.Request(
            "POST",
            f"{self.base_url}/authenticate",
            files=form.to_multipart(),
            headers={"accept": "text/plain"},
            extensions=extensions,
        )

    def _use(
        self, store: TokenStore | None, action: _StoreAction
    ) -> StoredToken | None:
        """``action(store)``, or ``None`` without a store or when the store fails
        (a broken store falls back to fetching; said once)."""
        try:
            return None if store is None else action(store)
        except Exception as exc:
            if not self._store_failed:
                self._store_failed = True
                logger.warning(
                    f"token store unusable ({type(exc).__name__}): fetching tokens"
                )
            return None

    def sync_auth_flow(
        self, request: httpx.Request
    ) -> Generator[httpx.Request, httpx.Response]:
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
                        await asyncio.wait_for(
                            asyncio.wrap_future(step), MAX_REFRESH_WAIT
                        )


def _advance(
    flow: _Flow, answer: httpx.Response | None
) -> httpx.Request | _Refresh | None:
    """The flow's next step, or ``None`` when it is over."""
    with contextlib.suppress(StopIteration):
        return flow.send(answer)
    return None
