"""Bodies and statuses of every shape (tests/mock/bodies.yaml grafted into the spec):
forms with deepObject fields, multipart with an object part, binary upload and download,
DELETE with a body, cookie and header parameters, query arrays, an integer path
parameter, 202/204/301/410. A valid request is answered as declared (and the answer
checked against its schema); a bad one is a 400 problem, never a 500."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml
from spec_copy import merged_spec, signed_in

from service_api_mock import MockConfig, MockService
from service_api_mock._forms import nested, typed

pytestmark = pytest.mark.anyio

BODIES = Path(__file__).with_name("bodies.yaml")


@pytest.fixture
def service(tmp_path: Path) -> MockService:
    spec = tmp_path / "openapi.yaml"
    spec.write_text(yaml.safe_dump(merged_spec(BODIES), sort_keys=False), "utf-8")
    return MockService(MockConfig(records=3, validate_answers=True), spec=spec)


@pytest.fixture
async def api(service: MockService) -> AsyncIterator[httpx.AsyncClient]:
    async with signed_in(service.app) as client:
        yield client
    assert service.invalid_answers() == []
    assert not any(s >= 500 for by in service.counts().values() for s in by)


def _refused(response: httpx.Response, words: str) -> None:
    assert response.status_code == 400, response.text
    assert response.headers["content-type"] == "application/problem+json"
    assert words in response.json()["detail"]


async def test_a_form_is_read_as_its_schema_types_it(api: httpx.AsyncClient) -> None:
    good = (
        "name=Ada&age=7&vip=true&tags=a&tags=b&address[city]=Paris&address[zip]=75001"
    )
    headers = {"content-type": "application/x-www-form-urlencoded"}
    answered = await api.post("/bodies/form", content=good, headers=headers)
    assert answered.status_code == 200, answered.text
    for bad, words in (
        ("age=7", "'name' is a required property"),
        ("name=Ada&age=old", "age"),
        ("name=Ada&address[zip]=7", "address/zip"),
        ("name=Ada&shoe=42", "shoe"),
    ):
        _refused(await api.post("/bodies/form", content=bad, headers=headers), words)
    _refused(await api.post("/bodies/form", json={"name": "Ada"}), "must be")
    not_utf8 = await api.post("/bodies/form", content=b"name=\xff\xfe", headers=headers)
    _refused(not_utf8, "UTF-8")


async def test_multipart_with_an_object_part(api: httpx.AsyncClient) -> None:
    meta = ("meta.json", json.dumps({"kind": "report"}).encode(), "application/json")
    pdf = ("r.pdf", b"%PDF-1.7 \x00\x01", "application/pdf")
    files: dict[str, Any] = {"file": pdf, "meta": meta}
    answered = await api.post("/bodies/upload", files=files)
    assert answered.status_code == 201, answered.text
    assert answered.json()["uploadId"].startswith("up_")
    wrong = ("meta.json", json.dumps({"kind": "song"}).encode(), "application/json")
    _refused(
        await api.post("/bodies/upload", files={**files, "meta": wrong}), "meta/kind"
    )
    _refused(await api.post("/bodies/upload", files={"file": files["file"]}), "meta")
    broken = {"content-type": "multipart/form-data; boundary=x"}
    _refused(await api.post("/bodies/upload", content=b"--y\r\n", headers=broken), "")


async def test_binary_up_and_down_with_an_integer_path_parameter(
    api: httpx.AsyncClient,
) -> None:
    octets = {"content-type": "application/octet-stream"}
    stored = await api.put("/bodies/blobs/7", content=b"\x00\x01\x02", headers=octets)
    assert stored.status_code == 204
    assert stored.content == b""
    fetched = await api.get("/bodies/blobs/7")
    assert fetched.status_code == 200
    assert fetched.headers["content-type"] == "application/octet-stream"
    assert fetched.content
    _refused(await api.get("/bodies/blobs/seven"), "blobNumber")
    _refused(await api.get("/bodies/blobs/0"), "blobNumber")
    _refused(await api.put("/bodies/blobs/7", headers=octets), "required")


async def test_delete_with_a_body_cookie_header_and_query_array(
    api: httpx.AsyncClient,
) -> None:
    api.cookies.set("session", "s-123")
    headers = {"x-trace": "42"}
    answered = await api.request(
        "DELETE",
        "/bodies/baskets?ids=1&ids=2",
        json={"reason": "class"},
        headers=headers,
    )
    # Two successes declared: either is as declared (the mock checked the answer).
    assert answered.status_code in (200, 202), answered.text
    if answered.status_code == 202:
        assert answered.json()["@odata.type"] == "#job"
        assert answered.json()["jobId"] >= 9007199254740993
    for url, body, more, words in (
        ("/bodies/baskets?ids=1&ids=x", {"reason": ""}, headers, "ids"),
        ("/bodies/baskets?ids=1", {"reason": "late"}, headers, "reason"),
        ("/bodies/baskets?ids=1", {"reason": "0"}, {"x-trace": "t"}, "x-trace"),
        ("/bodies/baskets?ids=1", None, headers, "required"),
    ):
        sent = await api.request("DELETE", url, json=body, headers=more)
        _refused(sent, words)
    api.cookies.clear()
    sent = await api.request(
        "DELETE", "/bodies/baskets?ids=1", json={"reason": "0"}, headers=headers
    )
    _refused(sent, "session")


async def test_statuses_other_than_200_are_answered_as_declared(
    api: httpx.AsyncClient,
) -> None:
    assert (await api.get("/bodies/moved")).status_code == 301
    gone = await api.get("/bodies/gone?where[min]=3&labels[]=a&labels[]=b")
    assert gone.status_code == 410
    assert gone.json() == {"gone": True}
    _refused(await api.get("/bodies/gone?where[min]=three"), "where")
    _refused(await api.get("/bodies/gone?where[max]=3"), "where")
    _refused(await api.get("/bodies/gone?labels[0]=c"), "labels")


def test_form_fields_nest_and_take_their_types() -> None:
    pairs = [("a[b][c]", "1"), ("t[]", "x"), ("t[]", "y"), ("n", "2"), ("n", "3")]
    assert nested(pairs) == {
        "a": {"b": {"c": "1"}},
        "t": {"0": "x", "1": "y"},
        "n": ["2", "3"],
    }
    schema = {
        "type": "object",
        "properties": {
            "a": {"properties": {"b": {"additionalProperties": {"type": "integer"}}}},
            "t": {"type": "array", "items": {"type": "string"}},
            "n": {"type": "array", "items": {"type": ["null", "number"]}},
            "j": {"type": "object"},
            "z": {"anyOf": [{"type": "boolean"}, {"type": "string"}]},
        },
    }
    value = {**nested(pairs), "j": '{"k": 1}', "z": "true"}
    assert typed(value, schema) == {
        "a": {"b": {"c": 1}},
        "t": ["x", "y"],
        "n": [2, 3],
        "j": {"k": 1},
        "z": True,
    }
