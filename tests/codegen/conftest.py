"""The helpers of tests/spec (``spec_copy``: a copy of the spec, generated) for these
tests, whichever test files pytest collected first; and the generator's ``prepare``."""

import importlib.util
import sys
from pathlib import Path
from typing import Any

import pytest

CODEGEN = Path(__file__).resolve().parents[2] / "codegen"

SPEC_TESTS = str(Path(__file__).resolve().parents[1] / "spec")
if SPEC_TESTS not in sys.path:
    sys.path.insert(0, SPEC_TESTS)


@pytest.fixture(scope="module")
def prepare() -> Any:
    """codegen/prepare.py, imported as the generator imports it (codegen on the path):
    its rules give parameters their Python names where two would give one."""
    if str(CODEGEN) not in sys.path:
        sys.path.insert(0, str(CODEGEN))
    found = importlib.util.spec_from_file_location("prepare", CODEGEN / "prepare.py")
    assert found is not None
    assert found.loader is not None
    module = importlib.util.module_from_spec(found)
    found.loader.exec_module(module)
    return module
