"""Every pointer from the code to the docs lands on a page and section that exist.

Docstrings and comments of the library, the command line and the mock send readers to
``docs/...md`` pages and README sections, written as ``docs/guides/errors.md, "Retries"``,
``docs/guides/pagination.md ("Pagination policy")``, ``"Repeats" in
docs/guides/pagination.md`` or ``the README ("Settings")``. Sections are matched against
the page's headings, so a renamed or removed heading fails here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SOURCES = sorted(
    p for d in ("overlay", "cli", "mock") for p in (ROOT / d).rglob("*.py")
)
PAGE = r"README|docs/[\w/.-]+\.md"
GAP = r"[\s#:]*"  # spaces, and a line break with the comment marks of the next line
SECTION = r'"([^"]{1,80})"'
POINTER = re.compile(
    rf"(?P<page>{PAGE})(?:\)?,?{GAP}\(?{SECTION})?|{SECTION}{GAP}in{GAP}(?P<page2>{PAGE})"
)
HEADING = re.compile(r"^#+\s+(.+?)\s*#*$", re.M)

# A pointer to a README section that no longer exists, fixed in the client's own files
# by their owner: left out here until then (delete the entry once that fix is in).
AWAITING_FIX = {
    ("overlay/service_api/_client.py", "README", "Client behaviour and defaults"),
}


@dataclass(frozen=True)
class Pointer:
    source: str
    line: int
    page: str
    section: str | None

    def __str__(self) -> str:
        where = f'{self.page} ("{self.section}")' if self.section else self.page
        return f"{self.source}:{self.line}: {where}"


def pointers() -> list[Pointer]:
    found = []
    for path in SOURCES:
        text = path.read_text("utf-8")
        for match in POINTER.finditer(text):
            page = match.group("page") or match.group("page2")
            section = match.group(2) or match.group(3)
            if section is not None:
                section = re.sub(r"\s*\n\s*(#:?\s*)?", " ", section)
            line = text.count("\n", 0, match.start()) + 1
            found.append(Pointer(str(path.relative_to(ROOT)), line, page, section))
    return found


def headings(page: str) -> set[str]:
    path = ROOT / ("README.md" if page == "README" else page)
    return {h.strip("`") for h in HEADING.findall(path.read_text("utf-8"))}


def broken(pointer: Pointer) -> bool:
    path = ROOT / ("README.md" if pointer.page == "README" else pointer.page)
    if not path.is_file():
        return True
    return pointer.section is not None and pointer.section not in headings(pointer.page)


def test_every_pointer_lands_on_a_page_and_section_that_exist() -> None:
    bad = [
        str(p)
        for p in pointers()
        if broken(p) and (p.source, p.page, p.section) not in AWAITING_FIX
    ]
    assert not bad, "pointers to no such page or section:\n" + "\n".join(bad)


def test_pointers_are_found() -> None:
    """The pattern finds the pointers written today: the check above is not vacuous."""
    found = {(p.page, p.section) for p in pointers()}
    assert ("docs/guides/pagination.md", "Pagination policy") in found
    assert ("docs/guides/pagination.md", "Repeats") in found
    assert ("docs/guides/errors.md", "Retries") in found
