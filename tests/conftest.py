"""Fixtures shared by the whole suite."""

import os
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from service_api_mock import RunningMock, running_mock
from service_api_mock._config import VALIDATE_ANSWERS_VARIABLE

# Every mock the suite starts, in process or as a command, checks its answers against
# the spec before sending them: an answer that does not fit is a 500 saying why.
os.environ.setdefault(VALIDATE_ANSWERS_VARIABLE, "1")

# The spec copies' helpers (tests/spec/spec_copy.py) for every folder of tests.
SPEC_TESTS = str(Path(__file__).resolve().parent / "spec")
if SPEC_TESTS not in sys.path:
    sys.path.insert(0, SPEC_TESTS)

# Fails any test that lets a client secret or an issued token reach a log, an error
# message, a warning or a report.
pytest_plugins = ["leak_guard"]


@pytest.fixture
def anyio_backend() -> str:
    """Run ``@pytest.mark.anyio`` tests on asyncio, the loop the client supports."""
    return "asyncio"


@pytest.fixture(params=["sync", "async"])
def twin(request: pytest.FixtureRequest) -> str:
    """Run a test through the sync function (``paginate``) and its async twin."""
    return str(request.param)


@pytest.fixture
def patch_for_this_thread(
    monkeypatch: pytest.MonkeyPatch,
) -> Callable[[object, str, Callable[..., Any]], None]:
    """Replace ``owner.name`` with ``fake`` for the test's own thread only: the process's
    other threads (a mock server's, another test's) keep the real one."""

    def patch(owner: object, name: str, fake: Callable[..., Any]) -> None:
        real, this_thread = getattr(owner, name), threading.get_ident()

        def either(*args: Any) -> Any:
            return (fake if threading.get_ident() == this_thread else real)(*args)

        monkeypatch.setattr(owner, name, either)

    return patch


@pytest.fixture(scope="session")
def mock_server() -> Iterator[RunningMock]:
    """One mock served over loopback HTTP for the whole session (see ``mock`` for a clean one)."""
    with running_mock() as server:
        yield server


@pytest.fixture
def mock(mock_server: RunningMock) -> Iterator[RunningMock]:
    """The session's mock, reset: no tokens, counters, faults or clock offset, default
    config; the test fails if it answered anything that does not fit the spec."""
    mock_server.service.reset()
    yield mock_server
    assert mock_server.service.invalid_answers() == []
