"""Transport wrappers: origin guard, size bound, client-side rate limit and retries.

They sit at the lowest layer of ``httpx`` that sees every request (redirects and
the token request included), which is where credentials can be kept to the base
URL's origin: httpx itself strips only ``Authorization`` on a cross-origin redirect.
It is also the only layer that sees every response body before anything reads it
(``TokenAuth`` reads each body inside httpx), so the size bound is enforced here,
while the body streams in. The sync and async wrappers share every decision
(:mod:`service_api._retry`) and differ only in how they sleep and read.
"""

from __future__ import annotations

import asyncio
import functools
import json
import logging
import random
import time
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

import httpx

from service_api._auth import TOKEN_REQUEST_EXTENSION
from service_api._errors import (
    MAX_BODY_CHARS,
    InvalidResponseError,
    TokenResponseError,
    redacted_request,
)
from service_api._rate_limit import RequestLimiter
from service_api._retry import (
    RETRY_SLEEP,
    RetryPolicy,
    compute_delay,
    is_retryable_request,
    parse_retry_after,
    should_retry,
)

logger = logging.getLogger("service_api")

ACCOUNT_HEADER = "x-service-account-id"
_DEFAULT_PORTS = {"http": 80, "https": 443}

#: Default cap on a successful response body, in bytes. A 50-record page is about
#: 12 KB and the largest page the API serves well under 1 MB; 8 MiB leaves room for
#: bigger records while a hostile or broken server cannot make the client hold
#: more than that (``httpx`` joins the chunks it read, so the peak is about the cap).
DEFAULT_MAX_RESPONSE_BYTES = 8 * 1024 * 1024
#: Bytes of an error body kept: enough for the ``MAX_BODY_CHARS`` characters an
#: error keeps (UTF-8 needs at most 4 bytes a character); the rest is never read.
ERROR_BODY_BYTES = 4 * MAX_BODY_CHARS
#: Cap on the body of a token response: a token is at most 8 KiB of header value.
TOKEN_RESPONSE_BYTES = 64 * 1024


def origin(url: httpx.URL) -> tuple[str, str, int | None]:
    """``(scheme, host, port)`` of ``url``, the port made explicit for http and https.

    Example::

        origin(httpx.URL("https://h/x")) == origin(httpx.URL("https://h:443/y"))   # True
    """
    scheme = url.scheme.lower()
    return scheme, url.host.lower(), url.port or _DEFAULT_PORTS.get(scheme)


class RequestGuard:
    """What both transports do to a request before sending it, and their retry settings.

    Example::

        guard = RequestGuard(httpx.URL("https://h/public/v3"), RetryPolicy())
        guard.strip_credentials(request)
    """

    def __init__(
        self,
        base_url: httpx.URL,
        policy: RetryPolicy,
        limiter: RequestLimiter | None = None,
        rng: random.Random | None = None,
        *,
        max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES,
    ) -> None:
        if max_response_bytes < 1:
            raise ValueError("max_response_bytes must be at least 1")
        self.origin = origin(base_url)
        self.policy = policy
        self.limiter = limiter
        self.rng = rng or random.Random()  # noqa: S311 - jitter, not cryptography
        self.max_response_bytes = max_response_bytes

    def __repr__(self) -> str:
        return (
            f"RequestGuard(origin={self.origin!r}, policy={self.policy!r}, "
            f"max_response_bytes={self.max_response_bytes})"
        )

    def strip_credentials(self, request: httpx.Request) -> None:
        """Remove credential headers the request must not carry; refuse a stray token request.

        Off the base origin, neither ``Authorization`` nor the account header;
        on the token request, no account header. A token request off the base
        origin (only a redirect can make one) would carry the client secret in
        its body: it raises :class:`TokenResponseError` and is never sent.
        """
        off_origin = origin(request.url) != self.origin
        token_request = TOKEN_REQUEST_EXTENSION in request.extensions
        if token_request and off_origin:
            raise TokenResponseError(
                f"refusing to send the token request to {request.url.host}, "
                "outside the base URL's origin",
                request=redacted_request(request),
            )
        if off_origin or token_request:
            request.headers.pop(ACCOUNT_HEADER, None)
        if off_origin and "authorization" in request.headers:
            del request.headers["authorization"]
            logger.debug("credentials withheld from %s (not the base origin)", request.url.host)

    def refuse_token_redirect(self, request: httpx.Request, response: httpx.Response) -> None:
        """Raise :class:`TokenResponseError` if the token endpoint answered with a redirect.

        Following it would send the client secret again, wherever it points; a
        token endpoint that redirects is misconfigured or hostile either way.
        """
        if TOKEN_REQUEST_EXTENSION in request.extensions and 300 <= response.status_code < 400:
            raise TokenResponseError(
                f"the token endpoint answered {response.status_code} (a redirect); "
                "the token request is never redirected",
                request=redacted_request(request),
            )

    def body_limit(self, request: httpx.Request, response: httpx.Response) -> tuple[int, bool]:
        """How many body bytes to read, and whether to cut (error) or refuse (success) beyond.

        An error body is cut to what the error keeps; a success body larger than
        the cap is refused with :class:`InvalidResponseError`.
        """
        if response.status_code >= 400:
            return ERROR_BODY_BYTES, True
        if TOKEN_REQUEST_EXTENSION in request.extensions:
            return min(self.max_response_bytes, TOKEN_RESPONSE_BYTES), False
        return self.max_response_bytes, False

    def too_large(self, request: httpx.Request, limit: int) -> InvalidResponseError:
        """The error for a success body over ``limit`` bytes."""
        return InvalidResponseError(
            f"answer to {request.method} {request.url} is larger than {limit} bytes "
            "(raise max_response_bytes if such answers are expected)",
            request=redacted_request(request),
        )

    def retryable(self, request: httpx.Request) -> bool:
        """Whether the request may be sent twice."""
        return is_retryable_request(
            request, token_request=TOKEN_REQUEST_EXTENSION in request.extensions
        )

    def delay_after_error(
        self, request: httpx.Request, attempt: int, exc: Exception
    ) -> float | None:
        """Seconds before retrying after a transport error, or ``None`` to give up."""
        if not should_retry(
            self.policy, attempt=attempt, retryable_request=self.retryable(request), error=exc
        ):
            return None
        delay = compute_delay(self.policy, attempt, rng=self.rng)
        assert delay is not None
        self._log(request, type(exc).__name__, delay, attempt)
        return delay

    def delay_after_response(
        self, request: httpx.Request, attempt: int, response: httpx.Response
    ) -> float | None:
        """Seconds before retrying after ``response``, or ``None`` to return it."""
        if self.limiter is not None:
            self.limiter.observe(
                response.status_code, parse_retry_after(response.headers.get("retry-after"))
            )
        if not should_retry(
            self.policy,
            attempt=attempt,
            retryable_request=self.retryable(request),
            status_code=response.status_code,
        ):
            return None
        retry_after = parse_retry_after(response.headers.get("retry-after"))
        delay = compute_delay(self.policy, attempt, retry_after, rng=self.rng)
        if delay is None:
            logger.warning(
                "not retrying %s %s: Retry-After %.1f s exceeds the %.1f s cap",
                request.method,
                request.url.path,
                retry_after,
                self.policy.max_retry_after,
            )
            return None
        self._log(request, f"status {response.status_code}", delay, attempt)
        return delay

    def _log(self, request: httpx.Request, reason: str, delay: float, attempt: int) -> None:
        logger.warning(
            "retrying %s %s after %s in %.2f s (retry %d of %d)",
            request.method,
            request.url.path,
            reason,
            delay,
            attempt + 1,
            self.policy.max_retries,
        )


_UNPARSED: Any = object()


class ServiceResponse(httpx.Response):
    """A response whose JSON body, once validated, is parsed only once.

    The client checks that a 2xx JSON body is JSON (so a broken one is an
    :class:`InvalidResponseError`, not a ``JSONDecodeError`` in generated code);
    the generated code then calls :meth:`json` and gets that parse instead of a
    second one. Only the first plain :meth:`json` call gets it: later calls parse
    again, so no two callers share one mutable object.

    Example::

        response.validate_json()   # raises ValueError for a body that is not JSON
        response.json()            # the value parsed above, not parsed again
    """

    _parsed: Any = _UNPARSED
    # Set for a compressed success body: the raw bound leaves what it inflates to
    # unbounded (a few KiB of gzip can inflate to gigabytes), so the decoded bytes
    # count against the same limit.
    _decoded_limit: int = 0
    _refuse: Callable[[], InvalidResponseError] | None = None

    def iter_bytes(self, chunk_size: int | None = None) -> Iterator[bytes]:
        """The decoded body, refused past the limit when it is compressed."""
        if self._refuse is None:
            yield from super().iter_bytes(chunk_size)
            return
        left = self._decoded_limit
        for chunk in super().iter_bytes(chunk_size):
            left -= len(chunk)
            if left < 0:
                raise self._refuse()
            yield chunk

    async def aiter_bytes(self, chunk_size: int | None = None) -> AsyncIterator[bytes]:
        """Async twin of :meth:`iter_bytes`."""
        if self._refuse is None:
            async for chunk in super().aiter_bytes(chunk_size):
                yield chunk
            return
        left = self._decoded_limit
        async for chunk in super().aiter_bytes(chunk_size):
            left -= len(chunk)
            if left < 0:
                raise self._refuse()
            yield chunk

    def validate_json(self) -> None:
        """Parse the body now (raising ``ValueError`` if it is not JSON) and keep the value."""
        self._parsed = json.loads(self.content)

    def json(self, **kwargs: Any) -> Any:
        """The parsed body; the value kept by :meth:`validate_json` if there is one."""
        parsed = self._parsed
        if parsed is _UNPARSED or kwargs:
            return super().json(**kwargs)
        self._parsed = _UNPARSED
        return parsed


class _BoundedStream(httpx.SyncByteStream):
    """The inner body stream, cut (``refuse is None``) or refused past ``limit`` bytes.

    Either way the inner stream is closed there, which drops the connection
    instead of draining the rest of the body.
    """

    def __init__(
        self,
        inner: httpx.SyncByteStream,
        limit: int,
        refuse: Callable[[], InvalidResponseError] | None,
    ) -> None:
        self._inner = inner
        self._limit = limit
        self._refuse = refuse

    def __iter__(self) -> Iterator[bytes]:
        left = self._limit
        for chunk in self._inner:
            if len(chunk) > left:
                self._inner.close()
                if self._refuse is not None:
                    raise self._refuse()
                yield chunk[:left]
                return
            left -= len(chunk)
            yield chunk

    def close(self) -> None:
        self._inner.close()


class _AsyncBoundedStream(httpx.AsyncByteStream):
    """Async twin of :class:`_BoundedStream`."""

    def __init__(
        self,
        inner: httpx.AsyncByteStream,
        limit: int,
        refuse: Callable[[], InvalidResponseError] | None,
    ) -> None:
        self._inner = inner
        self._limit = limit
        self._refuse = refuse

    async def __aiter__(self) -> AsyncIterator[bytes]:
        left = self._limit
        async for chunk in self._inner:
            if len(chunk) > left:
                await self._inner.aclose()
                if self._refuse is not None:
                    raise self._refuse()
                yield chunk[:left]
                return
            left -= len(chunk)
            yield chunk

    async def aclose(self) -> None:
        await self._inner.aclose()


def _body_bound(
    guard: RequestGuard, request: httpx.Request, response: httpx.Response
) -> tuple[int, Callable[[], InvalidResponseError] | None]:
    """The byte limit for ``response``'s body and how to refuse more (``None``: cut it).

    Raises at once (the caller closes ``response``) for a redirected token request
    or a success whose ``Content-Length`` is already over the limit.
    """
    guard.refuse_token_redirect(request, response)
    limit, cut = guard.body_limit(request, response)
    if cut:
        return limit, None
    declared = response.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise guard.too_large(request, limit)
    return limit, functools.partial(guard.too_large, request, limit)


def _rewrapped(
    response: httpx.Response,
    stream: Any,
    limit: int,
    refuse: Callable[[], InvalidResponseError] | None,
) -> ServiceResponse:
    wrapped = ServiceResponse(
        response.status_code,
        headers=response.headers,
        stream=stream,
        extensions=response.extensions,
    )
    if refuse is not None and response.headers.get("content-encoding", "identity") != "identity":
        wrapped._decoded_limit = limit
        wrapped._refuse = refuse
    return wrapped


class GuardedTransport(httpx.BaseTransport):
    """Sync transport: guard, rate limit and retries around an inner transport.

    Several clients (``Client.with_account``) share one inner transport and its
    connection pool; only the owner closes it.
    """

    def __init__(self, inner: httpx.BaseTransport, guard: RequestGuard, *, owner: bool) -> None:
        self._inner = inner
        self._guard = guard
        self._owner = owner

    def __repr__(self) -> str:
        return f"GuardedTransport({self._guard!r}, owner={self._owner})"

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        """Send ``request``, retrying what the policy allows."""
        self._guard.strip_credentials(request)
        request.read()  # a body read once can be sent again on retry
        attempt = 0
        while True:
            while self._guard.limiter is not None and (wait := self._guard.limiter.try_acquire()):
                time.sleep(wait)
            try:
                response = self._inner.handle_request(request)
            except httpx.TransportError as exc:
                delay = self._guard.delay_after_error(request, attempt, exc)
                if delay is None:
                    raise
            else:
                response = self._bound(request, response)
                delay = self._guard.delay_after_response(request, attempt, response)
                if delay is None:
                    return response
                response.read()  # an error body: cut short, so this reads a few KiB at most
                response.close()
            time.sleep(RETRY_SLEEP.wait_for(delay))
            attempt += 1

    def _bound(self, request: httpx.Request, response: httpx.Response) -> ServiceResponse:
        try:
            limit, refuse = _body_bound(self._guard, request, response)
        except BaseException:
            response.close()
            raise
        assert isinstance(response.stream, httpx.SyncByteStream)
        return _rewrapped(response, _BoundedStream(response.stream, limit, refuse), limit, refuse)

    def close(self) -> None:
        """Close the inner transport if this wrapper owns it."""
        if self._owner:
            self._inner.close()


class AsyncGuardedTransport(httpx.AsyncBaseTransport):
    """Async twin of :class:`GuardedTransport`; differs only in how it sleeps."""

    def __init__(
        self, inner: httpx.AsyncBaseTransport, guard: RequestGuard, *, owner: bool
    ) -> None:
        self._inner = inner
        self._guard = guard
        self._owner = owner

    def __repr__(self) -> str:
        return f"AsyncGuardedTransport({self._guard!r}, owner={self._owner})"

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        """Send ``request``, retrying what the policy allows."""
        self._guard.strip_credentials(request)
        await request.aread()
        attempt = 0
        while True:
            # The limiter is polled (it may be shared with other processes): no event to await.
            while self._guard.limiter is not None and (wait := self._guard.limiter.try_acquire()):  # noqa: ASYNC110
                await asyncio.sleep(wait)
            try:
                response = await self._inner.handle_async_request(request)
            except httpx.TransportError as exc:
                delay = self._guard.delay_after_error(request, attempt, exc)
                if delay is None:
                    raise
            else:
                response = await self._bound(request, response)
                delay = self._guard.delay_after_response(request, attempt, response)
                if delay is None:
                    return response
                await response.aread()
                await response.aclose()
            await asyncio.sleep(RETRY_SLEEP.wait_for(delay))
            attempt += 1

    async def _bound(self, request: httpx.Request, response: httpx.Response) -> ServiceResponse:
        try:
            limit, refuse = _body_bound(self._guard, request, response)
        except BaseException:
            await response.aclose()
            raise
        assert isinstance(response.stream, httpx.AsyncByteStream)
        stream = _AsyncBoundedStream(response.stream, limit, refuse)
        return _rewrapped(response, stream, limit, refuse)

    async def aclose(self) -> None:
        """Close the inner transport if this wrapper owns it."""
        if self._owner:
            await self._inner.aclose()
