"""Errors raised by the client; the tree and what each carries is in the README ("Errors").

Every error derives from :class:`ServiceApiError`. Status errors share one
``__init__(message, *, response)`` that keeps a redacted copy of the request, the
status, the headers and a bounded, redacted body; what can be read from those
(``retry_after``, ``request_id``, the OAuth ``error``, ``expired_at``) are properties.
Secrets are removed by position, never by searching for their text: the request
copy has no body and no credential header values, and a JSON body's credential
fields are blanked.
"""

from __future__ import annotations

import contextlib
import datetime
import json
import ssl
from typing import Any

import httpx

from service_api._retry import parse_retry_after
from service_api._www_authenticate import WwwAuthenticate, parse_www_authenticate

# Bodies are kept for diagnosis but bounded: a misbehaving server may send megabytes.
MAX_BODY_CHARS = 2048
#: Request extension marking ``POST /authenticate`` (it carries the secret, may be
#: retried whatever the outer request, never carries the account header).
TOKEN_REQUEST_EXTENSION = "service_api.token_request"  # noqa: S105 - a name, not a secret
# Credential headers (values replaced) and JSON body fields (values blanked).
CREDENTIAL_HEADERS = frozenset({"authorization", "x-service-account-id", "cookie"})
_SECRET_FIELDS = frozenset({"access_token", "refresh_token", "id_token", "client_secret"})


class ServiceApiError(Exception):
    """Root of every error the client raises; see the README for the tree.

    An error that stopped an iteration says where: ``page_number`` (the page that
    failed), ``start_page`` (resume there) and ``items_yielded``; all ``None`` outside
    an iteration. ``request`` is the request that failed, without body or credential
    header values (``None`` when unknown).
    """

    page_number: int | None = None
    start_page: int | None = None
    items_yielded: int | None = None

    def __init__(self, message: str, *, request: httpx.Request | None = None) -> None:
        super().__init__(message)
        self.request = request and redacted_request(request)

    @property
    def resumable(self) -> bool:
        """Whether resuming at ``start_page`` can succeed: not after refused
        credentials, a denied account or a malformed request."""
        return self.start_page is not None and not isinstance(
            self, InvalidCredentialsError | PermissionDeniedError | BadRequestError
        )

    def __reduce__(self) -> tuple[Any, ...]:
        # Rebuilt without __init__, whose arguments differ per class: errors cross
        # process pools (multiprocessing, concurrent.futures) whole.
        return _rebuild, (type(self), self.args, self.__dict__)

    def at_page(self, page_number: int, *, items_yielded: int) -> None:
        """Record that this error stopped an iteration at ``page_number``."""
        self.page_number = self.start_page = page_number
        self.items_yielded = items_yielded
        if self.resumable:
            self.add_note(f"resume with start_page={page_number}")


class ApiStatusError(ServiceApiError):
    """The service answered with an error status (``status_code``, ``headers``,
    ``body`` cut to ``MAX_BODY_CHARS``, ``request`` without credentials); without a
    ``response`` (in tests) only ``status_code`` is set."""

    def __init__(
        self, message: str, *, response: httpx.Response | None = None, status_code: int = 0
    ) -> None:
        request = None
        with contextlib.suppress(RuntimeError):  # a response built by hand may have none
            request = response.request if response is not None else None
        super().__init__(message, request=request)
        self.status_code = status_code or (response.status_code if response else 0)
        self.headers = httpx.Headers(response.headers if response else None)
        self.body = _redacted_body(response) if response else ""

    @property
    def retry_after(self) -> float | None:
        """Seconds the server asked to wait (``Retry-After``), or ``None``."""
        return parse_retry_after(self.headers.get("retry-after"))

    @property
    def request_id(self) -> str | None:
        """The server's id of the failed request (header ``x-request-id``, a guess: the
        API documents none), cut to 200 printable characters, to quote to its support;
        ``None`` when not sent.

        Example::

            except service_api.ApiStatusError as exc:
                log.error("failed, request id %s", exc.request_id)
        """
        # The API documents no such header: this is the most common name (``x-assumed``
        # in openapi.yaml says so too).
        value = self.headers.get("x-request-id", "").strip()[:200]
        return "".join(c for c in value if c.isprintable()) or None


class BadRequestError(ApiStatusError):
    """400: a malformed request, or the account header is missing."""


class AuthenticationError(ApiStatusError):
    """401, or refused client credentials; ``error`` and ``error_description`` come
    from ``www-authenticate`` or an OAuth error body."""

    @property
    def challenge(self) -> WwwAuthenticate:
        """The parsed ``www-authenticate`` header."""
        return parse_www_authenticate(self.headers.get("www-authenticate"))

    @property
    def error(self) -> str | None:
        """The OAuth error code (``invalid_token``, ``invalid_client``), if any."""
        return self.challenge.error or _body_field(self.body, "error")

    @property
    def error_description(self) -> str | None:
        """The OAuth error description, if any."""
        return self.challenge.error_description or _body_field(self.body, "error_description")

    @property
    def expired_at(self) -> datetime.datetime | None:
        """When the token expired (UTC, as the server wrote it), or ``None``."""
        return self.challenge.expired_at


class TokenExpiredError(AuthenticationError):
    """401 for an expired token, still refused after a refresh."""


class InvalidCredentialsError(AuthenticationError):
    """``POST /authenticate`` refused the client ID or client secret."""


class PermissionDeniedError(ApiStatusError):
    """403: the credentials are not associated with the account in the account header."""


class NotFoundError(ApiStatusError):
    """404: no such resource (or a base URL without its ``/public/v3`` prefix)."""


class RateLimitError(ApiStatusError):
    """429: too many requests, after the retries the policy allows."""


class ServerError(ApiStatusError):
    """5xx: the service failed or is unavailable, after the retries the policy allows."""


class ConfigurationError(ServiceApiError, ValueError):
    """A setting is missing or unusable; ``variable`` names the environment variable
    it was (or would have been) read from.

    Example::

        try:
            client = service_api.Client()
        except service_api.ConfigurationError as exc:
            sys.exit(f"set {exc.variable}")
    """

    def __init__(self, message: str, variable: str) -> None:
        super().__init__(message)
        self.variable = variable


class InvalidResponseError(ServiceApiError, ValueError):
    """The answer breaks the API's contract: not JSON, a field missing, a bad page."""


class TokenResponseError(InvalidResponseError):
    """The answer of ``POST /authenticate`` is unusable (never shows the token)."""


class InconsistentPageError(InvalidResponseError):
    """A page contradicts the request or the pages before it."""

    def __init__(
        self, message: str, *, page_number: int, request: httpx.Request | None = None
    ) -> None:
        super().__init__(message, request=request)
        self.page_number = page_number


class ApiConnectionError(ServiceApiError, ConnectionError):
    """No answer: the connection was refused, reset, dropped, or TLS failed."""


class ApiTimeoutError(ApiConnectionError, TimeoutError):
    """No answer within the configured timeout, after retries."""


def _rebuild(
    cls: type[ServiceApiError], args: tuple[Any, ...], state: dict[str, Any]
) -> ServiceApiError:
    error = cls.__new__(cls, *args)
    error.args = args
    error.__dict__.update(state)
    return error


class PaginationWarning(UserWarning):
    """A page misbehaved in a way the iteration absorbs and goes on.

    Example::

        warnings.simplefilter("error", service_api.PaginationWarning)  # be strict
    """


def redacted_request(request: httpx.Request) -> httpx.Request:
    """A copy of ``request``: method, URL and headers without credential values, no body."""
    headers = request.headers.copy()
    for name in CREDENTIAL_HEADERS & headers.keys():  # keys are lower case
        headers[name] = "[redacted]"
    marker = {k: v for k, v in request.extensions.items() if k == TOKEN_REQUEST_EXTENSION}
    return httpx.Request(request.method, request.url, headers=headers, extensions=marker)


def is_token_request(request: httpx.Request | None) -> bool:
    """Whether ``request`` (or its redacted copy) is ``POST /authenticate``."""
    return request is not None and TOKEN_REQUEST_EXTENSION in request.extensions


def _json_object(text: str) -> dict[str, Any]:
    """``text`` parsed if it is a JSON object, else empty (a hostile body never raises)."""
    with contextlib.suppress(ValueError, RecursionError):
        if isinstance(data := json.loads(text), dict):
            return data
    return {}


def _redacted_body(response: httpx.Response) -> str:
    try:
        text = response.text
    except httpx.ResponseNotRead:  # a streamed answer nobody read: no body to show
        return ""
    if _SECRET_FIELDS & (data := _json_object(text)).keys():
        text = json.dumps({k: "[redacted]" if k in _SECRET_FIELDS else v for k, v in data.items()})
    return text[:MAX_BODY_CHARS]


def _body_field(body: str, name: str) -> str | None:
    value = _json_object(body).get(name)
    return value[:200] if isinstance(value, str) else None


_STATUS_ERRORS: dict[int, type[ApiStatusError]] = {
    400: BadRequestError,
    401: AuthenticationError,
    403: PermissionDeniedError,
    404: NotFoundError,
    429: RateLimitError,
}


def error_from_response(response: httpx.Response, *, hint: str = "") -> ApiStatusError:
    """The typed error for an error ``response`` whose (bounded) body was read; no I/O.

    Example::

        raise error_from_response(response)   # e.g. NotFoundError for a 404
    """
    status, request = response.status_code, response.request
    cls = _STATUS_ERRORS.get(status, ServerError if status >= 500 else ApiStatusError)
    message = f"{status} {response.reason_phrase or 'error'} for {request.method} {request.url}"
    challenge = parse_www_authenticate(response.headers.get("www-authenticate"))
    if status == 401 and challenge.says_expired:
        cls = TokenExpiredError
        expired = challenge.expired_at
        message += ": the token expired" + (f" at {expired.isoformat()}" if expired else "")
    elif status == 401 and challenge.error:
        message += f" ({challenge.error})"
    # A first, empty error reads the body and headers: the real one is built with its
    # whole message, as the leak guard watching every error's message needs.
    read = cls("", response=response)
    fields = ("title", "detail", "error", "error_description")
    if parts := [value for key in fields if (value := _body_field(read.body, key))]:
        message += ": " + "; ".join(parts)
    if read.request_id is not None:
        hint += f" (request id {read.request_id})"
    return cls(message + hint, response=response)


def is_tls_error(exc: BaseException) -> bool:
    """Whether ``exc`` was caused by TLS (a wrong scheme or certificate): it never heals."""
    seen: BaseException | None = exc
    while seen is not None and not isinstance(seen, ssl.SSLError):
        seen = seen.__cause__ or seen.__context__
    return seen is not None


def error_from_httpx(
    exc: httpx.HTTPError, *, request: httpx.Request | None = None
) -> ApiConnectionError | InvalidResponseError:
    """The typed error for an ``httpx`` error, for the client and pagination alike.

    Only the exception's class is shown for protocol errors of our own request (their
    text can quote header values); OS-level connection errors keep their text.

    Example::

        except httpx.HTTPError as exc:
            raise error_from_httpx(exc) from exc
    """
    with contextlib.suppress(RuntimeError):  # raised when the error has no request
        request = exc.request
    where = f" for {request.method} {request.url}" if request is not None else ""
    detail = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
    if is_tls_error(exc):
        detail = "TLS failed (an https:// base URL for a plain-HTTP server, or a bad certificate)"
    elif isinstance(exc, httpx.LocalProtocolError | httpx.UnsupportedProtocol):
        detail = type(exc).__name__
    if isinstance(exc, httpx.TimeoutException):
        return ApiTimeoutError(f"no answer in time{where} ({detail})", request=request)
    if isinstance(exc, httpx.TransportError):
        return ApiConnectionError(f"no answer{where} ({detail})", request=request)
    return InvalidResponseError(f"unusable answer{where} ({detail})", request=request)
