"""Typed client for the service's public HTTP API.

The package is a thin layer over the generated ``service_api_client``: it keeps the
bearer token fresh, sends the account header, pages through list endpoints,
retries what is safe to retry and raises typed errors, for sync and async code.
"""

from service_api import testing as testing
from service_api._client import Client as Client
from service_api._errors import ApiConnectionError as ApiConnectionError
from service_api._errors import ApiStatusError as ApiStatusError
from service_api._errors import ApiTimeoutError as ApiTimeoutError
from service_api._errors import AuthenticationError as AuthenticationError
from service_api._errors import BadRequestError as BadRequestError
from service_api._errors import ConfigurationError as ConfigurationError
from service_api._errors import InconsistentPageError as InconsistentPageError
from service_api._errors import InvalidCredentialsError as InvalidCredentialsError
from service_api._errors import InvalidResponseError as InvalidResponseError
from service_api._errors import NotFoundError as NotFoundError
from service_api._errors import PaginationWarning as PaginationWarning
from service_api._errors import PermissionDeniedError as PermissionDeniedError
from service_api._errors import RateLimitError as RateLimitError
from service_api._errors import ServerError as ServerError
from service_api._errors import ServiceApiError as ServiceApiError
from service_api._errors import TokenExpiredError as TokenExpiredError
from service_api._errors import TokenResponseError as TokenResponseError
from service_api._logs import setup_logging as setup_logging
from service_api._pagination import InvalidRecordError as InvalidRecordError
from service_api._pagination import ListOperation as ListOperation
from service_api._pagination import Page as Page
from service_api._pagination import PageModel as PageModel
from service_api._pagination import Pager as Pager
from service_api._pagination import paginate as paginate
from service_api._protocols import StoredToken as StoredToken
from service_api._protocols import TokenStore as TokenStore
from service_api._retry import RetryPolicy as RetryPolicy

#: Every public name: the re-exports above.
__all__ = sorted(
    name for name in dir() if name.isidentifier() and not name.startswith("_")
)

# Tracebacks and reprs name the public home (service_api.NotFoundError), not the private
# module that defines it; as httpx does.
for _public in [
    globals()[name] for name in __all__ if name != "testing"
]:  # not the module
    _public.__module__ = "service_api"

setup_logging()  # SERVICE_API_LOG=debug|info: readable logs with no code
