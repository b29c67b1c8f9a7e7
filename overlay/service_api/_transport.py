"""Transport wrappers: origin guard, client-side rate limit and retries.

They sit at the lowest layer of ``httpx`` that sees every request (redirects and
the token request included), which is where credentials can be kept to the base
URL's origin: httpx itself strips only ``Authorization`` on a cross-origin redirect.
The sync and async wrappers share every decision (:mod:`service_api._retry`) and
differ only in how they sleep.
"""

from __future__ import annotations

import asyncio
import logging
import random
import time

import httpx

from service_api._auth import TOKEN_REQUEST_EXTENSION
from service_api._rate_limit import RateLimiter
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
        limiter: RateLimiter | None = None,
        rng: random.Random | None = None,
    ) -> None:
        self.origin = origin(base_url)
        self.policy = policy
        self.limiter = limiter
        self.rng = rng or random.Random()  # noqa: S311 - jitter, not cryptography

    def __repr__(self) -> str:
        return f"RequestGuard(origin={self.origin!r}, policy={self.policy!r})"

    def strip_credentials(self, request: httpx.Request) -> None:
        """Remove credential headers the request must not carry.

        Off the base origin, neither ``Authorization`` nor the account header;
        on the token request, no account header.
        """
        off_origin = origin(request.url) != self.origin
        if off_origin or TOKEN_REQUEST_EXTENSION in request.extensions:
            request.headers.pop(ACCOUNT_HEADER, None)
        if off_origin and "authorization" in request.headers:
            del request.headers["authorization"]
            logger.debug("credentials withheld from %s (not the base origin)", request.url.host)

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
            wait = self._guard.limiter.reserve() if self._guard.limiter is not None else 0.0
            if wait > 0:
                time.sleep(wait)
            try:
                response = self._inner.handle_request(request)
            except httpx.TransportError as exc:
                delay = self._guard.delay_after_error(request, attempt, exc)
                if delay is None:
                    raise
            else:
                delay = self._guard.delay_after_response(request, attempt, response)
                if delay is None:
                    return response
                response.read()
                response.close()
            time.sleep(RETRY_SLEEP.wait_for(delay))
            attempt += 1

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
            wait = self._guard.limiter.reserve() if self._guard.limiter is not None else 0.0
            if wait > 0:
                await asyncio.sleep(wait)
            try:
                response = await self._inner.handle_async_request(request)
            except httpx.TransportError as exc:
                delay = self._guard.delay_after_error(request, attempt, exc)
                if delay is None:
                    raise
            else:
                delay = self._guard.delay_after_response(request, attempt, response)
                if delay is None:
                    return response
                await response.aread()
                await response.aclose()
            await asyncio.sleep(RETRY_SLEEP.wait_for(delay))
            attempt += 1

    async def aclose(self) -> None:
        """Close the inner transport if this wrapper owns it."""
        if self._owner:
            await self._inner.aclose()
