"""The verdict, from observations made by hand: what breaks the client is a difference
said with what the client does, each finding once at its place, the patch only their
edits (as ``(pointer, action, value)`` tuples), a body that fits no shared schema its
own, and an undeclared field in a small share of the objects a note."""

from __future__ import annotations

import json
from typing import Any

import pytest
from planted import read_yaml

from service_api_spec import SpecDocument, read_spec
from service_api_speccheck import Report, compare
from service_api_speccheck._compare import MIN_SHARE
from service_api_speccheck._observation import add

SPEC = """\
openapi: 3.1.0
info: {title: t, version: "1"}
paths:
  /things:
    get:
      operationId: listThings
      parameters:
        - {name: pageNumber, in: query, schema: {type: integer, minimum: 1}}
        - $ref: "#/components/parameters/size"
      responses:
        "200":
          description: A page.
          content:
            application/json:
              schema: {$ref: "#/components/schemas/ThingPage"}
        "400": {$ref: "#/components/responses/BadRequest"}
        "401": {description: Refused.}
  /things/{thingId}:
    get:
      operationId: getThing
      parameters:
        - {name: thingId, in: path, required: true, schema: {type: string}}
      responses:
        "200":
          description: A thing.
          content:
            application/json:
              schema: {$ref: "#/components/schemas/Thing"}
        "404": {$ref: "#/components/responses/NotFound"}
components:
  parameters:
    size:
      name: pageSize
      in: query
      schema: {type: integer, minimum: 1, default: 50}
  responses:
    BadRequest:
      description: Bad.
      content:
        application/problem+json:
          schema: {$ref: "#/components/schemas/ProblemDetails"}
    NotFound:
      description: None.
      content:
        application/problem+json:
          schema: {$ref: "#/components/schemas/ProblemDetails"}
  schemas:
    ProblemDetails:
      type: object
      properties:
        title: {type: string}
        status: {type: integer}
    Thing:
      type: object
      required: [thingId]
      properties:
        thingId: {type: string}
        name: {type: string}
    ThingPage:
      type: object
      required: [totalRecords, pageNumber, data]
      properties:
        totalRecords: {type: integer}
        pageNumber: {type: integer}
        next: {type: [string, "null"]}
        data:
          type: array
          items: {$ref: "#/components/schemas/Thing"}
"""
SPEC_MODEL = read_spec(SpecDocument(read_yaml(SPEC)))


def answer(
    *bodies: Any,
    headers: dict[str, list[str]] | None = None,
    media: str = "application/json",
) -> dict[str, Any]:
    """An answer of an observation: its JSON bodies' shape, and ``headers``."""
    body: dict[str, Any] = {}
    for value in bodies:
        add(body, value)
    kinds = {media: len(bodies)} if bodies else {}
    return {
        "media": kinds,
        "headers": headers or {},
        **({"body": body} if bodies else {}),
    }


def check(answers: dict[str, Any], min_share: float = MIN_SHARE, **more: Any) -> Report:
    observation = {"answers": answers, "facts": {}, "requests": 9, **more}
    return compare(SPEC_MODEL, observation, min_share=min_share)


def found(report: Report) -> dict[tuple[str, str], Any]:
    return {(f.kind, f.where): f for f in report.findings}


def assert_listed(report: Report) -> None:
    """Each finding once; the patch is their edits and nothing else; the JSON report
    carries the same list as the text."""
    assert len(found(report)) == len(report.findings)
    listed = {edit[:2] for f in report.findings for edit in f.edits}
    assert {edit[:2] for edit in report.edits} == listed
    text = report.text()
    assert all(f.line() in text for f in report.findings)
    carried = json.loads(json.dumps(report.to_json()))["findings"]
    assert [(f["kind"], f["where"]) for f in carried] == list(found(report))
    assert [len(f["edits"]) for f in carried] == [len(f.edits) for f in report.findings]


def test_a_required_field_never_sent_is_a_difference_the_patch_makes_optional() -> None:
    page = {"totalRecords": 1, "data": [{"thingId": "a"}, {"name": "b"}]}
    report = check({"GET /things 200": answer(page)})
    required = found(report)
    page_finding = required["required", "ThingPage.pageNumber"]
    assert page_finding.difference
    assert "InvalidResponseError" in page_finding.effect
    assert page_finding.edits == (
        ("#/components/schemas/ThingPage/required", "unrequire", "pageNumber"),
    )
    thing = required["required", "Thing.thingId"]
    assert thing.detail.startswith("missing in 1 of 2 objects")
    assert not report.matched
    assert report.settled  # --write fixes both
    assert_listed(report)


def test_two_undeclared_headers_on_one_answer_are_two_findings() -> None:
    headers = {"x-request-id": [], "retry-after": ["9"]}
    report = check({"GET /things 401": answer(headers=headers)})
    assert {w for k, w in found(report) if k == "header"} == {
        "listThings 401 x-request-id",
        "listThings 401 retry-after",
    }
    assert len(report.edits) == 2
    assert "2 differences" in report.text().splitlines()[0]
    assert_listed(report)


def test_a_body_that_fits_no_shared_schema_gets_its_own() -> None:
    body = {"error": "gone", "code": 404, "traceId": "t-1"}
    problem = "application/problem+json"
    report = check({"GET /things/{thingId} 404": answer(body, body, media=problem)})
    (finding,) = report.differences
    assert (finding.kind, finding.where) == ("body", "responses/NotFound")
    new, point = finding.edits
    assert new[:2] == ("#/components/schemas/NotFound", "add")
    assert set(new[2]["properties"]) == {"error", "code", "traceId"}
    schema = "#/components/responses/NotFound/content/application~1problem+json/schema"
    assert point == (schema, "set", {"$ref": "#/components/schemas/NotFound"})
    # Nothing is added to the shared schema.
    assert not any("ProblemDetails" in e[0] for e in report.edits)
    # One field in common is not enough: most of its usual fields are of another schema.
    mixed = {**body, "status": 404}
    report = check({"GET /things/{thingId} 404": answer(mixed, mixed, media=problem)})
    assert [f.kind for f in report.differences] == ["body"]
    # A body that fits the shared schema adds its field to it, as before.
    fits = {"title": "Gone", "status": 404, "detail": "no thing"}
    report = check({"GET /things/{thingId} 404": answer(fits, fits, media=problem)})
    assert [e[0] for e in report.edits] == [
        "#/components/schemas/ProblemDetails/properties/detail"
    ]
    assert_listed(report)


def test_a_field_in_a_small_share_of_many_objects_is_a_note_unless_asked() -> None:
    # 350 objects, in pages of 50 (a shape keeps 50 items of an array).
    things = [{"thingId": str(n)} for n in range(349)] + [{"thingId": "x", "odd": 1}]
    pages = [
        {"totalRecords": 350, "pageNumber": n + 1, "data": things[n * 50 : n * 50 + 50]}
        for n in range(7)
    ]
    report = check({"GET /things 200": answer(*pages)})
    rare = found(report)["rare field", "Thing.odd"]
    assert not rare.difference
    assert not rare.edits
    assert "in 1 of 350 (0.3%)" in rare.detail
    assert report.matched
    report = check({"GET /things 200": answer(*pages)}, min_share=0.0)
    assert found(report)["undeclared field", "Thing.odd"].edits
    assert_listed(report)


def test_a_generators_invented_fields_are_summed_in_one_note() -> None:
    # As Prism's dynamic mode does: each object has a field of its own (a shape keeps
    # 200 fields of an object: 199 of them).
    things = [{"thingId": str(n), f"invented{n}": n} for n in range(200)]
    pages = [
        {"totalRecords": 200, "pageNumber": n + 1, "data": things[n * 50 : n * 50 + 50]}
        for n in range(4)
    ]
    report = check({"GET /things 200": answer(*pages)})
    assert report.edits == []
    assert report.matched
    kinds = [f.kind for f in report.findings]
    assert kinds.count("rare field") == 5
    (summed,) = [f for f in report.findings if f.kind == "rare fields"]
    assert summed.where == "Thing"
    assert summed.detail.startswith("194 more fields, each in at most 1 of 200 (0.5%)")
    assert_listed(report)


def test_a_probe_answered_200_is_a_difference_the_spec_cannot_say() -> None:
    page = {"totalRecords": 0, "pageNumber": 1, "data": []}
    probes = {"listThings": {"an invalid token": 200, "no account header": 401}}
    report = check({"GET /things 200": answer(page)}, probes=probes)
    (finding,) = report.differences
    assert finding.where == "listThings an invalid token"
    assert "400, 401" in finding.detail
    assert finding.edits == ()
    assert "cannot say" in finding.effect
    assert not report.settled  # --write leaves it: exit 1
    assert_listed(report)


@pytest.mark.parametrize(
    ("sizes", "edits"),
    [
        (
            {"maximum": 50, "refused": 21, "accepted": 20},
            [
                ("#/components/parameters/size/schema/maximum", "set", 20),
                ("#/components/parameters/size/schema/default", "set", 20),
            ],
        ),
        ({"maximum": 50, "refused": 25, "accepted": 12}, []),  # the budget ran out
    ],
)
def test_a_page_size_up_to_the_spec_limit_refused_is_a_difference(
    sizes: dict[str, int], edits: list[tuple[str, str, int]]
) -> None:
    page = {"totalRecords": 0, "pageNumber": 1, "data": []}
    report = check({"GET /things 200": answer(page)}, sizes={"listThings": sizes})
    (finding,) = report.differences
    assert finding.where == "listThings pageSize"
    assert list(finding.edits) == edits
    assert f"page_size={sizes['accepted']}" in finding.effect
    assert_listed(report)


def test_pages_that_contradict_total_records_are_a_difference() -> None:
    page = {"totalRecords": 120, "pageNumber": 1, "data": []}
    pages = [
        {
            "number": 1,
            "size": 50,
            "records": 50,
            "total": 120,
            "next": True,
            "previous": False,
        },
        {
            "number": 3,
            "size": 50,
            "records": 20,
            "total": 120,
            "next": True,
            "previous": True,
        },
        {
            "number": 2,
            "size": 50,
            "records": 10,
            "total": 120,
            "next": True,
            "previous": True,
        },
    ]
    report = check({"GET /things 200": answer(page)}, pages={"listThings": pages})
    (finding,) = report.differences
    assert finding.where == "listThings pages"
    assert "page 3 of 50: next" in finding.detail
    assert "page 2 of 50: 10 records where totalRecords 120 makes 50" in finding.detail
    assert "page 1" not in finding.detail
    assert_listed(report)
