"""The transport guard: origin guard, size bound and the client-side rate limit.

It wraps every transport httpx sends through (the pools, each proxy route, the user's
transport and mounts), the lowest layer that sees every request (redirects and the token
request included), which is where credentials can be kept to the base URL's origin
(httpx itself strips only ``Authorization`` on a cross-origin redirect) and where every
body passes before anything reads it. Retries sit above authentication, in the client.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Iterator
from typing import Any

import attrs
import httpx

from service_api import _errors as errors
from service_api._protocols import RequestLimiter
from service_api._retry import parse_retry_after

ACCOUNT_HEADER = "x-service-account-id"
#: Default cap on a successful response body, in bytes (a 50-record page is about
#: 12 KB); a hostile server cannot make the client hold more than about this.
DEFAULT_MAX_RESPONSE_BYTES = 8 * 1024 * 1024
#: Bytes of an error body kept: enough for ``MAX_BODY_CHARS`` UTF-8 characters.
ERROR_BODY_BYTES = 4 * errors.MAX_BODY_CHARS
#: Cap on the body of a token response: a token is at most 8 KiB of header value.
TOKEN_RESPONSE_BYTES = 64 * 1024
#: Request extension where a failed token request keeps its typed error: httpx closes
#: the auth flow instead of raising the error in it, and the flow's waiters need it.
TOKEN_ERROR_EXTENSION = "service_api.token_error"  # noqa: S105 - a name, not a secret


def origin(url: httpx.URL) -> tuple[str, str, int | None]:
    """``(scheme, host, port)`` of ``url``, the port made explicit for http and https
    (httpx already lower-cases scheme and host).

    Example::

        origin(httpx.URL("https://h/x")) == origin(httpx.URL("https://h:443/y"))   # True
    """
    return url.scheme, url.host, url.port or {"http": 80, "https": 443}.get(url.scheme)


def _too_large(request: httpx.Request, limit: int) -> errors.InvalidResponseError:
    return errors.InvalidResponseError(
        f"answer to {request.method} {request.url} is larger than {limit} bytes "
        "(raise max_response_bytes if such answers are expected)",
        request=request,
    )


class ServiceResponse(httpx.Response):
    """A response whose ``json()`` raises :class:`InvalidResponseError` for a body that is
    not JSON, and whose body, raw and decoded (a few hundred bytes of gzip can inflate to
    gigabytes), stops at ``limit`` bytes: past it, an error body is cut (the error keeps
    its status) and any other refused; the stream is closed then, dropping the connection."""

    limit = 0  # no bound: a response built by hand

    def json(self, **kwargs: Any) -> Any:
        """The parsed body; :class:`InvalidResponseError` (a ``ValueError``) if not JSON."""
        try:
            return super().json(**kwargs)
        except (ValueError, RecursionError):  # too deeply nested is not JSON for us either
            what = f"{self.status_code} answer to {self.request.method} {self.request.url}"
            error = errors.InvalidResponseError(f"{what} is not valid JSON", request=self.request)
            raise error from None

    def _rest(self, chunk: bytes, left: int) -> bytes:
        # What is kept of the chunk that crossed the bound (the stream is closed by then).
        if self.status_code < 400:
            raise _too_large(self.request, self.limit)
        return chunk[:left]

    def _bounded(self, chunks: Iterator[bytes]) -> Iterator[bytes]:
        left = self.limit
        for chunk in chunks:
            if self.limit and (left := left - len(chunk)) < 0:
                self.close()
                yield self._rest(chunk, left)
                return
            yield chunk

    async def _abounded(self, chunks: AsyncIterator[bytes]) -> AsyncIterator[bytes]:
        left = self.limit
        async for chunk in chunks:
            if self.limit and (left := left - len(chunk)) < 0:
                await self.aclose()
                yield self._rest(chunk, left)
                return
            yield chunk

    def iter_raw(self, chunk_size: int | None = None) -> Iterator[bytes]:
        """The body as received, bounded."""
        return self._bounded(super().iter_raw(chunk_size))

    def iter_bytes(self, chunk_size: int | None = None) -> Iterator[bytes]:
        """The body decoded, bounded."""
        return self._bounded(super().iter_bytes(chunk_size))

    def aiter_raw(self, chunk_size: int | None = None) -> AsyncIterator[bytes]:
        """Async twin of :meth:`iter_raw`."""
        return self._abounded(super().aiter_raw(chunk_size))

    def aiter_bytes(self, chunk_size: int | None = None) -> AsyncIterator[bytes]:
        """Async twin of :meth:`iter_bytes`."""
        return self._abounded(super().aiter_bytes(chunk_size))


@attrs.frozen(eq=False, kw_only=True)
class GuardedTransport(httpx.BaseTransport, httpx.AsyncBaseTransport):
    """Guard, size bound and rate limit around an inner (sync or async) transport,
    which it never closes (the client closes its pools; a mount is the user's).

    Example::

        GuardedTransport(httpx.HTTPTransport(), base_url=httpx.URL(url))
    """

    _inner: Any = attrs.field(kw_only=False)
    base_url: httpx.URL
    max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES
    limiter: RequestLimiter | None = None
    user_agent: str | None = None

    def strip_credentials(self, request: httpx.Request) -> None:
        """Off the base origin: no ``Authorization``, no account header, and no token
        request at all (only a redirect could send one elsewhere)."""
        if origin(request.url) != origin(self.base_url):
            if errors.is_token_request(request):
                where = f"{request.url.host}, outside the base URL's origin"
                message = f"refusing to send the token request to {where}"
                raise errors.TokenResponseError(message, request=request)
            request.headers.pop(ACCOUNT_HEADER, None)
            request.headers.pop("authorization", None)
        # httpx gives the client's headers to the requests it builds, not to those an
        # auth flow yields (the token request): this is where every request passes.
        if self.user_agent is not None:
            request.headers.setdefault("User-Agent", self.user_agent)

    def _inner_for(self, request: httpx.Request, side: type) -> Any:
        # I/O-free, for both twins: what runs before the request goes out.
        self.strip_credentials(request)
        if not isinstance(self._inner, side):
            served = "async" if side is httpx.BaseTransport else "sync"
            name = type(self._inner).__name__
            raise TypeError(f"the transport ({name}) serves {served} requests only")
        return self._inner

    def _bound(self, request: httpx.Request, response: httpx.Response) -> ServiceResponse:
        # I/O-free, for both twins: refuses a redirected token request and a success
        # body declared too large, else puts the body behind its bound.
        status, token_request = response.status_code, errors.is_token_request(request)
        if self.limiter is not None:
            self.limiter.observe(status, parse_retry_after(response.headers.get("retry-after")))
        if token_request and 300 <= status < 400:
            raise errors.TokenResponseError(
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
        wrapped = ServiceResponse(
            status, headers=response.headers, stream=response.stream, extensions=response.extensions
        )
        wrapped.request, wrapped.limit = request, ERROR_BODY_BYTES if status >= 400 else limit
        return wrapped

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        """Send ``request`` once, guarded and bounded."""
        try:
            inner = self._inner_for(request, httpx.BaseTransport)
            # Here every request on the wire asks the limiter (token requests too).
            while self.limiter is not None and (wait := self.limiter.try_acquire()):
                time.sleep(wait)
            response = inner.handle_request(request)
            try:
                return self._bound(request, response)
            except BaseException:
                response.close()
                raise
        except (httpx.HTTPError, errors.ServiceApiError) as exc:
            _record_token_error(request, exc)
            raise

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        """Async twin of :meth:`handle_request`."""
        try:
            inner = self._inner_for(request, httpx.AsyncBaseTransport)
            # The limiter is polled (it may be shared with other processes): no event to await.
            while self.limiter is not None and (wait := self.limiter.try_acquire()):  # noqa: ASYNC110
                await asyncio.sleep(wait)
            response = await inner.handle_async_request(request)
            try:
                return self._bound(request, response)
            except BaseException:
                await response.aclose()
                raise
        except (httpx.HTTPError, errors.ServiceApiError) as exc:
            _record_token_error(request, exc)
            raise


def _record_token_error(request: httpx.Request, exc: Exception) -> None:
    if errors.is_token_request(request):
        typed = isinstance(exc, httpx.HTTPError) and errors.error_from_httpx(exc, request=request)
        request.extensions[TOKEN_ERROR_EXTENSION] = typed or exc
