"""Every answer checked against the spec before it is sent (validate_answers): one that
does not fit is a 500 saying why, in the log and for the test; and what the mock cannot
build to fit fails its own check (--check-spec), naming the operation."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml
from spec_copy import signed_in

from service_api_mock import MockConfig, MockService
from service_api_mock.__main__ import main as mock_main
from service_api_mock.__main__ import parser
from service_api_spec import load_spec

pytestmark = pytest.mark.anyio

SPEC = Path(__file__).resolve().parents[2] / "openapi.yaml"

# A string no value fits: at least 5 characters, at most 2.
NOTHING_FITS = {"type": "string", "minLength": 5, "maxLength": 2}


def _spec_with_an_answer_nothing_fits(folder: Path) -> tuple[Path, str, str]:
    """A copy of the spec whose first get by id answers a schema no value fits; the copy,
    the operation and its path with a placeholder id."""
    document: dict[str, Any] = yaml.safe_load(SPEC.read_text("utf-8"))
    for path, item in document["paths"].items():
        get = item.get("get")
        if get is None or "{" not in path:
            continue
        content = get["responses"]["200"]["content"]
        media = next(iter(content))
        content[media]["schema"] = NOTHING_FITS
        copy = folder / "openapi.yaml"
        copy.write_text(yaml.safe_dump(document, sort_keys=False), "utf-8")
        return copy, get["operationId"], path
    raise AssertionError("the spec has a get by id")


def test_check_spec_fails_naming_the_operation_and_why(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spec, operation, _ = _spec_with_an_answer_nothing_fits(tmp_path)
    assert mock_main(["--check-spec", str(spec)]) == 1
    said = capsys.readouterr()
    assert f"error: {operation}: its 200 answer cannot be built to fit its schema" in (
        said.err
    )
    assert "serves every operation" not in said.out
    assert mock_main(["--check-spec", str(SPEC)]) == 0


async def _ask(service: MockService, path: str) -> httpx.Response:
    async with signed_in(service.app) as client:
        # Whatever the id: an unknown one is a 404 that fits, a known one the answer.
        resource = path.split("/")[1]
        page = await client.get(f"/{resource}")
        known = page.json()["data"][0] if page.status_code == 200 else {}
        ident = next((str(v) for k, v in known.items() if k.endswith("Id")), "x")
        return await client.get(path.replace(path[path.index("{") :], ident))


async def test_an_answer_that_does_not_fit_is_a_500_saying_why(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    spec, operation, path = _spec_with_an_answer_nothing_fits(tmp_path)
    service = MockService(MockConfig(records=3, validate_answers=True), spec=spec)
    with caplog.at_level(logging.ERROR, logger="service_api_mock"):
        answered = await _ask(service, path)
    assert answered.status_code == 500, answered.text
    assert answered.headers["content-type"] == "application/problem+json"
    reason = answered.json()["detail"]
    assert reason.startswith(f"{operation}: its 200 answer does not fit its schema")
    assert reason in caplog.text
    assert service.invalid_answers() == [reason]
    control = httpx.ASGITransport(app=service.app)
    async with httpx.AsyncClient(
        transport=control, base_url="http://mock.test"
    ) as client:
        listed = await client.get("/__mock__/invalid-answers")
    assert listed.json() == {"invalid_answers": [reason]}
    service.reset()
    assert service.invalid_answers() == []


async def test_without_the_switch_the_answer_is_sent_as_built(tmp_path: Path) -> None:
    spec, _, path = _spec_with_an_answer_nothing_fits(tmp_path)
    service = MockService(MockConfig(records=3, validate_answers=False), spec=spec)
    answered = await _ask(service, path)
    assert answered.status_code == 200
    assert service.invalid_answers() == []


def test_the_switch_from_the_environment_and_the_command_line(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("SERVICE_API_MOCK_VALIDATE_ANSWERS", "1")
    assert MockConfig().validate_answers is True
    monkeypatch.setenv("SERVICE_API_MOCK_VALIDATE_ANSWERS", "0")
    assert MockConfig().validate_answers is False
    assert parser().parse_args(["--validate-answers"]).validate_answers is True
    assert parser().parse_args([]).validate_answers is False


def _widgets(folder: Path, *, twice: bool) -> Path:
    """A copy of the spec with templates of one shape: GET /widgets/{a}, DELETE
    /widgets/{b}, and (``twice``) GET /widgets/{c}, which no request can reach."""
    document: dict[str, Any] = yaml.safe_load(SPEC.read_text("utf-8"))
    answer = {
        "description": "A widget.",
        "content": {"application/json": {"schema": {"type": "object"}}},
    }
    templates = [("a", "get"), ("b", "delete")] + ([("c", "get")] if twice else [])
    for name, method in templates:
        parameter = {"name": name, "in": "path", "required": True}
        parameter["schema"] = {"type": "integer"}
        document["paths"][f"/widgets/{{{name}}}"] = {
            method: {
                "operationId": f"{method}Widget{name.upper()}",
                "parameters": [parameter],
                "responses": {"200": answer}
                if method == "get"
                else {"204": {"description": "Deleted."}},
            }
        }
    path = folder / "openapi.yaml"
    path.write_text(yaml.safe_dump(document, sort_keys=False), "utf-8")
    return path


def test_an_operation_no_request_reaches_fails_the_check(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert mock_main(["--check-spec", str(_widgets(tmp_path, twice=True))]) == 1
    said = capsys.readouterr().err
    assert "error: getWidgetC: GET /widgets/{c} is never reached: /widgets/{a}" in said


async def test_templates_of_one_shape_serve_their_own_methods(tmp_path: Path) -> None:
    spec = _widgets(tmp_path, twice=False)
    assert mock_main(["--check-spec", str(spec)]) == 0
    service = MockService(MockConfig(records=1, validate_answers=True), spec=spec)
    async with signed_in(service.app) as client:
        assert (await client.get("/widgets/1")).status_code == 200
        assert (await client.delete("/widgets/1")).status_code == 204
        assert (await client.put("/widgets/1")).status_code == 405
    assert service.counts() == {
        "authenticate": {200: 1},
        "getWidgetA": {200: 1},
        "deleteWidgetB": {204: 1},
    }


async def test_a_page_envelope_with_fields_of_its_own_is_answered_whole(
    tmp_path: Path,
) -> None:
    document: dict[str, Any] = yaml.safe_load(SPEC.read_text("utf-8"))
    model = load_spec(SPEC)
    listed = next(op for op in model.lists if "{" not in op.path)
    content = document["paths"][listed.path]["get"]["responses"]["200"]["content"]
    media = next(iter(content))
    own = {
        "type": "object",
        "required": ["object", "has_more"],
        "properties": {"object": {"const": "list"}, "has_more": {"type": "boolean"}},
    }
    content[media]["schema"] = {"allOf": [content[media]["schema"], own]}
    spec = tmp_path / "openapi.yaml"
    spec.write_text(yaml.safe_dump(document, sort_keys=False), "utf-8")
    assert mock_main(["--check-spec", str(spec)]) == 0
    service = MockService(MockConfig(records=3, validate_answers=True), spec=spec)
    async with signed_in(service.app) as client:
        page = await client.get(listed.path)
    assert page.status_code == 200, page.text
    assert page.json()["object"] == "list"
    assert len(page.json()["data"]) == 3
    assert service.invalid_answers() == []
