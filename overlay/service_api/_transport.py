"""The transport wrapper: origin guard, size bound and the client-side rate limit.

It sits at the lowest layer of ``httpx`` that sees every request (redirects, the
token request, every proxy route), which is where credentials can be kept to the
base URL's origin (httpx itself strips only ``Authorization`` on a cross-origin
redirect) and the only layer that sees every body before anything reads it.
Retries are not here: they sit above authentication, in the client.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx

from service_api._errors import (
    MAX_BODY_CHARS,
    InvalidResponseError,
    ServiceApiError,
    TokenResponseError,
    error_from_httpx,
    is_token_request,
)
from service_api._protocols import RequestLimiter
from service_api._retry import parse_retry_after

ACCOUNT_HEADER = "x-service-account-id"
#: Default cap on a successful response body, in bytes (a 50-record page is about
#: 12 KB); a hostile server cannot make the client hold more than about this.
DEFAULT_MAX_RESPONSE_BYTES = 8 * 1024 * 1024
#: Bytes of an error body kept: enough for ``MAX_BODY_CHARS`` UTF-8 characters.
ERROR_BODY_BYTES = 4 * MAX_BODY_CHARS
#: Cap on the body of a token response: a token is at most 8 KiB of header value.
TOKEN_RESPONSE_BYTES = 64 * 1024
#: Request extension where a failed token request keeps its typed error: httpx closes
#: the auth flow instead of raising the error in it, and the flow's waiters need it.
TOKEN_ERROR_EXTENSION = "service_api.token_error"  # noqa: S105 - a name, not a secret


def _record_token_error(request: httpx.Request, exc: Exception) -> None:
    if is_token_request(request):
        error = error_from_httpx(exc, request=request) if isinstance(exc, httpx.HTTPError) else exc
        request.extensions[TOKEN_ERROR_EXTENSION] = error


def origin(url: httpx.URL) -> tuple[str, str, int | None]:
    """``(scheme, host, port)`` of ``url``, the port made explicit for http and https
    (httpx already lower-cases scheme and host).

    Example::

        origin(httpx.URL("https://h/x")) == origin(httpx.URL("https://h:443/y"))   # True
    """
    return url.scheme, url.host, url.port or {"http": 80, "https": 443}.get(url.scheme)


class ServiceResponse(httpx.Response):
    """A response whose ``json()`` raises :class:`InvalidResponseError` for a body that
    is not JSON, and whose compressed body counts what it inflates to."""

    _limit = 0  # set for a compressed body: the most it may inflate to (cut if an error)

    def json(self, **kwargs: Any) -> Any:
        """The parsed body; :class:`InvalidResponseError` (a ``ValueError``) if not JSON."""
        try:
            return super().json(**kwargs)
        except (ValueError, RecursionError):  # too deeply nested is not JSON for us either
            raise InvalidResponseError(
                f"{self.status_code} answer to {self.request.method} {self.request.url} "
                "is not valid JSON",
                request=self.request,
            ) from None

    # The decoded chunks go through the same bound as the raw ones, with the same limit.
    def iter_bytes(self, chunk_size: int | None = None) -> Iterator[bytes]:
        """The decoded body, refused (an error body: cut) past the limit when compressed."""
        chunks, cut = super().iter_bytes(chunk_size), self.status_code >= 400
        return (
            iter(_BoundedStream(chunks, self._limit, self.request, cut=cut))
            if self._limit
            else chunks
        )

    def aiter_bytes(self, chunk_size: int | None = None) -> AsyncIterator[bytes]:
        """Async twin of :meth:`iter_bytes`."""
        chunks, cut = super().aiter_bytes(chunk_size), self.status_code >= 400
        return (
            aiter(_BoundedStream(chunks, self._limit, self.request, cut=cut))
            if self._limit
            else chunks
        )


def _too_large(request: httpx.Request, limit: int) -> InvalidResponseError:
    return InvalidResponseError(
        f"answer to {request.method} {request.url} is larger than {limit} bytes "
        "(raise max_response_bytes if such answers are expected)",
        request=request,
    )


class _BoundedStream(httpx.SyncByteStream, httpx.AsyncByteStream):
    """The chunks of ``inner`` (a sync or async byte stream or iterator) up to ``limit``
    bytes: past it they are cut (``cut``, error bodies) or refused; ``inner`` is closed
    then, dropping the connection."""

    def __init__(
        self, inner: Any, limit: int, request: httpx.Request, *, cut: bool = False
    ) -> None:
        self._inner, self._left, self._limit = inner, limit, limit
        self._request, self._cut = request, cut

    def _take(self, chunk: bytes) -> bytes:
        # I/O-free, for both iterations: what of ``chunk`` is kept; past the limit the
        # caller stops (``_left`` is negative) after closing ``inner``.
        self._left -= len(chunk)
        if self._left < 0 and not self._cut:
            raise _too_large(self._request, self._limit)
        return chunk[: self._left] if self._left < 0 else chunk

    def __iter__(self) -> Iterator[bytes]:
        with contextlib.closing(self._inner):
            for chunk in self._inner:
                yield self._take(chunk)
                if self._left < 0:
                    return

    async def __aiter__(self) -> AsyncIterator[bytes]:
        async with contextlib.aclosing(self._inner):
            async for chunk in self._inner:
                yield self._take(chunk)
                if self._left < 0:
                    return

    def close(self) -> None:
        self._inner.close()

    async def aclose(self) -> None:
        await self._inner.aclose()


class GuardedTransport(httpx.BaseTransport, httpx.AsyncBaseTransport):
    """Guard, size bound and rate limit around an inner (sync or async) transport.

    It never closes ``inner``: the pools belong to the client's family, which closes them.
    ``max_response_bytes`` is checked by the client (at least 1).

    Example::

        GuardedTransport(httpx.HTTPTransport(), base_url=httpx.URL(url))
    """

    def __init__(
        self,
        inner: Any,
        *,
        base_url: httpx.URL,
        max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES,
        limiter: RequestLimiter | None = None,
        user_agent: str | None = None,
    ) -> None:
        self._inner, self._limiter = inner, limiter
        self.user_agent, self.max_response_bytes = user_agent, max_response_bytes
        self.origin = origin(base_url)

    def strip_credentials(self, request: httpx.Request) -> None:
        """Off the base origin: no ``Authorization``, no account header; a token request
        (only a redirect can send one elsewhere) is refused. The token request never
        carries the account header."""
        off_origin, token_request = origin(request.url) != self.origin, is_token_request(request)
        if token_request and off_origin:
            where = f"{request.url.host}, outside the base URL's origin"
            raise TokenResponseError(
                f"refusing to send the token request to {where}", request=request
            )
        if off_origin or token_request:
            request.headers.pop(ACCOUNT_HEADER, None)
        if off_origin:
            request.headers.pop("authorization", None)
        # httpx gives the client's headers to the requests it builds, not to those an
        # auth flow yields (the token request): this is where every request passes.
        if self.user_agent is not None:
            request.headers.setdefault("User-Agent", self.user_agent)

    def _bound(self, request: httpx.Request, response: httpx.Response) -> ServiceResponse:
        # I/O-free, for both twins: refuses a redirected token request and a success
        # body declared too large, else puts the body behind its bounds.
        status, token_request = response.status_code, is_token_request(request)
        if self._limiter is not None:
            self._limiter.observe(status, parse_retry_after(response.headers.get("retry-after")))
        if token_request and 300 <= status < 400:
            raise TokenResponseError(
                f"the token endpoint answered {status} (a redirect); "
                "the token request is never redirected",
                request=request,
            )
        limit = self.max_response_bytes
        if token_request:
            limit = min(limit, TOKEN_RESPONSE_BYTES)
        declared = response.headers.get("content-length", "")
        if status < 400 and declared.isdigit() and int(declared) > limit:
            raise _too_large(request, limit)
        cut = status >= 400  # an error body is cut, not refused: the error shows its start
        limit = ERROR_BODY_BYTES if cut else limit
        stream = _BoundedStream(response.stream, limit, request, cut=cut)
        wrapped = ServiceResponse(
            status, headers=response.headers, stream=stream, extensions=response.extensions
        )
        wrapped.request = request
        # What a compressed body inflates to counts too, an error body's included (cut, so
        # the error keeps its status): a few hundred bytes of gzip can inflate to gigabytes.
        if response.headers.get("content-encoding", "identity") != "identity":
            wrapped._limit = limit
        return wrapped

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        """Send ``request`` once, guarded and bounded."""
        try:
            self.strip_credentials(request)
            # Here every request on the wire asks the limiter (token requests too).
            while self._limiter is not None and (wait := self._limiter.try_acquire()):
                time.sleep(wait)
            if not isinstance(self._inner, httpx.BaseTransport):
                raise TypeError(f"{type(self._inner).__name__} serves async requests only")
            response = self._inner.handle_request(request)
            try:
                return self._bound(request, response)
            except BaseException:
                response.close()
                raise
        except (httpx.HTTPError, ServiceApiError) as exc:
            _record_token_error(request, exc)
            raise

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        """Async twin of :meth:`handle_request`."""
        try:
            self.strip_credentials(request)
            # The limiter is polled (it may be shared with other processes): no event to await.
            while self._limiter is not None and (wait := self._limiter.try_acquire()):  # noqa: ASYNC110
                await asyncio.sleep(wait)
            if not isinstance(self._inner, httpx.AsyncBaseTransport):
                raise TypeError(f"{type(self._inner).__name__} serves sync requests only")
            response = await self._inner.handle_async_request(request)
            try:
                return self._bound(request, response)
            except BaseException:
                await response.aclose()
                raise
        except (httpx.HTTPError, ServiceApiError) as exc:
            _record_token_error(request, exc)
            raise
