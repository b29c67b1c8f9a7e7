"""Mutation testing of the core (``make mutation``): each module's mutants against the
tests that use it, one mutant at a time, with a time limit per mutant.

Every mutant of a module (cosmic-ray's operators) is applied to the source in place and
the module's test files run with ``pytest -x``; a failing or timed-out run kills it.
Mutants no input can tell from the original (equivalent mutants) are excluded with
cosmic-ray's own filter: ``cr-filter-pragma`` skips every mutant of a source line that
ends in ``# pragma: no mutate``, whose reason is said beside it (and on the mutation
page); like the mutants of type annotations, they are not counted, so a score is the
share of the killable mutants killed. The counts go to ``tests/mutation/results.json``
(kept per module, so modules can be run one at a time) and the table of
``docs/development/mutation.md`` is rewritten from it, a module with no result yet shown
as "not run yet". The survivors' diffs are printed and written to
``build/mutation/<module>.survivors.txt``, to be killed by a test, deleted with the dead
code they show, or marked as equivalent in the source with the reason.

    python tests/mutation/run.py [--sample N] [--seed S] [module ...]   # default: every module

Results are kept per module and per seed (the seed draws the sample; a run of every
mutant has none): a sample that another seed draws can hold survivors the first missed,
so the page gives each seed's figures and those of the distinct mutants of all seeds.
"""

from __future__ import annotations

import argparse
import ast
import json
import random
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from cosmic_ray.work_db import WorkDB, use_db  # type: ignore[import-untyped]
from cosmic_ray.work_item import (  # type: ignore[import-untyped]
    TestOutcome,
    WorkerOutcome,
    WorkResult,
)

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
BUILD = ROOT / "build" / "mutation"
RESULTS = ROOT / "tests" / "mutation" / "results.json"
PAGE = ROOT / "docs" / "development" / "mutation.md"
SOURCE = "overlay/service_api"
#: Seconds one mutant's test run may take (the unmutated run takes a few); longer kills it.
TIMEOUT = 60.0
#: The seed of the committed sample; ``--seed`` (``make mutation SEED=...``) draws another.
SEED = 25

#: Every core module and the tests that use it; the fastest (unit) file first, as
#: ``pytest -x`` stops at the first failure.
MODULES: dict[str, tuple[str, ...]] = {
    "_retry": ("tests/core/test_retry.py", "tests/core/test_client_options.py"),
    "_page_plan": ("tests/core/test_page_plan.py", "tests/core/test_pagination.py"),
    "_pagination": ("tests/core/test_pagination.py", "tests/hostile/test_hostile.py"),
    "_auth": ("tests/core/test_auth.py", "tests/hostile/test_hostile_auth.py"),
    "_errors": ("tests/core/test_errors.py",),
    "_transport": (
        "tests/core/test_transport.py",
        "tests/core/test_client.py",
        "tests/core/test_client_options.py",
    ),
    "_client": (
        "tests/core/test_client.py",
        "tests/core/test_client_options.py",
        "tests/core/test_client_environment.py",
        "tests/core/test_transport.py",
        "tests/core/test_errors.py",
        "tests/core/test_core_alone.py",
        # The generated doors' answers that are not their success (_unexpected_answer).
        "tests/core/test_resources.py",
    ),
    "_pools": (
        "tests/core/test_client.py",
        "tests/core/test_transport.py",
        "tests/core/test_client_options.py",
        "tests/reliability/test_resource_leaks.py",
    ),
    "_logs": ("tests/core/test_log_switch.py", "tests/core/test_logging_secrets.py"),
    "testing": ("tests/core/test_retry.py",),
}

BEGIN, END = "<!-- mutation-table: begin -->", "<!-- mutation-table: end -->"


def _config(module: str) -> Path:
    tests = " ".join(MODULES[module])
    command = f"{BIN}/python -m pytest -x -q -p no:cacheprovider {tests}"
    path = BUILD / f"{module}.toml"
    path.write_text(
        "[cosmic-ray]\n"
        f'module-path = "{SOURCE}/{module}.py"\n'
        f"timeout = {TIMEOUT}\n"
        "excluded-modules = []\n"
        f'test-command = "{command}"\n'
        '[cosmic-ray.distributor]\nname = "local"\n'
    )
    return path


def _annotations(source: Path) -> list[tuple[tuple[int, int], tuple[int, int]]]:
    """The (start, end) of each type annotation: never evaluated at run time
    (``from __future__ import annotations``), so mypy checks them, not the tests."""
    spans = []
    for node in ast.walk(ast.parse(source.read_text())):
        for note in (getattr(node, "returns", None), getattr(node, "annotation", None)):
            if isinstance(note, ast.expr) and note.end_lineno and note.end_col_offset:
                start = (note.lineno, note.col_offset)
                spans.append((start, (note.end_lineno, note.end_col_offset)))
    return spans


def _select(
    session: Path, source: Path, sample: int | None, seed: int
) -> tuple[list[str], list[str]]:
    """Skip the mutants of annotations, then all but a random sample of ``sample``
    mutants drawn with ``seed`` if asked, among those the pragma filter left; the names
    of the annotation mutants skipped and of those the pragma filter excluded."""
    annotations = _annotations(source)
    with use_db(str(session), WorkDB.Mode.open) as db:
        # The pragma filter ran first: what it skipped is all that has a result.
        excluded = {item.job_id: _name(item) for item, _ in db.completed_work_items}
        items = [item for item in db.work_items if item.job_id not in excluded]
        typed = {item.job_id: _name(item) for item in items if _in(item, annotations)}
        # In the order of the source (job ids are random), so a sample can be drawn again.
        order = sorted(items, key=lambda item: _where(item.mutations[0]))
        jobs = [item.job_id for item in order if item.job_id not in typed]
        if sample is not None:
            jobs = random.Random(seed).sample(jobs, min(sample, len(jobs)))
        skipped = [item.job_id for item in items if item.job_id not in set(jobs)]
        db.set_multiple_results(
            skipped, WorkResult(worker_outcome=WorkerOutcome.SKIPPED)
        )
    return sorted(typed.values()), sorted(excluded.values())


def _where(mutation: Any) -> tuple[str, int]:
    return mutation.operator_name, mutation.occurrence


def _name(item: Any) -> str:
    """A mutant's name, the same in every session of an unchanged module."""
    operator, occurrence = _where(item.mutations[0])
    return f"{operator}#{occurrence}"


def _in(item: Any, spans: list[tuple[tuple[int, int], tuple[int, int]]]) -> bool:
    return any(a <= tuple(m.start_pos) < b for m in item.mutations for a, b in spans)


def _tally(session: Path, module: str, left_out: int) -> dict[str, Any]:
    killed = survived = 0
    survivors: list[str] = []
    ran, lived = [], []
    with use_db(str(session), WorkDB.Mode.open) as db:
        total = db.num_work_items - left_out
        for item, result in db.completed_work_items:
            if result.worker_outcome == WorkerOutcome.SKIPPED:
                continue
            if result.test_outcome is None:  # the worker itself failed: not a verdict
                raise SystemExit(
                    f"{module}: {item.job_id} did not run: {result.output}"
                )
            ran.append(_name(item))
            if result.test_outcome == TestOutcome.SURVIVED:
                survived += 1
                lived.append(_name(item))
                mutation = item.mutations[0]
                survivors.append(
                    f"{mutation.operator_name} line {mutation.start_pos[0]}\n{result.diff}"
                )
            else:  # killed, timed out, or not even importable
                killed += 1
    (BUILD / f"{module}.survivors.txt").write_text("\n".join(survivors))
    print("\n".join(survivors))
    counts = {
        "mutants": killed + survived,
        "of": total,
        "killed": killed,
        "survived": survived,
    }
    return counts | {"ran": sorted(ran), "survivors": sorted(lived)}


def run(module: str, sample: int | None, seed: int) -> dict[str, Any]:
    source = ROOT / SOURCE / f"{module}.py"
    config, session = _config(module), BUILD / f"{module}.sqlite"
    session.unlink(missing_ok=True)
    started = time.monotonic()
    subprocess.run([BIN / "cosmic-ray", "init", config, session], check=True, cwd=ROOT)
    # The equivalent mutants, marked "# pragma: no mutate" in the source with the reason.
    subprocess.run([BIN / "cr-filter-pragma", session], check=True, cwd=ROOT)
    annotations, excluded = _select(session, source, sample, seed)
    subprocess.run([BIN / "cosmic-ray", "exec", config, session], check=True, cwd=ROOT)
    diff = subprocess.run(
        ["git", "diff", "--quiet", "--", source], cwd=ROOT, check=False
    )
    if diff.returncode:
        raise SystemExit(f"{source} was left mutated: restore it with git checkout")
    result = _tally(session, module, len(annotations) + len(excluded))
    result["annotation mutants"] = len(annotations)
    result["excluded as equivalent"] = excluded
    result["seconds"] = round(time.monotonic() - started)
    result["tests"] = list(MODULES[module])
    print(f"{module} (seed {seed}): {result}")
    return result


def _seed_order(seed: str) -> tuple[bool, int]:
    return not seed.isdigit(), int(seed) if seed.isdigit() else 0


def _score(killed: int, mutants: int, of: int | None = None) -> str:
    """``killed`` of ``mutants`` (drawn from ``of`` when that is more) and the percentage."""
    drawn = f" (sample of {of})" if of is not None and of > mutants else ""
    return (
        f"{killed} of {mutants}{drawn}: {100 * killed / mutants:.1f} %"
        if mutants
        else "none"
    )


def write_page(results: dict[str, Any]) -> None:
    """The table of the page: each seed's figures per module, then those of the distinct
    mutants the seeds drew together (a mutant drawn by two seeds counts once)."""
    seeds = sorted(
        {seed for runs in results.values() for seed in runs}, key=_seed_order
    )
    head = " | ".join(
        "every mutant" if seed == "all" else f"seed {seed}" for seed in seeds
    )
    rows = [f"| module | {head} | all seeds |", "| --- |" + " --- |" * (len(seeds) + 1)]
    for module in MODULES:
        runs = results.get(module, {})
        if not runs:
            rows.append(f"| `{module}.py` |" + " not run yet |" * (len(seeds) + 1))
            continue
        cells = []
        for seed in seeds:
            r = runs.get(seed)
            cells.append(_score(r["killed"], r["mutants"], r["of"]) if r else "")
        ran = set().union(*(r["ran"] for r in runs.values()))
        lived = set().union(*(r["survivors"] for r in runs.values()))
        cells.append(_score(len(ran - lived), len(ran)))
        rows.append(f"| `{module}.py` | " + " | ".join(cells) + " |")
    text = PAGE.read_text()
    head_text, rest = text.split(BEGIN)
    _, tail = rest.split(END)
    PAGE.write_text(f"{head_text}{BEGIN}\n" + "\n".join(rows) + f"\n{END}{tail}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "modules", nargs="*", help=f"of {', '.join(MODULES)} (default: all)"
    )
    parser.add_argument(
        "--sample", type=int, help="run a seeded sample of N mutants each"
    )
    parser.add_argument(
        "--seed", type=int, default=SEED, help=f"of the sample (default {SEED})"
    )
    parser.add_argument(
        "--page", action="store_true", help="only rewrite the page's table"
    )
    args = parser.parse_args()
    if unknown := set(args.modules) - set(MODULES):
        parser.error(f"not a core module of the table: {', '.join(sorted(unknown))}")
    BUILD.mkdir(parents=True, exist_ok=True)
    results = json.loads(RESULTS.read_text()) if RESULTS.exists() else {}
    # Figures kept before results were kept per seed are not comparable: they go.
    results = {m: runs for m, runs in results.items() if "mutants" not in runs}
    if args.page:
        return write_page(results)
    for module in args.modules or MODULES:
        seed = str(args.seed if args.sample is not None else "all")
        results.setdefault(module, {})[seed] = run(module, args.sample, args.seed)
        RESULTS.write_text(json.dumps(results, indent=2, sort_keys=True) + "\n")
        write_page(results)


if __name__ == "__main__":
    main()
