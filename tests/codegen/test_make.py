"""``make`` regenerates generated/ atomically: into a folder beside it, swapped in only once
the spec check passed. A failed run (the generator refuses the spec, or the check does)
leaves the previous package as it was, and the next ``make`` tries again.

Run in a copy of the repository's make inputs (the Makefile, codegen/, openapi.yaml,
generated/ and this virtualenv), so that the repository is never touched. The check is
the Makefile's ``SPEC_CHECK`` command: ``false`` stands for a spec the mock cannot serve.
"""

from __future__ import annotations

import hashlib
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml
from spec_copy import ROOT

PACKAGE = Path("generated/service_api_client")


def fingerprint(folder: Path) -> str:
    """One hash of every file under ``folder``: its path and its bytes."""
    digest = hashlib.sha256()
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        if "__pycache__" not in path.parts:
            digest.update(str(path.relative_to(folder)).encode())
            digest.update(path.read_bytes())
    return digest.hexdigest()


def make(root: Path, check: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["make", "--no-print-directory", "generated", f"SPEC_CHECK={check}"],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """The make inputs of the repository, in ``tmp_path``; the virtualenv linked."""
    if shutil.which("make") is None:
        pytest.skip("make is not installed")
    for name in ("Makefile", "openapi.yaml", "pyproject.toml", "requirements.lock"):
        shutil.copy2(ROOT / name, tmp_path / name)  # their times: .venv is up to date
    shutil.copytree(
        ROOT / "codegen",
        tmp_path / "codegen",
        ignore=shutil.ignore_patterns("__pycache__"),
    )
    shutil.copytree(
        ROOT / PACKAGE, tmp_path / PACKAGE, ignore=shutil.ignore_patterns("__pycache__")
    )
    (tmp_path / ".venv").symlink_to(ROOT / ".venv")
    return tmp_path


def add_an_operation(root: Path) -> None:
    """A spec edit that changes the package: a copy of getShipment under another name."""
    spec = yaml.safe_load((root / "openapi.yaml").read_text("utf-8"))
    latest = dict(spec["paths"]["/shipments/{shipmentId}"]["get"])
    latest["operationId"] = "getLatestShipment"
    spec["paths"]["/shipments/{shipmentId}/latest"] = {"get": latest}
    (root / "openapi.yaml").write_text(yaml.safe_dump(spec, sort_keys=False), "utf-8")


def test_a_refused_spec_leaves_the_package_and_the_next_make_tries_again(
    root: Path,
) -> None:
    before = fingerprint(root / PACKAGE)
    add_an_operation(root)
    refused = make(root, "false")
    assert refused.returncode != 0, refused.stdout + refused.stderr
    assert fingerprint(root / PACKAGE) == before
    assert [p.name for p in (root / "generated").iterdir()] == ["service_api_client"]
    passed = make(root, "true")
    assert passed.returncode == 0, passed.stdout + passed.stderr
    assert (root / PACKAGE / "api/shipments/get_latest_shipment.py").is_file()
    assert [p.name for p in (root / "generated").iterdir()] == ["service_api_client"]
    assert "generated/ from openapi.yaml" in passed.stdout
    # Up to date now: checked, not generated again.
    after = fingerprint(root / PACKAGE)
    again = make(root, "true")
    assert again.returncode == 0, again.stdout + again.stderr
    assert "generated/ from openapi.yaml" not in again.stdout
    assert fingerprint(root / PACKAGE) == after


def test_a_spec_the_generator_refuses_leaves_the_package(root: Path) -> None:
    before = fingerprint(root / PACKAGE)
    text = (root / "openapi.yaml").read_text("utf-8")
    (root / "openapi.yaml").write_text(text.replace("in: path", "in: body", 1), "utf-8")
    refused = make(root, "true")
    assert refused.returncode != 0
    assert "not one of" in refused.stderr, refused.stderr
    assert fingerprint(root / PACKAGE) == before
    assert [p.name for p in (root / "generated").iterdir()] == ["service_api_client"]
