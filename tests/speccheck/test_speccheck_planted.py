"""Against a service that differs: the mock serves a "true" spec, the check learns it.

Each plant (see ``planted.py``) is one way the checked spec differs from the served one;
the check must report it (recall), write exactly its fix and nothing else (precision),
and leave a spec that agrees with what the service answers (checked by plain httpx and
jsonschema, not by the check itself), valid, servable, and that a second check and
write leaves as it is. test_speccheck_drawn.py draws several plants at once, with the
helpers of this module.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from openapi_spec_validator import validate
from planted import (
    PLANTS,
    Plant,
    Served,
    disagreements,
    dump,
    edits,
    read_yaml,
    schemas,
    serving,
    specs,
)

import service_api
from service_api import testing
from service_api_mock import DEMO_ACCOUNTS, DEMO_CLIENT_ID, DEMO_CLIENT_SECRET
from service_api_mock._spec import load_spec as mock_load_spec
from service_api_speccheck import Report, check_spec
from service_api_speccheck._compare import STANDARD

ACCOUNT = DEMO_ACCOUNTS[0]


@pytest.fixture(scope="module")
def server() -> Iterator[tuple[Served, str]]:
    """One loopback server for the module's checks, whose mock serves each true spec in
    turn, and its base URL."""
    with serving() as served:
        yield served


def run_check(base_url: str, spec: Path) -> Report:
    """``check_spec`` of the file ``spec`` against the service at ``base_url``."""
    with (
        testing.no_retry_sleep(),
        service_api.Client(
            base_url, DEMO_CLIENT_ID, DEMO_CLIENT_SECRET, ACCOUNT
        ) as client,
    ):
        return check_spec(spec, client)


def learn(
    plants: list[Plant], server: tuple[Served, str], folder: Path
) -> tuple[Report, Path, dict[str, Any]]:
    """Serve the true spec of ``plants``, check and write the checked one; the report,
    the checked file (now patched) and the true document."""
    served, base_url = server
    true, checked = specs(plants)
    faults = {k: v for plant in plants for k, v in plant.faults.items()}
    variants = [plant.variant for plant in plants if plant.variant]
    served.serve(dump(true, folder / "true.yaml"), faults, variants)
    path = dump(checked, folder / "openapi.yaml")
    report = run_check(base_url, path)
    report.write()
    return report, path, true


def assert_learned(
    plants: list[Plant], report: Report, path: Path, true: dict[str, Any], base_url: str
) -> None:
    """The report found every plant (recall) and the patch is exactly their fixes
    (precision); the patched spec is valid, servable, agrees with what the service
    answers, and a second check and write leave it as it is."""
    found = {(f.kind, f.where) for f in report.findings}
    assert {f for p in plants for f in p.findings} <= found, report.text()  # recall
    assert edits(report.edits) == {e for p in plants for e in p.edits}, (
        report.text()
    )  # precision
    # The verdict: a difference unless every plant is a note; settled (--write exits
    # 0) unless one is a difference the spec cannot say.
    assert report.matched is not any(p.difference for p in plants)
    assert report.settled is all(p.fixed or not p.difference for p in plants)
    # Each finding once, and each edit is of a finding listed.
    assert len(found) == len(report.findings)
    listed = {edit[:2] for f in report.findings for edit in f.edits}
    assert {edit[:2] for edit in report.edits} == listed
    for plant in plants:
        if plant.refutes:
            assert report.assumptions[plant.refutes] == "refuted"
    patched = read_yaml(path.read_text("utf-8"))
    validate(patched)
    mock_load_spec(path)  # the mock can serve the patched spec (make's check)
    for kind, where in (f for plant in plants for f in plant.findings):
        if kind in ("undeclared field", "never seen"):  # never removed
            schema, _, name = where.partition(".")
            declared = schemas(patched)[schema]["properties"][name]
            form = schemas(true)[schema]["properties"].get(name, {}).get("format")
            assert declared.get("format") == (form if form in STANDARD else None)
    assert disagreements(path, base_url, ACCOUNT) == []
    written = path.read_bytes()
    again = run_check(base_url, path)
    # What the spec cannot say stays a difference (with advice); nothing else does.
    left = {f for p in plants if p.difference and not p.edits for f in p.findings}
    assert {(f.kind, f.where) for f in again.differences} == left, again.text()
    assert all(f.effect for f in again.differences)
    assert again.edits == []
    assert again.marks == []
    again.write()
    assert path.read_bytes() == written  # a second write changes nothing


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
    assert report.matched is not plant.difference  # a note alone is no difference
    assert report.settled is (not plant.difference or plant.fixed)
    for finding in report.findings:
        if (finding.kind, finding.where) in plant.findings:
            assert finding.difference is plant.difference
            assert finding.effect or not finding.difference  # what the client does
    assert_learned([plant], report, path, true, server[1])
