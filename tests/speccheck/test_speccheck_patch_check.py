"""The central case: a spec re-dumped by PyYAML (folded scalars, block lists, sorted
keys), or written as JSON, checked against a service that differs in several planted
ways, and ``--write`` applied to it: the spec learns every fix, only the lines of the
edited places change, and a second check and write change no byte.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from planted import PLANTS, Served, serving, specs
from test_speccheck_patch import assert_patched, expected
from test_speccheck_planted import run_check

from service_api_speccheck._layout import load, same

WRITERS: dict[str, Callable[[Any], str]] = {
    "PyYAML": yaml.dump,  # its defaults: what the issue saw refused
    "JSON": lambda document: json.dumps(document, indent=2) + "\n",
    "CRLF": lambda document: yaml.dump(document, width=60).replace("\n", "\r\n"),
}


@pytest.fixture(scope="module")
def server() -> Iterator[tuple[Served, str]]:
    """One loopback server for the module's checks, and its base URL."""
    with serving() as served:
        yield served


def _plants() -> list[Any]:
    """One plant of each target that the patch fixes."""
    chosen = {p.target: p for p in sorted(PLANTS.values(), key=lambda p: p.name)}
    return [p for p in chosen.values() if p.fixed and not p.faults and not p.variant]


@pytest.mark.parametrize("writer", sorted(WRITERS))
def test_write_learns_on_any_layout_and_keeps_the_other_lines(
    writer: str, server: tuple[Served, str], tmp_path: Path
) -> None:
    served, base_url = server
    true, checked = specs(_plants())
    served.serve(_dumped(true, tmp_path / "true.yaml"))
    path = tmp_path / ("openapi.json" if writer == "JSON" else "openapi.yaml")
    path.write_bytes(WRITERS[writer](checked).encode())
    text = path.read_bytes().decode()
    report = run_check(base_url, path)
    patch = [*report.edits, *report.marks]
    assert {action for _, action, _ in patch} >= {"add", "widen"}
    report.write()
    written = path.read_bytes().decode()
    assert same(load(written), expected(text, patch))
    assert_patched(text, patch)  # only the edited places, and once is twice
    changed = [
        line
        for line in difflib.unified_diff(text.splitlines(), written.splitlines(), n=0)
        if line[:1] in "+-" and line[:3] not in ("+++", "---")
    ]
    # an edit writes its own lines and, in JSON, the comma of the line before
    assert 0 < len(changed) <= 16 * len(patch)
    again = run_check(base_url, path)
    assert again.differences == [], again.text()
    again.write()
    assert path.read_bytes().decode() == written


def _dumped(document: Any, path: Path) -> Path:
    path.write_text(yaml.safe_dump(document, sort_keys=False), "utf-8")
    return path
