"""Against a service that differs: the mock serves a "true" spec, the check learns it.

Each plant (see ``planted.py``) is one way the checked spec differs from the served one;
the check must report it (recall), write exactly its fix and nothing else (precision),
and leave a spec that agrees with what the service answers (checked by plain httpx and
jsonschema, not by the check itself), valid, servable, and that a second check and
write leaves as it is. test_speccheck_drawn.py draws several plants at once.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from planted import PLANTS, Served, assert_learned, learn, specs


def test_a_spec_that_agrees_gets_an_empty_patch(
    server: tuple[Served, str], tmp_path: Path
) -> None:
    report, path, _ = learn([], server, tmp_path)
    assert report.differences == []
    assert report.edits == []
    assert {f.kind for f in report.findings} <= {"never seen"}
    assert_learned([], report, path, specs([])[0], server[1])


@pytest.mark.parametrize("name", sorted(PLANTS))
def test_each_planted_difference_is_found_and_learned(
    name: str, server: tuple[Served, str], tmp_path: Path
) -> None:
    plant = PLANTS[name]
    report, path, true = learn([plant], server, tmp_path)
    assert report.matched is (plant.edit is None)  # a note alone is no difference
    assert_learned([plant], report, path, true, server[1])
