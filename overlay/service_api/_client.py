"""The client: a generated ``service_api_client.Client`` that authenticates itself.

Layers, top down: the retry loop (``send``, deciding with
``_RetryingClient._next_delay``), the auth flow (:class:`~service_api._auth.TokenAuth`),
redirects, then the transport httpx routes the URL to (direct, a proxy from ``proxy=`` or
the environment, a mount): one of the pools the client shares with the clients made from
it (:class:`~service_api._pools.SharedResources`: sync, or those of the running event
loop) or the user's transport, behind the guard of :mod:`service_api._transport` (origin
guard, size bound, rate limit). Each retry attempt therefore asks the auth flow for the
token of that moment. The behaviour is documented in docs/guides/client.md ("Every
setting and its default") and docs/guides/errors.md.
"""

from __future__ import annotations

import asyncio
import importlib.metadata
import itertools
import os
import sys
import time
from collections.abc import Callable, Container, Mapping
from types import EllipsisType
from typing import Any, NoReturn, Self, cast

import attrs
import httpx

import service_api_client
from service_api import _errors as errors
from service_api._auth import TokenAuth
from service_api._logs import log_response, logger
from service_api._pagination import Pager
from service_api._pools import SharedResources
from service_api._protocols import AnswerObserver, TokenStore
from service_api._retry import (
    RetryPolicy,
    first_contact_policy,
    may_send_again,
    retry_delay,
    sleep_for,
)
from service_api._transport import ACCOUNT_HEADER, DEFAULT_MAX_RESPONSE_BYTES
from service_api_client.drift import Drift, DriftLog

#: The variables ``Client()`` reads for a setting it is not given (as the CLI does).
ENV_BASE_URL = "SERVICE_API_BASE_URL"
ENV_CLIENT_ID = "SERVICE_API_CLIENT_ID"
ENV_CLIENT_SECRET = "SERVICE_API_CLIENT_SECRET"  # noqa: S105 - a variable name, not a secret
ENV_ACCOUNT_ID = "SERVICE_API_ACCOUNT_ID"

try:
    _VERSION = importlib.metadata.version("service-api")
except importlib.metadata.PackageNotFoundError:  # run from a source tree, not installed
    _VERSION = "0+unknown"
_PYTHON = f"{sys.version_info.major}.{sys.version_info.minor}"
#: The ``User-Agent`` sent unless the user gives one; ``user_agent=`` is appended.
_AGENT = f"service-api/{_VERSION} python/{_PYTHON} httpx/{httpx.__version__}"


#: What one attempt ends with, short of a success: an error answer or an exception.
_Outcome = httpx.Response | httpx.HTTPError | errors.ServiceApiError


class _RetryingClient:
    """The retry decision both httpx clients of a :class:`Client` share (sync and async
    differ only in the sleep), with the client's retry policy and its shared resources:
    the token flow, and as transports the pools of each route httpx would take (from
    ``proxy``, ``transport`` and the environment's proxies), each behind the guard of
    :mod:`service_api._transport` (origin guard, size bound, rate limit)."""

    #: The class of the connection pools this httpx client sends through.
    _pool_class: type

    def __init__(self, client: Client) -> None:
        self._shared = client._shared
        self._policy = client._policy
        settings = {
            "base_url": client._base_url,
            "headers": client._headers,
            "timeout": client._timeout,
        }
        super().__init__(**settings, **self._shared.client_args(self._pool_class))

    def _next_delay(
        self, request: httpx.Request, attempt: int, outcome: _Outcome
    ) -> float:
        """Seconds before the next attempt after ``outcome`` under the client's policy (no
        I/O but the WARNING line of a retry and the test sleep switch); raises the typed
        error when there is none.

        A connection refused before the service ever answered the client (nothing may
        listen at the base URL) has the short budget of :func:`first_contact_policy`
        and ends in an error that says so; once the service has answered, a refused
        connection (a service restarting) has the whole policy."""
        error: errors.ServiceApiError
        cause: BaseException | None = None
        if isinstance(outcome, httpx.Response):
            error = errors.error_from_response(outcome)
        elif isinstance(outcome, httpx.HTTPError):
            error = errors.error_from_httpx(outcome, request=request)
            cause = outcome
        else:
            error = outcome
            cause = outcome.__cause__
        # The request that failed: the token request, when the token was wanted.
        failed = error.request or request
        refused = errors.cause_of(cause, ConnectionRefusedError) is not None
        nothing_listens = refused and not self._shared.answered.is_set()
        policy = first_contact_policy(self._policy) if nothing_listens else self._policy
        # A failed token request never sent the request it was for: retrying it is safe.
        safe = errors.is_token_request(failed) or may_send_again(
            request.method, outcome
        )
        heals = errors.cause_of(cause, errors.LASTING_CAUSES) is None
        delay = None
        if (
            safe
            and heals
            and isinstance(error, errors.ApiStatusError | errors.ApiConnectionError)
        ):
            delay = retry_delay(
                policy,
                attempt,
                status=getattr(error, "status_code", None),
                retry_after=getattr(error, "retry_after", None),
            )
        if delay is None and nothing_listens:
            raise errors.ApiConnectionError(
                f"nothing listens at the base URL {self._shared.auth.base_url} "
                f"(connection refused for {failed.method} {failed.url})",
                request=failed,
            ) from cause
        if delay is None:
            raise error from cause
        # A WARNING: a script that set no logging up still says why it waits. The
        # figures stay arguments of the record, for handlers that count retries.
        logger.warning(
            "retrying %s %s after %s in %.2f s (retry %d of %d)",
            failed.method,
            failed.url.path,
            type(error).__name__,
            delay,
            attempt + 1,
            policy.max_retries,
        )
        return sleep_for(delay)


class _ServiceHttpxClient(_RetryingClient, httpx.Client):
    """``httpx.Client`` whose ``send`` retries above authentication and raises typed errors."""

    _pool_class = httpx.HTTPTransport

    def send(self, request: httpx.Request, **kwargs: Any) -> httpx.Response:
        request.read()  # a body read once can be sent again
        attempts = itertools.count()
        while True:
            outcome: _Outcome
            try:
                started = time.monotonic()
                outcome = super().send(request, **kwargs)
                log_response(outcome, time.monotonic() - started)
                if self._shared.observe:
                    self._shared.observe(outcome)
                if outcome.status_code < 400:
                    return outcome
                outcome.read()  # an error body: bounded by the transport
            except (httpx.HTTPError, errors.ServiceApiError) as exc:
                outcome = exc
            time.sleep(self._next_delay(request, next(attempts), outcome))


class _ServiceAsyncHttpxClient(_RetryingClient, httpx.AsyncClient):
    """Async twin of :class:`_ServiceHttpxClient`; differs only in the awaits."""

    _pool_class = httpx.AsyncHTTPTransport

    async def send(self, request: httpx.Request, **kwargs: Any) -> httpx.Response:
        await request.aread()
        attempts = itertools.count()
        while True:
            outcome: _Outcome
            try:
                started = time.monotonic()
                outcome = await super().send(request, **kwargs)
                log_response(outcome, time.monotonic() - started)
                if self._shared.observe:
                    self._shared.observe(outcome)
                if outcome.status_code < 400:
                    return outcome
                await outcome.aread()
            except (httpx.HTTPError, errors.ServiceApiError) as exc:
                outcome = exc
            await asyncio.sleep(self._next_delay(request, next(attempts), outcome))


def _check_httpx_args(args: dict[str, Any]) -> None:
    """Refuse what would reach the network around the guard, retries and size bound, or
    silently never be used."""
    around = [name for name in ("app", "auth", "base_url", "proxies") if name in args]
    if around:
        names = ", ".join(repr(name) for name in around)
        raise TypeError(
            f"httpx_args must not contain {names} (docs: No way around the guard)"
        )
    if args.get("transport") is not None and args.get("proxy") is not None:
        raise TypeError(
            "'transport' and 'proxy' exclude each other (pass proxy or httpx_args "
            "'transport', not both: a proxy route never reaches it)"
        )
    mounts = args.get("mounts") or {}
    kinds = httpx.BaseTransport | httpx.AsyncBaseTransport | None
    if not isinstance(mounts, Mapping) or not all(
        isinstance(transport, kinds) for transport in mounts.values()
    ):
        raise TypeError(
            "httpx_args 'mounts' must map URL patterns to httpx transports or None"
        )


def _setting(value: str | None, variable: str) -> str:
    """``value`` if given, else the variable's: unset or blank is a
    :class:`ConfigurationError` naming it."""
    if value is None:
        value = os.environ.get(variable, "").strip()
        if not value:
            name = variable.removeprefix("SERVICE_API_").lower()
            raise errors.ConfigurationError(
                f"no {name}: pass {name}= or set {variable}", variable
            )
    return value


def _base_url(given: str | None) -> str:
    """The base URL given or read from its variable: a bad one is a
    :class:`ConfigurationError` (naming the variable when read from it)."""
    base_url = _setting(given, ENV_BASE_URL)
    try:
        url = httpx.URL(base_url)
    except httpx.InvalidURL:
        url = httpx.URL()
    # No user:password@ either: the URL is quoted in messages and logs.
    if (
        url.scheme not in ("http", "https")
        or not url.host
        or {"?", "#", "@"} & set(base_url)
    ):
        where = "" if given else f"{ENV_BASE_URL}: "
        raise errors.ConfigurationError(
            f"{where}base_url must be an absolute http(s) URL, no query, no fragment, "
            "no user@",
            ENV_BASE_URL,
        )
    return base_url


def _account_id(given: str | EllipsisType | None) -> str | None:
    """The account given, else that of its variable (unset or blank: none)."""
    if not isinstance(given, EllipsisType):
        return given
    account_id = os.environ.get(ENV_ACCOUNT_ID, "").strip() or None
    if account_id and "," in account_id:  # the CLI's list form
        raise errors.ConfigurationError(
            f"{ENV_ACCOUNT_ID} names several accounts: pass account_id=, and "
            "with_account() for others",
            ENV_ACCOUNT_ID,
        )
    return account_id


def _policy(
    policy: RetryPolicy, max_retries: int | None, retry: RetryPolicy | None
) -> RetryPolicy:
    """``retry``, or ``policy`` with ``max_retries`` if given (validated there); not both."""
    if max_retries is not None and retry is not None:
        raise TypeError("pass max_retries or retry, not both")
    if max_retries is not None:
        return attrs.evolve(policy, max_retries=max_retries)
    return retry or policy


def _quota(option: str, url: str | None) -> Any:
    """``service_api.quota``, imported when an option needs it; without its dependencies,
    a :class:`ConfigurationError` naming the extra to install (as httpx does for h2)."""
    try:
        from service_api import quota
    except ImportError as exc:
        missing = (exc.name or "").partition(".")[0]
        if missing not in ("pyrate_limiter", "filelock", "redis"):
            raise
        extra = "redis" if (url or "").lower().startswith("redis") else "quota"
        raise errors.ConfigurationError(
            f"{option}= needs the [{extra}] extra: pip install 'service-api[{extra}]'",
            f"SERVICE_API_{option.upper()}",
        ) from None
    return quota


class Client(service_api_client.Client):
    """A client of the service that keeps its bearer token fresh (every policy and default:
    docs/guides/client.md, "Every setting and its default").

    Pass it to any generated endpoint function, sync or async, from any thread or
    event loop. It authenticates lazily and shares one token between threads, event
    loops and :meth:`with_account` children; retries per ``retry`` (or
    ``RetryPolicy(max_retries=...)``, not both), each attempt with the token of that
    moment; honours ``proxy`` or the ``*_PROXY`` environment; raises the typed errors.
    Each retry waited out is logged at WARNING on the ``service_api`` logger. A connection
    refused before the service ever answered gives up after at most 3 short retries,
    saying nothing listens at the base URL (a wrong port, most likely); once it has
    answered, refused connections have the whole policy (a restarting service).

    A setting not given is read from ``SERVICE_API_BASE_URL``, ``SERVICE_API_CLIENT_ID``,
    ``SERVICE_API_CLIENT_SECRET`` or ``SERVICE_API_ACCOUNT_ID`` (a missing one of the
    first three is a :class:`~service_api.ConfigurationError` naming it; an account not
    given nor set, or given as ``None``, means no account header). Every request
    sends ``User-Agent: service-api/<v> python/<x.y> httpx/<v>``, followed by
    ``user_agent`` when given; a ``User-Agent`` header of the user's replaces it whole.
    Transports given in ``httpx_args`` (``transport``, ``mounts``) sit behind the same
    origin guard, size bound and retries; arguments that would not are refused.

    The quota is one budget per integration, shared by every child, thread, task and
    event loop: ``rate_limit="adaptive"`` learns it from 429 answers, a number fixes it
    per minute, ``None`` (the default) leaves pacing to the service's 429s;
    ``rate_store="sqlite:///path"`` or ``"redis://host:port/db"`` shares it with other
    processes (at ``rate_limit``; learnt together when adaptive; 90 a minute when
    ``None``). ``token_store`` (a :class:`TokenStore`, ``"file:///path"`` or
    ``"redis://..."``) shares the token. ``observe``, an :class:`AnswerObserver`, is
    called with every answer read (``service_api_speccheck.Observer(path)`` keeps their
    shapes, never their values, for ``service-api spec check --from``). Drift from the
    spec (a field it does not declare, a value of another type, a null, a required field
    left out, a new enum value, a status it does not declare) is noticed in a sample of
    the answers unless ``check_drift=False``: each place said once at WARNING, handed to
    ``on_drift`` once, and listed by :attr:`drift`.

    Example::

        from service_api_client.api.shipments import list_shipments

        with service_api.Client(url, "my-client", secret, "acct-1") as client:
            page = list_shipments.sync(client=client, page_number=2)

        client = service_api.Client()   # all four settings from SERVICE_API_*
    """

    #: Whether this client made its shared resources (and closes its pools): not a
    #: client made from another by ``with_account()`` or ``with_options()``.
    _owner = False
    _policy: RetryPolicy

    def __init__(
        self,
        base_url: str | None = None,
        client_id: str | None = None,
        client_secret: str | None = None,
        account_id: str | EllipsisType | None = ...,
        *,
        refresh_skew: float = 60.0,
        max_retries: int | None = None,
        timeout: float | httpx.Timeout = 30.0,
        retry: RetryPolicy | None = None,
        rate_limit: float | str | None = None,
        rate_store: str | None = None,
        max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES,
        proxy: str | httpx.URL | httpx.Proxy | None = None,
        token_store: TokenStore | str | None = None,
        httpx_args: dict[str, Any] | None = None,
        user_agent: str | None = None,
        observe: AnswerObserver | None = None,
        on_drift: Callable[[Drift], object] | None = None,
        check_drift: bool = True,
    ) -> None:
        policy = _policy(RetryPolicy(), max_retries, retry)
        if max_response_bytes < 1:
            raise ValueError("max_response_bytes must be at least 1")
        url = _base_url(base_url)
        client_id = _setting(client_id, ENV_CLIENT_ID)
        secret = _setting(client_secret, ENV_CLIENT_SECRET)
        account_id = _account_id(account_id)
        args = dict(httpx_args or {})
        if proxy is not None:  # routed as httpx would, through the guarded pools
            args["proxy"] = proxy
        _check_httpx_args(args)
        timeout = httpx.Timeout(timeout)
        if isinstance(token_store, str):  # a shared token named by URL
            quota = _quota("token_store", token_store)
            token_store = cast(
                TokenStore, quota.token_store(token_store, key=client_id)
            )
        auth = TokenAuth(
            url,
            client_id,
            secret,
            skew=refresh_skew,
            timeout=timeout,
            token_store=token_store,
        )
        limiter = None
        if rate_limit is not None or rate_store is not None:
            quota = _quota("rate_store" if rate_store else "rate_limit", rate_store)
            limiter = quota.limiter(rate_limit, rate_store, key=client_id)
        headers = dict(args.pop("headers", None) or {})
        agent = httpx.Headers(headers).get("user-agent")
        if agent is None:  # a User-Agent of the user's wins whole
            agent = f"{_AGENT} {user_agent or ''}".strip()
            headers["User-Agent"] = agent
        shared = SharedResources(
            auth,
            args,
            limiter=limiter,
            max_response_bytes=max_response_bytes,
            user_agent=agent,
        )
        if observe is not None and not callable(observe):
            raise TypeError(f"observe must be called with each answer: {observe!r}")
        shared.observe = observe
        shared.drift = DriftLog(on_drift, enabled=check_drift)
        self._setup(shared, account_id, headers=headers, timeout=timeout, policy=policy)
        self._owner = True

    def _setup(
        self,
        shared: SharedResources,
        account_id: str | None,
        *,
        headers: Mapping[str, str],
        timeout: httpx.Timeout,
        policy: RetryPolicy,
    ) -> Self:
        """Set this client up on ``shared`` (a new one's, or those of the client it is
        made from) for ``account_id``; the settings of its connections are the shared
        ones (``SharedResources.client_args``)."""
        headers = {k: v for k, v in headers.items() if k.lower() != ACCOUNT_HEADER}
        if account_id is not None:
            if not account_id or not account_id.isprintable():
                raise ValueError("account_id must be a non-empty printable string")
            headers[ACCOUNT_HEADER] = account_id
        super().__init__(
            base_url=shared.auth.base_url, headers=headers, timeout=timeout
        )
        self._shared = shared
        self._policy = policy
        self._account_id = account_id
        return self

    def _made_from_this(self, account_id: str | None, **settings: Any) -> Client:
        """A client sharing this one's resources, for ``account_id`` with the settings
        (``headers``, ``timeout``, ``policy``) of :meth:`_setup`: for
        :meth:`with_account` and :meth:`with_options`."""
        made = type(self).__new__(type(self))
        return made._setup(self._shared, account_id, **settings)

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(base_url={self._base_url!r}, "
            f"client_id={self._shared.auth.client_id!r}, account_id={self._account_id!r})"
        )

    @property
    def account_id(self) -> str | None:
        """The account sent in ``x-service-account-id``, or ``None``."""
        return self._account_id

    @property
    def retry_policy(self) -> RetryPolicy:
        """The retry policy in force for this client (see :meth:`with_options`)."""
        return self._policy

    def with_options(
        self,
        *,
        max_retries: int | None = None,
        retry: RetryPolicy | None = None,
        timeout: float | httpx.Timeout | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> Client:
        """A client like this one with other retries, timeout or extra headers.

        It shares this one's token, connection pools, rate limiter and account; only
        what is given changes, for the requests sent through it (the token request keeps
        the original client's own timeout and retries). A header replaces one of the same
        name whatever its case (``User-Agent`` included); an ``x-service-account-id``
        header sets its account. Make one for a single call or a single iteration; there
        is nothing to close.

        Example::

            patient = client.with_options(max_retries=5, timeout=60.0)
            page = list_shipments.sync(client=patient)
            for shipment in service_api.paginate(list_shipments, client.with_options(
                headers={"x-trace": "nightly"})): ...
        """
        given = dict(headers or {})
        names = httpx.Headers(given)
        account = names.get(ACCOUNT_HEADER, self._account_id)
        kept = {k: v for k, v in self._headers.items() if k.lower() not in names}
        return self._made_from_this(
            account,
            headers=kept | given,
            timeout=self._timeout if timeout is None else httpx.Timeout(timeout),
            policy=_policy(self._policy, max_retries, retry),
        )

    @property
    def drift(self) -> list[Drift]:
        """Where the answers read so far (by this client and those made from it) differ
        from the spec, by place, with counts: ``[Drift('Shipment.colour', ...)]``."""
        return self._shared.drift.findings

    def _answer(
        self, response: httpx.Response, operation: Any, success: Container[int]
    ) -> Any:
        """The door's answer, its status, headers and records checked for drift."""
        name = operation.__name__.rpartition(".")[2]
        headers = getattr(operation, "ANSWER_HEADERS", None)
        with self._shared.drift.answer(name, response, success, headers):
            return super()._answer(response, operation, success)

    def _pager(self, operation: Any, /, **options: Any) -> Any:
        """What the generated ``client.<tag>.list()`` returns."""
        return Pager(operation, self, **options)

    def _unexpected_answer(
        self, response: httpx.Response, cause: Exception | None = None
    ) -> errors.ServiceApiError:
        """What ``client.<tag>.<operation>()`` raises for an answer that is not its success:
        a status the operation does not declare (a 3xx, a 200 for a 201: :meth:`send`
        raised those of 400 and up) or a body it cannot read (``cause``)."""
        if cause is None:
            return errors.error_from_response(response)
        if isinstance(cause, errors.ServiceApiError):  # a body not JSON: its own error
            return cause
        request = response.request
        message = (
            f"{request.method} {request.url.path}: unreadable answer "
            f"({type(cause).__name__}: {cause})"
        )
        return errors.InvalidResponseError(message[:300], request=request)

    def with_account(self, account_id: str | None) -> Client:
        """A client for another account, sharing this one's token and pools.

        Example::

            list_shipments.sync(client=client.with_account("acct-2"))
        """
        return self._made_from_this(
            account_id,
            headers=self._headers,
            timeout=self._timeout,
            policy=self._policy,
        )

    def with_headers(self, headers: dict[str, str]) -> Client:
        """A client like this one that also sends ``headers`` (sharing token and pool)."""
        return self.with_options(headers=headers)

    def with_timeout(self, timeout: httpx.Timeout) -> Client:
        """A client like this one with another timeout (sharing token and pool)."""
        return self.with_options(timeout=timeout)

    def get_httpx_client(self) -> httpx.Client:
        """The ``httpx.Client`` the generated sync functions use (built on first use; it
        owns nothing, so a race builds a spare one at worst)."""
        self._client = self._client or _ServiceHttpxClient(self)
        return self._client

    def get_async_httpx_client(self) -> httpx.AsyncClient:
        """The ``httpx.AsyncClient`` the generated async functions use, in any event loop:
        each loop gets its own pool, shared with the clients made from this one (and the
        one it was made from) and closed by the original's :meth:`aclose` in that loop or
        when the loop ends."""
        self._async_client = self._async_client or _ServiceAsyncHttpxClient(self)
        return self._async_client

    def set_httpx_client(self, *args: Any, **kwargs: Any) -> NoReturn:
        """Not supported, nor are ``set_async_httpx_client`` and ``with_cookies`` (the API
        uses no cookies): they raise ``TypeError``; pass ``httpx_args`` to the client."""
        raise TypeError(
            "service_api.Client builds its httpx clients: pass httpx_args instead"
        )

    set_async_httpx_client = set_httpx_client
    with_cookies = set_httpx_client

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *args: Any, **kwargs: Any) -> None:
        self.close()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *args: Any, **kwargs: Any) -> None:
        await self.aclose()

    def close(self) -> None:
        """Close the connections: for the original, the shared sync pools (an event loop's
        pools close when the loop ends, or by :meth:`aclose` in it); for a client made
        from another (``with_account()``, ``with_options()``), nothing: it owns nothing."""
        if self._owner:
            self._shared.close()

    async def aclose(self) -> None:
        """As :meth:`close`; the original also closes the running loop's pools now."""
        if self._owner:
            await self._shared.aclose()
