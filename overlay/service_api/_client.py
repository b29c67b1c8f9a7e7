"""The client: a generated ``service_api_client.Client`` that authenticates itself.

Every generated endpoint function (``sync``, ``sync_detailed``, ``asyncio``,
``asyncio_detailed``) accepts it. It builds its ``httpx`` clients with
:class:`~service_api._auth.TokenAuth` and the guarded transports, and raises the
typed errors of :mod:`service_api._errors` where the generated code would return
``None`` or an error model.
"""

from __future__ import annotations

import random
import ssl
import threading
from typing import Any, Self

import httpx

import service_api_client
from service_api._auth import TokenAuth, TokenState
from service_api._errors import (
    ApiConnectionError,
    ApiTimeoutError,
    InvalidResponseError,
    error_from_response,
    redacted_request,
)
from service_api._rate_limit import RateLimiter
from service_api._retry import RetryPolicy
from service_api._transport import (
    ACCOUNT_HEADER,
    DEFAULT_MAX_RESPONSE_BYTES,
    AsyncGuardedTransport,
    GuardedTransport,
    RequestGuard,
    ServiceResponse,
)

# httpx.Client arguments that configure the connection pool: they go to the
# transport we build, since httpx ignores them when given a transport.
_TRANSPORT_ARGS = frozenset(
    {"verify", "cert", "trust_env", "http1", "http2", "limits", "proxy", "local_address"}
)


class _Family:
    """What a client shares with the clients made by :meth:`Client.with_account`."""

    def __init__(
        self,
        *,
        base_url: str,
        client_id: str,
        client_secret: str,
        refresh_skew: float,
        timeout: httpx.Timeout,
        policy: RetryPolicy,
        rate_limit: float | None,
        max_response_bytes: int,
        transport_args: dict[str, Any],
        sync_transport: httpx.BaseTransport | None,
        async_transport: httpx.AsyncBaseTransport | None,
    ) -> None:
        self.state = TokenState(refresh_skew=refresh_skew)
        self.auth = TokenAuth(base_url, client_id, client_secret, state=self.state, timeout=timeout)
        self.client_secret = client_secret
        self.policy = policy
        limiter = RateLimiter(rate_limit) if rate_limit is not None else None
        self.guard = RequestGuard(
            httpx.URL(base_url),
            policy,
            limiter,
            random.Random(),  # noqa: S311 - jitter, not cryptography
            max_response_bytes=max_response_bytes,
        )
        self.transport_args = transport_args
        self.user_sync_transport = sync_transport
        self.user_async_transport = async_transport
        self._lock = threading.Lock()
        self._sync_inner: httpx.BaseTransport | None = None

    def close_pool(self) -> None:
        """Close the shared sync pool, whichever client created it (the original's close)."""
        with self._lock:
            pool, self._sync_inner = self._sync_inner, None
        if pool is not None:
            pool.close()

    def sync_inner(self) -> httpx.BaseTransport:
        """The connection pool every client of the family uses for sync calls."""
        with self._lock:
            if self._sync_inner is None:
                self._sync_inner = self.user_sync_transport or httpx.HTTPTransport(
                    **self.transport_args
                )
            return self._sync_inner

    def new_async_inner(self) -> httpx.AsyncBaseTransport:
        """A connection pool for one client's async calls (pools are loop-bound)."""
        return self.user_async_transport or httpx.AsyncHTTPTransport(**self.transport_args)

    def secrets(self) -> list[str]:
        """Strings that must never appear in a message."""
        token = self.state.current_token()
        return [s for s in (self.client_secret, token) if s]


def _redact(text: str, secrets: list[str]) -> str:
    for secret in secrets:
        text = text.replace(secret, "[redacted]")
    return text


def _transport_error(exc: httpx.HTTPError, family: _Family) -> Exception:
    try:
        request: httpx.Request | None = redacted_request(exc.request)
    except RuntimeError:
        request = None
    where = f" for {request.method} {request.url}" if request is not None else ""
    message = _redact(f"{type(exc).__name__}{where}: {exc}", family.secrets())
    if isinstance(exc, httpx.TimeoutException):
        return ApiTimeoutError(f"no answer in time{where} ({message})", request=request)
    if isinstance(exc, httpx.TransportError):
        return ApiConnectionError(f"no answer{where} ({message})", request=request)
    return InvalidResponseError(f"unusable answer{where} ({message})", request=request)


def _check(response: httpx.Response, *, read: bool) -> None:
    """Raise the typed error for an error status, or for a 2xx JSON body that is not JSON.

    The body is parsed here once; the guarded transport's :class:`ServiceResponse`
    hands that parse to the generated code's ``response.json()``, so checking costs
    no second parse.
    """
    if response.status_code >= 400:
        raise error_from_response(response)
    if (
        read
        and 200 <= response.status_code < 300
        and "json" in response.headers.get("content-type", "")
    ):
        try:
            if isinstance(response, ServiceResponse):
                response.validate_json()
            else:  # a response our transport did not build (e.g. replaced by an event hook)
                response.json()
        except ValueError:
            raise InvalidResponseError(
                f"{response.status_code} answer to {response.request.method} "
                f"{response.request.url} is not valid JSON",
                request=redacted_request(response.request),
            ) from None


class _ServiceHttpxClient(httpx.Client):
    """``httpx.Client`` whose ``send`` raises the package's typed errors."""

    def __init__(self, family: _Family, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._family = family

    def send(self, request: httpx.Request, **kwargs: Any) -> httpx.Response:
        try:
            response = super().send(request, **kwargs)
            if response.status_code >= 400:
                response.read()
        except httpx.HTTPError as exc:
            raise _transport_error(exc, self._family) from exc
        _check(response, read=not kwargs.get("stream", False))
        return response


class _ServiceAsyncHttpxClient(httpx.AsyncClient):
    """``httpx.AsyncClient`` whose ``send`` raises the package's typed errors."""

    def __init__(self, family: _Family, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._family = family

    async def send(self, request: httpx.Request, **kwargs: Any) -> httpx.Response:
        try:
            response = await super().send(request, **kwargs)
            if response.status_code >= 400:
                await response.aread()
        except httpx.HTTPError as exc:
            raise _transport_error(exc, self._family) from exc
        _check(response, read=not kwargs.get("stream", False))
        return response


class Client(service_api_client.Client):
    """A client of the service that keeps its bearer token fresh.

    Pass it to any generated endpoint function, sync or async. It fetches a token
    lazily, refreshes it ``refresh_skew`` seconds before it expires (and once after
    a 401), sends ``x-service-account-id`` when ``account_id`` is set, retries
    idempotent requests per ``retry`` (or ``RetryPolicy(max_retries=max_retries)``),
    optionally spaces requests to ``rate_limit`` per minute, and raises the typed
    errors of this package (``NotFoundError``, ``RateLimitError``, ...) instead of
    returning ``None`` or an error model.

    * Account per call: :meth:`with_account` gives a client for another account
      sharing the token and the sync connection pool; or set the header on one
      request, which wins over the client's:
      ``client.get_httpx_client().get("/shipments", headers={"x-service-account-id": "acct-2"})``.
    * Event loops: like ``httpx.AsyncClient``, the async side of one client
      belongs to the first event loop that uses it; use one
      ``client.with_account(...)`` per extra loop (the token is still shared).
    * Closing: ``with`` / ``async with``, or :meth:`close` / :meth:`aclose`. The
      original client owns the sync pool it shares with its ``with_*`` children:
      closing it closes the pool, whether or not it sent a request itself, and
      whether the children were closed before or not (closing a child closes
      only its own async connections). Use no child after closing the original:
      the connections it opened then would stay open.
    * Size: a success body over ``max_response_bytes`` (default 8 MiB, checked
      while it streams in and, if compressed, once inflated; token responses
      included) raises :class:`InvalidResponseError` and drops the connection;
      of an error body only the first few KiB are read, enough for its ``body``.
    * Redirects: even with ``follow_redirects=True`` the token request is never
      redirected (it carries the client secret): a 3xx answer to it raises
      :class:`TokenResponseError`.
    * ``httpx_args`` go to ``httpx.Client`` / ``httpx.AsyncClient`` (``verify``,
      ``limits``, ``proxy``, ``event_hooks``, ...); a ``transport`` there is used
      inside the guard (an ``httpx.MockTransport`` or ``httpx.ASGITransport``).
    * Not validated: the fields of a 200 body. The generated ``from_dict`` runs
      after the client returns and raises ``KeyError``/``TypeError``/``ValueError``
      for a body that is JSON but lacks a required field; wrap that call and
      raise :class:`InvalidResponseError` (the pagination layer does).

    Example::

        from service_api_client.api.shipments import list_shipments

        with service_api.Client(url, "my-client", secret, "acct-1") as client:
            page = list_shipments.sync(client=client, page_size=50)
    """

    def __init__(
        self,
        base_url: str,
        client_id: str,
        client_secret: str,
        account_id: str | None = None,
        *,
        refresh_skew: float = 60.0,
        max_retries: int = 2,
        timeout: float | httpx.Timeout = 30.0,
        retry: RetryPolicy | None = None,
        rate_limit: float | None = None,
        max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES,
        httpx_args: dict[str, Any] | None = None,
    ) -> None:
        args = dict(httpx_args or {})
        if "auth" in args:
            raise TypeError("httpx_args must not contain 'auth': the client authenticates itself")
        transport = args.pop("transport", None)
        follow_redirects = bool(args.pop("follow_redirects", False))
        verify: str | bool | ssl.SSLContext = args.pop("verify", True)
        headers = dict(args.pop("headers", None) or {})
        transport_args = {key: args.pop(key) for key in list(args) if key in _TRANSPORT_ARGS}
        transport_args["verify"] = verify
        httpx_timeout = timeout if isinstance(timeout, httpx.Timeout) else httpx.Timeout(timeout)
        if not base_url.startswith(("http://", "https://")):
            raise ValueError("base_url must be an absolute http(s) URL")
        family = _Family(
            base_url=base_url,
            client_id=client_id,
            client_secret=client_secret,
            refresh_skew=refresh_skew,
            timeout=httpx_timeout,
            policy=retry if retry is not None else RetryPolicy(max_retries=max_retries),
            rate_limit=rate_limit,
            max_response_bytes=max_response_bytes,
            transport_args=transport_args,
            sync_transport=transport if isinstance(transport, httpx.BaseTransport) else None,
            async_transport=(
                transport if isinstance(transport, httpx.AsyncBaseTransport) else None
            ),
        )
        self._setup(
            family,
            account_id,
            owner=True,
            headers=headers,
            timeout=httpx_timeout,
            verify=verify,
            follow_redirects=follow_redirects,
            httpx_args=args,
        )

    def _setup(
        self,
        family: _Family,
        account_id: str | None,
        *,
        owner: bool,
        headers: dict[str, str],
        timeout: httpx.Timeout,
        verify: str | bool | ssl.SSLContext,
        follow_redirects: bool,
        httpx_args: dict[str, Any],
    ) -> None:
        headers = {k: v for k, v in headers.items() if k.lower() != ACCOUNT_HEADER}
        if account_id is not None:
            if not account_id or not account_id.isprintable():
                raise ValueError("account_id must be a non-empty printable string")
            headers[ACCOUNT_HEADER] = account_id
        service_api_client.Client.__init__(
            self,
            base_url=family.auth.base_url,
            headers=headers,
            timeout=timeout,
            verify_ssl=verify,
            follow_redirects=follow_redirects,
            httpx_args=httpx_args,
        )
        self._family = family
        self._account_id = account_id
        self._owner = owner
        self._build_lock = threading.Lock()

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(base_url={self._base_url!r}, "
            f"client_id={self._family.auth.client_id!r}, account_id={self._account_id!r})"
        )

    __str__ = __repr__

    @property
    def account_id(self) -> str | None:
        """The account sent in ``x-service-account-id``, or ``None``.

        Example::

            client.with_account("acct-2").account_id   # "acct-2"
        """
        return self._account_id

    @property
    def retry_policy(self) -> RetryPolicy:
        """The retry policy in force.

        Example::

            client.retry_policy.max_retries   # 2
        """
        return self._family.policy

    def with_account(self, account_id: str | None) -> Client:
        """A client for another account, sharing this one's token and connection pool.

        One token serves every account of the integration, so no new
        ``/authenticate`` call is made. Closing the original closes the shared
        pool; closing the child (before that) releases only its own connections.

        Example::

            acct2 = client.with_account("acct-2")
            list_shipments.sync(client=acct2)
        """
        child = type(self).__new__(type(self))
        child._setup(
            self._family,
            account_id,
            owner=False,
            headers=dict(self._headers),
            timeout=self._timeout or httpx.Timeout(30.0),
            verify=self._verify_ssl,
            follow_redirects=self._follow_redirects,
            httpx_args=dict(self._httpx_args),
        )
        return child

    def with_headers(self, headers: dict[str, str]) -> Client:
        """A client like this one that also sends ``headers`` (sharing token and pool).

        Example::

            traced = client.with_headers({"x-request-id": "abc"})
        """
        account = headers.get(ACCOUNT_HEADER, self._account_id)
        child = self.with_account(account)
        child._headers.update({k: v for k, v in headers.items() if k.lower() != ACCOUNT_HEADER})
        return child

    def with_cookies(self, cookies: dict[str, str]) -> Client:
        """Not supported: the API uses no cookies.

        Example::

            client.with_cookies({})   # raises TypeError
        """
        raise TypeError("service_api.Client does not send cookies")

    def with_timeout(self, timeout: httpx.Timeout) -> Client:
        """A client like this one with another timeout (sharing token and pool).

        Example::

            patient = client.with_timeout(httpx.Timeout(120.0))
        """
        child = self.with_account(self._account_id)
        child._timeout = timeout
        return child

    def _client_args(self) -> dict[str, Any]:
        return {
            "base_url": self._base_url,
            "headers": self._headers,
            "timeout": self._timeout,
            "follow_redirects": self._follow_redirects,
            "auth": self._family.auth,
            **self._httpx_args,
        }

    def get_httpx_client(self) -> httpx.Client:
        """The ``httpx.Client`` the generated sync functions use (built on first use).

        Example::

            client.get_httpx_client().get("/shipments", params={"pageSize": 10})
        """
        with self._build_lock:
            if self._client is None:
                # The original closes the shared pool (_Family.close_pool), even if
                # it never built a transport of its own, so no wrapper owns it.
                transport = GuardedTransport(
                    self._family.sync_inner(), self._family.guard, owner=False
                )
                self._client = _ServiceHttpxClient(
                    self._family, transport=transport, **self._client_args()
                )
            return self._client

    def get_async_httpx_client(self) -> httpx.AsyncClient:
        """The ``httpx.AsyncClient`` the generated async functions use (built on first use).

        Example::

            await client.get_async_httpx_client().get("/shipments")
        """
        with self._build_lock:
            if self._async_client is None:
                transport = AsyncGuardedTransport(
                    self._family.new_async_inner(),
                    self._family.guard,
                    owner=self._family.user_async_transport is None,
                )
                self._async_client = _ServiceAsyncHttpxClient(
                    self._family, transport=transport, **self._client_args()
                )
            return self._async_client

    def set_httpx_client(self, client: httpx.Client) -> Self:
        """Not supported: the client must build its own ``httpx.Client`` to authenticate.

        Example::

            client.set_httpx_client(httpx.Client())   # raises TypeError
        """
        raise TypeError("pass httpx_args to service_api.Client instead")

    def set_async_httpx_client(self, async_client: httpx.AsyncClient) -> Self:
        """Not supported: the client must build its own ``httpx.AsyncClient``.

        Example::

            client.set_async_httpx_client(httpx.AsyncClient())   # raises TypeError
        """
        raise TypeError("pass httpx_args to service_api.Client instead")

    def __enter__(self) -> Self:
        self.get_httpx_client().__enter__()
        return self

    def __exit__(self, *args: Any, **kwargs: Any) -> None:
        self.close()

    async def __aenter__(self) -> Self:
        await self.get_async_httpx_client().__aenter__()
        return self

    async def __aexit__(self, *args: Any, **kwargs: Any) -> None:
        await self.aclose()

    def close(self) -> None:
        """Close the sync connections: the shared pool for the original, nothing for a child.

        Example::

            client.close()
        """
        if self._client is not None:
            self._client.close()
        if self._owner:
            self._family.close_pool()

    async def aclose(self) -> None:
        """Close the async (and sync) connections this client opened.

        Example::

            await client.aclose()
        """
        if self._async_client is not None:
            await self._async_client.aclose()
        self.close()
