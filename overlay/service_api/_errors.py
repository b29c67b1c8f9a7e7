"""Errors raised by the client.

Every error derives from :class:`ServiceApiError`, so one ``except`` clause
catches them all; each subclass carries what a caller needs to react, and
nothing secret (no token, no client secret, no ``Authorization`` header)::

    ServiceApiError
    ├── ApiStatusError                  the service answered with an error status
    │   ├── BadRequestError             400: malformed request or missing account header
    │   ├── AuthenticationError         401: token missing, unknown or refused twice
    │   │   └── TokenExpiredError       401 for an expired token (``expired_at``)
    │   ├── PermissionDeniedError       403: account not associated with the credentials
    │   ├── NotFoundError               404
    │   ├── RateLimitError              429 (``retry_after``)
    │   ├── ServerError                 5xx (``retry_after``)
    │   └── InvalidCredentialsError     /authenticate refused the client ID or secret
    ├── InvalidResponseError            the answer breaks the API's contract (a ValueError)
    │   ├── TokenResponseError          unusable token response (token_type, expires_in, ...)
    │   └── InconsistentPageError       a page contradicts the request or earlier pages
    └── ApiConnectionError              no answer: refused, reset, dropped (a ConnectionError)
        └── ApiTimeoutError             no answer in time (a TimeoutError)

    PaginationWarning (a UserWarning)   a page misbehaved in a way iteration can absorb

Example::

    try:
        page = list_shipments.sync(client=client)
    except service_api.RateLimitError as exc:
        print("slow down for", exc.retry_after, "seconds")
    except service_api.ServiceApiError as exc:
        print("failed:", exc)
"""

from __future__ import annotations

import datetime
from collections.abc import Mapping

import httpx

from service_api._retry import parse_retry_after
from service_api._www_authenticate import parse_www_authenticate

# Bodies are kept for diagnosis but bounded: a misbehaving server may send megabytes.
MAX_BODY_CHARS = 2048


class ServiceApiError(Exception):
    """Root of every error the client raises.

    An error that stopped an iteration (``paginate``, ``iter_pages`` and their async
    twins) is raised as itself, so ``except AuthenticationError`` around the loop
    catches a refused token, and it also says where the iteration stood:

    Attributes:
        page_number: the page that failed, or ``None`` outside an iteration.
        start_page: pass it as ``start_page`` to resume with exactly the items not yet
            yielded (the failed page is fetched again); ``None`` outside an iteration.
        items_yielded: how many items the iteration yielded before the failure.

    Example::

        try:
            for shipment in service_api.paginate(list_shipments, client):
                save(shipment)
        except service_api.ServiceApiError as exc:
            if exc.resumable:
                resume_from = exc.start_page
    """

    page_number: int | None = None
    start_page: int | None = None
    items_yielded: int | None = None

    @property
    def resumable(self) -> bool:
        """Whether resuming at ``start_page`` can succeed: not after refused client
        credentials, a denied account or a malformed request, which fail again the same
        way (a 401 on a page can be a token revoked meanwhile: resumable).

        Example::

            if exc.resumable: paginate(list_shipments, client, start_page=exc.start_page)
        """
        return self.start_page is not None and not isinstance(
            self,
            InvalidCredentialsError | PermissionDeniedError | BadRequestError,
        )

    def at_page(self, page_number: int, *, items_yielded: int) -> None:
        """Record that this error stopped an iteration at ``page_number``.

        Example::

            exc.at_page(3, items_yielded=100)   # exc.start_page == 3
        """
        self.page_number = page_number
        self.start_page = page_number
        self.items_yielded = items_yielded
        if self.resumable:
            self.add_note(f"resume with start_page={page_number}")


class ApiStatusError(ServiceApiError):
    """The service answered with an error status.

    Attributes:
        status_code: the HTTP status.
        headers: the response headers.
        body: the response body as text, cut to ``MAX_BODY_CHARS`` characters.
        request: the request that drew the answer (method and URL; its credential
            headers are never shown in messages).

    Example::

        except service_api.ApiStatusError as exc:
            if exc.status_code == 409: ...
    """

    def __init__(
        self,
        message: str,
        *,
        status_code: int,
        headers: Mapping[str, str] | None = None,
        body: str = "",
        request: httpx.Request | None = None,
    ) -> None:
        super().__init__(message)
        self.status_code = status_code
        self.headers: httpx.Headers = httpx.Headers(headers or {})
        self.body = body[:MAX_BODY_CHARS]
        self.request = request


class BadRequestError(ApiStatusError):
    """400: a malformed request, or the account header is missing.

    Example::

        except service_api.BadRequestError as exc:
            print(exc.body)
    """


class AuthenticationError(ApiStatusError):
    """401: the bearer token is missing, unknown, or refused even after a refresh.

    Attributes:
        error: the ``error`` parameter of ``www-authenticate`` (such as ``invalid_token``), if any.
        error_description: its ``error_description``, if any.

    Example::

        except service_api.AuthenticationError as exc:
            print(exc.error, exc.error_description)
    """

    def __init__(
        self,
        message: str,
        *,
        status_code: int = 401,
        headers: Mapping[str, str] | None = None,
        body: str = "",
        request: httpx.Request | None = None,
        error: str | None = None,
        error_description: str | None = None,
    ) -> None:
        super().__init__(
            message, status_code=status_code, headers=headers, body=body, request=request
        )
        self.error = error
        self.error_description = error_description


class TokenExpiredError(AuthenticationError):
    """401 for an expired token, still refused after a refresh.

    Attributes:
        expired_at: when the token expired, in UTC, as the server wrote it in
            ``www-authenticate``; ``None`` if it could not be read.

    Example::

        except service_api.TokenExpiredError as exc:
            print("expired at", exc.expired_at)
    """

    def __init__(
        self,
        message: str,
        *,
        status_code: int = 401,
        headers: Mapping[str, str] | None = None,
        body: str = "",
        request: httpx.Request | None = None,
        error: str | None = None,
        error_description: str | None = None,
        expired_at: datetime.datetime | None = None,
    ) -> None:
        super().__init__(
            message,
            status_code=status_code,
            headers=headers,
            body=body,
            request=request,
            error=error,
            error_description=error_description,
        )
        self.expired_at = expired_at


class PermissionDeniedError(ApiStatusError):
    """403: the credentials are not associated with the account in the account header.

    Example::

        except service_api.PermissionDeniedError:
            print("this integration cannot act for that account")
    """


class NotFoundError(ApiStatusError):
    """404: no such resource.

    Example::

        except service_api.NotFoundError: ...
    """


class RateLimitError(ApiStatusError):
    """429: too many requests, after the retries the policy allows.

    Attributes:
        retry_after: seconds the server asked to wait (``Retry-After``), or ``None``.

    Example::

        except service_api.RateLimitError as exc:
            time.sleep(exc.retry_after or 60)
    """

    def __init__(
        self,
        message: str,
        *,
        status_code: int = 429,
        headers: Mapping[str, str] | None = None,
        body: str = "",
        request: httpx.Request | None = None,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(
            message, status_code=status_code, headers=headers, body=body, request=request
        )
        self.retry_after = retry_after


class ServerError(ApiStatusError):
    """5xx: the service failed or is unavailable, after the retries the policy allows.

    Attributes:
        retry_after: seconds the server asked to wait (``Retry-After``), or ``None``.

    Example::

        except service_api.ServerError as exc:
            print(exc.status_code, exc.retry_after)
    """

    def __init__(
        self,
        message: str,
        *,
        status_code: int,
        headers: Mapping[str, str] | None = None,
        body: str = "",
        request: httpx.Request | None = None,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(
            message, status_code=status_code, headers=headers, body=body, request=request
        )
        self.retry_after = retry_after


class InvalidCredentialsError(ApiStatusError):
    """``POST /authenticate`` refused the client ID or client secret.

    Attributes:
        error: the OAuth 2 error code the service gave (such as ``invalid_client``), if any.

    Example::

        except service_api.InvalidCredentialsError as exc:
            print("check SERVICE_API_CLIENT_ID / SECRET:", exc.error)
    """

    def __init__(
        self,
        message: str,
        *,
        status_code: int,
        headers: Mapping[str, str] | None = None,
        body: str = "",
        request: httpx.Request | None = None,
        error: str | None = None,
    ) -> None:
        super().__init__(
            message, status_code=status_code, headers=headers, body=body, request=request
        )
        self.error = error


class InvalidResponseError(ServiceApiError, ValueError):
    """The service's answer breaks the API's contract: not JSON, a field missing or
    of the wrong type, an inconsistent page.

    Attributes:
        request: the request that drew the answer, if known.

    Example::

        except service_api.InvalidResponseError as exc:
            print("unexpected answer:", exc)
    """

    def __init__(self, message: str, *, request: httpx.Request | None = None) -> None:
        super().__init__(message)
        self.request = request


class TokenResponseError(InvalidResponseError):
    """The answer of ``POST /authenticate`` is unusable: no ``access_token``, a
    ``token_type`` other than Bearer, an ``expires_in`` that is not a sane integer.

    Example::

        except service_api.TokenResponseError as exc:
            print(exc)   # never contains the token itself
    """


class InconsistentPageError(InvalidResponseError):
    """A page contradicts the request or the pages before it: another page number or
    page size than asked for, an empty page before the end, a page that repeats items
    already yielded.

    Attributes:
        page_number: the page that was asked for.

    Example::

        except service_api.InconsistentPageError as exc:
            print("the server served a bad page", exc.page_number)
    """

    def __init__(
        self, message: str, *, page_number: int, request: httpx.Request | None = None
    ) -> None:
        super().__init__(message, request=request)
        self.page_number = page_number


class ApiConnectionError(ServiceApiError, ConnectionError):
    """No answer: the connection was refused, reset or dropped, after retries.

    Attributes:
        request: the request that got no answer, if known.

    Example::

        except service_api.ApiConnectionError:
            print("service unreachable")
    """

    def __init__(self, message: str, *, request: httpx.Request | None = None) -> None:
        super().__init__(message)
        self.request = request


class ApiTimeoutError(ApiConnectionError, TimeoutError):
    """No answer within the configured timeout, after retries.

    Example::

        except service_api.ApiTimeoutError:
            print("service too slow")
    """


class PaginationWarning(UserWarning):
    """A page misbehaved in a way the iteration absorbs and goes on: a ``next`` link
    to another origin, ``totalRecords`` changing mid-way, a page longer than asked
    for, items repeated from an earlier page (dropped), a ``page_size`` above 50.

    Example::

        import warnings
        warnings.simplefilter("error", service_api.PaginationWarning)  # be strict
    """


# Headers that carry credentials: replaced in the copies of requests kept by errors.
CREDENTIAL_HEADERS = ("authorization", "x-service-account-id", "cookie")


def redacted_request(request: httpx.Request) -> httpx.Request:
    """A copy of ``request`` (method, URL, headers) without credential values or body.

    Errors keep this copy, so an error logged with its attributes shows no token.
    """
    headers = httpx.Headers(
        [
            (name, "[redacted]" if name.lower() in CREDENTIAL_HEADERS else value)
            for name, value in request.headers.multi_items()
        ]
    )
    return httpx.Request(request.method, request.url, headers=headers)


def _response_text(response: httpx.Response) -> str:
    try:
        return response.text
    except (httpx.ResponseNotRead, httpx.StreamError, UnicodeDecodeError, LookupError):
        return ""


def _detail(response: httpx.Response, body: str) -> str:
    """A short human detail from a problem-details or OAuth error body, if any."""
    if "json" not in response.headers.get("content-type", ""):
        return ""
    try:
        data = response.json()
    except ValueError:
        return ""
    if not isinstance(data, dict):
        return ""
    parts = [
        str(data[key])[:200]
        for key in ("title", "detail", "error", "error_description")
        if isinstance(data.get(key), str | int)
    ]
    return ": " + "; ".join(parts) if parts else ""


def error_from_response(response: httpx.Response) -> ApiStatusError:
    """The typed error for an error ``response`` (status 400 or more); pure, no I/O.

    The response body must have been read. ``Retry-After`` and ``www-authenticate``
    are parsed into the error's attributes.

    Example::

        raise error_from_response(response)   # e.g. NotFoundError for a 404
    """
    status = response.status_code
    request = redacted_request(response.request) if _has_request(response) else None
    body = _response_text(response)
    where = f" for {request.method} {request.url}" if request is not None else ""
    reason = response.reason_phrase or "error"
    message = f"{status} {reason}{where}{_detail(response, body)}"
    headers = response.headers
    if status == 400:
        return BadRequestError(
            message, status_code=status, headers=headers, body=body, request=request
        )
    if status == 401:
        challenge = parse_www_authenticate(headers.get("www-authenticate"))
        if challenge.says_expired:
            return TokenExpiredError(
                f"{message}: the token expired"
                + (f" at {challenge.expired_at.isoformat()}" if challenge.expired_at else ""),
                headers=headers,
                body=body,
                request=request,
                error=challenge.error,
                error_description=challenge.error_description,
                expired_at=challenge.expired_at,
            )
        return AuthenticationError(
            message + (f" ({challenge.error})" if challenge.error else ""),
            headers=headers,
            body=body,
            request=request,
            error=challenge.error,
            error_description=challenge.error_description,
        )
    if status == 403:
        return PermissionDeniedError(
            message, status_code=status, headers=headers, body=body, request=request
        )
    if status == 404:
        return NotFoundError(
            message, status_code=status, headers=headers, body=body, request=request
        )
    retry_after = parse_retry_after(headers.get("retry-after"))
    if status == 429:
        return RateLimitError(
            message, headers=headers, body=body, request=request, retry_after=retry_after
        )
    if status >= 500:
        return ServerError(
            message,
            status_code=status,
            headers=headers,
            body=body,
            request=request,
            retry_after=retry_after,
        )
    return ApiStatusError(message, status_code=status, headers=headers, body=body, request=request)


def _has_request(response: httpx.Response) -> bool:
    try:
        response.request  # noqa: B018 - the property raises when no request is attached
    except RuntimeError:
        return False
    return True
