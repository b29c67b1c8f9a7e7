"""The page size is the spec's: a copy of the spec whose ``pageSize`` maximum is 20 is
sent pages of 20 by the client, the command line and dlt, with no page size written
anywhere but in the spec; and a create the copy gains (a POST on a collection with a
required header, and no list) gets a ``create`` door that takes the header.

The mock serves the copy and refuses a ``pageSize`` above its maximum, so a request of
another size fails; its counts show how many pages each reader asked for.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml
from spec_copy import ROOT, SpecCopy, auth_headers, generate_copy, serve_spec

from service_api_mock import DEMO_ACCOUNTS
from service_api_spec import SpecDocument, read_spec

LARGEST = 20
RECORDS = 45  # of each resource per account: 3 pages of 20, 1 of 50
ACCOUNT = DEMO_ACCOUNTS[0]

# A create on a collection with a required header and nothing else: no list, no item.
PAYMENTS = """
tags:
  - name: payments
    description: Payments.
paths:
  /payments:
    post:
      operationId: createPayment
      tags: [payments]
      summary: Make a payment
      parameters:
        - name: Idempotency-Key
          in: header
          required: true
          schema: {type: string}
      requestBody:
        required: true
        content:
          application/json:
            schema: {$ref: "#/components/schemas/Payment"}
      responses:
        "201":
          description: The payment made.
          content:
            application/json:
              schema: {$ref: "#/components/schemas/Payment"}
        "401": {$ref: "#/components/responses/Unauthorized"}
        "403": {$ref: "#/components/responses/Forbidden"}
components:
  schemas:
    Payment:
      type: object
      properties:
        paymentId: {type: string, readOnly: true}
        amount: {type: integer}
"""


def smaller_pages(document: dict[str, Any]) -> dict[str, Any]:
    """``document`` whose ``pageSize`` parameter states a maximum of LARGEST and no
    default (the default is then the maximum), and whose pages say so too."""
    size = document["components"]["parameters"]["pageSize"]["schema"]
    size.pop("default", None)
    size["maximum"] = LARGEST
    for schema in document["components"]["schemas"].values():
        fields = schema.get("properties") or {}
        if "maximum" in fields.get("pageSize", {}):
            fields["pageSize"]["maximum"] = LARGEST
            fields["data"]["maxItems"] = LARGEST
    return document


@pytest.fixture(scope="module")
def copy(tmp_path_factory: pytest.TempPathFactory) -> SpecCopy:
    document = smaller_pages(yaml.safe_load((ROOT / "openapi.yaml").read_text("utf-8")))
    extra = yaml.safe_load(PAYMENTS)
    document["tags"] = [*document.get("tags", []), *extra["tags"]]
    document["paths"].update(extra["paths"])
    document["components"]["schemas"].update(extra["components"]["schemas"])
    return generate_copy(tmp_path_factory.mktemp("smaller-pages"), document)


@pytest.fixture(scope="module")
def base_url(copy: SpecCopy) -> Iterator[str]:
    with serve_spec(copy, "--records", str(RECORDS)) as url:
        yield url


def counts(base_url: str) -> dict[str, dict[str, int]]:
    """What the mock answered so far, per operation and status."""
    origin = httpx.URL(base_url).copy_with(path="/__mock__/counts")
    found: dict[str, dict[str, int]] = httpx.get(origin).json()
    return found


def pages_asked(base_url: str, before: dict[str, dict[str, int]]) -> dict[str, int]:
    """The answers of each list since ``before``, by status."""
    now = counts(base_url)
    op = "listShipments"
    return {
        status: n - before.get(op, {}).get(status, 0)
        for status, n in now.get(op, {}).items()
        if n - before.get(op, {}).get(status, 0)
    }


def run_script(
    copy: SpecCopy, base_url: str, script: str, cwd: Path | None = None
) -> Any:
    """Run ``script`` with the generated copy against the mock at ``base_url``; the JSON
    of its last line of output (a failed run fails the test with its stderr)."""
    done = subprocess.run(
        [sys.executable, "-c", script],
        cwd=cwd,
        env=copy.env(base_url),
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.splitlines()[-1])


def test_the_model_reads_the_copy_s_page_sizes(copy: SpecCopy) -> None:
    document = yaml.safe_load(copy.spec.read_text("utf-8"))
    model = read_spec(SpecDocument(document))
    for op in model.lists:
        assert op.page_size is not None
        assert (op.page_size.default, op.page_size.maximum) == (LARGEST, LARGEST)


def test_the_mock_refuses_a_page_above_the_maximum(base_url: str) -> None:
    # What makes the counts below a proof: any other size would fail.
    headers = auth_headers(base_url)
    above = httpx.get(f"{base_url}/shipments?pageSize={LARGEST + 1}", headers=headers)
    assert above.status_code == 400
    at = httpx.get(f"{base_url}/shipments?pageSize={LARGEST}", headers=headers)
    assert at.json()["pageSize"] == LARGEST


CLIENT = """
import json, warnings, service_api
with service_api.Client() as client:
    pages = [page.model.page_size for page in client.shipments.list().pages()]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        asked = client.shipments.list(page_size=50)
    print(json.dumps({
        "pages": pages,
        "asked": repr(asked),
        "warned": [str(w.message) for w in caught],
    }))
"""


def test_the_client_sends_the_spec_s_page_size(copy: SpecCopy, base_url: str) -> None:
    before = counts(base_url)
    shown = run_script(copy, base_url, CLIENT)
    assert shown["pages"] == [LARGEST] * math.ceil(RECORDS / LARGEST)
    assert shown["asked"] == f"Pager(list_shipments, page_size={LARGEST})"
    assert shown["warned"] == [
        f"page_size 50 is above the service's maximum; using {LARGEST}"
    ]
    assert pages_asked(base_url, before) == {"200": math.ceil(RECORDS / LARGEST)}


def test_the_command_line_sends_the_spec_s_page_size(
    copy: SpecCopy, base_url: str, tmp_path: Path
) -> None:
    before = counts(base_url)
    done = copy.cli(["list", "shipments", "--account", ACCOUNT], base_url, tmp_path)
    assert done.returncode == 0, done.stderr
    assert len(done.stdout.splitlines()) == RECORDS
    assert pages_asked(base_url, before) == {"200": math.ceil(RECORDS / LARGEST)}
    # Above the spec's maximum: the command line says so, and sends the maximum.
    refused = copy.cli(
        ["load", "shipments", "--account", ACCOUNT, "--page-size", "50"],
        base_url,
        tmp_path,
    )
    assert refused.returncode == 2
    assert f"--page-size: must be at most {LARGEST}" in refused.stderr


DLT = """
import dlt, json, service_api
from service_api.dlt import load
pipeline = dlt.pipeline(
    "smaller", destination="duckdb", dataset_name="raw", pipelines_dir="state"
)
with service_api.Client() as client:
    load(pipeline, client, [client.account_id], endpoints=["shipments"])
with pipeline.sql_client() as sql:
    print(json.dumps(sql.execute_sql("select count(*) from shipments")[0][0]))
"""


def test_dlt_loads_with_the_spec_s_page_size(
    copy: SpecCopy, base_url: str, tmp_path: Path
) -> None:
    pytest.importorskip(
        "dlt", reason="dlt is not installed: pip install 'service-api[dlt]'"
    )
    before = counts(base_url)
    assert run_script(copy, base_url, DLT, cwd=tmp_path) == RECORDS
    assert pages_asked(base_url, before) == {"200": math.ceil(RECORDS / LARGEST)}
    # And through the command line (the mock refuses a page above the maximum).
    argv = ["load", "shipments", "--account", ACCOUNT, "--pipelines-dir", "cli"]
    loaded = copy.cli(argv, base_url, tmp_path)
    assert loaded.returncode == 0, loaded.stderr
    assert f"loaded shipments: {RECORDS} rows" in loaded.stderr


CREATE = """
import inspect, json, service_api
from service_api_client.models.payment import Payment
with service_api.Client() as client:
    door = client.payments.create
    made = door(body=Payment(amount=5), idempotency_key="k-1")
    print(json.dumps({
        "parameters": list(inspect.signature(door).parameters),
        "made": made.to_dict(),
    }))
"""


def test_a_create_without_a_list_takes_its_header(
    copy: SpecCopy, base_url: str
) -> None:
    shown = run_script(copy, base_url, CREATE)
    assert shown["parameters"] == ["body", "idempotency_key"]
    # The mock refuses a create without its required header: the door sent it.
    assert shown["made"]["amount"] == 5
