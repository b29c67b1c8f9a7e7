"""Against a server the project did not write: Stoplight Prism serving a "true" spec.

Prism (npm ``@stoplight/prism-cli``, installed by ``make`` where npm is, under
``.tools/prism``) answers every request from the spec it serves: in static mode with
values from the schemas, in dynamic mode with random ones, and it invents properties
on every object schema that does not forbid them. One Prism process a mode serves the
true spec of every plant Prism can show (see ``planted.py``) at once; the check of the
project's spec must find each, write exactly their fixes, keep Prism's invented fields
out (a note each, or one a schema), and after ``--write`` find nothing more to write.
What Prism itself does that no spec can say (it answers the probes 200, its pages do
not add up) stays a difference, with its advice.
"""

from __future__ import annotations

import contextlib
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from planted import PLANTS, Plant, dump, edits, specs
from spec_copy import PRISM

import service_api
from service_api import testing
from service_api_spec import load_spec
from service_api_speccheck import Report, check_spec

#: What Prism does that no spec can say: it refuses no probe, its pages do not add up.
PRISMS_OWN = {"probe", "paging"}


def _plants() -> list[Plant]:
    chosen: dict[str, Plant] = {}
    for plant in sorted(PLANTS.values(), key=lambda p: p.name):
        if plant.prism and not plant.variant and not plant.faults:
            chosen.setdefault(plant.target, plant)
    return list(chosen.values())


@contextlib.contextmanager
def prism(spec: Path, mode: str, log: Path) -> Iterator[str]:
    """Prism serving ``spec`` in ``mode`` (static, dynamic) on a loopback port: its
    base URL, once it answers."""
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        port = taken.getsockname()[1]
    command = [str(PRISM), "mock", "-h", "127.0.0.1", "-p", str(port), str(spec)]
    if mode == "dynamic":
        command.insert(2, "--dynamic")
    with log.open("w") as out:
        process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT)
    base_url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            assert process.poll() is None, log.read_text()
            assert time.monotonic() < deadline, (
                f"Prism did not start: {log.read_text()}"
            )
            with contextlib.suppress(httpx.TransportError):
                httpx.get(f"{base_url}/", timeout=1)
                break
            time.sleep(0.1)  # polling Prism's port, with the deadline above
        yield base_url
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@pytest.fixture(scope="module", params=["static", "dynamic"])
def served(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[str, str, Path]]:
    """Prism in one mode serving the true spec of every plant it can show: the mode,
    its base URL, and the folder of the true spec."""
    if PRISM is None:
        pytest.skip(
            "Stoplight Prism (npm @stoplight/prism-cli) is not installed: make "
            "installs it where npm is, or set PRISM=/path/to/prism"
        )
    folder = tmp_path_factory.mktemp(f"prism-{request.param}")
    true, _ = specs(_plants())
    with prism(
        dump(true, folder / "true.yaml"), request.param, folder / "prism.log"
    ) as url:
        yield request.param, url, folder


def run_check(base_url: str, spec: Path) -> Report:
    """The check of ``spec`` against Prism, with a budget that covers its sample: Prism
    answers the probes 401 (each a token request and a retry more), and a spec of many
    lists (the corpus grafted) needs more than the default 100 requests to reach the
    pages of each."""
    lists = len(load_spec(spec).lists)
    with (
        testing.no_retry_sleep(),
        service_api.Client(
            base_url, "prism-client", "prism-secret", "acct-1"
        ) as client,
    ):
        return check_spec(spec, client, budget=max(100, 30 * lists))


def test_the_differences_prism_serves_are_found_written_and_then_matched(
    served: tuple[str, str, Path], tmp_path: Path
) -> None:
    mode, base_url, folder = served
    plants = _plants()
    path = dump(specs(plants)[1], tmp_path / "openapi.yaml")
    # What the check writes of the very spec Prism serves is Prism's own departure
    # from it, no plant's: json-schema-faker's values that a schema refuses (some
    # public APIs' recursive schemas), or a 500 where it cannot build one. None for
    # the project's own spec; expected wherever it is, and nowhere else.
    own = edits(run_check(base_url, folder / "true.yaml").edits)
    report = run_check(base_url, path)
    text = report.text()
    found = {(f.kind, f.where) for f in report.findings}
    # A list of which Prism serves no page (it answers 500 where it cannot build the
    # data of a schema, as of some public APIs' shapes in dynamic mode) shows none of
    # the plants on its pages: they are looked for on the lists it served.
    lists = {op.operation_id for op in load_spec(path).lists}
    unserved = lists - set(report.observed["pages"])
    planted = {f for p in plants for f in p.findings if f[1].split()[0] not in unserved}
    assert planted <= found, text  # recall
    assert edits(report.edits) - own == {e for p in plants for e in p.edits} - own, (
        text
    )  # precision
    left = {f.kind for f in report.differences if not f.fixed}
    assert left <= PRISMS_OWN, text
    assert all(f.effect for f in report.differences)
    if mode == "dynamic":  # its invented fields: notes, never written
        assert {"rare field", "rare fields"} & {f.kind for f in report.findings}, text
    report.write()
    written = path.read_bytes()
    again = run_check(base_url, path)
    assert edits(again.edits) <= own, again.text()
    assert again.marks == []
    assert {f.kind for f in again.differences} <= PRISMS_OWN
    again.write()
    assert path.read_bytes() == written  # a second write changes nothing
