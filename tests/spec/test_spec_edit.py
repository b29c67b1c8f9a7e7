"""A resource added to a copy of ``openapi.yaml`` reaches the generated client, the mock,
the command line and schemathesis with no other edit.

The copy is the repository's spec with ``alerts.yaml`` merged in (a list with its own
``severity`` filter, a get with a declared 404, a create and a delete, linked create ->
get -> delete); it is generated into a temporary folder once for the module, and served by
``python -m service_api_mock --spec``. The client and the command line run in child
processes whose path puts that generated package ahead of the repository's own.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import schemathesis
import yaml
from corpus_shapes import check_spec
from spec_copy import (
    SpecCopy,
    SpecEditError,
    auth_headers,
    build_spec_copy,
    merged_spec,
    serve_spec,
    token,
)
from spec_fuzz import Driver, every_case, links, missing_successes

from service_api_client.api import LIST_ENDPOINTS
from service_api_mock import DEMO_ACCOUNTS
from service_api_spec import load_spec

ACCOUNT = DEMO_ACCOUNTS[0]


@pytest.fixture(scope="module")
def spec_copy(tmp_path_factory: pytest.TempPathFactory) -> SpecCopy:
    """The edited spec and its generated client, once per module: generating takes seconds."""
    return build_spec_copy(tmp_path_factory.mktemp("spec-edit"))


@pytest.fixture(scope="module")
def base_url(spec_copy: SpecCopy) -> Iterator[str]:
    """The mock serving the edited spec, started as users start it."""
    with serve_spec(spec_copy) as url:
        yield url


def run_python(
    code: str, copy: SpecCopy, base_url: str
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", code],
        env=copy.env(base_url),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def run_cli(args: list[str], copy: SpecCopy, base_url: str, cwd: Path) -> str:
    done = copy.cli(args, base_url, cwd)
    assert done.returncode == 0, (
        f"service-api {' '.join(args)}: exit {done.returncode}\n{done.stderr}"
    )
    return done.stderr


def every_alert(base_url: str) -> list[dict[str, Any]]:
    """Every alert of the account as the mock serves them, page after page, by hand."""
    headers, number = auth_headers(base_url), 1
    records: list[dict[str, Any]] = []
    while True:
        response = httpx.get(
            f"{base_url}/alerts",
            params={"pageNumber": number, "pageSize": 50},
            headers=headers,
        )
        assert response.status_code == 200, response.text
        data: list[dict[str, Any]] = response.json()["data"]
        if not data:
            return records
        records += data
        number += 1


# ---- the generated client -------------------------------------------------------------

REGISTRY = """
from service_api_client.api import LIST_ENDPOINTS
from service_api_client.models import Alert, AlertPage
alerts = LIST_ENDPOINTS["alerts"]
assert (alerts.page_model, alerts.item_model, alerts.id_field) == (AlertPage, Alert, "alertId")
print(sorted(LIST_ENDPOINTS))
"""


def test_the_generated_registry_has_the_new_list(spec_copy: SpecCopy) -> None:
    done = run_python(REGISTRY, spec_copy, "http://127.0.0.1:9/public/v3")
    assert done.returncode == 0, done.stderr
    # The repository's own registry (this process's), and the list the copy adds.
    assert done.stdout.strip() == repr(sorted({*LIST_ENDPOINTS, "alerts"}))


# The accessors of every operation of the new tag, sync and async, against the mock.
CLIENT = """
import asyncio
import service_api
from service_api_client.models import Alert

def check(created, listed, everything):
    assert isinstance(created, Alert) and isinstance(created.alert_id, str), created
    assert created.severity == "critical" and created.message == "Door opened", created
    ids = [a.alert_id for a in listed]
    assert created.alert_id in ids, ids
    assert all(a.severity == "critical" for a in listed), listed
    assert ids == [a.alert_id for a in everything if a.severity == "critical"]
    assert len(everything) > len(listed), "the filter let every alert through"

with service_api.Client() as client:
    created = client.alerts.create(body=Alert(severity="critical", message="Door opened"))
    listed = list(client.alerts.list(severity="critical"))
    check(created, listed, list(client.alerts.list()))
    got = client.alerts.get(alert_id=created.alert_id)
    assert got.to_dict() == created.to_dict(), (got, created)
    assert client.alerts.delete(alert_id=created.alert_id) is None
    try:
        client.alerts.get(alert_id=created.alert_id)
    except service_api.NotFoundError as exc:
        assert exc.status_code == 404
    else:
        raise AssertionError("a deleted alert was found")

async def main():
    async with service_api.Client() as client:
        created = await client.aio.alerts.create(
            body=Alert(severity="critical", message="Door opened")
        )
        listed = [a async for a in client.alerts.list(severity="critical")]
        everything = [a async for a in client.alerts.list()]
        check(created, listed, everything)
        got = await client.aio.alerts.get(alert_id=created.alert_id)
        assert got.to_dict() == created.to_dict(), (got, created)
        assert await client.aio.alerts.delete(alert_id=created.alert_id) is None
        try:
            await client.aio.alerts.get(alert_id=created.alert_id)
        except service_api.NotFoundError:
            pass
        else:
            raise AssertionError("a deleted alert was found")

asyncio.run(main())
print("checked", created.alert_id)
"""


def test_the_client_lists_filters_creates_gets_and_deletes(
    spec_copy: SpecCopy, base_url: str
) -> None:
    before = every_alert(base_url)
    done = run_python(CLIENT, spec_copy, base_url)
    assert done.returncode == 0, done.stderr[-4000:]
    assert done.stdout.startswith("checked "), done.stdout
    assert every_alert(base_url) == before  # what was created was deleted


# What mypy --strict sees of the new methods, with the generated copy ahead on its path.
TYPED = """
from typing import assert_type

import service_api
from service_api_client.models import Alert


def use(client: service_api.Client) -> None:
    for item in client.alerts.list(severity="critical"):
        assert_type(item, Alert)
    assert_type(client.alerts.create(body=Alert(severity="info")), Alert)
    assert_type(client.alerts.get(alert_id="a-1"), Alert)
    assert_type(client.alerts.delete(alert_id="a-1"), None)


async def use_async(client: service_api.Client) -> None:
    assert_type(await client.aio.alerts.create(body=Alert()), Alert)
    assert_type(await client.aio.alerts.get(alert_id="a-1"), Alert)
    assert_type(await client.aio.alerts.delete(alert_id="a-1"), None)
    client.alerts.get(alert_id=1)  # type: ignore[arg-type]
"""


def test_the_new_methods_are_typed(spec_copy: SpecCopy) -> None:
    done = spec_copy.type_check(TYPED)
    assert done.returncode == 0, done.stdout + done.stderr


# ---- the mock, over HTTP ----------------------------------------------------------------


def test_the_mock_answers_the_declared_errors(base_url: str) -> None:
    headers = auth_headers(base_url)
    missing = httpx.get(f"{base_url}/alerts/no-such-alert", headers=headers)
    assert missing.status_code == 404
    assert missing.headers["content-type"].startswith("application/problem+json")
    assert missing.json()["status"] == 404
    unfit = httpx.post(f"{base_url}/alerts", json={"severity": 5}, headers=headers)
    assert unfit.status_code == 400, unfit.text
    assert unfit.headers["content-type"].startswith("application/problem+json")
    gone = httpx.delete(f"{base_url}/alerts/no-such-alert", headers=headers)
    assert gone.status_code == 404


def test_the_mock_filters_by_a_field(base_url: str) -> None:
    everything = every_alert(base_url)
    assert everything, "the mock serves no alert"
    severity = everything[0]["severity"]
    response = httpx.get(
        f"{base_url}/alerts",
        params={"severity": severity, "pageSize": 50},
        headers=auth_headers(base_url),
    )
    assert response.status_code == 200, response.text
    expected = [a for a in everything if a["severity"] == severity]
    assert response.json()["totalRecords"] == len(expected)
    assert response.json()["data"] == expected[:50]


# ---- the command line -------------------------------------------------------------------


def test_the_cli_lists_and_loads_the_new_resource(
    spec_copy: SpecCopy, base_url: str, tmp_path: Path
) -> None:
    duckdb = pytest.importorskip(
        "duckdb", reason="duckdb is not installed: service-api[dlt]"
    )
    expected = {a["alertId"] for a in every_alert(base_url)}
    run_cli(
        ["list", "alerts", "--account", ACCOUNT, "-o", "alerts.jsonl"],
        spec_copy,
        base_url,
        tmp_path,
    )
    lines = (tmp_path / "alerts.jsonl").read_text("utf-8").splitlines()
    assert {json.loads(line)["alertId"] for line in lines} == expected
    assert len(lines) == len(expected)

    said = run_cli(
        [
            "load",
            "alerts",
            "--account",
            ACCOUNT,
            "--pipelines-dir",
            str(tmp_path / "pipelines"),
        ],
        spec_copy,
        base_url,
        tmp_path,
    )
    assert f"loaded alerts: {len(expected)} rows" in said, said
    with duckdb.connect(
        str(tmp_path / "service_api.duckdb"), read_only=True
    ) as connection:
        rows = connection.execute("select account, alert_id from raw.alerts").fetchall()
    assert sorted(rows) == sorted((ACCOUNT, alert_id) for alert_id in expected)


# ---- schemathesis ----------------------------------------------------------------------

FUZZ_EXAMPLES = 5
DRIVEN_EXAMPLES = 3


def test_schemathesis_covers_every_operation_and_follows_the_links(
    spec_copy: SpecCopy, base_url: str
) -> None:
    schema = schemathesis.openapi.from_path(spec_copy.spec)
    schema.config.update(base_url=base_url)
    bearer = token(base_url)

    @schema.auth()
    class Auth:
        def get(self, case: Any, context: Any) -> str:
            return bearer

        def set(self, case: Any, data: str, context: Any) -> None:
            if case.operation.path == "/authenticate":
                return  # the one operation without security
            case.headers = {
                **(case.headers or {}),
                "Authorization": f"Bearer {data}",
                "x-service-account-id": ACCOUNT,
            }

    model = load_spec(spec_copy.spec)
    sent = every_case(schema, model, FUZZ_EXAMPLES)
    assert sent.keys() == {f"{op.method} {op.path}" for op in model.operations}
    # Each operation on records that exist, each link with what its source answered:
    # getAlert and deleteAlert with the alertId a create answered.
    driver = Driver(schema, model)
    assert missing_successes(model, driver.operations(DRIVEN_EXAMPLES)) == []
    for link in links(model):
        answered = driver.follow(link, DRIVEN_EXAMPLES)
        assert any(200 <= status < 300 for status in answered), (link.label, answered)


# ---- a spec edit the mock cannot serve as declared --------------------------------------


@pytest.mark.parametrize(
    ("path", "method", "status", "operation_id"),
    [
        # The mock answers bad input with a 400.
        ("/alerts", "post", "400", "createAlert"),
    ],
)
def test_an_undeclared_status_the_mock_sends_is_a_warning_naming_the_operation(
    tmp_path: Path, path: str, method: str, status: str, operation_id: str
) -> None:
    document = merged_spec()
    del document["paths"][path][method]["responses"][status]
    copy = SpecCopy(root=tmp_path, generated=tmp_path / "generated")
    copy.spec.write_text(yaml.safe_dump(document, sort_keys=False), "utf-8")
    check = check_spec(copy)
    assert check.returncode == 0, check.stderr
    assert f"warning: {operation_id}: declares no {status} answer" in check.stderr
    assert "Traceback" not in check.stderr
    # Started on it, the mock serves the operation and sends that status all the same.
    with serve_spec(copy) as base_url:
        url = f"{base_url}{path.replace('{alertId}', 'no-such-alert')}"
        sent = httpx.request(
            method, url, json={"severity": 5}, headers=auth_headers(base_url)
        )
    assert sent.status_code == int(status), sent.text
    assert sent.headers["content-type"] == "application/problem+json"


def test_an_item_operation_that_declares_no_404_finds_every_id(tmp_path: Path) -> None:
    # A spec that declares no 404 says every id names a record (Azure's PUT of a
    # resource group creates or replaces it): the mock answers an unknown id with a
    # record of that id, keeps it, and has nothing to warn about.
    document = merged_spec()
    del document["paths"]["/alerts/{alertId}"]["get"]["responses"]["404"]
    copy = SpecCopy(root=tmp_path, generated=tmp_path / "generated")
    copy.spec.write_text(yaml.safe_dump(document, sort_keys=False), "utf-8")
    check = check_spec(copy)
    assert check.returncode == 0, check.stderr
    assert "getAlert: declares no 404" not in check.stderr
    with serve_spec(copy) as base_url:
        headers = auth_headers(base_url)
        url = f"{base_url}/alerts/no-such-alert"
        found = httpx.get(url, headers=headers)
        again = httpx.get(url, headers=headers)
        # Where the 404 is declared (its delete), an unknown id is still refused.
        other = httpx.delete(f"{base_url}/alerts/another-alert", headers=headers)
    assert found.status_code == 200, found.text
    assert found.json()["alertId"] == "no-such-alert"
    assert again.json() == found.json()
    assert other.status_code == 404, other.text


def test_a_record_nothing_lists_exists_until_it_is_deleted(tmp_path: Path) -> None:
    # Without a list or a create, no client can know which ids exist: every id names
    # a record, built for it, until a delete removes it; then the declared 404.
    document = merged_spec()
    del document["paths"]["/alerts"]
    copy = SpecCopy(root=tmp_path, generated=tmp_path / "generated")
    copy.spec.write_text(yaml.safe_dump(document, sort_keys=False), "utf-8")
    with serve_spec(copy) as base_url:
        headers = auth_headers(base_url)
        url = f"{base_url}/alerts/any-alert"
        found = httpx.get(url, headers=headers)
        deleted = httpx.delete(url, headers=headers)
        gone = httpx.get(url, headers=headers)
        again = httpx.delete(url, headers=headers)
    assert found.status_code == 200, found.text
    assert found.json()["alertId"] == "any-alert"
    assert deleted.status_code == 204, deleted.text
    assert gone.status_code == 404, gone.text
    assert again.status_code == 404, again.text


def test_a_spec_that_has_the_resource_is_kept_and_one_of_another_shape_refused(
    tmp_path: Path,
) -> None:
    spec = tmp_path / "openapi.yaml"
    document = merged_spec()
    spec.write_text(yaml.safe_dump(document, sort_keys=False), "utf-8")
    assert merged_spec(spec=spec) == document
    document["paths"]["/alerts"]["get"]["summary"] = "Alerts of another shape"
    spec.write_text(yaml.safe_dump(document, sort_keys=False), "utf-8")
    with pytest.raises(SpecEditError, match=r"already has \['/alerts'\] in paths"):
        merged_spec(spec=spec)
