"""The leak guard itself: its scanner finds and masks secrets, and the plugin fails tests."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import leak_guard  # type: ignore[import-not-found]  # tests/ is on sys.path, not mypy's path
import pytest

TOKEN = "tok-0123456789abcdef"


def test_scanner_reports_a_secret_by_fingerprint_and_place() -> None:
    scanner = leak_guard.LeakScanner()
    scanner.add_secret(TOKEN, "issued token")
    scanner.observe("log record (logger 'httpx')", f"Authorization: Bearer {TOKEN}")
    scanner.observe("log record (logger 'httpx')", "GET /shipments 200")

    (finding,) = scanner.scan()

    assert finding.kind == "issued token"
    assert finding.place == "log record (logger 'httpx')"
    assert TOKEN not in str(finding)
    assert finding.fingerprint == leak_guard.fingerprint(TOKEN)
    assert scanner.scan() == []  # observed texts are scanned once


def test_scanner_reads_its_sources_again_before_every_scan() -> None:
    issued: list[str] = []
    scanner = leak_guard.LeakScanner()
    scanner.add_source(lambda: [(t, "issued token") for t in issued])
    scanner.observe("place", f"token {TOKEN}")
    assert scanner.scan() == []

    issued.append(TOKEN)  # issued after the guard started: still caught
    scanner.observe("place", f"token {TOKEN}")
    assert len(scanner.scan()) == 1


def test_scanner_ignores_strings_too_short_to_be_credentials() -> None:
    scanner = leak_guard.LeakScanner()
    scanner.add_secret("abc")
    scanner.observe("place", "abc abc")
    assert scanner.scan() == []


def test_mask_replaces_every_secret_longest_first() -> None:
    scanner = leak_guard.LeakScanner()
    scanner.add_secret(TOKEN)
    scanner.add_secret(TOKEN + "-refresh")
    masked = scanner.mask(f"a={TOKEN} b={TOKEN}-refresh")
    assert TOKEN not in masked
    assert leak_guard.fingerprint(TOKEN + "-refresh") in masked


def test_handler_hands_over_message_arguments_and_tracebacks() -> None:
    scanner = leak_guard.LeakScanner()
    scanner.add_secret(TOKEN)
    handler = leak_guard.ScanningHandler(scanner)
    logger = logging.getLogger("leak-guard-probe")
    logger.addHandler(handler)
    logger.setLevel(logging.DEBUG)
    logger.propagate = False
    try:
        logger.debug("sending %s", "nothing secret")
        try:
            raise RuntimeError(TOKEN)
        except RuntimeError:
            logger.exception("failed")
    finally:
        logger.removeHandler(handler)
    findings = scanner.scan()
    assert handler.records == 2
    assert [f.place for f in findings] == ["log record (logger 'leak-guard-probe')"]


def test_the_plugin_is_active_in_this_run(request: pytest.FixtureRequest) -> None:
    assert request.config.pluginmanager.has_plugin("leak_guard")
    assert leak_guard.HANDLER in logging.getLogger().handlers
    assert logging.getLogger().getEffectiveLevel() == logging.DEBUG


PROBE_TESTS = f"""
import logging
import warnings

import leak_guard
import service_api

TOKEN = {TOKEN!r}
leak_guard.register_secret(TOKEN, "issued token")


def test_logs_a_token():
    logging.getLogger("httpx").debug("Authorization: Bearer %s", TOKEN)


def test_builds_and_swallows_an_error_holding_a_token():
    try:
        raise service_api.InvalidResponseError("bad token " + TOKEN)
    except service_api.ServiceApiError:
        pass


def test_fails_with_a_token_in_its_assertion():
    assert TOKEN == "something else"


def test_warns_with_a_token():
    warnings.warn("token " + TOKEN, UserWarning, stacklevel=1)


def test_stays_clean():
    logging.getLogger("httpx").debug("GET /shipments 200")
"""


def test_plugin_fails_every_test_that_shows_a_token_and_never_prints_it(
    tmp_path: Path,
) -> None:
    (tmp_path / "conftest.py").write_text('pytest_plugins = ["leak_guard"]\n')
    (tmp_path / "test_probe.py").write_text(textwrap.dedent(PROBE_TESTS))
    tests_dir = Path(leak_guard.__file__).parent
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tests_dir), str(tmp_path)])}
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-p",
            "no:cacheprovider",
            "-rA",
            str(tmp_path),
        ],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    out = result.stdout + result.stderr
    assert result.returncode == pytest.ExitCode.TESTS_FAILED, out
    # pytest's own warnings summary quotes a warning verbatim; everything else must be masked.
    before_warnings, _, after_warnings = out.partition("warnings summary")
    assert TOKEN not in before_warnings
    assert TOKEN not in after_warnings.partition("short test summary info")[2]
    fp = leak_guard.fingerprint(TOKEN)
    for name in [
        "test_logs_a_token",
        "test_builds_and_swallows_an_error_holding_a_token",
        "test_fails_with_a_token_in_its_assertion",
    ]:
        assert f"FAILED test_probe.py::{name}" in out, out
    assert "PASSED test_probe.py::test_stays_clean" in out, out
    assert f"issued token {fp} found in log record (logger 'httpx')" in out
    assert f"issued token {fp} found in InvalidResponseError message" in out
    assert f"issued token {fp} found in warning" in out
