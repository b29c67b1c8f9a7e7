"""Every Python and shell example of the README and the docs site runs here, against the mock.

Python blocks are found and run by pytest-examples; shell blocks (which it does not cover)
are found with the same fence rule and run with bash. The blocks of one page run in the
order of the page, in one folder of their own, with ``SERVICE_API_*`` pointing at the
mock: what a reader who follows the page in one terminal would see. A block that cannot
run here (an install line, a ``make`` target) says so in its fence, ``test="skip"``, and
``test_only_setup_blocks_are_skipped`` holds the list of what may be skipped. A Python
block titled with a file name (``title="test_export.py"``, shown so on the site) is a file
the reader saves: it is written into the page's folder, and a later shell block runs it.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from pytest_examples import CodeExample, EvalExample, find_examples

from service_api_mock import DEMO_CLIENT_ID, DEMO_CLIENT_SECRET, RunningMock

ROOT = Path(__file__).resolve().parents[2]
SOURCES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
# The fence rule of pytest-examples (find_examples), for the blocks it does not collect.
FENCE = re.compile(r"(^ *```)( *)(.*?)\n(.+?)\1", flags=re.M | re.S)
SHELL = {"sh", "bash", "shell"}
SHELL_RUN = ["bash", "-euo", "pipefail", "-c"]
SHOWN_ONLY = {"text", "yaml"}  # output, trees, log lines, spec parts: shown, never run
# The walkthrough of adding an endpoint runs against a spec that has its resource
# (test_the_endpoint_walkthrough), not with the other pages.
WALKTHROUGH = ROOT / "docs" / "development" / "endpoint.md"
# What a skipped block may hold, line by line: setting up, or a long-running make target.
SETUP_LINE = re.compile(
    r"(git clone \S+|cd \S+|python3? -m venv \S+|source \S+/activate"
    r"|(\S+/)?(python3? -m )?pip install .+|make( [a-z-]+)*( [A-Z_]+=\S+)*)"
    r"( +#.*)?"
)


@dataclass(frozen=True, repr=False)
class Fence:
    """One fenced block of a page."""

    path: Path
    line: int
    lang: str
    settings: str
    source: str

    @property
    def skipped(self) -> bool:
        return 'test="skip"' in self.settings

    def __str__(self) -> str:
        return f"{self.path.relative_to(ROOT)}:{self.line}"

    __repr__ = __str__  # a failure report shows where the block is, not what it holds


def fences() -> Iterator[Fence]:
    for path in SOURCES:
        text = path.read_text("utf-8")
        for match in FENCE.finditer(text):
            prefix = match.group(3).strip()
            lang, _, settings = prefix.partition(" ")
            line = text[: match.start()].count("\n") + 1
            yield Fence(path, line, lang.lower(), settings, match.group(4))


def runnable() -> list[Fence | CodeExample]:
    """Python examples as pytest-examples finds them, shell blocks as ``fences`` does."""
    python = [
        e for e in find_examples(*SOURCES) if "skip" not in e.prefix_settings().values()
    ]
    shell = [f for f in fences() if f.lang in SHELL and not f.skipped]
    blocks: list[Fence | CodeExample] = [*python, *shell]
    return sorted(blocks, key=lambda b: (SOURCES.index(b.path), _line(b)))


def _line(block: Fence | CodeExample) -> int:
    return block.line if isinstance(block, Fence) else block.start_line


def _id(block: Fence | CodeExample) -> str:
    return f"{block.path.relative_to(ROOT)}:{_line(block)}"


@pytest.fixture(scope="session")
def page_folders() -> dict[Path, Path]:
    """One working folder per page, shared by its blocks in page order."""
    return {}


@pytest.fixture
def page_env(
    request: pytest.FixtureRequest,
    page_folders: dict[Path, Path],
    mock_server: RunningMock,
    tmp_path_factory: pytest.TempPathFactory,
    monkeypatch: pytest.MonkeyPatch,
) -> Path:
    """The page's folder as working directory, and the variables a reader would have set."""
    block = request.node.callspec.params["block"]
    folder = page_folders.get(block.path)
    if folder is None:  # the first block of a page: a fresh folder and a fresh mock
        # The development pages read the repository (openapi.yaml, ...) and write nothing.
        developing = block.path.is_relative_to(ROOT / "docs" / "development")
        folder = ROOT if developing else tmp_path_factory.mktemp(block.path.stem)
        page_folders[block.path] = folder
        mock_server.service.reset()
    monkeypatch.chdir(folder)
    env = {
        "SERVICE_API_BASE_URL": mock_server.base_url,
        "SERVICE_API_CLIENT_ID": DEMO_CLIENT_ID,
        "SERVICE_API_CLIENT_SECRET": DEMO_CLIENT_SECRET,
        "SERVICE_API_ACCOUNT_ID": "acct-1",
        "RUNTIME__DLTHUB_TELEMETRY": "false",
        "DLT_DATA_DIR": str(folder / ".dlt"),
    }
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    return folder


@pytest.mark.parametrize(
    "block", [b for b in runnable() if b.path != WALKTHROUGH], ids=_id
)
def test_example(
    block: Fence | CodeExample, page_env: Path, eval_example: EvalExample
) -> None:
    if isinstance(block, CodeExample):
        _run_python(block, eval_example)
        return
    env = {
        **os.environ,
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
    }
    result = subprocess.run(
        [*SHELL_RUN, block.source],
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, (
        f"{block}: exit {result.returncode}\n--- stdout\n{result.stdout[-4000:]}"
        f"\n--- stderr\n{result.stderr[-4000:]}"
    )


def _saved_as(block: CodeExample) -> str | None:
    """The file name a block is saved under, from its fence's ``title``, if it has one."""
    title = block.prefix_settings().get("title", "")
    return title if title.endswith(".py") else None


def _run_python(block: CodeExample, eval_example: EvalExample) -> None:
    """Run the example; printed output shown in it (``#>`` lines) is checked too.

    pytest-examples re-labels the traceback's frames with the markdown file's lines; on
    CPython 3.11 pytest cannot render such frames, so the failure is reported here: the
    error and the markdown line it came from.
    """
    if (name := _saved_as(block)) is not None:
        Path(name).write_text(block.source, "utf-8")  # the page's folder is the cwd
        return
    try:
        if "#>" in block.source:
            eval_example.run_print_check(block)
        else:
            eval_example.run(block)
    except Exception as exc:
        tb, line = exc.__traceback__, block.start_line
        while tb is not None:
            line = tb.tb_lineno
            tb = tb.tb_next
        message = f"{block.path.relative_to(ROOT)}:{line}: {type(exc).__name__}: {exc}"
        raise AssertionError(message) from None


def test_the_endpoint_walkthrough(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The page's blocks in order, as a reader who made its edit runs them: in a copy of
    the repository whose spec has the page's resource (the file its yaml block includes),
    the client regenerated from it on the path and the mock serving it (tests/spec)."""
    monkeypatch.syspath_prepend(str(ROOT / "tests" / "spec"))
    from spec_copy import ALERTS, build_spec_copy, serve_spec

    shown = f'--8<-- "{ALERTS.relative_to(ROOT)}"'
    assert shown in WALKTHROUGH.read_text("utf-8"), f"the page no longer shows {shown}"
    blocks = [b for b in runnable() if b.path == WALKTHROUGH]
    assert sum(isinstance(b, CodeExample) for b in blocks) >= 2
    copy = build_spec_copy(tmp_path)
    with serve_spec(copy) as base_url:
        for block in blocks:
            run = (
                [sys.executable, "-c"] if isinstance(block, CodeExample) else SHELL_RUN
            )
            result = subprocess.run(
                [*run, block.source],
                cwd=copy.root,
                env=copy.env(base_url),
                stdin=subprocess.DEVNULL,
                capture_output=True,
                text=True,
                timeout=300,
                check=False,
            )
            assert result.returncode == 0, (
                f"{_id(block)}: exit {result.returncode}\n--- stdout\n{result.stdout[-4000:]}"
                f"\n--- stderr\n{result.stderr[-4000:]}"
            )


def test_only_setup_blocks_are_skipped() -> None:
    """Every block is run, shown as output, or a setup step a test cannot take."""
    kinds = {f.lang for f in fences()}
    assert kinds <= {"python", *SHELL, *SHOWN_ONLY}, f"fences of unknown kind: {kinds}"
    for fence in fences():
        if not fence.skipped:
            continue
        assert fence.lang in SHELL, f"{fence}: only shell setup blocks may be skipped"
        lines = [ln.strip() for ln in fence.source.splitlines() if ln.strip()]
        for line in lines:
            if line.startswith("#"):
                continue
            assert SETUP_LINE.fullmatch(line), (
                f"{fence}: {line!r} is not a setup step: run it"
            )


def test_every_page_has_its_examples_collected() -> None:
    """The README's examples are found (a changed fence rule would silently run nothing)."""
    readme = [b for b in runnable() if b.path.name == "README.md"]
    assert sum(isinstance(b, CodeExample) for b in readme) >= 2
    assert sum(isinstance(b, Fence) for b in readme) >= 1


def test_every_saved_file_is_run_by_a_later_block() -> None:
    """A block the reader saves as a file is run by a shell block after it on its page,
    so it is tested and not only written."""
    saved = [b for b in runnable() if isinstance(b, CodeExample) and _saved_as(b)]
    assert saved, "no saved file found: the title rule would silently run nothing"
    for block in saved:
        name = str(_saved_as(block))
        later = [
            f
            for f in fences()
            if f.path == block.path and f.line > block.start_line and f.lang in SHELL
        ]
        assert any(name in f.source for f in later), f"{_id(block)} is never run"
