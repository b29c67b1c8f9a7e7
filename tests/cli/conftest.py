"""Fixtures of the command line's tests: a spec that grew (``tests/spec/growth.yaml``
merged into the repository's), generated once, whose lists take parameters that the
repository's own spec may not have."""

import importlib
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

SPEC_TESTS = str(Path(__file__).resolve().parents[1] / "spec")
if SPEC_TESTS not in sys.path:
    sys.path.insert(0, SPEC_TESTS)

from spec_copy import GROWTH, SpecCopy, build_spec_copy, load_generated  # noqa: E402

import service_api_cli._job  # noqa: E402
import service_api_client.api  # noqa: E402


@pytest.fixture(scope="session")
def grown_copy(tmp_path_factory: pytest.TempPathFactory) -> SpecCopy:
    """The repository's spec with growth.yaml merged in, and its client generated."""
    return build_spec_copy(tmp_path_factory.mktemp("cli-grown"), GROWTH)


@pytest.fixture(scope="session")
def grown_registry(grown_copy: SpecCopy) -> Mapping[str, Any]:
    """The grown copy's ``LIST_ENDPOINTS``, imported beside the repository's own."""
    load_generated(grown_copy, "cli_grown_client")
    registry: Mapping[str, Any] = importlib.import_module(
        "cli_grown_client.api"
    ).LIST_ENDPOINTS
    return registry


@pytest.fixture
def grown(
    grown_registry: Mapping[str, Any], monkeypatch: pytest.MonkeyPatch
) -> Mapping[str, Any]:
    """The command line reads the grown copy's registry, for this test."""
    monkeypatch.setattr(service_api_client.api, "LIST_ENDPOINTS", grown_registry)
    monkeypatch.setattr(service_api_cli._job, "LIST_ENDPOINTS", grown_registry)
    return grown_registry
