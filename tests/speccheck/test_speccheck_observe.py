"""Passive learning: ``Client(observe=Observer(PATH))`` keeps shapes, never values; ``--from``
makes the same report and patch with no request."""

from __future__ import annotations

import asyncio
import json
import shutil
import sys
from pathlib import Path

import httpx
import pytest
from planted import ROOT

import service_api
from service_api_mock import DEMO_CLIENT_SECRET, RunningMock
from service_api_spec import load_spec
from service_api_speccheck import (
    Observer,
    Report,
    SpecCheckError,
    _observation,
    check_spec,
)
from service_api_speccheck._observation import SAMPLE_EVERY, SAMPLED


@pytest.fixture(autouse=True)
def save_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each answer saved as it comes (a program's are saved every few seconds, at exit)."""
    monkeypatch.setattr(_observation, "SAVE_EVERY", -1.0)


def work(client: service_api.Client) -> None:
    """What a program does in normal work: lists, gets, a refused call."""
    shipments = list(client.shipments.list())
    list(client.devices.list(max_items=60))
    client.shipments.get(shipment_id=shipments[0]["shipmentId"])
    with pytest.raises(service_api.PermissionDeniedError):
        client.with_account("nobody").shipments.get(shipment_id="none")


def undeclared(report: Report) -> set[tuple[str, str]]:
    return {(f.kind, f.where) for f in report.findings if f.kind == "undeclared field"}


def test_observed_shapes_make_the_same_report_and_patch_with_no_request(
    mock: RunningMock, tmp_path: Path
) -> None:
    observed, spec = tmp_path / "observed.json", tmp_path / "openapi.yaml"
    shutil.copy(ROOT / "openapi.yaml", spec)
    demo = ("demo-client", DEMO_CLIENT_SECRET, "acct-1")
    with service_api.Client(mock.base_url, *demo, observe=Observer(observed)) as client:
        work(client)
    with service_api.Client(mock.base_url, *demo) as client:
        sampled = check_spec(spec, client)
    sent = mock.service.count()
    from_file = check_spec(spec, observed=observed)
    assert mock.service.count() == sent  # no request
    assert from_file.observed["requests"] == 0
    assert undeclared(from_file) == undeclared(sampled)
    assert len(undeclared(from_file)) == 7
    assert {e[:2] for e in from_file.edits} == {e[:2] for e in sampled.edits}
    text = observed.read_text("utf-8")
    for secret in [DEMO_CLIENT_SECRET, *mock.service.issued_tokens()]:
        assert secret not in text
    record = mock.service.dataset("shipments", "acct-1")[0]
    values = [record["shipmentId"], record["referenceNumber"], record["createdAt"]]
    values += [record["shipmentLegs"][0]["fromAddress"]["locality"], "acct-1"]
    assert not [value for value in values if value in text]  # shapes, never values
    from_file.write()
    assert check_spec(spec, observed=observed).edits == []


def test_an_observer_watches_async_clients_too(
    mock: RunningMock, tmp_path: Path
) -> None:
    observed = tmp_path / "observed.json"

    async def main() -> None:
        async with service_api.Client(
            mock.base_url,
            "demo-client",
            DEMO_CLIENT_SECRET,
            "acct-1",
            observe=Observer(observed),
        ) as client:
            async for _ in client.devices.list(max_items=10):
                pass

    asyncio.run(main())
    answers = json.loads(observed.read_text("utf-8"))["answers"]
    assert list(answers) == ["GET /devices 200"]
    fields = answers["GET /devices 200"]["body"]["fields"]["data"]["items"]["fields"]
    assert fields["firmwareVersion"]["types"] == {"string": 50}  # the page read


def response(
    status: int, body: bytes, url: str = "http://h/public/v3/shipments"
) -> httpx.Response:
    answer = httpx.Response(
        status,
        content=body,
        headers={"content-type": "application/json", "retry-after": "12"},
        request=httpx.Request("GET", url),
    )
    answer.read()
    return answer


def test_the_observer_samples_and_stays_bounded(tmp_path: Path) -> None:
    spec = load_spec(ROOT / "openapi.yaml")
    observer = Observer(tmp_path / "o.json", "http://h/public/v3", spec)
    page = json.dumps(
        {"totalRecords": 1, "pageNumber": 1, "pageSize": 50, "data": [{}]}
    )
    for _ in range(SAMPLED + 10 * SAMPLE_EVERY):
        observer(response(200, page.encode()))
    observer(response(200, b"{}", "http://other/thing"))  # of no operation
    data = json.loads((tmp_path / "o.json").read_text("utf-8"))
    assert list(data["answers"]) == ["GET /shipments 200"]
    answer = data["answers"]["GET /shipments 200"]
    assert answer["n"] == SAMPLED + 10
    assert answer["headers"]["retry-after"] == ["9"]
    # Hostile: too many fields, nested too deep.
    deep: object = 1
    for _ in range(20):
        deep = [deep]
    hostile = Observer(tmp_path / "h.json", "http://h/public/v3", spec)
    hostile(
        response(200, json.dumps({f"f{index}": deep for index in range(300)}).encode())
    )
    body = json.loads((tmp_path / "h.json").read_text("utf-8"))["answers"][
        "GET /shipments 200"
    ]
    assert len(body["body"]["fields"]) == 200
    assert len((tmp_path / "h.json").read_bytes()) < 200_000


def test_an_observation_file_that_is_not_one_is_refused_not_overwritten(
    tmp_path: Path,
) -> None:
    path = tmp_path / "observed.json"
    path.write_text("[1, 2]", "utf-8")
    with pytest.raises(SpecCheckError, match="not an observation file"):
        Observer(path)
    assert path.read_text("utf-8") == "[1, 2]"


def test_without_the_spec_extra_the_observer_names_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for name in [m for m in sys.modules if m.startswith("service_api_speccheck")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "jsonschema", None)
    with pytest.raises(
        service_api.ConfigurationError, match=r"pip install 'service-api\[spec\]'"
    ):
        import service_api_speccheck  # noqa: F401


def test_observe_takes_an_answer_observer_not_a_path() -> None:
    with pytest.raises(TypeError, match="observe must be called with each answer"):
        service_api.Client("http://h/public/v3", "c", "s", None, observe="o.json")  # type: ignore[arg-type]
