"""The pytest plugin as a user meets it: a test file of theirs, in a folder with no conftest,
run by a pytest of its own that loads the plugin through its ``pytest11`` entry point."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from importlib.metadata import entry_points

import pytest

import service_api_mock.pytest_plugin
from service_api_mock import DEMO_ACCOUNTS, DEMO_CLIENT_SECRET
from service_api_mock.pytest_plugin import DemoMock

# Here, not in a conftest.py: pytest refuses pytest_plugins in a conftest below the
# top-level one when it collects the whole suite.
pytest_plugins = ["pytester"]

# The inner run: no cache folder, and a warning fails it as it fails this suite.
INNER = ("-p", "no:cacheprovider", "-W", "error")


def run(pytester: pytest.Pytester, source: str, *args: str) -> pytest.RunResult:
    pytester.makepyfile(test_user=textwrap.dedent(source))
    return pytester.runpytest(*INNER, *args)


def test_the_plugin_is_registered_for_pytest_under_its_name() -> None:
    (entry,) = entry_points(group="pytest11", name="service_api_mock")
    assert entry.value == "service_api_mock.pytest_plugin"


def test_a_users_test_gets_a_served_mock_and_a_signed_in_client(
    pytester: pytest.Pytester,
) -> None:
    result = run(
        pytester,
        """
        import httpx
        import service_api
        from service_api_mock import DEMO_ACCOUNTS, DEMO_CLIENT_ID, DEMO_CLIENT_SECRET, MockService

        def test_the_mock(service_api_mock):
            assert service_api_mock.base_url.startswith("http://127.0.0.1:")
            assert service_api_mock.base_url.endswith("/public/v3")
            assert isinstance(service_api_mock.service, MockService)
            assert service_api_mock.client_id == DEMO_CLIENT_ID
            assert service_api_mock.client_secret == DEMO_CLIENT_SECRET
            assert service_api_mock.account_ids == DEMO_ACCOUNTS
            assert service_api_mock.account_id == DEMO_ACCOUNTS[0]
            answer = httpx.get(f"{service_api_mock.base_url}/shipments")
            assert answer.status_code == 401
            assert service_api_mock.service.count("listShipments", 401) == 1

        def test_the_client(service_api_client, service_api_mock):
            assert isinstance(service_api_client, service_api.Client)
            assert service_api_client.account_id == "acct-1"
            ids = [s.shipment_id for s in service_api_client.shipments.list()]
            assert len(set(ids)) == service_api_mock.service.config.records == 120
            other = service_api_client.with_account("acct-2")
            assert sum(1 for _ in other.shipments.list(max_items=3)) == 3
            assert service_api_mock.service.count("authenticate", 200) == 1
        """,
    )
    result.assert_outcomes(passed=2)


def test_each_test_gets_the_one_server_reset(pytester: pytest.Pytester) -> None:
    """One server for the session; what a test changes never reaches the next test."""
    result = run(
        pytester,
        """
        SEEN = []

        def test_changes_everything(service_api_mock, service_api_client):
            SEEN.append((service_api_mock.base_url, service_api_mock.service))
            service_api_mock.service.reset(records=7, token_ttl=5)
            assert sum(1 for _ in service_api_client.shipments.list()) == 7
            service_api_mock.service.set_faults(fault_rate=1.0)
            service_api_mock.service.advance_clock(10)
            assert service_api_mock.service.count() > 0

        def test_starts_clean(service_api_mock, service_api_client):
            SEEN.append((service_api_mock.base_url, service_api_mock.service))
            config = service_api_mock.service.config
            assert (config.records, config.token_ttl, config.fault_rate) == (120, 3600, 0.0)
            assert service_api_mock.service.count() == 0
            assert service_api_mock.service.issued_tokens() == []
            assert sum(1 for _ in service_api_client.shipments.list(max_items=60)) == 60

        def test_one_server():
            (url, service), (other_url, other_service) = SEEN
            assert url == other_url and service is other_service
        """,
    )
    result.assert_outcomes(passed=3)


def test_the_client_is_closed_after_its_test(pytester: pytest.Pytester) -> None:
    result = run(
        pytester,
        """
        import service_api

        CLIENTS, CLOSED = [], []

        # monkeypatch is set up first, so it is undone last: after the client's teardown.
        def test_uses_a_client(monkeypatch, service_api_client):
            close = service_api.Client.close
            monkeypatch.setattr(
                service_api.Client, "close", lambda self: (CLOSED.append(self), close(self))
            )
            CLIENTS.append(service_api_client)
            assert not CLOSED

        def test_the_client_was_closed():
            assert CLOSED == CLIENTS
        """,
    )
    result.assert_outcomes(passed=2)


def test_the_fixtures_are_listed_with_their_docstrings(
    pytester: pytest.Pytester,
) -> None:
    result = pytester.runpytest(*INNER, "--fixtures")
    assert result.ret == pytest.ExitCode.OK
    # pytest orders the fixtures by where they are as text ("py:99" after "py:100"):
    # each is matched after the header, in either order.
    for fixture in (
        [
            "service_api_client -- *pytest_plugin.py:*",
            "    A ``service_api.Client`` signed in to ``service_api_mock``*",
        ],
        [
            "service_api_mock -- *pytest_plugin.py:*",
            "    The mock of the service on a free loopback port, reset for this test.",
        ],
    ):
        result.stdout.fnmatch_lines(
            ["*fixtures defined from service_api_mock.pytest_plugin*", *fixture]
        )
    # The session's server is private: listed only with -v.
    assert "_service_api_mock_server" not in result.stdout.str()


def test_the_plugin_turns_off_by_its_name(pytester: pytest.Pytester) -> None:
    result = run(
        pytester,
        """
        def test_wants_the_mock(service_api_mock):
            pass
        """,
        "-p",
        "no:service_api_mock",
    )
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*fixture 'service_api_mock' not found*"])


def test_the_handle_keeps_the_secret_out_of_its_repr() -> None:
    handle = DemoMock(
        base_url="http://127.0.0.1:1/public/v3",
        service=None,  # type: ignore[arg-type]  # repr needs no service
        client_id="demo-client",
        client_secret=DEMO_CLIENT_SECRET,
        account_ids=DEMO_ACCOUNTS,
    )
    assert "demo-client" in repr(handle)
    assert DEMO_CLIENT_SECRET not in repr(handle)


def test_the_plugin_module_loads_without_the_mocks_dependencies() -> None:
    """pytest loads the plugin in every run where the package is installed, the mock
    extra or not: the module itself imports none of the mock's server (nor the client),
    only when a test asks for a fixture."""
    script = textwrap.dedent(
        """
        import importlib.util, sys
        for name in ("uvicorn", "starlette", "service_api_mock", "service_api"):
            sys.modules[name] = None  # importing it now raises ImportError
        spec = importlib.util.spec_from_file_location("plugin", sys.argv[1])
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        print(sorted(name for name in vars(module) if not name.startswith("_")))
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script, service_api_mock.pytest_plugin.__file__],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "'service_api_client', 'service_api_mock'" in done.stdout


def test_without_the_mock_extra_pytest_runs_and_the_fixture_names_the_extra(
    pytester: pytest.Pytester,
) -> None:
    """The plugin loads wherever the package is installed: without the mock extra, a
    user's other tests still run, and a test asking for the mock is told what to install."""
    pytester.makepyfile(
        test_user="""
        def test_unrelated():
            pass

        def test_wants_the_mock(service_api_mock):
            pass
        """
    )
    script = textwrap.dedent(
        """
        import sys
        for name in ("uvicorn", "starlette"):
            sys.modules[name] = None  # as if the mock extra were not installed
        import pytest
        sys.exit(pytest.main(["-p", "no:cacheprovider", "-rE", "test_user.py"]))
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script],
        cwd=pytester.path,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    out = done.stdout + done.stderr
    assert done.returncode == pytest.ExitCode.TESTS_FAILED, out
    assert "1 passed, 1 error" in out, out
    assert "pip install 'service-api[mock]'" in out, out
