"""Type-checked by mypy --strict: the mock's public API as users' test suites call it.

``assert_type`` fails the type check if a signature drifts; importing the module is
the only runtime test.
"""

from typing import Any, assert_type

from starlette.types import ASGIApp

from service_api_mock import (
    DEMO_ACCOUNTS,
    DEMO_CLIENT_ID,
    DEMO_CLIENT_SECRET,
    MockConfig,
    MockService,
    RunningMock,
    running_mock,
)


def drive(service: MockService) -> None:
    assert_type(service.app, ASGIApp)
    assert_type(service.count("authenticate", 200), int)
    assert_type(service.count(), int)
    assert_type(service.counts(), dict[str, dict[int, int]])
    assert_type(service.issued_tokens(), list[str])
    assert_type(service.dataset("shipments", DEMO_ACCOUNTS[0]), list[dict[str, Any]])
    service.set_faults(fault_rate=0.1, rate_limit=None)
    service.advance_clock(3600)
    service.revoke_tokens()
    service.reset(records=37, token_ttl=2)


def serve() -> None:
    config = MockConfig(
        token_ttl=2.0, clients={DEMO_CLIENT_ID: (DEMO_CLIENT_SECRET, ("a",))}
    )
    with running_mock(MockService(config)) as server:
        assert_type(server, RunningMock)
        assert_type(server.base_url, str)
        drive(server.service)
    with running_mock(records=7) as other:
        assert_type(other.service, MockService)
