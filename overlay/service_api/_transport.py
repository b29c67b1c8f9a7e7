"""The guard around every transport: it keeps credentials to the base URL's origin (the
origin guard), bounds the size of every body and asks the client-side rate limiter.

It wraps every transport httpx sends through (the pools, each proxy route, the user's
transport and mounts), the lowest layer that sees every request (redirects and the token
request included), which is where credentials can be kept to the base URL's origin
(httpx itself strips only ``Authorization`` on a cross-origin redirect) and where every
body passes before anything reads it. Retries sit above authentication, in the client.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
from collections.abc import AsyncIterator, Iterator
from typing import Any

import attrs
import httpx

from service_api import _errors as errors
from service_api._protocols import RequestLimiter

ACCOUNT_HEADER = "x-service-account-id"
#: Default cap on a response body once decoded, in bytes (a 50-record page is about
#: 12 KB); a hostile server cannot make the client hold more than about this.
DEFAULT_MAX_RESPONSE_BYTES = 8 * 1024 * 1024
#: Request extension where a failed token request keeps its typed error: httpx closes
#: the auth flow instead of raising the error in it, and the flow's waiters need it.
TOKEN_ERROR_EXTENSION = "service_api.token_error"  # noqa: S105 - a name, not a secret
_TOO_LARGE = (
    "is larger than {} bytes (raise max_response_bytes if such answers are expected)"
)


class ServiceResponse(httpx.Response):
    """A response whose ``json()`` raises :class:`InvalidResponseError` for a body that is
    not JSON, and whose body, counted decoded (a few hundred bytes of gzip can inflate to
    gigabytes), is refused past ``limit`` bytes, whatever the status: the stream is
    closed then, dropping the connection."""

    limit = DEFAULT_MAX_RESPONSE_BYTES

    def json(self, **kwargs: Any) -> Any:
        """The parsed body; :class:`InvalidResponseError` (a ``ValueError``) if not JSON."""
        try:
            return super().json(**kwargs)
        # Too deeply nested is not JSON for us either.
        except (ValueError, RecursionError):
            raise self._refused("is not valid JSON") from None

    def iter_bytes(self, chunk_size: int | None = None) -> Iterator[bytes]:
        """The body decoded, bounded (raw chunks are never kept: this bounds memory)."""
        # Closed here, not left to httpx: the client's send reads a streamed error body
        # itself, and nothing else would close that response.
        left = self.limit
        for chunk in super().iter_bytes(chunk_size):
            if (left := left - len(chunk)) < 0:
                self.close()
                raise self._refused(_TOO_LARGE.format(self.limit))
            yield chunk

    async def aiter_bytes(self, chunk_size: int | None = None) -> AsyncIterator[bytes]:
        """Async twin of :meth:`iter_bytes`."""
        left = self.limit
        async for chunk in super().aiter_bytes(chunk_size):
            if (left := left - len(chunk)) < 0:
                await self.aclose()
                raise self._refused(_TOO_LARGE.format(self.limit))
            yield chunk

    def _refused(self, problem: str) -> errors.InvalidResponseError:
        return errors.InvalidResponseError(
            f"{self.status_code} answer to {self.request.method} {self.request.url} "
            f"{problem}",
            request=self.request,
        )


@attrs.frozen
class GuardedTransport(httpx.BaseTransport, httpx.AsyncBaseTransport):
    """The guard around an inner (sync or async) transport, which it never closes (the
    client closes its pools; a mount is the user's): credentials only to the origin of
    ``base_url``, bodies of at most ``max_response_bytes``, a slot of ``limiter`` for each
    request, the ``user_agent``; ``answered`` is set at the first answer.

    Example::

        GuardedTransport(httpx.HTTPTransport(), base_url=httpx.URL(url))
    """

    _inner: Any
    base_url: httpx.URL
    max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES
    limiter: RequestLimiter | None = None
    user_agent: str | None = None
    answered: threading.Event = attrs.field(factory=threading.Event)

    def strip_credentials(self, request: httpx.Request) -> None:
        """Off the base origin: no ``Authorization``, no account header, and no token
        request at all (only a redirect could send one elsewhere)."""
        # The origin: scheme, host and port (httpx gives a default port as None).
        if request.url.join("/") != self.base_url.join("/"):
            if errors.is_token_request(request):
                error = errors.TokenResponseError(
                    "the token request never leaves the base origin "
                    f"({request.url.host})",
                    request=request,
                )
                # For the auth flow's waiters.
                request.extensions[TOKEN_ERROR_EXTENSION] = error
                raise error
            request.headers.pop(ACCOUNT_HEADER, None)
            request.headers.pop("authorization", None)
        # httpx gives the client's headers to the requests it builds, not to those an
        # auth flow yields (the token request): this is where every request passes.
        if self.user_agent is not None:
            request.headers.setdefault("User-Agent", self.user_agent)

    def _before_sending(self, request: httpx.Request, side: type, served: str) -> None:
        # I/O-free, for both twins: the guard, and an inner transport that serves this side.
        self.strip_credentials(request)
        if not isinstance(self._inner, side):
            raise TypeError(
                f"the transport ({type(self._inner).__name__}) serves {served} "
                "requests only"
            )

    def _bound(
        self, request: httpx.Request, response: httpx.Response
    ) -> ServiceResponse:
        # I/O-free, for both twins: tells the limiter, puts the body behind its bound.
        self.answered.set()
        if self.limiter is not None:
            self.limiter.observe(response)
        wrapped = ServiceResponse(
            response.status_code,
            headers=response.headers,
            stream=response.stream,
            request=request,
            extensions=response.extensions,
        )
        wrapped.limit = self.max_response_bytes
        return wrapped

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        """Send ``request`` once, guarded and bounded."""
        with _token_error_kept(request):
            self._before_sending(request, httpx.BaseTransport, "async")
            # Here every request on the wire asks the limiter (token requests too).
            limiter = self.limiter
            while limiter is not None and (wait := limiter.try_acquire()):
                time.sleep(wait)
            return self._bound(request, self._inner.handle_request(request))

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        """Async twin of :meth:`handle_request`."""
        with _token_error_kept(request):
            self._before_sending(request, httpx.AsyncBaseTransport, "sync")
            # The limiter is polled (it may be shared with other processes): no event to await.
            limiter = self.limiter
            while limiter is not None and (wait := limiter.try_acquire()):  # noqa: ASYNC110
                await asyncio.sleep(wait)
            return self._bound(request, await self._inner.handle_async_request(request))


@contextlib.contextmanager
def _token_error_kept(request: httpx.Request) -> Iterator[None]:
    """Keep the typed error a token request fails with in ``TOKEN_ERROR_EXTENSION``."""
    try:
        yield
    except httpx.HTTPError as exc:
        if errors.is_token_request(request):
            typed = errors.error_from_httpx(exc, request=request)
            # The waiters' retries read the cause (a refused connection, a TLS failure).
            typed.__cause__ = exc
            request.extensions[TOKEN_ERROR_EXTENSION] = typed
        raise
