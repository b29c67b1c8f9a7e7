"""A local mock of the service's public HTTP API, for tests, demos and benchmarks.

It issues tokens at ``POST /public/v3/authenticate`` (multipart form, RFC 6749 errors),
checks bearer tokens and the ``x-service-account-id`` header, and pages through
deterministic shipments and devices exactly as the seed describes. Faults (latency,
503/429 with ``Retry-After``, dropped connections, a rate limit, token revocation, a
shifted clock) are off by default and reproducible under a seed. A control API under
``/__mock__/`` and the :class:`MockService` handle drive it.

Example::

    from service_api_mock import running_mock, DEMO_CLIENT_ID, DEMO_CLIENT_SECRET

    with running_mock(records=7) as server:
        response = httpx.post(
            f"{server.base_url}/authenticate",
            files={"client_id": (None, DEMO_CLIENT_ID),
                   "client_secret": (None, DEMO_CLIENT_SECRET),
                   "grant_type": (None, "client_credentials")},
        )
        assert server.service.count("authenticate", 200) == 1

From a shell: ``python -m service_api_mock --port 8080``.
"""

from ._config import (
    DEMO_ACCOUNTS,
    DEMO_CLIENT_ID,
    DEMO_CLIENT_SECRET,
    OTHER_ACCOUNTS,
    OTHER_CLIENT_ID,
    OTHER_CLIENT_SECRET,
    ClientCredentials,
    MockConfig,
)
from ._server import RunningMock, running_mock, serve_asgi
from ._service import MockService

__all__ = [  # noqa: RUF022 -- plain sorted(), the order tests/test_package.py checks
    "ClientCredentials",
    "DEMO_ACCOUNTS",
    "DEMO_CLIENT_ID",
    "DEMO_CLIENT_SECRET",
    "MockConfig",
    "MockService",
    "OTHER_ACCOUNTS",
    "OTHER_CLIENT_ID",
    "OTHER_CLIENT_SECRET",
    "RunningMock",
    "running_mock",
    "serve_asgi",
]
