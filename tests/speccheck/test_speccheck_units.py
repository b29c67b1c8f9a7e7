"""The pure pieces: shapes and the schema learned from them (the patch in a file:
test_speccheck_patch.py)."""

from __future__ import annotations

import httpx
import pytest
from planted import read_yaml

from service_api_spec import SpecDocument, read_spec
from service_api_speccheck import Observer, compare, learned
from service_api_speccheck._observation import add

SPEC = """\
openapi: 3.1.0
info:
  title: t
  version: "1"
paths:
  /things:
    get:
      operationId: listThings
      # A comment inside the operation stays.
      parameters:
        - $ref: "#/components/parameters/size"
      responses:
        "200":
          description: &ok A page.
          x-assumed: A guess.

  /things/search:
    get:
      operationId: searchThings
      responses:
        "200":
          description: *ok
components:
  parameters:
    size:
      name: pageSize
      in: query
      schema: {type: integer}
  schemas:
    Thing:
      type: object
      properties:
        name:
          type: [string, "null"]
          x-assumed: Named somewhere.

    Other:
      type: object
"""


def test_a_shape_keeps_types_formats_and_masked_examples_never_values() -> None:
    shape: dict[str, object] = {}
    add(
        shape, {"ref": "PO-ACCT-1-00042", "at": "2026-01-05T08:00:00Z", "n": None}, True
    )
    add(shape, {"ref": "PO-ACCT-2-00001", "count": "17", "status": "Planned"}, True)
    add(shape, {"customerName": "Alice"}, True)
    fields = shape["fields"]
    assert isinstance(fields, dict)
    assert fields["ref"]["example"] == "a-a-9-9"
    assert fields["ref"]["types"] == {"string": 2}
    assert fields["at"]["formats"] == {"date-time": 1}
    assert fields["count"]["formats"] == {"integer": 1}
    assert fields["n"]["types"] == {"null": 1}
    assert fields["status"]["values"] == {"Planned": 1}  # words, with --enums only
    assert fields["ref"].get("values", {}) == {}  # not a word: it has digits
    assert "values" not in fields["customerName"]  # not of a field named like a name
    assert "PO-ACCT" not in str(shape)


@pytest.mark.parametrize(
    ("values", "schema"),
    [
        (["a", None], {"type": ["string", "null"]}),
        ([1, 2.5], {"type": "number"}),
        (["2026-01-05", "2026-01-06"], {"type": "string", "format": "date"}),
        (["2026-01-05", "x"], {"type": "string"}),
        (["42"], {"type": "string"}),  # integer in a string: reported, not a format
        ([None], {"type": "null"}),
        (
            [{"a": 1}, None],
            {"type": ["object", "null"], "properties": {"a": {"type": "integer"}}},
        ),
        (
            [["x"], "y"],
            {
                "anyOf": [
                    {"type": "array", "items": {"type": "string"}},
                    {"type": "string"},
                ]
            },
        ),
    ],
)
def test_the_schema_learned_from_a_shape(
    values: list[object], schema: dict[str, object]
) -> None:
    shape: dict[str, object] = {}
    for value in values:
        add(shape, value)
    assert learned(shape) == schema


def test_an_answer_is_matched_to_its_operation_literal_paths_first() -> None:
    spec = read_spec(SpecDocument(read_yaml(SPEC)))

    def operation(path: str) -> list[str]:
        observer = Observer(None, "http://h/base/v3/", spec)
        answer = httpx.Response(200, request=httpx.Request("GET", f"http://h{path}"))
        answer.read()
        observer(answer)
        return list(observer.data["answers"])

    assert operation("/base/v3/things/search") == ["GET /things/search 200"]
    assert operation("/base/v3/things") == ["GET /things 200"]
    assert operation("/things") == []
    assert operation("/base/v3/things/1/2") == []


def test_an_answer_records_a_header_form_not_its_value() -> None:
    spec = read_spec(SpecDocument(read_yaml(SPEC)))
    observer = Observer(None, "http://h", spec)
    challenge = (
        'Bearer error="invalid_token", error_description="expired at 01/05/2026 08:00"'
    )
    request = httpx.Request("GET", "http://h/things")
    answer = httpx.Response(
        401,
        headers={"www-authenticate": challenge, "x-request-id": "abc"},
        request=request,
    )
    answer.read()
    observer(answer)
    headers = observer.data["answers"]["GET /things 401"]["headers"]
    assert headers["www-authenticate"] == [
        'Bearer error="invalid_token", error_description="..."'
    ]
    assert headers["x-request-id"] == []  # its name only


def test_a_null_fits_a_nullable_format_and_a_plain_object_learns_its_fields() -> None:
    spec = read_spec(SpecDocument(read_yaml(SPEC_WITH_BODY)))
    body = add({}, {"at": None, "more": {"count": 1}})
    add(body, {"at": "2026-01-05T08:00:00Z"})
    add(body, {"at": "2026-01-05"})  # not of the format declared
    answer = {"media": {"application/json": 3}, "headers": {}, "body": body}
    observation = {"answers": {"GET /things 200": answer}, "facts": {}, "requests": 3}
    report = compare(spec, observation)
    found = [(f.kind, f.where) for f in report.differences]
    assert found == [("format", "Thing.at"), ("undeclared field", "Thing.more.count")]
    assert (
        report.edits[-1][0]
        == "#/components/schemas/Thing/properties/more/properties/count"
    )
    assert report.assumptions == {"#/components/schemas/Thing/properties/at": "refuted"}


SPEC_WITH_BODY = """\
openapi: 3.1.0
info: {title: t, version: "1"}
paths:
  /things:
    get:
      operationId: getThing
      responses:
        "200":
          description: A thing.
          content:
            application/json:
              schema: {$ref: "#/components/schemas/Thing"}
components:
  schemas:
    Thing:
      type: object
      properties:
        at: {type: [string, "null"], format: date-time, x-assumed: A guess.}
        more: {type: object}
"""
