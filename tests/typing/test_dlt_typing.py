"""Type-checked by mypy --strict: ``service_api.dlt`` as users call it, and the mock's
``update_record`` that its tests use.

``assert_type`` fails the type check if a signature drifts; importing the module is
the only runtime test.
"""

from typing import Any, assert_type

import pytest

pytest.importorskip(
    "dlt", reason="dlt is not installed: pip install 'service-api[dlt]'"
)

import dlt
from dlt.common.pipeline import LoadInfo
from dlt.extract import DltSource

import service_api
from service_api.dlt import (
    ACCOUNT_COLUMN,
    SOURCE_NAME,
    fastest_file_format,
    list_endpoints,
    load,
    load_files,
    source,
)
from service_api_mock import MockService


def build(client: service_api.Client, pipeline: dlt.Pipeline) -> None:
    errors: list[BaseException] = []
    assert_type(
        source(
            client, ["acct-1"], endpoints=["shipments"], page_size=50, errors=errors
        ),
        DltSource,
    )
    assert_type(
        source(client, ("acct-1", "acct-2"), primary_keys={"devices": "x"}), DltSource
    )
    assert_type(load(pipeline, client, ["acct-1"], concurrency=4), LoadInfo)
    assert_type(list_endpoints(), dict[str, str | None])
    assert_type(
        load_files(pipeline, "shipments", ["s.jsonl"], account="acct-1"), LoadInfo
    )
    assert_type(fastest_file_format(pipeline), str | None)
    assert_type(ACCOUNT_COLUMN, str)
    assert_type(SOURCE_NAME, str)


def change(service: MockService) -> None:
    assert_type(
        service.update_record("shipments", "acct-1", 0, {"status": "x"}), dict[str, Any]
    )
