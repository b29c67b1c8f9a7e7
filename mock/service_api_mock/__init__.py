"""A local mock of the service's public HTTP API, for tests, demos and benchmarks.

It serves every operation of ``openapi.yaml``, read when it starts through the spec model
(:mod:`service_api_spec`): it issues tokens at ``POST /public/v3/authenticate``
(multipart form, RFC 6749 errors), checks bearer tokens, the ``x-service-account-id``
header and every parameter and body against its schema, pages through deterministic
records exactly as the seed describes (a sub-resource's per parent), reads, creates,
replaces, updates and deletes records where the spec declares it, and answers any other
operation with data built from its success schema. What it cannot do as the spec
declares is a warning; only a file that is no OpenAPI document is a :class:`SpecError`
at start-up. Faults (latency,
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

try:  # each dependency of the extra first, so that a missing one names the extra
    import jsonschema  # type: ignore[import-untyped]  # noqa: F401
    import python_multipart  # noqa: F401
    import rstr  # noqa: F401
    import starlette  # noqa: F401
    import uvicorn  # noqa: F401
    import yaml  # noqa: F401
except ImportError as exc:
    # The package itself still imports (pytest loads the pytest11 plugin below it wherever
    # service-api is installed); using any of its names is what names the extra.
    _MISSING = f"the mock needs the 'mock' extra (no module {exc.name!r})"

    def __getattr__(name: str) -> object:
        raise ImportError(f"{_MISSING}: pip install 'service-api[mock]'", name=name)

else:
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
    from ._spec import SpecError

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
    "SpecError",
    "running_mock",
    "serve_asgi",
]
