"""The spec and the client agree: every answer the spec's own schemas allow (token answers
and list pages, drawn from openapi.yaml by schemathesis) is one the client accepts.

Schemathesis draws request bodies, so each schema is made the body of a probe operation
of a copy of the spec, with the spec's components; each drawn body is checked against the
schema (jsonschema-rs, what schemathesis validates with) before it is served.
"""

from __future__ import annotations

import math
import secrets
import warnings
from pathlib import Path
from typing import Any

import httpx
import jsonschema_rs
import pytest
import schemathesis
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import service_api
from service_api._auth import TokenAuth, parse_token_response

SPEC = yaml.safe_load(
    (Path(__file__).resolve().parents[2] / "openapi.yaml").read_text()
)
# Made at run time: hypothesis draws text from a module's string constants, and a
# drawn field name the client logs as drift must not be taken for the secret.
SECRET = secrets.token_hex(16)
BASE = "https://api.test/public/v3"
#: The envelope's counts: JSON Schema takes 32.0 for the integer 32, a server writes 32.
COUNTS = ("totalRecords", "pageNumber", "pageSize")
SETTINGS = settings(
    max_examples=150,
    deadline=None,
    database=None,
    suppress_health_check=list(HealthCheck),
)


def answers(name: str) -> st.SearchStrategy[dict[str, Any]]:
    """Bodies the spec's schema ``name`` allows, each checked against it."""
    body = {"schema": {"$ref": f"#/components/schemas/{name}"}}
    probe = {
        **{key: SPEC[key] for key in ("openapi", "info", "components")},
        "paths": {
            "/probe": {
                "post": {
                    "requestBody": {
                        "required": True,
                        "content": {"application/json": body},
                    },
                    "responses": {"200": {"description": "the probe"}},
                }
            }
        },
    }
    operation = schemathesis.openapi.from_dict(probe)["/probe"]["POST"]
    validator = jsonschema_rs.validator_for({**body["schema"], **SPEC})

    def checked(case: Any) -> dict[str, Any]:
        validator.validate(case.body)  # a body the schema allows, or the test is wrong
        return dict(case.body)

    return operation.as_strategy().map(checked)


def test_every_bound_the_client_checks_is_in_the_spec() -> None:
    schemas = SPEC["components"]["schemas"]
    token = schemas["TokenResponse"]["properties"]
    assert token["access_token"]["pattern"] == "^[!-~]+$"
    assert token["access_token"]["maxLength"] == 8192
    assert "604800" in token["expires_in"]["pattern"]
    assert (
        "text/plain"
        in SPEC["paths"]["/authenticate"]["post"]["responses"]["200"]["content"]
    )
    for page in ("ShipmentPage", "DevicePage"):
        fields = schemas[page]["properties"]
        assert fields["pageNumber"]["minimum"] == 1
        assert fields["totalRecords"]["minimum"] == 0
        assert (fields["pageSize"]["minimum"], fields["pageSize"]["maximum"]) == (1, 50)
        assert fields["data"]["maxItems"] == 50


@SETTINGS
@given(
    body=answers("TokenResponse"),
    content_type=st.sampled_from(["application/json", "text/plain"]),
)
def test_the_client_accepts_every_token_answer_the_spec_allows(
    body: dict[str, Any], content_type: str
) -> None:
    sent: list[str] = []

    def service(request: httpx.Request) -> httpx.Response:
        if request.url.path.endswith("/authenticate"):
            return httpx.Response(
                200, json=body, headers={"content-type": content_type}
            )
        sent.append(request.headers["authorization"])
        return httpx.Response(200, json={})

    token_request = httpx.Request("POST", f"{BASE}/authenticate")
    answer = httpx.Response(200, json=body, request=token_request)
    assert parse_token_response(answer) == (
        body["access_token"],
        int(body["expires_in"]),
    )
    auth = TokenAuth(BASE, "cid", "s3cret")
    with httpx.Client(transport=httpx.MockTransport(service), auth=auth) as client:
        assert client.get(f"{BASE}/shipments").status_code == 200
    assert sent == [f"Bearer {body['access_token']}"]


@pytest.mark.parametrize(
    ("schema", "tag"), [("ShipmentPage", "shipments"), ("DevicePage", "devices")]
)
@SETTINGS
@given(data=st.data())
def test_the_pager_accepts_every_page_the_spec_allows(
    schema: str, tag: str, data: st.DataObject
) -> None:
    page = data.draw(answers(schema))
    page |= {count: int(page[count]) for count in COUNTS}
    number, size, total = page["pageNumber"], page["pageSize"], page["totalRecords"]

    def service(request: httpx.Request) -> httpx.Response:
        if request.url.path.endswith("/authenticate"):
            token = {"access_token": "tk", "token_type": "Bearer", "expires_in": "3600"}
            return httpx.Response(200, json=token)
        return httpx.Response(200, json=page)

    transport = httpx.MockTransport(service)
    with service_api.Client(
        BASE, "cid", SECRET, "acct-1", httpx_args={"transport": transport}
    ) as client:
        # The page asked for is the page served: its number and size.
        pager = getattr(client, tag).list(
            start_page=number, page_size=size, max_pages=1
        )
        if not page["data"] and number <= math.ceil(total / size):
            # The one rule the schema cannot state (its description does): a page inside
            # the result set is not empty.
            with pytest.raises(service_api.InconsistentPageError):
                list(pager.pages())
            return
        with warnings.catch_warnings():
            warnings.simplefilter(
                "ignore", service_api.PaginationWarning
            )  # extra records
            pages = list(pager.pages())
    assert [p.number for p in pages] == [number]
    allowed = min(len(page["data"]), size, max(0, total - (number - 1) * size))
    assert 0 < len(pages[0].items) <= allowed or allowed == len(pages[0].items) == 0
