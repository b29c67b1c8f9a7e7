"""The built site works where users read it: opened from disk, offline.

The site is built once into a folder of its own (as ``make docs`` does, strict), then
every page is read back: each internal ``href``/``src`` names a file that exists (a link
to a folder lands on a folder listing when read from disk), no script, stylesheet or font
comes from the web, and no page lists a section twice in its sidebar.
"""

from __future__ import annotations

import subprocess
import sys
from collections import Counter
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

ROOT = Path(__file__).resolve().parents[2]
WEB = ("http:", "https:", "//")


class PageLinks(HTMLParser):
    """The references of one page: links, loaded resources, and the sidebar's entries."""

    def __init__(self) -> None:
        super().__init__()
        self.links: list[str] = []  # <a href>: may point to the web
        self.loads: list[str] = []  # what the browser fetches to show the page
        self.sidebar: list[str] = []
        self.ids: set[str] = set()
        self._sidebar_depth = 0  # > 0 inside the theme's sidebar
        self._in_sidebar_link = False
        self._text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attr = {name: value or "" for name, value in attrs}
        if "id" in attr:
            self.ids.add(attr["id"])
        if tag == "a" and "href" in attr:
            self.links.append(attr["href"])
        elif tag == "link" and "href" in attr:
            self.loads.append(attr["href"])
        elif "src" in attr:
            self.loads.append(attr["src"])
        if self._sidebar_depth:
            self._sidebar_depth += tag == "div"
            if tag == "a":
                self._in_sidebar_link, self._text = True, []
        elif tag == "div" and "bs-sidebar" in attr.get("class", "").split():
            self._sidebar_depth = 1

    def handle_endtag(self, tag: str) -> None:
        if not self._sidebar_depth:
            return
        if tag == "a" and self._in_sidebar_link:
            self.sidebar.append("".join(self._text).strip())
            self._in_sidebar_link = False
        elif tag == "div":
            self._sidebar_depth -= 1

    def handle_data(self, data: str) -> None:
        if self._in_sidebar_link:
            self._text.append(data)


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The site as ``make docs`` builds it (strict: a broken reference fails the build)."""
    out = tmp_path_factory.mktemp("site")
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "mkdocs",
            "build",
            "--strict",
            "--quiet",
            "-d",
            str(out),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, f"mkdocs build failed:\n{result.stderr[-4000:]}"
    return out


@pytest.fixture(scope="module")
def pages(site: Path) -> dict[Path, PageLinks]:
    parsed = {}
    for page in sorted(site.rglob("*.html")):
        if (
            page.name == "404.html"
        ):  # a web server's answer to a missing path: its links
            continue  # are absolute by design, and nothing read from disk leads to it
        parser = PageLinks()
        parser.feed(page.read_text("utf-8"))
        parsed[page] = parser
    assert len(parsed) >= 20, f"only {len(parsed)} pages built"
    return parsed


def _target(site: Path, page: Path, reference: str) -> Path | None:
    """The file an internal reference names, or None for the web, mail and data."""
    if reference.startswith((*WEB, "mailto:", "data:")):
        return None
    path = unquote(urlsplit(reference).path)
    return page if not path else (page.parent / path).resolve()


def test_every_internal_link_names_a_file(
    site: Path, pages: dict[Path, PageLinks]
) -> None:
    broken = []
    for page, links in pages.items():
        for reference in links.links + links.loads:
            target = _target(site, page, reference)
            if target is None:
                continue
            if not target.is_file() or not target.is_relative_to(site.resolve()):
                broken.append(f"{page.relative_to(site)}: {reference}")
                continue
            fragment = urlsplit(reference).fragment
            if fragment and target.suffix == ".html":
                ids = pages[target].ids if target in pages else set()
                if unquote(fragment) not in ids:
                    broken.append(
                        f"{page.relative_to(site)}: {reference} (no such anchor)"
                    )
    assert not broken, "links that name no file of the site:\n" + "\n".join(broken)


def test_the_links_seen_include_the_navigation(
    site: Path, pages: dict[Path, PageLinks]
) -> None:
    """The parser sees the theme's links: the check above is not vacuous."""
    index = pages[site / "index.html"]
    assert "guides/client.html" in index.links
    assert any(load.endswith(".css") for load in index.loads)
    assert any(load.endswith(".js") for load in index.loads)


def test_nothing_is_loaded_from_the_web(
    site: Path, pages: dict[Path, PageLinks]
) -> None:
    remote = [
        f"{page.relative_to(site)}: {load}"
        for page, links in pages.items()
        for load in links.loads
        if load.startswith(WEB)
    ]
    # Stylesheets may load fonts and other sheets: url(...) and @import of the web.
    for sheet in sorted(site.rglob("*.css")):
        text = sheet.read_text("utf-8", errors="replace")
        for marker in ("url(http", "url('http", 'url("http', "url(//", "@import"):
            if marker in text:
                remote.append(f"{sheet.relative_to(site)}: {marker}")
    assert not remote, "the site loads from the web:\n" + "\n".join(remote)


def test_no_section_twice_in_a_sidebar(
    site: Path, pages: dict[Path, PageLinks]
) -> None:
    twice = {
        str(page.relative_to(site)): sorted(
            t for t, n in Counter(links.sidebar).items() if n > 1
        )
        for page, links in pages.items()
    }
    assert not {page: titles for page, titles in twice.items() if titles}
    performance = pages[site / "development" / "performance.html"].sidebar
    assert "Targets" in performance, "the sidebar parser found no entries"


def test_the_results_open_as_the_performance_page_expects() -> None:
    """development/performance.md includes the results from line 3 (after the title) and
    leaves out line 5 of the load results (its second "Targets" heading)."""
    for path in (
        ROOT / "bench/results/results.md",
        ROOT / "bench/results/load/results.md",
    ):
        lines = path.read_text("utf-8").splitlines()
        assert lines[0].startswith("# Benchmark results"), path
        assert lines[1] == "", path
        assert lines[4] == "## Targets", path
