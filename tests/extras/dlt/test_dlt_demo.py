"""``make demo`` loads both endpoints into DuckDB and counts the rows per account."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip(
    "dlt", reason="dlt is not installed: pip install 'service-api[dlt]'"
)
pytest.importorskip(
    "duckdb", reason="duckdb is not installed: pip install 'service-api[dlt]'"
)

from service_api_cli._demo import DATABASE_NAME, main


def test_demo_loads_into_duckdb_and_counts_per_account(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    output = tmp_path / "demo" / "shipments.jsonl"
    assert main(["--records", "20", "--output", str(output)]) == 0
    lines = capsys.readouterr().out.splitlines()
    counted = [line.split()[1:] for line in lines if line.startswith("demo:   ")]
    assert counted == [
        ["devices", "acct-1", "20"],
        ["devices", "acct-2", "20"],
        ["shipments", "acct-1", "20"],
        ["shipments", "acct-2", "20"],
    ]
    assert (output.parent / DATABASE_NAME).is_file()
    # dlt's state beside the DuckDB file it belongs to.
    assert (output.parent / f"{DATABASE_NAME}.dlt").is_dir()
    assert lines[-1] == "demo: mock stopped"
