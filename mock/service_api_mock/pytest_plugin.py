"""pytest fixtures for testing your own code against the mock.

With the ``mock`` extra installed (``pip install 'service-api[mock]'``), pytest loads this
plugin by itself (the ``pytest11`` entry point ``service_api_mock``); ``pytest --fixtures``
lists its two fixtures:

- ``service_api_mock``: a :class:`DemoMock`, the mock served over loopback HTTP with
  the demo integration's credentials and the controls of its :class:`MockService`;
- ``service_api_client``: a :class:`service_api.Client` signed in to it as the demo
  integration, for the first demo account.

One server runs per test session (per pytest-xdist worker), started by the first test
that asks for it: starting uvicorn costs far more than a test. Each test gets it reset
(:meth:`MockService.reset`: no tokens, counters, faults or clock offset, the default
configuration), so what one test changes never leaks into the next. A test that wants
other data or faults says so first: ``service_api_mock.service.reset(records=7)``.

Example::

    def test_export_counts_every_shipment(service_api_client, service_api_mock):
        service_api_mock.service.reset(records=7)
        assert len(list(service_api_client.shipments.list())) == 7
        assert service_api_mock.service.count("authenticate", 200) == 1

``pytest -p no:service_api_mock`` turns the plugin off.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

import attrs
import pytest

if TYPE_CHECKING:
    import service_api
    from service_api_mock import MockService, RunningMock

__all__ = ["DemoMock", "service_api_client", "service_api_mock"]


@attrs.frozen
class DemoMock:
    """The mock a test runs against: where it is, how to sign in, and its controls.

    The controls are those of :class:`MockService`, under ``service``: ``count``,
    ``counts``, ``set_faults``, ``advance_clock``, ``revoke_tokens``, ``reset``,
    ``update_record``, ``issued_tokens``, ``dataset``.

    Example::

        def test_retries_through_faults(service_api_mock):
            service_api_mock.service.set_faults(fault_rate=0.5, retry_after=0)
            client = service_api.Client(
                service_api_mock.base_url,
                service_api_mock.client_id,
                service_api_mock.client_secret,
                service_api_mock.account_id,
            )
    """

    base_url: str
    """The public API's base address, such as ``http://127.0.0.1:53187/public/v3``."""
    service: MockService
    """The handle on the served mock: its counters, faults, clock and tokens."""
    client_id: str
    """The demo integration's client ID (``DEMO_CLIENT_ID``)."""
    client_secret: str = attrs.field(repr=False)
    """The demo integration's client secret (``DEMO_CLIENT_SECRET``), left out of ``repr``."""
    account_ids: tuple[str, ...]
    """The accounts the demo integration works for (``DEMO_ACCOUNTS``)."""

    @property
    def account_id(self) -> str:
        """The first demo account, the one ``service_api_client`` sends.

        Example::

            assert service_api_client.account_id == service_api_mock.account_id
        """
        return self.account_ids[0]


# A private name: `pytest --fixtures` lists it only with -v, and a user's own
# `service_api_mock` fixture may replace the public one without shadowing the server.
@pytest.fixture(scope="session")
def _service_api_mock_server() -> Iterator[RunningMock]:
    """The session's one server; tests use ``service_api_mock``, which resets it."""
    # Imported on first use: loading the plugin costs a test run that never asks for
    # the mock nothing beyond this module.
    from service_api_mock import running_mock

    # Answers checked against the spec: a mock answer that does not fit is a 500 and
    # fails the test that met it, rather than passing on data the service never sends.
    with running_mock(validate_answers=True) as server:
        yield server


@pytest.fixture
def service_api_mock(_service_api_mock_server: RunningMock) -> Iterator[DemoMock]:
    """The mock of the service on a free loopback port, reset for this test.

    A :class:`service_api_mock.pytest_plugin.DemoMock`: ``base_url``, the demo
    credentials (``client_id``, ``client_secret``, ``account_ids``, ``account_id``) and
    the mock's controls under ``service`` (``count``, ``counts``, ``set_faults``,
    ``advance_clock``, ``revoke_tokens``, ``reset(records=..., ...)``). One server serves
    the whole session; each test starts from no tokens, counters, faults or clock offset
    and the default data (120 shipments and devices per account). Its answers are
    checked against the spec: one that does not fit is a 500 and fails the test.

    Example::

        def test_a_revoked_token_is_replaced(service_api_mock, service_api_client):
            list(service_api_client.shipments.list(max_items=1))
            service_api_mock.service.revoke_tokens()
            list(service_api_client.shipments.list(max_items=1))
            assert service_api_mock.service.count("authenticate", 200) == 2
    """
    from service_api_mock import DEMO_ACCOUNTS, DEMO_CLIENT_ID, DEMO_CLIENT_SECRET

    server = _service_api_mock_server
    server.service.reset()
    yield DemoMock(
        base_url=server.base_url,
        service=server.service,
        client_id=DEMO_CLIENT_ID,
        client_secret=DEMO_CLIENT_SECRET,
        account_ids=DEMO_ACCOUNTS,
    )
    invalid = server.service.invalid_answers()
    if invalid:
        pytest.fail(f"the mock answered what the spec does not allow: {invalid}")


@pytest.fixture
def service_api_client(service_api_mock: DemoMock) -> Iterator[service_api.Client]:
    """A ``service_api.Client`` signed in to ``service_api_mock`` with the demo credentials,
    for its first account (``acct-1``); closed after the test.

    It fetches its token on first use and retries as any client does (waiting out the
    mock's ``Retry-After``: ``service_api.testing.no_retry_sleep()`` skips the waits).
    ``service_api_client.with_account("acct-2")`` serves the other demo account.

    Example::

        def test_export(service_api_client, tmp_path):
            export_shipments(service_api_client, tmp_path / "s.jsonl")  # your code
    """
    import service_api

    mock = service_api_mock
    with service_api.Client(
        mock.base_url, mock.client_id, mock.client_secret, mock.account_id
    ) as client:
        yield client
