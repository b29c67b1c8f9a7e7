"""The mock from the command line: ``service-api-mock`` without its extra, a token TTL
that would be announced as 0 seconds, ``make mock PORT=...``."""

from __future__ import annotations

import importlib.metadata
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from cli_process import COMMAND

from service_api_mock import MockConfig
from service_api_mock.__main__ import main as mock_main

ROOT = Path(__file__).resolve().parents[2]

# Runs the entry point with the mock extra's modules made unimportable.
WITHOUT_MOCK_EXTRA = """
import sys
for name in ("starlette", "uvicorn", "multipart", "python_multipart"):
    sys.modules[name] = None
from service_api_cli._mock_entry import main
sys.exit(main(["--port", "0"]))
"""


def test_service_api_mock_without_the_extra_is_one_line() -> None:
    done = subprocess.run(
        [sys.executable, "-c", WITHOUT_MOCK_EXTRA],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2
    (line,) = done.stderr.splitlines()
    assert re.fullmatch(
        r"service-api-mock: error: the mock needs the 'mock' extra "
        r"\(no module '(starlette|uvicorn|multipart|python_multipart)'\): "
        r"pip install 'service-api\[mock\]'",
        line,
    )


def test_the_service_api_mock_script_is_that_entry_point() -> None:
    (script,) = importlib.metadata.entry_points(
        group="console_scripts", name="service-api-mock"
    )
    assert script.value == "service_api_cli._mock_entry:main"


def test_service_api_mock_other_import_errors_are_not_hidden() -> None:
    code = WITHOUT_MOCK_EXTRA.replace(
        'for name in ("starlette", "uvicorn", "multipart", "python_multipart"):',
        'for name in ("attrs",):',
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 1
    assert "Traceback" in done.stderr  # a real bug stays visible


@pytest.mark.parametrize("ttl", ["0", "0.5", "0.999", "nan"])
def test_the_mock_refuses_a_token_ttl_that_rounds_to_0(
    ttl: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exited:
        mock_main(["--port", "0", "--token-ttl", ttl])
    assert exited.value.code == 2
    assert "token_ttl must be at least 1 second" in capsys.readouterr().err


def test_a_token_ttl_of_one_second_or_more_is_accepted() -> None:
    assert MockConfig(token_ttl=1.5).token_ttl == 1.5
    with pytest.raises(ValueError, match="at least 1 second"):
        MockConfig(token_ttl=0.9)


def test_service_api_mock_command_passes_the_refusal_on() -> None:
    done = subprocess.run(
        [*COMMAND, "mock", "--port", "0", "--token-ttl", "0.2"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2
    assert "token_ttl must be at least 1 second" in done.stderr


@pytest.mark.skipif(shutil.which("make") is None, reason="needs the make tool")
def test_make_mock_takes_port() -> None:
    done = subprocess.run(
        ["make", "-n", "mock", "PORT=9123"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert "-m service_api_mock --host 127.0.0.1 --port 9123" in done.stdout


@pytest.mark.parametrize(
    ("argv", "usage"),
    [
        (
            [
                sys.executable,
                "-c",
                "from service_api_cli._mock_entry import main; main()",
            ],
            "service-api-mock",
        ),
        ([*COMMAND, "mock"], "service-api mock"),
    ],
)
def test_the_mock_s_help_names_the_command_that_was_typed(
    argv: list[str], usage: str
) -> None:
    done = subprocess.run(
        [*argv, "--help"], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    assert f"usage: {usage} [" in done.stdout
    assert "python -m service_api_mock" not in done.stdout
