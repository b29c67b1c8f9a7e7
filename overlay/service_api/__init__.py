"""Typed client for the service's public HTTP API.

The package is a thin layer over the generated ``service_api_client``: it keeps the
bearer token fresh, sends the account header, pages through list endpoints,
retries what is safe to retry and raises typed errors, for sync and async code.
"""

from service_api import testing
from service_api._client import Client
from service_api._errors import (
    ApiConnectionError,
    ApiStatusError,
    ApiTimeoutError,
    AuthenticationError,
    BadRequestError,
    ConfigurationError,
    InconsistentPageError,
    InvalidCredentialsError,
    InvalidResponseError,
    NotFoundError,
    PaginationWarning,
    PermissionDeniedError,
    RateLimitError,
    ServerError,
    ServiceApiError,
    TokenExpiredError,
    TokenResponseError,
)
from service_api._logs import setup_logging
from service_api._pagination import (
    InvalidRecordError,
    ListOperation,
    Page,
    PageModel,
    Pager,
    Pages,
    paginate,
)
from service_api._protocols import AnswerObserver, StoredToken, TokenStore
from service_api._retry import RetryPolicy

#: Every public name, sorted (as ``sorted()`` sorts: upper case first).
__all__ = [
    "AnswerObserver",
    "ApiConnectionError",
    "ApiStatusError",
    "ApiTimeoutError",
    "AuthenticationError",
    "BadRequestError",
    "Client",
    "ConfigurationError",
    "InconsistentPageError",
    "InvalidCredentialsError",
    "InvalidRecordError",
    "InvalidResponseError",
    "ListOperation",
    "NotFoundError",
    "Page",
    "PageModel",
    "Pager",
    "Pages",
    "PaginationWarning",
    "PermissionDeniedError",
    "RateLimitError",
    "RetryPolicy",
    "ServerError",
    "ServiceApiError",
    "StoredToken",
    "TokenExpiredError",
    "TokenResponseError",
    "TokenStore",
    "paginate",
    "setup_logging",
    "testing",
]

# Tracebacks and reprs name the public home (service_api.NotFoundError), not the private
# module that defines it; as httpx does.
for _name in __all__:
    if _name != "testing":  # a module of its own
        globals()[_name].__module__ = "service_api"

setup_logging()  # SERVICE_API_LOG=debug|info: readable logs with no code
