"""Errors raised by the client: one root, a subclass per status or cause.

::

    ServiceApiError                     page_number, start_page, items_yielded, resumable, at_page()
    ├── ApiStatusError                  status_code, headers, body, request, retry_after
    │   ├── BadRequestError             400: malformed request or missing account header
    │   ├── AuthenticationError         401; error, error_description
    │   │   ├── TokenExpiredError       401 for an expired token, still refused after a refresh
    │   │   └── InvalidCredentialsError /authenticate refused the client ID or secret
    │   ├── PermissionDeniedError       403: account not associated with the credentials
    │   ├── NotFoundError               404
    │   ├── RateLimitError              429
    │   └── ServerError                 5xx
    ├── ConfigurationError              a setting missing or unusable (a ValueError); variable
    ├── InvalidResponseError            the answer breaks the contract (a ValueError)
    │   ├── TokenResponseError          unusable token response
    │   └── InconsistentPageError       a page contradicts the request or earlier pages
    └── ApiConnectionError              no answer: refused, reset, DNS or TLS failed
        └── ApiTimeoutError             no answer in time (a TimeoutError)

Secrets are removed by position, never by searching for their text: an error keeps a
copy of the request without body and with the secret headers' values replaced, and a
JSON body's credential fields are blanked where they stand.
"""

import contextlib
import copyreg
import json
import re
import socket
import ssl
from typing import Any

import httpx

from service_api._retry import parse_retry_after

# Bodies are kept for diagnosis but bounded: a misbehaving server may send megabytes.
MAX_BODY_CHARS = 2048
#: Request extension marking ``POST /authenticate`` (it carries the secret, may be
#: retried whatever the outer request, never carries the account header).
TOKEN_REQUEST_EXTENSION = "service_api.token_request"  # noqa: S105 - a name, not a secret
#: Headers whose values are secrets (tokens); every other header is kept as sent.
SECRET_HEADERS = frozenset({"authorization", "proxy-authorization", "cookie"})
_SECRET_FIELDS = frozenset(
    {"access_token", "refresh_token", "id_token", "client_secret"}
)


class ServiceApiError(Exception):
    """Root of every error the client raises.

    An error that stopped an iteration says where: ``page_number`` (the page that
    failed), ``start_page`` (resume there) and ``items_yielded``; all ``None`` outside
    an iteration. ``request`` is the request that failed, without body or secret
    header values (``None`` when unknown).
    """

    page_number: int | None = None
    start_page: int | None = None
    items_yielded: int | None = None

    def __init__(self, message: str, *, request: httpx.Request | None = None) -> None:
        super().__init__(message)
        self.request = None if request is None else redacted_request(request)

    @property
    def resumable(self) -> bool:
        """Whether resuming at ``start_page`` can succeed: not after refused
        credentials, a denied account or a malformed request."""
        final = InvalidCredentialsError | PermissionDeniedError | BadRequestError
        return self.start_page is not None and not isinstance(self, final)

    def __reduce__(self) -> tuple[object, ...]:
        # Rebuilt without __init__, whose arguments differ per class: errors cross
        # process pools (multiprocessing, concurrent.futures) whole.
        # ``args`` goes in the state too: OSError subclasses leave it to ``__init__``.
        state = {**vars(self), "args": self.args}
        return copyreg.__newobj__, (type(self), *self.args), state  # type: ignore[attr-defined]

    def at_page(self, page_number: int, *, items_yielded: int) -> None:
        """Record that this error stopped an iteration at ``page_number``."""
        self.page_number = page_number
        self.start_page = page_number
        self.items_yielded = items_yielded
        if self.resumable:
            self.add_note(f"resume with start_page={page_number}")


class ApiStatusError(ServiceApiError):
    """The service answered with an error status (``status_code``, ``headers``,
    ``body`` cut to ``MAX_BODY_CHARS``, ``request`` without secrets); without a
    ``response`` (in tests) only ``status_code`` is set."""

    def __init__(
        self,
        message: str,
        *,
        response: httpx.Response | None = None,
        status_code: int = 0,
    ) -> None:
        response = response or httpx.Response(status_code)
        request = None
        # A response built by hand may have no request.
        with contextlib.suppress(RuntimeError):
            request = response.request
        super().__init__(message, request=request)
        self.status_code = response.status_code
        self.headers = httpx.Headers(response.headers)
        # Credential fields of a JSON body are blanked where they stand.
        body = response.text
        data = json_object(body)
        hidden = _SECRET_FIELDS & data.keys()
        if hidden:
            body = json.dumps(
                {k: "[redacted]" if k in hidden else v for k, v in data.items()}
            )
        self.body = body[:MAX_BODY_CHARS]

    @property
    def retry_after(self) -> float | None:
        """Seconds the server asked to wait (``Retry-After``), or ``None``."""
        return parse_retry_after(self.headers.get("retry-after"))

    def _field(self, name: str) -> str | None:
        # A string field of the body, if it is a JSON object.
        value = json_object(self.body).get(name)
        return value if isinstance(value, str) else None


class BadRequestError(ApiStatusError):
    """400: a malformed request, or the account header is missing."""


class AuthenticationError(ApiStatusError):
    """401, or refused client credentials; ``error`` and ``error_description`` come
    from ``www-authenticate`` or else an OAuth error body."""

    @property
    def error(self) -> str | None:
        """The OAuth error code (``invalid_token``, ``invalid_client``), if any."""
        return challenge(self.headers, "error") or self._field("error")

    @property
    def error_description(self) -> str | None:
        """The OAuth error description, if any."""
        return challenge(self.headers, "error_description") or self._field(
            "error_description"
        )


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

    def __init__(self, message: str, *, page_number: int) -> None:
        super().__init__(message)
        self.page_number = page_number


class ApiConnectionError(ServiceApiError, ConnectionError):
    """No answer: the connection was refused, reset or dropped, the host name is
    unknown, or TLS failed."""


class ApiTimeoutError(ApiConnectionError, TimeoutError):
    """No answer within the configured timeout, after retries."""


#: The error class of each status that has its own (401: see ``TokenExpiredError``).
_STATUS_ERRORS = {
    400: BadRequestError,
    401: AuthenticationError,
    403: PermissionDeniedError,
    404: NotFoundError,
    429: RateLimitError,
}


class PaginationWarning(UserWarning):
    """A page misbehaved in a way the iteration absorbs and goes on.

    Example::

        warnings.simplefilter("error", service_api.PaginationWarning)  # be strict
    """


def redacted_request(request: httpx.Request) -> httpx.Request:
    """A copy of ``request``: method, URL and headers without secret values, no body."""
    headers = request.headers.multi_items()  # names in lower case
    headers = [
        (name, "[redacted]" if name in SECRET_HEADERS else v) for name, v in headers
    ]
    marker = {
        k: v for k, v in request.extensions.items() if k == TOKEN_REQUEST_EXTENSION
    }
    return httpx.Request(
        request.method, request.url, headers=headers, extensions=marker
    )


def is_token_request(request: httpx.Request | None) -> bool:
    """Whether ``request`` (or its redacted copy) is ``POST /authenticate``."""
    return request is not None and TOKEN_REQUEST_EXTENSION in request.extensions


def challenge(headers: httpx.Headers, name: str) -> str | None:
    """The parameter ``name`` of the ``www-authenticate`` header (its first occurrence,
    quoted or not, RFC 9110 section 11.2), or ``None``; never raises.

    Example::

        challenge(httpx.Headers({"www-authenticate": 'Bearer error="x"'}), "error")  # "x"
    """
    # Headers longer than 4096 characters are not worth reading; the cap keeps parsing cheap.
    param = rf'(?<![\w!#$%&\'*+.^`|~-]){name}\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^\s,"]+))'
    found = re.search(param, headers.get("www-authenticate", "")[:4096], re.IGNORECASE)
    if found is None:
        return None
    return found[2] or re.sub(r"\\(.)", r"\1", found[1])


def json_object(text: str) -> dict[str, object]:
    """``text`` parsed if it is a JSON object, else empty (a hostile body never raises)."""
    with contextlib.suppress(ValueError, RecursionError):
        if isinstance(data := json.loads(text), dict):
            return data
    return {}


def error_from_response(response: httpx.Response) -> ApiStatusError:
    """The typed error for an error ``response`` whose (bounded) body was read; no I/O.

    Example::

        raise error_from_response(response)   # e.g. NotFoundError for a 404
    """
    status = response.status_code
    request = response.request
    read = AuthenticationError("", response=response)  # the headers and body, read once
    cls = _STATUS_ERRORS.get(status, ServerError if status >= 500 else ApiStatusError)
    if (
        cls is AuthenticationError
        and "expired" in (read.error_description or "").lower()
    ):
        cls = TokenExpiredError
    # What the server said: the body's title and detail, the OAuth code and description.
    said = [
        read._field("title"),
        read._field("detail"),
        read.error,
        read.error_description,
    ]
    parts = [part[:200] for part in said if part]
    message = f"{status} {response.reason_phrase or 'error'} for {request.method} {request.url}"
    if parts:
        message += ": " + "; ".join(parts)
    # Advice only where it applies: the prefix is absent from the URL, the header was not sent.
    if status == 404 and "/public/v3/" not in request.url.path:
        message += "; the base URL probably lacks its /public/v3 prefix"
    if status == 400 and "x-service-account-id" not in request.headers:
        message += "; no account header was sent: pass account_id= or use client.with_account()"
    return cls(message, response=response)


#: Causes retrying cannot heal: a TLS failure (a wrong scheme or certificate) and a
#: failed host name lookup.
LASTING_CAUSES = (ssl.SSLError, socket.gaierror)


def cause_of(exc: BaseException | None, kinds: Any) -> BaseException | None:
    """The first exception of ``kinds`` (a class or a tuple of them) in the chain of
    causes of ``exc``, itself included, or ``None``.

    Example::

        cause_of(exc, ConnectionRefusedError)   # nothing listens at that host and port
    """
    while exc is not None and not isinstance(exc, kinds):
        exc = exc.__cause__ or exc.__context__
    return exc


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
    quiet = not str(exc) or isinstance(
        exc, httpx.LocalProtocolError | httpx.UnsupportedProtocol
    )
    detail = type(exc).__name__ if quiet else f"{type(exc).__name__}: {exc}"
    cause = cause_of(exc, LASTING_CAUSES)
    if isinstance(cause, ssl.SSLError):
        detail = (
            "TLS failed: an https:// URL for a plain-HTTP server, or a bad certificate"
        )
    elif isinstance(cause, socket.gaierror):
        detail = f"unknown host, the name lookup failed: {cause.strerror}; check the base URL"
    if not isinstance(exc, httpx.TransportError):
        return InvalidResponseError(
            f"unusable answer{where} ({detail})", request=request
        )
    if isinstance(exc, httpx.TimeoutException):
        return ApiTimeoutError(f"no answer in time{where} ({detail})", request=request)
    return ApiConnectionError(f"no answer{where} ({detail})", request=request)
