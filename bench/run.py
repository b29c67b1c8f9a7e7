"""Run the benchmarks: ``python -m bench.run [--smoke] [--out DIR] [--cases NAME,...]``.

Writes ``results.json``, ``results.md``, ``concurrency.png`` (case 2) and ``load.png``
(case 8) to ``--out`` (``bench/results`` by default); the cases are in
:mod:`bench.cases`, one module each. ``--smoke`` runs every case at toy sizes in a few
seconds, to prove the harness still works; its numbers mean nothing.

Example::

    python -m bench.run --smoke --out /tmp/bench-smoke
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import signal
import subprocess
import sys
import time
from collections.abc import Sequence
from datetime import UTC, datetime
from importlib.metadata import version
from pathlib import Path
from typing import Any

from ._mock_process import MockProcess
from ._report import write_chart, write_load_chart, write_markdown
from ._sizes import FULL, SMOKE, Sizes
from .cases import CASES

__all__ = ["CASES", "main", "run"]

_DEFAULT_OUT = Path(__file__).resolve().parent / "results"


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def _revision() -> str:
    """The commit measured, marked ``+dirty`` when the client, mock or generated code
    differ from it (``BENCH_REVISION`` overrides, for runs outside a checkout)."""
    given = os.environ.get("BENCH_REVISION")
    if given:
        return given
    repo = Path(__file__).resolve().parent.parent
    try:
        head = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            cwd=repo,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        changes = subprocess.run(
            ["git", "status", "--porcelain", "--", "overlay", "mock", "generated"],
            cwd=repo,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return f"{head}+dirty" if changes else head


def machine() -> dict[str, Any]:
    """What the numbers were measured on."""
    return {
        "revision": _revision(),
        "cores": os.cpu_count(),
        "cpu_model": _cpu_model(),
        "python": platform.python_version(),
        "implementation": platform.python_implementation(),
        "platform": platform.platform(),
        "httpx": version("httpx"),
        "uvicorn": version("uvicorn"),
        "load_average_at_start": list(os.getloadavg()),
    }


def run(
    names: Sequence[str],
    sizes: Sizes,
    *,
    smoke: bool,
    out: Path | None = None,
    kept: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Run the named cases against one mock process; return the JSON-ready results.

    With ``out``, ``results.json`` is rewritten after every case, so a long run that
    is stopped half-way still leaves what it measured. With ``kept`` (the results of an
    earlier whole run), the named cases replace theirs and the others are kept; when and
    where each case was measured again is under ``reruns``.
    """
    fresh: dict[str, Any] = {
        "smoke": smoke,
        "started_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": machine(),
        "cases": {},
    }
    results = (
        fresh if kept is None else {**kept, "reruns": dict(kept.get("reruns", {}))}
    )
    wall0 = time.perf_counter()
    with MockProcess() as mock:
        for name in names:
            case0 = time.perf_counter()
            print(f"[bench] {name} ...", file=sys.stderr, flush=True)
            result = CASES[name](mock, sizes)
            result["case_seconds"] = time.perf_counter() - case0
            results["cases"][name] = result
            if results is not fresh:
                rerun = {"started_at": fresh["started_at"], "machine": fresh["machine"]}
                results["reruns"][name] = rerun
            if out is not None:
                _write_json(results, out)
            print(
                f"[bench] {name} done in {result['case_seconds']:.1f} s",
                file=sys.stderr,
                flush=True,
            )
    fresh["total_seconds"] = time.perf_counter() - wall0
    fresh["machine"]["load_average_at_end"] = list(os.getloadavg())
    if out is not None:
        _write_json(results, out)
    return results


def _write_json(results: dict[str, Any], out: Path) -> None:
    (out / "results.json").write_text(json.dumps(results, indent=2) + "\n")


def main(argv: Sequence[str] | None = None) -> int:
    """Parse arguments, run the cases, write the three result files."""
    parser = argparse.ArgumentParser(prog="python -m bench.run", description=__doc__)
    parser.add_argument("--smoke", action="store_true", help="toy sizes, a few seconds")
    parser.add_argument(
        "--out", type=Path, default=_DEFAULT_OUT, help="output directory"
    )
    parser.add_argument(
        "--cases",
        default=",".join(CASES),
        help=f"comma-separated subset of: {', '.join(CASES)}",
    )
    args = parser.parse_args(argv)
    names = [name.strip() for name in args.cases.split(",") if name.strip()]
    unknown = [name for name in names if name not in CASES]
    if unknown:
        parser.error(f"unknown case(s): {', '.join(unknown)}")
    # A terminated run still stops its mock: SystemExit unwinds the ``with`` blocks.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(128 + signal.SIGTERM))
    out: Path = args.out
    out.mkdir(parents=True, exist_ok=True)
    # Some cases only: the other cases' results of the last whole run are kept. A run of
    # every case the folder holds (make bench writes cases 1-7 and the load case apart)
    # is a whole run of its own.
    kept = None
    previous = out / "results.json"
    if previous.exists() and not args.smoke:
        kept = json.loads(previous.read_text())
        if kept.get("smoke") or set(kept["cases"]) <= set(names):
            kept = None
    results = run(
        names, SMOKE if args.smoke else FULL, smoke=args.smoke, out=out, kept=kept
    )
    write_markdown(results, out / "results.md")
    if "latency" in names:
        write_chart(results, out / "concurrency.png")
    if "load" in names:
        write_load_chart(results, out / "load.png")
    print(f"[bench] wrote {out}/results.json, results.md and charts", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
