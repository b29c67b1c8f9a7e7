"""Fixtures shared by the whole suite."""

import pytest


@pytest.fixture
def anyio_backend() -> str:
    """Run ``@pytest.mark.anyio`` tests on asyncio, the loop the client supports."""
    return "asyncio"
