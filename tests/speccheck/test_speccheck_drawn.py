"""Against a service that differs in several ways at once: a property test draws plants
(see ``planted.py``) of every kind, those the true spec makes the mock serve and the
variants the server adds, one of each target, and the check must find and learn them
all as it does each alone (test_speccheck_planted.py): the report lists each, the
verdict and exit code follow from them, the patch is exactly their fixes, and a second
check and write change nothing.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from planted import PLANTS, Plant, Served, serving
from test_speccheck_planted import assert_learned, learn


@pytest.fixture(scope="module")
def server() -> Iterator[tuple[Served, str]]:
    """One loopback server for the drawn checks, and its base URL."""
    with serving() as served:
        yield served


def _one_per_target(chosen: list[Plant]) -> list[Plant]:
    return list({plant.target: plant for plant in chosen}.values())


@settings(
    max_examples=8,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    chosen=st.lists(
        st.sampled_from(sorted(PLANTS.values(), key=lambda p: p.name)),
        min_size=2,
        max_size=6,
    )
)
def test_drawn_differences_are_all_found_and_learned_at_once(
    chosen: list[Plant],
    server: tuple[Served, str],
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    plants = _one_per_target(chosen)
    folder = tmp_path_factory.mktemp("drawn")
    report, path, true = learn(plants, server, folder)
    assert_learned(plants, report, path, true, server[1])
