"""An observation file dates what it saw: each answer's first and last time, each
place's JSON types with theirs; ``spec check --from`` says when a place changed.

The answers are those of the spec's first list operation that needs no argument (read
from the spec model); their records change shape at a known time.
"""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest
from planted import ROOT

import service_api
from service_api_mock import DEMO_CLIENT_SECRET, RunningMock
from service_api_spec import load_spec
from service_api_speccheck import Observer, _observation, check_spec

SPEC = load_spec(ROOT / "openapi.yaml")
LIST = next(
    op
    for op in SPEC.operations
    if op.kind == "list" and not any(p.required for p in op.parameters)
)
KEY = f"{LIST.method} {LIST.path} 200"


def page(record: dict[str, object]) -> httpx.Response:
    body = {"totalRecords": 1, "pageNumber": 1, "pageSize": 50, "data": [record]}
    answer = httpx.Response(
        200,
        json=body,
        request=httpx.Request(LIST.method, f"http://h/public/v3{LIST.path}"),
    )
    answer.read()
    return answer


def test_the_file_dates_each_shape_and_the_report_says_when_a_place_changed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_observation, "SAVE_EVERY", -1.0)
    path = tmp_path / "observed.json"
    observer = Observer(path, spec=SPEC)  # any base path
    answers: list[tuple[str, dict[str, object]]] = [
        ("2026-05-01T10:00:00Z", {"level": "high", "gone": 1}),
        ("2026-05-01T11:00:00Z", {"level": "low", "gone": 2}),
        ("2026-05-02T09:00:00Z", {"level": 3, "added": True}),
        ("2026-05-02T10:00:00Z", {"level": 4, "added": False}),
    ]
    for now, record in answers:
        monkeypatch.setattr(_observation, "_now", lambda now=now: now)
        observer(page(record))
    answer = json.loads(path.read_text("utf-8"))["answers"][KEY]
    assert (answer["first"], answer["last"]) == (
        "2026-05-01T10:00:00Z",
        "2026-05-02T10:00:00Z",
    )
    assert answer["seen"]["data[].level"] == {
        "string": ["2026-05-01T10:00:00Z", "2026-05-01T11:00:00Z"],
        "integer": ["2026-05-02T09:00:00Z", "2026-05-02T10:00:00Z"],
    }
    changed = _observation.changes(json.loads(path.read_text("utf-8")))
    assert changed == [
        f"{KEY} data[].added: first seen 2026-05-02T09:00:00Z "
        "(answers since 2026-05-01T10:00:00Z)",
        f"{KEY} data[].gone: last seen 2026-05-01T11:00:00Z "
        "(answers until 2026-05-02T10:00:00Z)",
        f"{KEY} data[].level: string until 2026-05-01T11:00:00Z, "
        "then integer from 2026-05-02T09:00:00Z",
    ]
    text = check_spec(ROOT / "openapi.yaml", observed=path).text()
    for change in changed:
        assert f"  changed: {change}" in text.splitlines()


def test_an_answer_of_one_shape_has_no_change() -> None:
    observer = Observer(None, "http://h/public/v3", SPEC)
    for level in ("high", "low"):
        observer(page({"level": level}))
    assert _observation.changes(observer.data) == []


def test_a_sample_says_no_change_however_long_it_takes(
    mock: RunningMock, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Its answers a minute apart each: a place of later pages only (``previous``) is
    no place that appeared since the first answer."""
    minutes = iter(range(24 * 60))

    def tick() -> str:
        minute = next(minutes)
        return f"2026-05-01T{minute // 60:02d}:{minute % 60:02d}:00Z"

    monkeypatch.setattr(_observation, "_now", tick)
    with service_api.Client(
        mock.base_url, "demo-client", DEMO_CLIENT_SECRET, "acct-1"
    ) as client:
        report = check_spec(ROOT / "openapi.yaml", client)
    assert report.observed["pages"]  # pages were asked, the first without previous
    assert [line for line in report.text().splitlines() if "changed:" in line] == []
