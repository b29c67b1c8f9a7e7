"""``service-api list`` against a service that changes shape mid-export: every record is
exported as sent, each place that differs from the spec is said once, and the command
ends with one line that sums them up (places named, with counts).

The service serves pages of a list endpoint of the generated registry (the first one that
needs no argument); after page 1 its records carry a field the spec does not declare and
an integer in a field the spec types as a string.
"""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

import pytest
from cli_process import cli_env, read_jsonl, run_cli
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from service_api_client.api import LIST_ENDPOINTS
from service_api_client.records import STRING
from service_api_mock import serve_asgi

ENTRY = next(
    entry
    for entry in LIST_ENDPOINTS.values()
    if not any(p.required for p in entry.parameters)
    # Records that can be made of strings: every field they require is a plain one.
    and all(f.kind == STRING for f in entry.item_model._FIELDS if f.required)
)
ITEM = ENTRY.item_model
# The fields every record carries (strings), so only the drift made on purpose is drift.
REQUIRED = [f.name for f in ITEM._FIELDS if f.required]
# A field the spec types as a string (or null), not the identifier: an integer there
# is drift.
TEXT_FIELD = next(
    f.name
    for f in ITEM._FIELDS
    if str in f.kind.exact and int not in f.kind.exact and f.name != ENTRY.id_field
)
PAGE_SIZE = 4
PAGES = 3


def _record(number: int) -> dict[str, object]:
    """Record ``number`` (from 0): those past the first page of PAGE_SIZE drifted."""
    record: dict[str, object] = {name: f"{name}-{number}" for name in REQUIRED}
    record[TEXT_FIELD] = f"text-{number}"
    if ENTRY.id_field:
        record[ENTRY.id_field] = f"id-{number}"
    if number >= PAGE_SIZE:  # the service changed
        record |= {TEXT_FIELD: number, "~new": True}
    return record


def _app() -> Starlette:
    async def token(request: Request) -> JSONResponse:
        return JSONResponse(
            {"access_token": "tk", "token_type": "Bearer", "expires_in": "3600"}
        )

    async def page(request: Request) -> JSONResponse:
        number = int(request.query_params.get("pageNumber", "1"))
        size = int(request.query_params.get("pageSize", str(PAGE_SIZE)))
        total = PAGE_SIZE * PAGES
        numbers = range(size * (number - 1), min(size * number, total))
        body = {
            "totalRecords": total,
            "pageNumber": number,
            "pageSize": size,
            "data": [_record(n) for n in numbers],
        }
        return JSONResponse(body)

    return Starlette(
        routes=[
            Route("/public/v3/authenticate", token, methods=["POST"]),
            Route("/public/v3/{path:path}", page),
        ]
    )


def test_list_says_each_drift_once_and_ends_with_their_sum(tmp_path: Path) -> None:
    out = tmp_path / "records.jsonl"
    with serve_asgi(_app(), name="drifting-service") as origin:
        done = run_cli(
            ["list", ENTRY.name, "--page-size", str(PAGE_SIZE), "-o", str(out)],
            cli_env(f"{origin}/public/v3", SERVICE_API_ACCOUNT_ID="acct-1"),
        )
    assert done.returncode == 0, done.stderr
    records = read_jsonl(out)  # every record, as sent
    assert [json.dumps(r, sort_keys=True) for r in records] == [
        json.dumps(_record(n), sort_keys=True) for n in range(PAGE_SIZE * PAGES)
    ]
    lines = done.stderr.strip().splitlines()
    text_place = f"{ITEM.__name__}.{TEXT_FIELD}"
    new_place = f"{ITEM.__name__}.~new"
    for place in (text_place, new_place):
        said = [line for line in lines if f"differs from the spec at {place}:" in line]
        assert len(said) == 1, lines
        assert said[0].endswith("next: service-api spec check")
    drifted = PAGE_SIZE * (PAGES - 1)
    assert lines[-1] == (
        "service-api: the answers differed from the spec at 2 places: "
        f"{text_place} ({drifted}), {new_place} ({drifted}); "
        "next: service-api spec check"
    ), lines
    assert lines[-2].startswith(f"service-api: exported {PAGE_SIZE * PAGES} records")


def test_load_ends_with_the_sum_of_the_drift_and_loads_every_record(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    pytest.importorskip("dlt", reason="dlt (the dlt extra) is not installed")
    from service_api_cli import main

    monkeypatch.setattr(sys, "stdin", io.StringIO())  # not a terminal
    monkeypatch.chdir(tmp_path)
    with serve_asgi(_app(), name="drifting-service") as origin:
        for name, value in cli_env(f"{origin}/public/v3").items():
            monkeypatch.setenv(name, value)
        argv = ["load", ENTRY.name, "--account", "acct-1", "--pipelines-dir", "state"]
        code = main([*argv, "--page-size", str(PAGE_SIZE)])
    lines = capsys.readouterr().err.strip().splitlines()
    assert code == 0, lines
    assert f"{PAGE_SIZE * PAGES} rows" in lines[-2], lines
    assert lines[-1].startswith("service-api: the answers differed from the spec at 2 ")
    assert f"{ITEM.__name__}.~new ({PAGE_SIZE * (PAGES - 1)})" in lines[-1]
