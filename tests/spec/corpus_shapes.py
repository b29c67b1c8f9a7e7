"""The shapes of ``tests/spec/corpus``, grafted into a copy of ``openapi.yaml`` and taken
through everything a user runs: the generator, ``mypy --strict``, the mock's own check,
every new door against the mock, ``service-api list`` and ``service-api load``.

A *case* is one shape alone (its file's stem, ``stripe_customers``) or every shape at
once (``all``). Each step is a function of the case's generated copy; the tests
(test_spec_corpus.py) call them, and ``python tests/spec/corpus_shapes.py CASE...`` runs
them all and prints what each step said (for a person who adds a shape).

Example::

    copy, said = generate(tmp_path, graft(shapes("petstore_expanded")))
    with serve_spec(copy, "--records", "3") as base_url:
        assert doors(copy, base_url).returncode == 0
"""

from __future__ import annotations

import copy as copying
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import yaml
from growth_calls import example
from spec_copy import (
    PARAMETER_VALUES,
    REGISTRY_SCRIPT,
    ROOT,
    SpecCopy,
    SpecEditError,
    serve_spec,
)

from service_api_mock import DEMO_ACCOUNTS
from service_api_spec import SpecDocument, read_spec

CORPUS = Path(__file__).with_name("corpus")
CALLS = Path(__file__).with_name("growth_calls.py")
ALL = "all"
ACCOUNT = DEMO_ACCOUNTS[0]


def cases() -> list[str]:
    """Every shape's name, then ``all``."""
    return [path.stem for path in sorted(CORPUS.glob("*.yaml"))] + [ALL]


def shapes(case: str) -> list[Path]:
    """The files of a case: one shape, or every shape for ``all``."""
    if case == ALL:
        return sorted(CORPUS.glob("*.yaml"))
    path = CORPUS / f"{case}.yaml"
    if not path.is_file():
        raise ValueError(f"no shape {case!r} in {CORPUS}: one of {cases()}")
    return [path]


def base() -> dict[str, Any]:
    """The repository's spec, as read."""
    document: dict[str, Any] = yaml.safe_load(
        (ROOT / "openapi.yaml").read_text("utf-8")
    )
    return document


def graft(
    files: Iterable[Path], document: dict[str, Any] | None = None
) -> dict[str, Any]:
    """``document`` (default: the repository's spec) with each shape's tags, paths and
    component schemas added, as a user copies them in. Two shapes that spell one part
    two ways are an error, not an overwrite.

    Example::

        graft(shapes("all"))["paths"]["/customers"]
    """
    grown = copying.deepcopy(document if document is not None else base())
    for path in files:
        part: dict[str, Any] = yaml.safe_load(path.read_text("utf-8"))
        tags = grown.setdefault("tags", [])
        tags += [tag for tag in part.get("tags", []) if tag not in tags]
        targets = (
            (grown.setdefault("paths", {}), part.get("paths", {})),
            (
                grown.setdefault("components", {}).setdefault("schemas", {}),
                part.get("components", {}).get("schemas", {}),
            ),
        )
        for target, source in targets:
            clash = sorted(
                k for k in set(target) & set(source) if target[k] != source[k]
            )
            if clash:
                raise SpecEditError(
                    f"{path.name} spells {clash} otherwise than the spec"
                )
            target.update(copying.deepcopy(source))
    return grown


def new_operations(document: dict[str, Any]) -> list[str]:
    """The operationIds of ``document`` that the corpus's shapes add: those of the
    paths a shape declares. Not those beyond the repository's spec: that spec may have
    every shape grafted already (the suite run on such a spec), and a case's own operations
    would then be none."""
    corpus = {
        path
        for file in shapes(ALL)
        for path in (yaml.safe_load(file.read_text("utf-8")).get("paths") or {})
    }
    return [
        op.operation_id
        for op in read_spec(SpecDocument(document)).operations
        if op.path in corpus
    ]


def run(
    command: Sequence[str], copy: SpecCopy, base_url: str | None = None, **where: Any
) -> subprocess.CompletedProcess[str]:
    """``command`` with the copy's generated client first on the path."""
    return subprocess.run(
        list(command),
        env=copy.env(base_url),
        cwd=where.get("cwd", copy.root),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


def generate(folder: Path, document: dict[str, Any]) -> tuple[SpecCopy, str]:
    """Write ``document`` and the generator into ``folder`` and run the generator as
    ``make`` does; the copy and what the generator said on stderr. SpecEditError, with
    what it said, when it fails."""
    root, generated = folder / "repo", folder / "generated"
    root.mkdir(parents=True)
    shutil.copytree(
        ROOT / "codegen", root / "codegen", ignore=shutil.ignore_patterns("__pycache__")
    )
    text = yaml.safe_dump(document, sort_keys=False, allow_unicode=True)
    (root / "openapi.yaml").write_text(text, "utf-8")
    copy = SpecCopy(root=root, generated=generated)
    done = run([sys.executable, "codegen/generate.py", str(generated)], copy)
    if done.returncode != 0:
        raise SpecEditError(
            f"codegen/generate.py failed (exit {done.returncode}):\n{done.stderr[-4000:]}"
        )
    return copy, done.stderr


def check_spec(copy: SpecCopy) -> subprocess.CompletedProcess[str]:
    """The mock's own check of the copy's spec (``make`` runs it after generating)."""
    command = [sys.executable, "-m", "service_api_mock", "--check-spec", str(copy.spec)]
    return run(command, copy)


def doors(copy: SpecCopy, base_url: str) -> subprocess.CompletedProcess[str]:
    """Every new operation's door called against the mock at ``base_url``
    (tests/spec/growth_calls.py: one JSON line per operation)."""
    document = yaml.safe_load(copy.spec.read_text("utf-8"))
    return run(
        [sys.executable, str(CALLS), str(copy.spec), *new_operations(document)],
        copy,
        base_url,
    )


def registry(copy: SpecCopy) -> dict[str, Any]:
    """The copy's ``LIST_ENDPOINTS`` as its own child process reads it."""
    done = run([sys.executable, "-c", REGISTRY_SCRIPT], copy)
    if done.returncode != 0:
        raise SpecEditError(f"the registry does not import:\n{done.stderr[-3000:]}")
    found: dict[str, Any] = json.loads(done.stdout)
    return found


def new_lists(copy: SpecCopy) -> dict[str, Any]:
    """The registry's lists of the copy that the corpus's shapes add: those of the
    new operations (:func:`new_operations`), by their resource's name."""
    document = yaml.safe_load(copy.spec.read_text("utf-8"))
    spec = read_spec(SpecDocument(document))
    added = set(new_operations(document))
    names = {
        spec.resources[str(op.resource)].name
        for op in spec.lists
        if op.operation_id in added
    }
    return {k: v for k, v in registry(copy).items() if k in names}


def option(parameter: dict[str, Any]) -> str:
    """The command line's option of a path parameter: ``--shipment-id``."""
    return "--" + str(parameter["python_name"]).strip("_").replace("_", "-")


def list_arguments(
    name: str, lists: dict[str, Any], copy: SpecCopy, base_url: str, cwd: Path
) -> list[str]:
    """What ``service-api list NAME`` needs: each parent's id from the first record of
    the parent's own list, a value of its kind for any other required parameter."""
    args: list[str] = []
    for parameter in lists[name]["parameters"]:
        if not parameter["required"]:
            continue
        if parameter["location"] != "path":
            choices = parameter["choices"]
            value = (
                str(choices[0])
                if choices
                else PARAMETER_VALUES.get(parameter["kind"], "x")
            )
            args += ["--param", f"{parameter['name']}={value}"]
            continue
        parents = [p for p, e in lists.items() if e["id_field"] == parameter["name"]]
        value = path_value(copy, parameter["name"])
        if parents:
            more = list_arguments(parents[0], lists, copy, base_url, cwd)
            done = export([parents[0], *more, "--max-items", "1"], copy, base_url, cwd)
            first = [json.loads(line) for line in done.stdout.splitlines()]
            if done.returncode == 0 and first:
                value = str(first[0].get(parameter["name"], value))
        args += [option(parameter), value]
    return args


def path_value(copy: SpecCopy, name: str) -> str:
    """A value the spec's schema of the path parameter ``name`` allows (its pattern
    met), for a parent no list gives."""
    document = SpecDocument(yaml.safe_load(copy.spec.read_text("utf-8")))
    for item in document.get("#/paths").values():
        for node in [item, *(v for v in item.values() if isinstance(v, dict))]:
            for parameter in (
                node.get("parameters", []) if isinstance(node, dict) else []
            ):
                parameter, _ = document.resolve(parameter)
                if parameter.get("name") == name and parameter.get("in") == "path":
                    return str(example(document, parameter.get("schema", {})))
    return "corpus"


def export(
    args: list[str], copy: SpecCopy, base_url: str, cwd: Path
) -> subprocess.CompletedProcess[str]:
    """``service-api list ARGS`` for the first demo account."""
    return copy.cli(["list", *args, "--account", ACCOUNT], base_url, cwd)


def load(
    args: list[str], copy: SpecCopy, base_url: str, cwd: Path
) -> subprocess.CompletedProcess[str]:
    """``service-api load ARGS`` into a DuckDB file in ``cwd``."""
    argv = ["load", *args, "--account", ACCOUNT, "--pipelines-dir", "state"]
    return copy.cli(argv, base_url, cwd)


def main(argv: Sequence[str]) -> int:
    """Run every step of each case named and print whether each passed (with
    ``--show``, the first lines each said too: the doors' answers, the records
    exported, the load's summary); 1 if one failed."""
    import tempfile

    show = "--show" in argv
    argv = [a for a in argv if a != "--show"]
    failed = 0
    for case in argv or cases():
        with tempfile.TemporaryDirectory(prefix=f"corpus-{case}-") as work:
            folder = Path(work)
            try:
                copy, said = generate(folder / "copy", graft(shapes(case)))
            except SpecEditError as exc:
                print(f"{case}: generate FAILED\n{exc}")
                failed += 1
                continue
            steps: dict[str, tuple[int, str]] = {"generate": (0, said)}
            if os.environ.get("CORPUS_TYPE_CHECK", "1") == "1":
                checked = copy.type_check()
                steps["mypy"] = (checked.returncode, checked.stdout + checked.stderr)
            checked = check_spec(copy)
            steps["check-spec"] = (checked.returncode, checked.stderr)
            with serve_spec(copy, "--records", "3") as base_url:
                called = doors(copy, base_url)
                steps["doors"] = (called.returncode, called.stdout + called.stderr)
                for name in new_lists(copy):
                    lists = new_lists(copy)
                    more = list_arguments(name, lists, copy, base_url, folder)
                    done = export(
                        [name, *more, "--max-items", "3"], copy, base_url, folder
                    )
                    steps[f"list {name}"] = (done.returncode, done.stdout + done.stderr)
                    done = load([name, *more], copy, base_url, folder)
                    steps[f"load {name}"] = (done.returncode, done.stderr)
            for step, (code, text) in steps.items():
                failed += code != 0
                print(f"{case}: {step} {'ok' if code == 0 else f'FAILED ({code})'}")
                if code != 0 or (step == "generate" and text.strip()):
                    print("    " + text.strip()[-3000:].replace("\n", "\n    "))
                elif show and text.strip():
                    lines = [line[:160] for line in text.strip().splitlines()[:6]]
                    print("    " + "\n    ".join(lines))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
