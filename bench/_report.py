"""Turning results into a markdown table per case and the concurrency chart.

Example::

    write_markdown(results, Path("bench/results/results.md"))
    write_chart(results, Path("bench/results/concurrency.png"))
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

__all__ = ["markdown", "write_chart", "write_load_chart", "write_markdown"]

_CASE_TITLES = {
    "sequential": "1. Sequential iteration",
    "latency": "2. Latency-bound, concurrency",
    "memory": "3. Memory",
    "tokens": "4. Tokens under concurrent load",
    "overhead": "5. Per-call overhead",
    "mock_throughput": "6. The mock's throughput",
    "quota": "7. Worker processes under one quota",
    "quota_outage": "7b. The shared quota's store stopped mid-run",
    "load": "8. Loading into DuckDB",
}


def _table(header: list[str], rows: list[list[str]]) -> list[str]:
    lines = [
        "| " + " | ".join(header) + " |",
        "|" + "|".join("---" for _ in header) + "|",
    ]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return [*lines, ""]


def _num(value: float, digits: int = 2) -> str:
    return f"{value:,.{digits}f}"


def _spread(stats: dict[str, float], digits: int = 2) -> str:
    return f"{_num(stats['min'], digits)} - {_num(stats['max'], digits)}"


def _targets(results: dict[str, Any]) -> list[str]:
    rows = []
    for name, case in results["cases"].items():
        for target in case.get("targets", []):
            rows.append(
                [
                    _CASE_TITLES.get(name, name).split(". ", 1)[0],
                    target["target"],
                    _num(target["measured"]),
                    target["limit"],
                    "met" if target["met"] else "**missed**",
                ]
            )
    return _table(["Case", "Target", "Measured", "Limit", "Result"], rows)


def _sequential(case: dict[str, Any]) -> list[str]:
    lines = [
        f"{case['records']:,} records, {case['pages']} pages of {case['page_size']}, "
        f"median of {case['repetitions']} alternated runs (min - max).",
        "",
    ]
    rows = [
        [
            name,
            _num(v["wall_s"]["median"], 3),
            _spread(v["wall_s"], 3),
            _num(v["cpu_s"]["median"], 3),
            _num(v["wall_us_per_item"], 1),
            _num(v["cpu_us_per_item"], 1),
        ]
        for name, v in case["variants"].items()
    ]
    lines += _table(
        [
            "Variant",
            "Wall (s)",
            "Wall min - max",
            "Client CPU (s)",
            "Wall µs/record",
            "CPU µs/record",
        ],
        rows,
    )
    lines += _table(
        ["Ratio (median of the per-round ratios)", "Value"],
        [[name, _num(value, 3)] for name, value in case["ratios"].items()],
    )
    cost = case["typed_model_cost"]
    lines += [
        f"Typed models: {_num(cost['cpu_us_per_record_by_hand_minus_raw'], 1)} µs of client CPU "
        f"per record more than raw dicts; `ShipmentPage.from_dict` alone costs "
        f"{_num(cost['from_dict_us_per_record'], 1)} µs per record. "
        f"The mock spent {_num(case['mock_cpu_ms_per_page'], 2)} ms of CPU per page.",
        "",
    ]
    return lines


def _latency(case: dict[str, Any]) -> list[str]:
    lines = [
        f"{case['records']:,} records ({case['pages']} pages), {case['latency_ms']:g} ms latency "
        f"per request, median of {case['repetitions']} runs; {case['note']}.",
        "",
    ]
    rows = [
        [
            row["mode"],
            str(row["concurrency"]),
            _num(row["wall_s"]["median"], 3),
            _spread(row["wall_s"], 3),
            _num(row["ideal_s"], 3),
            _num(row["vs_ideal"]),
            _num(row["speedup_vs_k1"]),
            _num(row["cpu_s"]["median"], 3),
            _num(row["client_cpu_ms_per_page"], 1),
        ]
        for row in case["rows"].values()
    ]
    return lines + _table(
        [
            "Mode",
            "k",
            "Wall (s)",
            "min - max",
            "Ideal (s)",
            "x ideal",
            "Speed-up vs k=1",
            "Client CPU (s)",
            "Client CPU ms/page",
        ],
        rows,
    )


def _memory(case: dict[str, Any]) -> list[str]:
    lines = [
        f"A fresh process per N and variant, at concurrency {case['concurrency']}: `paginate`, "
        "and raw httpx over JSON dicts fetching the same pages as far ahead (the allocator's "
        "own behaviour); growth is the peak (sampled RSS or the kernel's high-water mark) "
        "minus RSS with the client ready.",
        "",
    ]
    rows = [
        [
            row.get("variant", "paginate"),
            f"{row['records']:,}",
            _num(row["rss_start_mb"], 1),
            _num(row["rss_peak_mb"], 1),
            _num(row["high_water_mb"], 1),
            _num(row["growth_mb"], 1),
            _num(row["wall_s"]),
        ]
        for row in case["rows"]
    ]
    lines += _table(
        [
            "Variant",
            "Records",
            "RSS start (MB)",
            "RSS peak (MB)",
            "VmHWM (MB)",
            "Growth (MB)",
            "Wall (s)",
        ],
        rows,
    )
    with_n = case.get("growth_with_n_mb")
    if with_n:
        lines += [
            f"Growth from the smallest to the largest N: {_num(with_n['paginate'], 1)} MB with "
            f"`paginate`, {_num(with_n['raw_httpx'], 1)} MB with raw httpx.",
            "",
        ]
    return lines


def _tokens(case: dict[str, Any]) -> list[str]:
    lines = [
        f"{case['seconds']:g} s per worker count, token TTL {case['token_ttl_s']:g} s, "
        f"refresh skew {case['refresh_skew_s']:g} s: expected /authenticate calls ≈ "
        f"{case['seconds']:g} / ({case['token_ttl_s']:g} - {case['refresh_skew_s']:g}) = "
        f"{_num(case['expected_authenticate'], 1)}. {case['note']}.",
        "",
    ]
    rows = [
        [
            str(row["workers"]),
            f"{row['calls']:,}",
            _num(row["calls_per_s"], 0),
            str(row["authenticate_calls"]),
            str(row["server_401s"]),
            f"{row['caller_401s']} / {row['caller_failures']}",
        ]
        for row in case["rows"]
    ]
    return lines + _table(
        [
            "Workers",
            "Calls",
            "Calls/s",
            "/authenticate",
            "401s absorbed (server)",
            "401s / failures at caller",
        ],
        rows,
    )


def _overhead(case: dict[str, Any]) -> list[str]:
    lines = [
        f"{case['calls_per_run']} calls of one 1-record page per run, median of "
        f"{case['repetitions']} alternated runs.",
        "",
    ]
    rows = [
        [
            name,
            _num(v["wall_us_per_call"], 0),
            _num(v["cpu_us_per_call"], 0),
            _spread(
                {k: x / v["calls"] * 1e6 for k, x in v["wall_s"].items() if k != "n"}, 0
            ),
        ]
        for name, v in case["variants"].items()
    ]
    lines += _table(
        ["Variant", "Wall µs/call", "Client CPU µs/call", "Wall min - max"], rows
    )
    lines += _table(
        ["Difference", "µs/call"],
        [[k, _num(v, 0)] for k, v in case["overhead_us"].items()],
    )
    return lines


def _throughput(case: dict[str, Any]) -> list[str]:
    rows = [
        [
            str(row["connections"]),
            _num(row["requests_per_s"], 0),
            _num(row["mock_cpu_ms_per_request"], 2),
            f"{row['mock_cpu_utilisation'] * 100:.0f} %",
            _num(row["mock_cpu_bound_requests_per_s"], 0),
        ]
        for row in case["rows"]
    ]
    return [
        f"Pages of {case['page_size']} records requested by an async raw-httpx client.",
        "",
        *_table(
            [
                "Connections",
                "Requests/s",
                "Mock CPU ms/request",
                "Mock CPU use",
                "Mock CPU-bound ceiling (req/s)",
            ],
            rows,
        ),
    ]


def _quota_rows(case: dict[str, Any]) -> list[str]:
    """The table of a quota case's pacing variants."""
    rows = []
    for row in case["rows"]:
        if "skipped" in row:
            rows.append(
                [row["variant"], "skipped: " + row["skipped"], "", "", "", "", ""]
            )
            continue
        windows = row["wall_s"] / case["quota_window_s"]
        errors = f" ({', '.join(row['errors'])})" if row["errors"] else ""
        rows.append(
            [
                row["variant"],
                f"{_num(row['wall_s'], 1)} ({windows:.0f})",
                _num(row["fraction_of_q"]),
                f"{row['refused_429']} / {row['requests']}",
                _num(row["percent_429"], 1),
                f"{row['records']:,}",
                f"{row['lost_or_duplicated']}{errors}",
            ]
        )
    header = [
        "Pacing",
        "Wall s (windows)",
        "Throughput / Q",
        "429s / requests",
        "429 %",
        "Records",
        "Lost or duplicated",
    ]
    return _table(header, rows)


def _quota_setting(case: dict[str, Any]) -> str:
    return (
        f"{case['processes']} worker processes of one integration, each exporting its own "
        f"account of {case['records_per_account']:,} records (50 per page), against the "
        f"mock's quota Q = {case['quota_per_minute']:g} requests per minute counted over a "
        f"sliding {case['quota_window_s']:g} s window. A fixed limit is "
        f"{case['fixed_per_process']:g}/min (0.95 Q); every worker retries up to "
        f"{case['max_retries']} times, waiting out Retry-After. Throughput counts the "
        "requests the mock accepted (pages and tokens) over the wall time of the slowest "
        "worker."
    )


def _quota(case: dict[str, Any]) -> list[str]:
    lines = [
        f"{_quota_setting(case)} The learned variants "
        '(`rate_limit="adaptive", rate_store=URL`) start knowing nothing (the store '
        "emptied before each).",
        "",
        *_quota_rows(case),
        "",
        "/authenticate calls when every process lists one page at once:",
        "",
    ]
    token_rows = [
        [
            str(r["processes"]),
            r["token_store"],
            str(r["authenticate_calls"]),
            str(r["pages_listed"]),
        ]
        for r in case["token_rows"]
    ]
    return lines + _table(
        ["Processes", "Shared token", "/authenticate", "Pages listed"], token_rows
    )


def _quota_outage(case: dict[str, Any]) -> list[str]:
    return [
        f"{_quota_setting(case)} The budget is shared through Redis, fixed "
        '(`rate_limit=` the fixed limit) or learned (`rate_limit="adaptive"`), from an '
        "empty store; the Redis server stops once a quarter of the pages are served and "
        "starts again, empty, at half. Each process goes on alone at its share of the "
        "rate (the processes counted from their heartbeats in the store), then rejoins.",
        "",
        *_quota_rows(case),
    ]


def _load(case: dict[str, Any]) -> list[str]:
    lines = [
        f"Shipments of {len(case['accounts'])} accounts into DuckDB, each contender loading "
        "twice into its own file, a fresh process per load: `service-api load`; the floor "
        "(`service-api list` to JSONL, then DuckDB's `read_json_auto`); dlt's `rest_api` "
        "source configured by hand for this API. Peak RSS is the kernel's high-water mark. "
        f"Load / floor at the largest size: {_num(case['ratio_to_floor'])} in wall time, "
        f"{_num(case['cpu_ratio_to_floor'])} in CPU time (user + system of the process, "
        "all its threads: less moved by the machine's other users).",
        "",
    ]
    rows = [
        [
            row["contender"],
            f"{row['records']:,}",
            str(row["run"]),
            _num(row["wall_s"]),
            _num(row["cpu_s"]),
            _num(row["peak_rss_mb"], 0),
            f"{row['rows']:,}",
        ]
        for row in case["rows"]
    ]
    return lines + _table(
        [
            "Contender",
            "Records",
            "Load",
            "Wall (s)",
            "CPU (s)",
            "Peak RSS (MB)",
            "Rows",
        ],
        rows,
    )


_SECTIONS = {
    "sequential": _sequential,
    "latency": _latency,
    "memory": _memory,
    "tokens": _tokens,
    "overhead": _overhead,
    "mock_throughput": _throughput,
    "quota": _quota,
    "quota_outage": _quota_outage,
    "load": _load,
}


def markdown(results: dict[str, Any]) -> str:
    """The whole report: machine, targets, one section per case."""
    m = results["machine"]
    load = (
        m["load_average_at_start"][0],
        m.get("load_average_at_end", [float("nan")])[0],
    )
    lines = [
        "# Benchmark results"
        + (
            " (smoke run: sizes too small to mean anything)" if results["smoke"] else ""
        ),
        "",
        # One paragraph whatever was measured again: the performance page includes
        # this file from line 3 and expects "## Targets" on line 5.
        " ".join(
            [
                f"Measured {results['started_at']} at revision "
                f"{m.get('revision', 'unknown')} on {m['cores']} cores, {m['cpu_model']}, "
                f"{m['implementation']} {m['python']}, httpx {m['httpx']}, "
                f"uvicorn {m['uvicorn']} ({m['platform']}); 1-minute load average "
                f"{load[0]:.2f} at start, {load[1]:.2f} at end; "
                f"the whole run took {results['total_seconds']:.0f} s.",
                *[
                    _rerun(name, rerun)
                    for name, rerun in results.get("reruns", {}).items()
                ],
            ]
        ),
        "",
        "## Targets",
        "",
        *_targets(results),
    ]
    for name, case in results["cases"].items():
        lines += [f"## {_CASE_TITLES[name]}", "", *_SECTIONS[name](case)]
    return "\n".join(lines).rstrip() + "\n"


def _rerun(name: str, rerun: dict[str, Any]) -> str:
    """The sentence saying when case ``name`` was measured again."""
    machine = rerun["machine"]
    end = machine.get("load_average_at_end", [float("nan")])[0]
    return (
        f"{_CASE_TITLES[name]}: measured again {rerun['started_at']} at revision "
        f"{machine.get('revision', 'unknown')}; 1-minute load average "
        f"{machine['load_average_at_start'][0]:.2f} at start, {end:.2f} at end."
    )


def write_markdown(results: dict[str, Any], path: Path) -> None:
    """Write :func:`markdown` to ``path``."""
    path.write_text(markdown(results))


def _latency_lines(ax: Any, rows: list[dict[str, Any]]) -> None:
    """Wall time (median, min-max) and client CPU time of sync and async, per k."""
    for mode, marker in (("sync", "o"), ("async", "s")):
        mine = sorted(
            (r for r in rows if r["mode"] == mode), key=lambda r: r["concurrency"]
        )
        ks = [r["concurrency"] for r in mine]
        color = "C0" if mode == "sync" else "C1"
        ax.plot(
            ks,
            [r["cpu_s"]["median"] for r in mine],
            marker=marker,
            linestyle=":",
            alpha=0.6,
            color=color,
            label=f"{mode}: client CPU time (a floor for the wall time)",
        )
        below = [r["wall_s"]["median"] - r["wall_s"]["min"] for r in mine]
        above = [r["wall_s"]["max"] - r["wall_s"]["median"] for r in mine]
        ax.errorbar(
            ks,
            [r["wall_s"]["median"] for r in mine],
            yerr=[below, above],
            marker=marker,
            capsize=3,
            color=color,
            label=f"{mode}: wall time (median, min-max)",
        )


def _latency_floors(ax: Any, rows: list[dict[str, Any]]) -> None:
    """The floors' wall time, one point each, and the ideal line."""
    floors = (
        ("generated by hand, threads", "D", "C2"),
        ("raw httpx, threads", "^", "C3"),
    )
    for mode, marker, color in floors:
        for r in rows:
            if r["mode"] == mode:
                ax.plot(
                    [r["concurrency"]],
                    [r["wall_s"]["median"]],
                    marker=marker,
                    linestyle="none",
                    color=color,
                    label=f"floor: {mode} (wall)",
                )
    ideal = sorted({(r["concurrency"], r["ideal_s"]) for r in rows})
    ax.plot(
        [k for k, _ in ideal],
        [s for _, s in ideal],
        linestyle="--",
        color="grey",
        label="ideal: ceil(pages / k) x latency",
    )
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xticks([k for k, _ in ideal], [str(k) for k, _ in ideal])


def write_chart(results: dict[str, Any], path: Path) -> None:
    """Wall time against concurrency (case 2), sync and async, with the ideal line."""
    # Imported here, as it takes a second or two and only this needs it. A bare Figure
    # renders PNG with the Agg backend and needs neither pyplot nor a display.
    from matplotlib.figure import Figure

    fig = Figure(figsize=(7, 4.5), dpi=110)
    ax = fig.subplots()
    case = results["cases"].get("latency")
    if case is None:
        ax.text(0.5, 0.5, "the latency case was not run", ha="center", va="center")
    else:
        rows = list(case["rows"].values())
        _latency_lines(ax, rows)
        _latency_floors(ax, rows)
        ax.set_title(
            f"{case['records']:,} records ({case['pages']} pages), "
            f"{case['latency_ms']:g} ms latency"
        )
        ax.legend(fontsize="small")
    ax.set_xlabel("concurrency k (pages in flight)")
    ax.set_ylabel("wall time (s)")
    ax.grid(True, which="both", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path)


def write_load_chart(results: dict[str, Any], path: Path) -> None:
    """Wall time and peak RSS of each contender of the load case (case 8), per size."""
    from matplotlib.figure import Figure

    case = results["cases"].get("load")
    if case is None:
        return
    fig = Figure(figsize=(9, 4), dpi=110)
    wall_ax, rss_ax = fig.subplots(1, 2)
    firsts = [r for r in case["rows"] if r["run"] == 1]
    sizes = sorted({r["records"] for r in firsts})
    contenders = list(dict.fromkeys(r["contender"] for r in firsts))
    width = 0.8 / len(contenders)
    for i, contender in enumerate(contenders):
        mine = {r["records"]: r for r in firsts if r["contender"] == contender}
        xs = [k + i * width for k in range(len(sizes))]
        for ax, key in ((wall_ax, "wall_s"), (rss_ax, "peak_rss_mb")):
            ax.bar(
                xs, [mine[n][key] for n in sizes], width, label=contender, color=f"C{i}"
            )
    for ax, label in (
        (wall_ax, "wall time of the first load (s)"),
        (rss_ax, "peak RSS (MB)"),
    ):
        ax.set_xticks(
            [k + 0.4 - width / 2 for k in range(len(sizes))], [f"{n:,}" for n in sizes]
        )
        ax.set_xlabel("records (all accounts)")
        ax.set_ylabel(label)
        ax.grid(True, axis="y", alpha=0.3)
    wall_ax.legend(fontsize="small")
    fig.tight_layout()
    fig.savefig(path)
