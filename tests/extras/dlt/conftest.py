"""Fixtures of the dlt tests: a pipeline writing to a DuckDB file and a pipelines
directory in ``tmp_path``, dlt's telemetry off, the demo client on the session's mock.

dlt is an optional extra: every test module here starts with ``pytest.importorskip``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

import service_api
from service_api_mock import DEMO_CLIENT_ID, DEMO_CLIENT_SECRET, RunningMock

if TYPE_CHECKING:
    import dlt

MakePipeline = Callable[[], "dlt.Pipeline"]


@pytest.fixture(autouse=True)
def _no_telemetry(monkeypatch: pytest.MonkeyPatch) -> None:
    # dlt reports anonymous usage over the network unless told not to; tests stay on
    # 127.0.0.1.
    monkeypatch.setenv("RUNTIME__DLTHUB_TELEMETRY", "false")


@pytest.fixture
def database(tmp_path: Path) -> Path:
    """The DuckDB file the pipeline loads into."""
    return tmp_path / "service_api.duckdb"


@pytest.fixture
def make_pipeline(tmp_path: Path, database: Path) -> MakePipeline:
    """Builds the pipeline: a new object over the same working directory at each call,
    as a new process would."""
    import dlt

    def build() -> dlt.Pipeline:
        return dlt.pipeline(
            pipeline_name="service_api_test",
            destination=dlt.destinations.duckdb(str(database)),
            dataset_name="raw",
            pipelines_dir=str(tmp_path / "pipelines"),
        )

    return build


@pytest.fixture
def client(mock: RunningMock) -> Iterator[service_api.Client]:
    """A client of the demo integration on the (reset) session mock, retries off so that
    an injected failure ends a load at once."""
    with service_api.Client(
        mock.base_url,
        DEMO_CLIENT_ID,
        DEMO_CLIENT_SECRET,
        retry=service_api.RetryPolicy(max_retries=0),
    ) as built:
        yield built


Sql = Callable[..., list[tuple[object, ...]]]


@pytest.fixture
def sql(database: Path) -> Sql:
    """Runs a query with ``?`` parameters on the DuckDB file (opened read-only, closed
    again) and returns its rows."""
    import duckdb

    def run(statement: str, *params: object) -> list[tuple[object, ...]]:
        with duckdb.connect(str(database), read_only=True) as connection:
            rows: list[tuple[object, ...]] = connection.execute(
                statement, params
            ).fetchall()
        return rows

    return run
