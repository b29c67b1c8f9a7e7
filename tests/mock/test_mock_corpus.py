"""The shapes users copy from public API descriptions (tests/spec/corpus), grafted one
at a time into the spec: the mock's own check passes, and each operation, driven to a
success on records that exist, answers only what its schema allows (every answer is
checked before it is sent, and schemathesis checks each again)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import attrs
import pytest
import schemathesis
import yaml
from schemathesis.python import asgi
from spec_copy import merged_spec
from spec_fuzz import Driver, missing_successes, needs_record

from service_api_mock import (
    DEMO_ACCOUNTS,
    DEMO_CLIENT_ID,
    DEMO_CLIENT_SECRET,
    MockConfig,
    MockService,
)
from service_api_mock.__main__ import main as mock_main
from service_api_mock._spec import load_spec as load_served
from service_api_mock._spec import success_of
from service_api_spec import load_spec

CORPUS = Path(__file__).resolve().parents[1] / "spec" / "corpus"
SHAPES = sorted(CORPUS.glob("*.yaml"))
TOKEN_FORM = {
    "client_id": (None, DEMO_CLIENT_ID),
    "client_secret": (None, DEMO_CLIENT_SECRET),
    "grant_type": (None, "client_credentials"),
}


def _served(service: MockService, spec: Path) -> Any:
    """Schemathesis over ``spec``, sending to ``service`` in process, signed in."""
    schema = schemathesis.openapi.from_path(spec)
    schema.app = service.app
    # An operation may succeed with what it declares instead of a 2xx (the Swagger
    # Petstore's lone 405, a 410): valid data answered so is accepted.
    acceptance = schema.config.checks.positive_data_acceptance
    declared = {
        str(answer.code)
        for op in load_spec(spec).operations
        if op.success is None
        for answer in op.answers.values()
        if answer.status.isdigit()
    }
    acceptance.expected_statuses = [*acceptance.expected_statuses, *sorted(declared)]

    @schema.auth()
    class MockAuth:
        def get(self, case: Any, context: Any) -> str:
            with asgi.get_client(service.app) as client:  # type: ignore[arg-type]
                response = client.post(
                    f"http://{asgi.HOST}/public/v3/authenticate", files=TOKEN_FORM
                )
            return str(response.json()["access_token"])

        def set(self, case: Any, data: str, context: Any) -> None:
            case.headers = case.headers or {}
            case.headers["Authorization"] = f"Bearer {data}"
            case.headers["x-service-account-id"] = DEMO_ACCOUNTS[0]

    return schema


def service_warnings(spec: Path) -> tuple[str, ...]:
    return load_served(spec).warnings


def test_the_corpus_is_there() -> None:
    # Guards against a run that passes by finding no shape at all.
    assert len(SHAPES) >= 10, CORPUS


@pytest.mark.parametrize("shape", SHAPES, ids=[shape.stem for shape in SHAPES])
def test_a_grafted_shape_is_served_as_declared(
    shape: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = tmp_path / "openapi.yaml"
    spec.write_text(yaml.safe_dump(merged_spec(shape), sort_keys=False), "utf-8")
    assert mock_main(["--check-spec", str(spec)]) == 0, capsys.readouterr().err
    service = MockService(MockConfig(records=5, validate_answers=True), spec=spec)
    model = load_spec(spec)
    paths = yaml.safe_load(shape.read_text())["paths"]
    grafted = {
        op.operation_id
        for op in model.operations
        if op.method.lower() in paths.get(op.path, {})
    }
    assert grafted, "the shape has operations"
    # An operation that declares no answer but the refusals (the Swagger Petstore's
    # DELETE /pet/{petId}, only a 400) has no success to answer: the mock says so and
    # answers 200, which schemathesis rightly calls undocumented. The rest are driven.
    mute = {op.operation_id for op in model.operations if success_of(op) is None}
    # A create that answers no body (the OAI Petstore's 201) names no record the
    # driver could use: the operations on its records are left to the random cases.
    blind = {
        str(op.resource)
        for op in model.operations
        if op.kind == "create" and (op.success is None or op.success.shape == "empty")
    }
    mute |= {
        op.operation_id
        for op in model.operations
        if op.resource in blind and needs_record(model, op)
    }
    said = "\n".join(service_warnings(spec))
    for op in model.operations:
        if success_of(op) is None:
            assert f"{op.operation_id}: declares no success" in said
    driven = attrs.evolve(
        model,
        operations=tuple(op for op in model.operations if op.operation_id not in mute),
    )
    reached = Driver(_served(service, spec), driven).operations(2)
    # A success is what the operation declares it: a 2xx, else the Petstore's 405...
    succeeded = {
        op.operation_id
        for op in driven.operations
        if getattr(success_of(op), "code", None) in reached.get(op.operation_id, {})
    }
    missing = [
        m
        for m in missing_successes(driven, reached)
        if m.split(":")[0] in grafted - succeeded
    ]
    assert missing == []
    assert service.invalid_answers() == []
    counts = service.counts()
    assert all(counts.get(name) for name in grafted - mute), counts
    assert not any(status >= 500 for by in counts.values() for status in by), counts
