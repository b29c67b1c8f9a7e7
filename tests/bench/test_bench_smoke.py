"""The benchmark harness still runs: ``python -m bench.run --smoke`` at toy sizes.

Benchmarks are not tests, so no timing is checked here: only that every case ran,
reported complete results with positive numbers, and that all three files were written.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
CASES = ("sequential", "latency", "memory", "tokens", "overhead", "mock_throughput")


@pytest.fixture(scope="module")
def smoke_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    out = tmp_path_factory.mktemp("bench")
    completed = subprocess.run(
        [sys.executable, "-m", "bench.run", "--smoke", "--out", str(out)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=90,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr[-3000:]
    results: dict[str, Any] = json.loads((out / "results.json").read_text())
    return out, results


def _positive_summary(stats: dict[str, float]) -> None:
    assert stats["n"] >= 1
    assert 0 < stats["min"] <= stats["median"] <= stats["max"]


def test_every_case_ran_and_the_machine_is_described(
    smoke_run: tuple[Path, dict[str, Any]],
) -> None:
    _, results = smoke_run
    assert results["smoke"] is True
    assert tuple(results["cases"]) == CASES
    machine = results["machine"]
    assert machine["cores"] >= 1
    assert machine["cpu_model"]
    assert machine["python"].startswith("3.")
    assert results["total_seconds"] > 0


def test_sequential_case_reports_all_four_variants(smoke_run: tuple[Path, dict[str, Any]]) -> None:
    case = smoke_run[1]["cases"]["sequential"]
    assert set(case["variants"]) == {"raw_httpx", "generated_by_hand", "paginate", "apaginate"}
    for variant in case["variants"].values():
        assert variant["items"] == case["records"] > 0
        _positive_summary(variant["wall_s"])
        _positive_summary(variant["cpu_s"])
        assert variant["wall_us_per_item"] > 0
    assert case["ratios"]
    assert all(value > 0 for value in case["ratios"].values())
    assert case["typed_model_cost"]["from_dict_us_per_record"] > 0
    assert case["mock_cpu_ms_per_page"] >= 0


def test_latency_case_covers_every_mode_and_concurrency(
    smoke_run: tuple[Path, dict[str, Any]],
) -> None:
    case = smoke_run[1]["cases"]["latency"]
    rows = case["rows"].values()
    assert {(row["mode"], row["concurrency"]) for row in rows} == {
        (mode, k) for mode in ("sync", "async") for k in (1, 2)
    }
    for row in rows:
        _positive_summary(row["wall_s"])
        assert row["ideal_s"] > 0
        assert row["vs_ideal"] > 0
        assert row["speedup_vs_k1"] > 0


def test_memory_case_measures_each_size_in_its_own_process(
    smoke_run: tuple[Path, dict[str, Any]],
) -> None:
    case = smoke_run[1]["cases"]["memory"]
    assert [row["records"] for row in case["rows"]] == [100, 200]
    for row in case["rows"]:
        assert row["items"] == row["records"]
        assert 0 < row["rss_start_mb"] <= row["rss_peak_mb"]
        assert row["growth_mb"] >= 0


def test_tokens_case_counts_authentication_per_worker_count(
    smoke_run: tuple[Path, dict[str, Any]],
) -> None:
    case = smoke_run[1]["cases"]["tokens"]
    assert [row["workers"] for row in case["rows"]] == [1, 4]
    for row in case["rows"]:
        assert row["calls"] > 0
        assert row["authenticate_calls"] >= 1
        assert row["caller_failures"] >= 0


def test_overhead_and_throughput_cases_report_positive_rates(
    smoke_run: tuple[Path, dict[str, Any]],
) -> None:
    overhead = smoke_run[1]["cases"]["overhead"]
    assert set(overhead["variants"]) == {
        "raw_httpx",
        "generated_fixed_token",
        "overlay",
        "raw_httpx_async",
        "overlay_async",
    }
    for variant in overhead["variants"].values():
        assert variant["wall_us_per_call"] > 0
        assert variant["cpu_us_per_call"] > 0
    throughput = smoke_run[1]["cases"]["mock_throughput"]
    assert throughput["rows"]
    for row in throughput["rows"]:
        assert row["requests"] > 0
        assert row["requests_per_s"] > 0


def test_targets_table_markdown_and_chart_are_written(
    smoke_run: tuple[Path, dict[str, Any]],
) -> None:
    out, results = smoke_run
    for case in results["cases"].values():
        for target in case["targets"]:
            assert set(target) == {"target", "measured", "limit", "met"}
            assert isinstance(target["met"], bool)
    markdown = (out / "results.md").read_text()
    assert "| Case | Target | Measured | Limit | Result |" in markdown
    for title in (
        "1. Sequential",
        "2. Latency",
        "3. Memory",
        "4. Tokens",
        "5. Per-call",
        "6. The mock",
    ):
        assert f"## {title}" in markdown
    chart = (out / "concurrency.png").read_bytes()
    assert chart.startswith(b"\x89PNG\r\n\x1a\n")
    assert len(chart) > 5_000
