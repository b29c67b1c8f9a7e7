"""The floors of docs/development/architecture.md: what each package may import.

Every ``import`` of every module of the project's packages is read (with ``ast``, so
that nothing is imported to check it). An import at the top of a module, or in a class,
must go to a floor below or to the package itself; an import inside a function (run
only when that function is) may also go to the few places listed in ``LAZY``, each the
way an option loads what it needs.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = {
    "service_api_spec": ROOT / "spec" / "service_api_spec",
    "service_api_client": ROOT / "generated" / "service_api_client",
    "service_api": ROOT / "overlay" / "service_api",
    "service_api_speccheck": ROOT / "speccheck" / "service_api_speccheck",
    "service_api_mock": ROOT / "mock" / "service_api_mock",
    "service_api_cli": ROOT / "cli" / "service_api_cli",
}
# The floors by their own names; the core's extras are floors of their own.
EXTRAS = ("service_api.quota", "service_api.dlt")
ALLOWED = {
    "service_api_spec": set(),
    "service_api_client": set(),
    "service_api": {"service_api_client"},
    "service_api.quota": {"service_api", "service_api_client"},
    "service_api.dlt": {"service_api", "service_api_client"},
    "service_api_speccheck": {"service_api", "service_api_client", "service_api_spec"},
    "service_api_mock": {"service_api_spec"},
    "service_api_cli": {
        "service_api",
        "service_api_client",
        "service_api.dlt",
        "service_api_spec",
    },
}
LAZY = {
    # The core loads an extra when an option asks for it (rate_limit=, token_store=);
    # observe= takes an AnswerObserver the core defines, so the spec check is not one.
    "service_api": {"service_api.quota"},
    # The fixture service_api_client of the mock's pytest plugin is a core client.
    "service_api_mock": {"service_api"},
    # service-api mock and service-api spec.
    "service_api_cli": {"service_api_mock", "service_api_speccheck"},
}
# Modules that are programs of their own rather than part of their package's library.
PROGRAMS = {
    # make demo: starts the mock and runs the command line against it.
    "service_api_cli._demo": {"service_api_mock"},
}


def floor(module: str) -> str | None:
    """The floor of ``module``, or None for a module not of the project."""
    for extra in EXTRAS:
        if module == extra or module.startswith(f"{extra}."):
            return extra
    for package in PACKAGES:
        if module == package or module.startswith(f"{package}."):
            return package
    return None


def modules() -> Iterator[tuple[str, Path]]:
    for package, folder in PACKAGES.items():
        for path in sorted(folder.rglob("*.py")):
            parts = path.relative_to(folder).with_suffix("").parts
            name = ".".join((package, *parts)).removesuffix(".__init__")
            yield name, path


def imports(name: str, path: Path) -> Iterator[tuple[str, bool]]:
    """Each module ``path`` imports, and whether the import is inside a function.
    Imports for the type checker alone (``if TYPE_CHECKING:``) are left out."""
    tree = ast.parse(path.read_text("utf-8"))
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    functions = [
        n
        for n in ast.walk(tree)
        if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)
    ]
    inside = {id(n) for f in functions for n in ast.walk(f)}
    checks = [
        n
        for n in ast.walk(tree)
        if isinstance(n, ast.If) and ast.unparse(n.test).endswith("TYPE_CHECKING")
    ]
    typing_only = {id(n) for check in checks for n in ast.walk(check)}
    for node in ast.walk(tree):
        if id(node) in typing_only:
            continue
        lazy = id(node) in inside
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, lazy
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*parts, *([node.module] if node.module else [])])
            yield base, lazy
            for alias in node.names:  # from service_api import quota
                yield f"{base}.{alias.name}", lazy


@pytest.mark.parametrize(("name", "path"), list(modules()), ids=lambda v: str(v))
def test_every_import_goes_to_a_floor_below(name: str, path: Path) -> None:
    own = floor(name)
    assert own is not None
    wrong = []
    for target, lazy in imports(name, path):
        other = floor(target)
        if other is None or other == own:
            continue
        if other in ALLOWED[own] | PROGRAMS.get(name, set()):
            continue
        if lazy and other in LAZY.get(own, set()):
            continue
        wrong.append(f"{target}{' (in a function)' if lazy else ''}")
    assert not wrong, f"{name} ({own}) imports {sorted(set(wrong))}"


def test_the_rules_know_every_package() -> None:
    found = {floor(name) for name, _ in modules()}
    assert found == set(ALLOWED)


def test_no_floor_reaches_back_to_itself() -> None:
    """No circle of imports between packages, lazy imports included: a package that a
    package below it imports, even inside a function, is not below it at all. (The
    core's extras are the core's own modules here: it loads them for its options.)"""

    def package(module: str) -> str | None:
        return next((p for p in PACKAGES if f"{module}.".startswith(f"{p}.")), None)

    edges: dict[str, set[str]] = {name: set() for name in PACKAGES}
    for name, path in modules():
        own = package(name)
        assert own is not None
        for target, _lazy in imports(name, path):
            other = package(target)
            if other is not None and other != own and name not in PROGRAMS:
                edges[own].add(other)

    def reaches(start: str, goal: str, seen: set[str]) -> bool:
        for step in edges[start] - seen:
            if step == goal or reaches(step, goal, seen | {step}):
                return True
        return False

    circles = sorted(name for name in edges if reaches(name, name, set()))
    assert not circles, {name: sorted(edges[name]) for name in circles}
