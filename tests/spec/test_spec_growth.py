"""Any spec a user grows works after ``make``: drawn additions, generated, served, called.

Hypothesis draws additions to openapi.yaml from the grammar of tests/spec/spec_grammar.py
(flat and nested resources, every verb, plain-array and object answers, parameters of
every scalar type in the path, the query and headers, enums, date-times, inline nested
objects, Python words as field names, records with no, one or two ``...Id`` fields, with
and without links). For each: the generator (codegen/generate.py, as ``make`` runs it)
writes a client that imports; the mock's ``--check-spec`` passes; the mock serves it and
every new operation's door is called against it (tests/spec/growth_calls.py) and returns
what its annotation says; every new list exports with ``service-api list``.

A fixed sample (``GROWTH_EXAMPLES``, default 1, the same each run) runs in ``make test``;
``make fuzz`` draws more.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, Phase, given, settings
from spec_copy import ROOT, SpecCopy, generate_copy, serve_spec
from spec_grammar import additions

from service_api_spec import SpecDocument, read_spec

EXAMPLES = int(os.environ.get("GROWTH_EXAMPLES", "1"))
CALLS = Path(__file__).with_name("growth_calls.py")


def grown(fragment: dict[str, Any]) -> dict[str, Any]:
    """The project's spec with ``fragment`` merged in."""
    document: dict[str, Any] = yaml.safe_load(
        (ROOT / "openapi.yaml").read_text("utf-8")
    )
    document.setdefault("tags", []).extend(fragment["tags"])
    document["paths"].update(fragment["paths"])
    document["components"]["schemas"].update(fragment["components"]["schemas"])
    return document


def run(
    command: list[str], copy: SpecCopy, base_url: str | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        command,
        env=copy.env(base_url),
        cwd=copy.root,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


@settings(
    max_examples=EXAMPLES,
    derandomize=True,
    deadline=None,
    database=None,
    # Each example generates a package and starts a mock: seconds, not milliseconds.
    # A failure is reported as drawn, not shrunk (shrinking would run for many minutes).
    phases=[Phase.explicit, Phase.generate],
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(fragment=additions())
def test_a_grown_spec_generates_serves_and_answers(
    fragment: dict[str, Any], tmp_path_factory: pytest.TempPathFactory
) -> None:
    document = grown(fragment)
    copy = generate_copy(tmp_path_factory.mktemp("grown"), document)
    checked = run(
        [sys.executable, "-m", "service_api_mock", "--check-spec", str(copy.spec)], copy
    )
    assert checked.returncode == 0, checked.stderr[-3000:]
    before = {
        op.operation_id
        for op in read_spec(
            SpecDocument(
                grown({"tags": [], "paths": {}, "components": {"schemas": {}}})
            )
        ).operations
    }
    model = read_spec(SpecDocument(document))
    new = [op.operation_id for op in model.operations if op.operation_id not in before]
    assert new, "the grammar drew nothing"
    with serve_spec(copy) as base_url:
        called = run([sys.executable, str(CALLS), str(copy.spec), *new], copy, base_url)
        lines = [json.loads(line) for line in called.stdout.splitlines()]
        failed = [line for line in lines if not line["ok"]]
        assert called.returncode == 0, (failed, called.stderr[-3000:], str(copy.root))
        assert {line["operation"] for line in lines} == {
            op.operation_id
            for op in model.operations
            if op.operation_id in new and op.door
        }
