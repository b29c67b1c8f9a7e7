"""Shapes of real public API descriptions (tests/spec/corpus) work end to end, each
grafted alone into a copy of ``openapi.yaml`` and all of them at once.

For each case: the generator writes a client, saying nothing (a shape it cannot carry
fails it, naming the place); ``mypy --strict`` passes on it; the mock's own check
passes; every new operation's door answers the mock as its annotation says
(tests/spec/growth_calls.py, real loopback HTTP); every new list exports with
``service-api list`` and loads with ``service-api load``.

``make test`` runs a sample (``CORPUS``, default ``petstore_expanded``: a resource with
list, get, create and delete, no tag, an allOf record, an int64 item path parameter);
``make fuzz`` runs ``CORPUS=all``: every shape alone, then all at once. Several shapes
can be named: ``CORPUS=twilio_calls,msgraph_users``.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from corpus_shapes import (
    cases,
    check_spec,
    doors,
    export,
    generate,
    graft,
    list_arguments,
    load,
    new_lists,
    shapes,
)
from spec_copy import SpecCopy, SpecEditError, serve_spec

SAMPLE = "petstore_expanded"
CHOSEN = os.environ.get("CORPUS", SAMPLE)
CASES = cases() if CHOSEN == "all" else CHOSEN.split(",")

# What a case cannot do yet, and why (none now): each an expected failure that must
# fail (strict), so that the entry goes when what it waits for is there.
KNOWN: dict[tuple[str, str], str] = {}


def known(case: str, step: str) -> list[Any]:
    """The xfail mark of a step of a case that is known to fail, else none."""
    reason = KNOWN.get((case, step))
    return [pytest.mark.xfail(strict=True, reason=reason)] if reason else []


def cases_of(step: str) -> list[Any]:
    return [pytest.param(case, id=case, marks=known(case, step)) for case in CASES]


class Built:
    """The generated copy of each case, once per module (generating takes seconds)."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.copies: dict[str, tuple[SpecCopy, str] | SpecEditError] = {}
        self.urls: dict[str, str] = {}
        self.stack: list[Any] = []

    def copy(self, case: str) -> tuple[SpecCopy, str]:
        if case not in self.copies:
            try:
                self.copies[case] = generate(self.folder / case, graft(shapes(case)))
            except SpecEditError as exc:
                self.copies[case] = exc
        found = self.copies[case]
        if isinstance(found, SpecEditError):
            raise found
        return found

    def base_url(self, case: str) -> str:
        """The mock serving the case's copy, a few records of each resource."""
        if case not in self.urls:
            served = serve_spec(self.copy(case)[0], "--records", "3")
            self.urls[case] = served.__enter__()
            self.stack.append(served)
        return self.urls[case]


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Built]:
    found = Built(tmp_path_factory.mktemp("corpus"))
    yield found
    for served in reversed(found.stack):
        served.__exit__(None, None, None)


@pytest.mark.parametrize("case", cases_of("generate"))
def test_the_generator_carries_the_shape_and_says_nothing(
    built: Built, case: str
) -> None:
    _, said = built.copy(case)
    assert said.strip() == "", said


@pytest.mark.parametrize("case", cases_of("mypy"))
def test_the_generated_client_passes_mypy_strict(built: Built, case: str) -> None:
    done = built.copy(case)[0].type_check()
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]


@pytest.mark.parametrize("case", cases_of("check-spec"))
def test_the_mock_checks_the_spec(built: Built, case: str) -> None:
    done = check_spec(built.copy(case)[0])
    assert done.returncode == 0, done.stderr[-4000:]


@pytest.mark.parametrize("case", cases_of("doors"))
def test_every_new_door_answers_the_mock(built: Built, case: str) -> None:
    copy, _ = built.copy(case)
    done = doors(copy, built.base_url(case))
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    assert lines, f"no door was called: {done.stderr[-3000:]}"
    failed = [line for line in lines if not line["ok"]]
    assert not failed, (failed, done.stderr[-3000:])
    assert done.returncode == 0, done.stderr[-3000:]


@pytest.mark.parametrize("case", cases_of("list"))
def test_every_new_list_exports(built: Built, case: str, tmp_path: Path) -> None:
    copy, _ = built.copy(case)
    base_url = built.base_url(case)
    lists = new_lists(copy)
    for name in lists:
        args = list_arguments(name, lists, copy, base_url, tmp_path)
        done = export([name, *args, "--max-items", "3"], copy, base_url, tmp_path)
        assert done.returncode == 0, f"service-api list {name}: {done.stderr[-3000:]}"
        assert "exported" in done.stderr, done.stderr


@pytest.mark.parametrize("case", cases_of("load"))
def test_every_new_list_loads(built: Built, case: str, tmp_path: Path) -> None:
    pytest.importorskip(
        "dlt", reason="dlt is not installed: pip install 'service-api[dlt]'"
    )
    copy, _ = built.copy(case)
    base_url = built.base_url(case)
    lists = new_lists(copy)
    for name, entry in lists.items():
        args = list_arguments(name, lists, copy, base_url, tmp_path)
        done = load([name, *args], copy, base_url, tmp_path)
        assert done.returncode == 0, f"service-api load {name}: {done.stderr[-3000:]}"
        assert f"loaded {name}" in done.stderr, done.stderr
        if entry["id_field"] is None:
            # No identifier the spec tells: the list is loaded whole into a table it
            # replaces (no key to merge on), and the other lists load all the same.
            assert "the table replaced" in done.stderr, done.stderr
