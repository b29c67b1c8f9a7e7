"""What the spec check's tests share: planted.py's asserts rewritten by pytest (its
helpers assert what each test of a planted difference asserts), and one loopback server
whose mock serves each true spec in turn."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

pytest.register_assert_rewrite("planted")

from planted import Served, serving  # noqa: E402 -- after the rewrite is registered


@pytest.fixture(scope="module")
def server() -> Iterator[tuple[Served, str]]:
    """The server of the module's checks, and its base URL."""
    with serving() as served:
        yield served
