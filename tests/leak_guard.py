"""A pytest plugin that fails the run when a credential shows up where it must not.

Active for the whole suite (``pytest_plugins`` in ``tests/conftest.py``). The secrets it
looks for are the client secrets and every token issued by every ``MockService`` living
in the process (read again before each scan, so tokens issued during a test count), plus
whatever a test registers with :func:`register_secret` (such as a hostile server's token).

Where it looks, for every test phase:

* every log record of any logger, at DEBUG: a handler on the root logger, with the root
  level lowered to DEBUG so httpx and httpcore speak too;
* the message of every ``service_api`` error constructed during the test, raised and
  caught ones included;
* the report pytest writes: the failure text (``longrepr``) and the captured output;
* every warning pytest records.

A finding turns the phase's report into a failure whose text names the place and a short
fingerprint of the secret, never the secret itself (a secret found in a failure text is
masked there). Example: a test that logs ``"token %s", token`` fails with
``leak guard: issued token sha256:1f2e3d4c found in log record (logger 'x')``.
"""

from __future__ import annotations

import hashlib
import logging
import sys
import threading
from collections.abc import Callable, Generator, Iterable
from dataclasses import dataclass, field
from typing import Any

import pytest

# Shorter strings would match ordinary words; every real credential is longer.
MIN_SECRET_LENGTH = 6


@dataclass(frozen=True)
class Finding:
    """One secret seen in one place."""

    kind: str
    fingerprint: str
    place: str

    def __str__(self) -> str:
        return f"leak guard: {self.kind} {self.fingerprint} found in {self.place}"


def fingerprint(secret: str) -> str:
    """A stable, non-reversible name for a secret, safe to print."""
    return "sha256:" + hashlib.sha256(secret.encode()).hexdigest()[:8]


@dataclass
class LeakScanner:
    """Collects texts that must not hold a secret and checks them against known secrets.

    A scanner does no I/O and knows nothing of pytest, so it is unit-tested on its own.
    """

    secrets: dict[str, str] = field(default_factory=dict)  # secret -> kind
    sources: list[Callable[[], Iterable[tuple[str, str]]]] = field(default_factory=list)
    pending: list[tuple[str, str]] = field(default_factory=list)  # (place, text)
    texts_scanned: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def add_secret(self, secret: str, kind: str = "secret") -> None:
        if len(secret) >= MIN_SECRET_LENGTH:
            with self._lock:
                self.secrets.setdefault(secret, kind)

    def add_source(self, source: Callable[[], Iterable[tuple[str, str]]]) -> None:
        """``source()`` yields ``(secret, kind)`` pairs; it is read before every scan."""
        self.sources.append(source)

    def refresh(self) -> None:
        for source in self.sources:
            for secret, kind in source():
                self.add_secret(secret, kind)

    def observe(self, place: str, text: str) -> None:
        """Remember ``text`` (from ``place``) for the next :meth:`scan`; thread-safe."""
        with self._lock:
            self.pending.append((place, text))

    def take(self) -> list[tuple[str, str]]:
        with self._lock:
            taken, self.pending = self.pending, []
        return taken

    def scan_texts(self, texts: Iterable[tuple[str, str]]) -> list[Finding]:
        """Every (secret, place) pair where a known secret occurs in a text."""
        self.refresh()
        with self._lock:
            secrets = dict(self.secrets)
        findings: list[Finding] = []
        seen: set[tuple[str, str]] = set()
        for place, text in texts:
            self.texts_scanned += 1
            for secret, kind in secrets.items():
                if secret in text and (secret, place) not in seen:
                    seen.add((secret, place))
                    findings.append(Finding(kind, fingerprint(secret), place))
        return findings

    def scan(self, extra: Iterable[tuple[str, str]] = ()) -> list[Finding]:
        """Scan what was observed since the last scan, plus ``extra``."""
        return self.scan_texts([*self.take(), *extra])

    def mask(self, text: str) -> str:
        """``text`` with every known secret replaced by its fingerprint."""
        with self._lock:
            secrets = sorted(self.secrets, key=len, reverse=True)
        for secret in secrets:
            if secret in text:
                text = text.replace(secret, f"<{fingerprint(secret)}>")
        return text


class ScanningHandler(logging.Handler):
    """Hands every log record's full text (message, exception, stack) to the scanner."""

    def __init__(self, scanner: LeakScanner) -> None:
        super().__init__(level=logging.DEBUG)
        self.scanner = scanner
        self.records = 0
        self._formatter = logging.Formatter()

    def emit(self, record: logging.LogRecord) -> None:
        try:
            parts = [record.getMessage()]
            if record.exc_info:
                parts.append(self._formatter.formatException(record.exc_info))
            if record.stack_info:
                parts.append(record.stack_info)
        except Exception:  # a broken log call must not break the test it sits in
            return
        self.records += 1
        self.scanner.observe(f"log record (logger {record.name!r})", "\n".join(parts))


SCANNER = LeakScanner()
HANDLER = ScanningHandler(SCANNER)
_session_findings: list[Finding] = []


def register_secret(secret: str, kind: str = "test secret") -> None:
    """Make the guard look for ``secret`` too (a token a test server issued, say)."""
    SCANNER.add_secret(secret, kind)


def _mock_sources() -> None:
    """Look for the mock's client secrets and every token any ``MockService`` issued."""
    try:
        import service_api_mock
    except ImportError:  # the mock is optional for this plugin
        return
    demo_secret = getattr(service_api_mock, "DEMO_CLIENT_SECRET", None)
    if isinstance(demo_secret, str):
        SCANNER.add_secret(demo_secret, "client secret")
    service_class: Any = getattr(service_api_mock, "MockService", None)
    if service_class is None:
        return
    # Strong references: a service often dies inside the test that made it, before any
    # scan; it is dropped only once read after nothing else holds it any more.
    services: list[Any] = []
    original_init = service_class.__init__

    # Every instance, wherever created (a fixture, a test, a thread), is seen from birth.
    def registering_init(self: Any, *args: Any, **kwargs: Any) -> None:
        original_init(self, *args, **kwargs)
        services.append(self)

    service_class.__init__ = registering_init

    def from_services() -> Iterable[tuple[str, str]]:
        found = [
            *(
                (str(token), "issued token")
                for s in services
                for token in s.issued_tokens()
            ),
            *(
                (secret, "client secret")
                for s in services
                for secret in _client_secrets(s)
            ),
        ]
        for index in reversed(range(len(services))):
            if (
                sys.getrefcount(services[index]) <= 2
            ):  # the list and the call's argument
                del services[index]
        return found

    SCANNER.add_source(from_services)


def _client_secrets(service: Any) -> Iterable[str]:
    config = getattr(service, "config", None)
    clients = getattr(config, "clients", None)
    if isinstance(clients, dict):
        for value in clients.values():
            secret = getattr(value, "secret", None) or getattr(
                value, "client_secret", None
            )
            if isinstance(secret, str):
                yield secret
            elif isinstance(value, str):
                yield value
    elif isinstance(clients, list | tuple):
        for value in clients:
            secret = getattr(value, "secret", None) or getattr(
                value, "client_secret", None
            )
            if isinstance(secret, str):
                yield secret


def _record_error_messages() -> None:
    """See the message of every client error built, including raised-and-caught ones."""
    try:
        from service_api import ServiceApiError
    except ImportError:
        return
    original_init = ServiceApiError.__init__

    def observing_init(self: Any, *args: Any, **kwargs: Any) -> None:
        original_init(self, *args, **kwargs)
        SCANNER.observe(f"{type(self).__name__} message", " ".join(map(str, args)))

    ServiceApiError.__init__ = observing_init  # type: ignore[method-assign]


def pytest_configure(config: pytest.Config) -> None:
    _mock_sources()
    _record_error_messages()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item) -> Generator[None, object, object]:
    root = logging.getLogger()
    level = root.level
    root.addHandler(HANDLER)
    root.setLevel(logging.DEBUG)
    SCANNER.take()  # texts from before this test (collection, a previous teardown) are done
    try:
        return (yield)
    finally:
        root.removeHandler(HANDLER)
        root.setLevel(level)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    report = yield
    extra = [("pytest report of " + call.when, report.longreprtext)]
    # "Captured log" repeats the records the handler already saw; scanning it again
    # would only double the cost.
    extra += [
        (f"captured {name}", text)
        for name, text in report.sections
        if not name.startswith("Captured log")
    ]
    findings = SCANNER.scan(extra)
    if findings:
        original = SCANNER.mask(report.longreprtext)
        lines = [str(finding) for finding in findings]
        report.outcome = "failed"
        report.longrepr = "\n".join([*lines, *([original] if original else [])])
        report.sections = [(name, SCANNER.mask(text)) for name, text in report.sections]
    return report


def pytest_warning_recorded(
    warning_message: Any, when: str, nodeid: str, location: object
) -> None:
    text = str(warning_message.message)
    findings = SCANNER.scan_texts([(f"warning ({when} {nodeid})", text)])
    _session_findings.extend(findings)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    workeroutput = getattr(session.config, "workeroutput", None)
    if (
        workeroutput is not None
    ):  # a pytest-xdist worker: the controller sums and reports
        SCANNER.refresh()
        workeroutput["leak_guard"] = {
            "texts": SCANNER.texts_scanned,
            "records": HANDLER.records,
            "secrets": {fingerprint(s): kind for s, kind in SCANNER.secrets.items()},
            "findings": [str(finding) for finding in _session_findings],
        }
    if _session_findings or _worker_totals["findings"]:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


# What the pytest-xdist workers saw (none without workers); secrets by fingerprint.
_worker_totals: dict[str, Any] = {
    "texts": 0,
    "records": 0,
    "secrets": {},
    "findings": [],
}


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: object) -> None:
    seen = getattr(node, "workeroutput", {}).get("leak_guard")
    if seen is not None:
        for key in ("texts", "records", "findings"):
            _worker_totals[key] += seen[key]
        _worker_totals["secrets"].update(seen["secrets"])


def pytest_terminal_summary(terminalreporter: Any) -> None:
    SCANNER.refresh()
    secrets = {fingerprint(s): kind for s, kind in SCANNER.secrets.items()}
    secrets |= _worker_totals["secrets"]
    kinds: dict[str, int] = {}
    for kind in secrets.values():
        kinds[kind] = kinds.get(kind, 0) + 1
    counts = ", ".join(f"{n} {kind}(s)" for kind, n in sorted(kinds.items())) or "none"
    texts = SCANNER.texts_scanned + _worker_totals["texts"]
    records = HANDLER.records + _worker_totals["records"]
    terminalreporter.write_line(
        f"leak guard: {texts} texts scanned ({records} log records)"
        f" for {len(secrets)} secrets: {counts}"
    )
    for finding in [*map(str, _session_findings), *_worker_totals["findings"]]:
        terminalreporter.write_line(finding, red=True)
