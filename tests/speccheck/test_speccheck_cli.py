"""``service-api spec check`` against the mock and its demo data: the report, the exit
codes, ``--write`` and a second one, and bad input (nothing written then)."""

from __future__ import annotations

import errno
import json
import os
import shutil
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest
from openapi_spec_validator import validate
from planted import (
    DEMO_FIELDS,
    ROOT,
    asked,
    base_spec,
    dump,
    read_yaml,
    with_delete,
)

import service_api
from service_api import testing
from service_api_cli import main
from service_api_mock import DEMO_CLIENT_SECRET, RunningMock, running_mock
from service_api_spec import load_spec
from service_api_speccheck import SpecCheckError, check_spec

DEMO = {(schema, name) for schema, fields in DEMO_FIELDS.items() for name in fields}
SCHEMAS = "#/components/schemas/"


@pytest.fixture
def spec(tmp_path: Path) -> Path:
    """A copy of the project's openapi.yaml to check and write."""
    return Path(shutil.copy(ROOT / "openapi.yaml", tmp_path / "openapi.yaml"))


@pytest.fixture
def env(mock: RunningMock, monkeypatch: pytest.MonkeyPatch) -> RunningMock:
    for name, value in {
        "SERVICE_API_BASE_URL": mock.base_url,
        "SERVICE_API_CLIENT_ID": "demo-client",
        "SERVICE_API_CLIENT_SECRET": DEMO_CLIENT_SECRET,
        "SERVICE_API_ACCOUNT_ID": "acct-1",
    }.items():
        monkeypatch.setenv(name, value)
    return mock


def check(
    spec: Path,
    capsys: pytest.CaptureFixture[str],
    *extra: str,
    first: tuple[str, ...] = (),
) -> tuple[int, str, str]:
    """``service-api [first] spec check --spec SPEC [extra]``: exit code, stdout, stderr."""
    with testing.no_retry_sleep():
        code = main([*first, "spec", "check", "--spec", str(spec), *extra])
    out, err = capsys.readouterr()
    return code, out, err


def assert_no_secret(mock: RunningMock, *texts: str) -> None:
    for secret in [DEMO_CLIENT_SECRET, *mock.service.issued_tokens()]:
        assert all(secret not in text for text in texts)


def test_the_demo_datas_undeclared_fields_are_reported_then_written(
    env: RunningMock, spec: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = check(spec, capsys)
    assert code == 1, err
    lines = out.splitlines()
    sent = requests_counted(env)
    assert lines[0].startswith(f"{spec}: {sent} requests, 7 differences")
    undeclared = {
        tuple(line.split()[2].rstrip(":").split("."))
        for line in lines
        if line.startswith("  undeclared field")
    }
    assert undeclared == DEMO
    assert "Shipment.createdAt: string (date-time) in" in out
    first = env.service.dataset("shipments", "acct-1")[0]
    for value in (first["referenceNumber"], first["shipmentId"], first["createdAt"]):
        assert value not in out  # the report names places and types, never values
    assert spec.read_bytes() == (ROOT / "openapi.yaml").read_bytes()  # no --write
    code, out, err = check(spec, capsys, "--write")
    assert code == 0, out  # everything found was written: `--write && make` runs make
    assert out.splitlines()[-1].endswith(", written")
    written = spec.read_text("utf-8")
    patched = read_yaml(written)
    validate(patched)
    for schema, fields in DEMO_FIELDS.items():
        properties = patched["components"]["schemas"][schema]["properties"]
        for name, declared in fields.items():
            assert {
                k: v for k, v in properties[name].items() if k != "x-observed"
            } == declared
    assert written.count("x-observed") > 7  # the fields, and each x-assumed that held
    # The rest of the file as it was: every line of the original is still there, in order.
    original = (ROOT / "openapi.yaml").read_text("utf-8").splitlines()
    kept = iter(written.splitlines())
    assert all(any(line == other for other in kept) for line in original)
    code, out, err = check(spec, capsys, "--write")
    assert code == 0, out
    assert spec.read_text("utf-8") == written  # a second write changes nothing
    assert "0 differences" in out.splitlines()[0]
    assert_no_secret(env, out, err, written)


def test_the_json_report_says_the_same(
    env: RunningMock, spec: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = check(spec, capsys, "--format", "json", "--enums")
    report = json.loads(out)
    assert code == 1
    assert report["matched"] is False
    assert report["requests"] == requests_counted(env)
    found = {(f["kind"], f["where"]) for f in report["findings"]}
    assert {("undeclared field", f"{s}.{n}") for s, n in DEMO} <= found
    assert ("enum candidate", "Shipment.status") in found  # with --enums only
    statuses = set(report["assumptions"].values())
    assert statuses == {"confirmed", "not observed"}
    assert report["patch"]["changes"] == 7
    assert_no_secret(env, out)


@pytest.mark.parametrize(
    ("extra", "setting", "expected"),
    [
        (["--budget", "1"], {}, 2),  # too small to see one page
        (["--budget", "0"], {}, 2),
        (["--budget", "-5"], {}, 2),
        ([], {"SERVICE_API_ACCOUNT_ID": "acct-of-nobody"}, 4),  # as `list` does
        ([], {"SERVICE_API_CLIENT_SECRET": "wrong"}, 3),
        ([], {"SERVICE_API_BASE_URL": "closed"}, 5),
        (["--from", "openapi.yaml"], {}, 2),  # not an observation file
        (["--from", "odd.json"], {}, 2),  # JSON, but not of an observation's shape
        (["--spec", "missing.yaml"], {}, 2),
    ],
)
def test_bad_input_is_a_clear_error_and_nothing_is_written(
    env: RunningMock,
    spec: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    extra: list[str],
    setting: dict[str, str],
    expected: int,
) -> None:
    for name, value in setting.items():
        if value == "closed":
            with socket.socket() as taken:
                taken.bind(("127.0.0.1", 0))
                value = f"http://127.0.0.1:{taken.getsockname()[1]}/public/v3"
        monkeypatch.setenv(name, value)
    monkeypatch.chdir(spec.parent)
    (spec.parent / "odd.json").write_text(
        '{"answers": {"GET /shipments 200": 1}}', "utf-8"
    )
    before = spec.read_bytes()
    code, out, err = check(spec, capsys, "--write", *extra, first=("--retries", "0"))
    assert code == expected
    assert out == ""
    assert err.splitlines()[-1].startswith("service-api: error: ")
    assert len(err.strip().splitlines()) <= 6  # a line, not a traceback
    assert spec.read_bytes() == before


def test_a_spec_changed_since_the_check_started_is_not_written(
    env: RunningMock, spec: Path
) -> None:
    with service_api.Client() as client:
        report = check_spec(spec, client)
    spec.write_text(spec.read_text("utf-8") + "\n# edited meanwhile\n", "utf-8")
    edited = spec.read_bytes()
    with pytest.raises(SpecCheckError, match="changed since the check started"):
        report.write()
    assert spec.read_bytes() == edited


def test_only_get_and_the_token_post_are_sent(env: RunningMock, spec: Path) -> None:
    with service_api.Client() as client:
        check_spec(spec, client, budget=100, allow_writes=True)
    model = load_spec(spec)
    by_id = {op.operation_id: op for op in model.operations}
    sent = set(env.service.counts())
    # With --allow-writes, a create and a delete only where the spec can delete what
    # it creates; else the token request is the one request that is not a GET.
    deletable = {op.resource for op in model.operations if op.kind == "delete"}
    writes = {
        op.operation_id
        for op in model.operations
        if op.kind in ("create", "delete") and op.resource in deletable
    }
    others = {name for name in sent - writes if by_id[name].method != "GET"}
    assert {by_id[name].kind for name in others} == {"token"}
    # Every GET whose path the lists can fill (an id a list gave, or none at all).
    assert {name for name in sent if by_id[name].method == "GET"} == asked(model)


def test_a_get_of_records_of_no_identifier_field_is_not_probed_with_nobodys(
    tmp_path: Path,
) -> None:
    """Where the spec model knows no identifier field of a resource, no identifier can
    be known to be nobody's (the mock answers any with built data): the check does not
    send that probe, and says so once for each such resource."""
    # A get of records whose schema is a component and whose identifier field the
    # model knows: that field taken out of the schema, the model knows none.
    plain = load_spec(ROOT / "openapi.yaml")
    item, resource = next(
        (op, plain.resources[str(op.resource)])
        for op in plain.operations
        if op.kind == "get"
        and plain.resources[str(op.resource)].id_field
        and str(plain.resources[str(op.resource)].pointer).startswith(SCHEMAS)
    )
    document = base_spec()
    schema = document["components"]["schemas"][str(resource.pointer)[len(SCHEMAS) :]]
    schema["properties"].pop(resource.id_field)  # its records no longer carry it
    schema["required"] = [
        n for n in schema.get("required", []) if n != resource.id_field
    ]
    spec = dump(document, tmp_path / "openapi.yaml")
    model = load_spec(spec)
    blind = {r.name for r in model.resources.values() if r.id_field is None}
    gets = [op for op in model.operations if op.kind == "get" and op.resource in blind]
    assert item.operation_id in {op.operation_id for op in gets}  # the premise
    with (
        running_mock(spec=spec) as mock,
        service_api.Client(
            mock.base_url, "demo-client", DEMO_CLIENT_SECRET, "acct-1"
        ) as client,
    ):
        report = check_spec(spec, client)
        counts = mock.service.counts()
    assert not [
        f
        for f in report.findings
        if f.kind == "probe"
        and f.where.endswith(" an identifier of nobody")
        and f.where.split()[0] in {op.operation_id for op in gets}
    ]
    assert all(op.operation_id not in counts for op in gets)  # nothing sent to them
    said = [fact for fact in report.facts if "an identifier of nobody" in fact]
    names = dict.fromkeys(str(op.resource) for op in gets)
    assert said == [
        f"not sent: {name}: no probe of an identifier of nobody, as the spec names "
        "no identifier field of its records"
        for name in names
    ]


def requests_counted(env: RunningMock) -> int:
    """The requests the mock answered, of every operation."""
    return sum(n for counts in env.service.counts().values() for n in counts.values())


def test_the_budget_bounds_the_requests(env: RunningMock, spec: Path) -> None:
    with service_api.Client() as client:
        report = check_spec(spec, client, budget=9)
    sent = requests_counted(env)
    assert sent == report.observed["requests"]
    assert sent <= 9
    assert report.observed["stopped"]


def test_allow_writes_changes_only_a_record_of_its_own_and_deletes_it(
    server_with_delete: tuple[Path, RunningMock],
) -> None:
    spec, mock = server_with_delete
    before = mock.service.dataset("shipments", "acct-1")
    with service_api.Client(
        mock.base_url, "demo-client", DEMO_CLIENT_SECRET, "acct-1"
    ) as client:
        report = check_spec(spec, client, allow_writes=True)
    counts = mock.service.counts()
    assert counts["createShipment"] == {201: 1}
    assert counts["deleteShipment"] == {204: 1}
    assert mock.service.dataset("shipments", "acct-1") == before
    assert report.differences == []
    with service_api.Client(
        mock.base_url, "demo-client", DEMO_CLIENT_SECRET, "acct-1"
    ) as client:
        check_spec(spec, client)  # without --allow-writes: no write
    assert mock.service.counts()["createShipment"] == {201: 1}


@pytest.fixture
def server_with_delete(tmp_path: Path) -> Iterator[tuple[Path, RunningMock]]:
    """The mock serving the base spec (the demo fields declared) that can delete a
    shipment, and that spec to check."""
    spec = dump(with_delete(base_spec()), tmp_path / "openapi.yaml")
    with running_mock(spec=spec) as server:
        yield spec, server


@pytest.mark.parametrize("budget", ["1", "0", "-5"])
def test_a_budget_below_the_smallest_sample_sends_nothing(
    env: RunningMock, spec: Path, capsys: pytest.CaptureFixture[str], budget: str
) -> None:
    code, out, err = check(spec, capsys, "--budget", budget)
    assert code == 2
    assert out == ""
    assert err.splitlines()[-1] == (
        f"service-api: error: --budget {budget} sees no page: 2 at least "
        "(the token request and a page)"
    )
    assert requests_counted(env) == 0


def test_a_refused_account_ends_as_list_does(
    env: RunningMock,
    spec: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("SERVICE_API_ACCOUNT_ID", "acct-of-nobody")
    code, out, err = check(spec, capsys, first=("--retries", "0"))
    listed = main(["--retries", "0", "list", "shipments"])
    err_list = capsys.readouterr().err
    assert code == listed == 4
    assert out == ""
    # The 403's message, after the request it answered.
    said = err.splitlines()[-1]
    assert said.startswith("service-api: error: 403 Forbidden for GET")
    assert said.rpartition(": ")[2] == err_list.splitlines()[-1].rpartition(": ")[2]


def test_a_write_that_fails_has_its_own_code_and_leaves_the_spec(
    env: RunningMock,
    spec: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    before = spec.read_bytes()

    def refuse(*args: object) -> None:
        raise OSError(errno.EROFS, "Read-only file system")

    monkeypatch.setattr(os, "replace", refuse)
    code, out, err = check(spec, capsys, "--write")
    assert code == 6
    assert err.strip().splitlines() == [
        f"service-api: error: cannot write {spec}: Read-only file system; "
        "it is as it was"
    ]
    assert "differences" in out.splitlines()[0]  # the report, not written
    assert not out.splitlines()[-1].endswith("written")
    assert spec.read_bytes() == before
    assert sorted(p.name for p in spec.parent.iterdir()) == [spec.name]  # no .part


def test_write_and_make_runs_make_and_a_difference_left_exits_1(
    env: RunningMock, spec: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = check(spec, capsys, "--write", "--format", "json")
    report = json.loads(out)
    assert code == 0
    assert report["patch"]["written"] is True
    assert report["matched"] is False  # it differed, and --write fixed all of it
    assert report["settled"] is True
    assert all(f["edits"] for f in report["findings"] if f["difference"])


def test_allow_writes_says_what_it_did_and_what_it_could_not(
    env: RunningMock,
    capsys: pytest.CaptureFixture[str],
    server_with_delete: tuple[Path, RunningMock],
    tmp_path: Path,
) -> None:
    (tmp_path / "plain").mkdir()
    spec = Path(shutil.copy(ROOT / "openapi.yaml", tmp_path / "plain" / "openapi.yaml"))
    _, out, _ = check(spec, capsys, "--allow-writes")
    writes = [line.strip() for line in out.splitlines() if "writes:" in line]
    model = load_spec(spec)
    creates = [op for op in model.operations if op.kind == "create"]
    deletable = {op.resource for op in model.operations if op.kind == "delete"}
    assert len(writes) == len(creates) >= 1
    for create, line in zip(creates, writes, strict=True):  # one each, in spec order
        assert line.startswith(f"writes: {create.operation_id} "), out
        if create.resource not in deletable:
            assert "not sent: the spec declares no delete" in line, out
    other, mock = server_with_delete
    with service_api.Client(
        mock.base_url, "demo-client", DEMO_CLIENT_SECRET, "acct-1"
    ) as client:
        report = check_spec(other, client, allow_writes=True)
    done = [fact for fact in report.facts if fact.startswith("writes: ")]
    grown = load_spec(other)
    delete = grown.operation("deleteShipment")  # the delete with_delete adds
    (create,) = (
        op
        for op in grown.operations
        if op.kind == "create" and op.resource == delete.resource
    )
    assert (
        f"writes: {create.operation_id} answered 201 (a copy of a listed record), "
        f"{delete.operation_id} answered 204"
    ) in done
    assert not [line for line in done if "left" in line]  # every copy deleted


def test_the_help_says_each_default_once_and_the_exit_codes(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["spec", "check", "--help"]) == 0
    out = capsys.readouterr().out
    words = " ".join(out.split())
    for default in ("(default: openapi.yaml)", "(default: 100)", "(default: text)"):
        assert words.count(default) == 1
    assert (
        words.count("default") == 5
    )  # --account, --spec, --budget, --min-share, --format
    assert "account to sample as" in words
    assert "for the first account" not in words
    assert "exit codes:" in out
    assert "\n  6 " in out
    assert "rerun to resume" not in out  # not list's codes
    assert main(["spec", "--help"]) == 0
    out = capsys.readouterr().out
    assert "find where openapi.yaml differs" in out
    assert "{check}" not in out
    assert "exit codes:" in out


def test_spec_without_a_command_shows_its_usage_before_asking_for_settings(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("SERVICE_API_BASE_URL", raising=False)
    assert main(["spec"]) == 2
    err = capsys.readouterr().err
    assert "usage: service-api spec" in err
    assert "COMMAND" in err
    assert "base url" not in err
