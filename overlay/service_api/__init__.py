"""Typed client for the service's public HTTP API.

The package is a thin layer over the generated ``service_api_client``: it keeps the
bearer token fresh, sends the account header, pages through list endpoints,
retries what is safe to retry and raises typed errors, for sync and async code.
"""

from service_api._errors import (
    ApiConnectionError,
    ApiStatusError,
    ApiTimeoutError,
    AuthenticationError,
    BadRequestError,
    InconsistentPageError,
    InvalidCredentialsError,
    InvalidResponseError,
    NotFoundError,
    PaginationError,
    PaginationWarning,
    PermissionDeniedError,
    RateLimitError,
    ServerError,
    ServiceApiError,
    TokenExpiredError,
    TokenResponseError,
)

__all__ = [
    "ApiConnectionError",
    "ApiStatusError",
    "ApiTimeoutError",
    "AuthenticationError",
    "BadRequestError",
    "InconsistentPageError",
    "InvalidCredentialsError",
    "InvalidResponseError",
    "NotFoundError",
    "PaginationError",
    "PaginationWarning",
    "PermissionDeniedError",
    "RateLimitError",
    "ServerError",
    "ServiceApiError",
    "TokenExpiredError",
    "TokenResponseError",
]
