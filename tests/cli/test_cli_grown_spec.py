"""The command line over a spec that grew (``tests/spec/growth.yaml`` merged into the
repository's, generated once for the module), whose lists take parameters the
repository's own spec may not have: ``list --help`` and ``load --help`` name them, and
a parameter given to a command that names several endpoints (``service-api load A B
--param ...``) goes to those that have it; one that none of them has is a usage error
naming it. The endpoints and their parameters are read from the copy's registry, never
written here."""

from __future__ import annotations

import dataclasses
import importlib
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

import service_api_cli._job
import service_api_client.api
from service_api_cli import main
from service_api_cli._app import build_parser
from service_api_cli._exit_codes import ExitCode, UsageError, exit_code_for
from service_api_cli._job import (
    LoadJob,
    convert,
    option,
    params_by_endpoint,
    resolve_job,
)
from service_api_client.api import ListParameter

# The helpers of tests/spec, whichever test files pytest collected first.
SPEC_TESTS = str(Path(__file__).resolve().parents[1] / "spec")
if SPEC_TESTS not in sys.path:
    sys.path.insert(0, SPEC_TESTS)

from spec_copy import (  # noqa: E402
    GROWTH,
    PARAMETER_VALUES,
    SpecCopy,
    build_spec_copy,
    load_generated,
)


@pytest.fixture(scope="module")
def grown_copy(tmp_path_factory: pytest.TempPathFactory) -> SpecCopy:
    """The repository's spec with growth.yaml merged in, and its client generated."""
    return build_spec_copy(tmp_path_factory.mktemp("cli-grown"), GROWTH)


@pytest.fixture(scope="module")
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


def _value(parameter: Any) -> str:
    return (
        str(parameter.choices[0])
        if parameter.choices
        else PARAMETER_VALUES[parameter.kind]
    )


def _givable(endpoint: Any) -> list[Any]:
    return [p for p in endpoint.parameters if p.kind in PARAMETER_VALUES]


def _split_pair(registry: Mapping[str, Any]) -> tuple[Any, Any, Any]:
    """An endpoint A, a parameter that A requires and is not a parent's id (a header,
    say), and an endpoint B without a parameter of that name."""
    for a in registry.values():
        for parameter in a.parameters:
            if not parameter.required or parameter.location == "path":
                continue
            for b in registry.values():
                if parameter.name not in {p.name for p in b.parameters}:
                    return a, parameter, b
    raise AssertionError("the grown spec has no list requiring a non-path parameter")


def test_each_parameter_goes_to_the_endpoints_that_have_it(
    grown: Mapping[str, Any],
) -> None:
    endpoints = list(grown.values())
    # A value for every parameter that any of them has, once per name.
    given = {p.name: p for e in endpoints for p in _givable(e)}
    owners = {
        name: {e.name for e in endpoints if name in {p.name for p in e.parameters}}
        for name in given
    }
    assert any(len(names) < len(endpoints) for names in owners.values()), (
        "every list of the grown spec has the same parameters"
    )
    pairs = [f"{name}={_value(p)}" for name, p in given.items()]
    params = params_by_endpoint(endpoints, pairs, parents=True)
    for endpoint in endpoints:
        # Each that takes the value given (a name of several enums: those whose
        # enum has it).
        expected = {
            p.python_name
            for p in _givable(endpoint)
            if _takes(p, _value(given[p.name]))
        }
        assert set(params[endpoint.name]) == expected, endpoint.name


def _takes(parameter: Any, raw: str) -> bool:
    try:
        convert(parameter, raw)
    except ValueError:
        return False
    return True


def test_a_value_goes_to_the_endpoints_whose_enum_has_it_and_none_is_an_error(
    grown: Mapping[str, Any],
) -> None:
    # Two lists with a parameter of one name and two enums, as Box's folder items
    # (sort: id, name, date, size) and GitHub's issues (sort: created, updated).
    first, second = [
        dataclasses.replace(
            endpoint,
            parameters=(ListParameter("sort", "sort", "query", choices=choices),),
        )
        for endpoint, choices in zip(
            list(grown.values())[:2], [("id", "name"), ("created", "id")], strict=True
        )
    ]
    both = [first, second]
    assert params_by_endpoint(both, ["sort=name"]) == {
        first.name: {"sort": "name"},
        second.name: {},
    }
    assert params_by_endpoint(both, ["sort=created"]) == {
        first.name: {},
        second.name: {"sort": "created"},
    }
    assert params_by_endpoint(both, ["sort=id"]) == {
        first.name: {"sort": "id"},
        second.name: {"sort": "id"},
    }
    with pytest.raises(UsageError) as refused:
        params_by_endpoint(both, ["sort=size"])
    assert str(refused.value) == (
        f"--param sort='size': no endpoint named takes it ({first.name} expected one "
        f"of id, name; {second.name} expected one of created, id)"
    )
    # Named alone, the endpoint's own refusal.
    with pytest.raises(UsageError) as refused:
        params_by_endpoint([first], ["sort=size"])
    assert str(refused.value) == "--param sort='size': expected one of id, name"


def test_a_parameter_none_of_the_endpoints_has_is_a_usage_error_naming_it(
    grown: Mapping[str, Any],
) -> None:
    endpoints = list(grown.values())
    names = {p.name for e in endpoints for p in e.parameters}
    unknown = "colour"
    assert unknown not in names
    with pytest.raises(UsageError) as refused:
        params_by_endpoint(endpoints, [f"{unknown}=red"], parents=True)
    message = str(refused.value)
    assert f"no endpoint named has a parameter {unknown!r}" in message
    for endpoint in endpoints:  # what each accepts instead
        assert f"{endpoint.name}: " in message
    assert exit_code_for(refused.value) == ExitCode.USAGE


def test_load_of_two_endpoints_with_an_option_only_one_takes(
    grown: Mapping[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    # service-api load routes shipment-events --x-request-source cli, as the
    # registry has it.
    a, parameter, b = _split_pair(grown)
    monkeypatch.setenv("SERVICE_API_BASE_URL", "http://127.0.0.1:9/public/v3")
    monkeypatch.setenv("SERVICE_API_CLIENT_ID", "id")
    monkeypatch.setenv("SERVICE_API_CLIENT_SECRET", "secret")
    argv = ["load", a.name, b.name, "--account", "acct-1"]
    # Whatever else each requires (but the id of a parent that is listed, which load
    # may leave out: every parent's records).
    for endpoint in (a, b):
        for other in endpoint.parameters:
            listed = endpoint.parent in grown and other.name in endpoint.parent_fields
            if other.required and not listed and other is not parameter:
                argv += ["--param", f"{other.name}={_value(other)}"]
    argv += [option(parameter), _value(parameter)]
    job = resolve_job(build_parser().parse_args(argv))
    assert isinstance(job, LoadJob)
    assert parameter.python_name in job.params[a.name]
    assert parameter.python_name not in job.params[b.name]


def _help(command: str, capsys: pytest.CaptureFixture[str]) -> str:
    with pytest.raises(SystemExit) as exited:
        main([command, "--help"])
    assert exited.value.code == 0
    return capsys.readouterr().out


def _endpoints_section(text: str) -> list[str]:
    section = text.split("\nendpoints of this spec", 1)[1].split("\n\n")[0]
    return section.splitlines()[1:]


@pytest.mark.parametrize("command", ["list", "load"])
def test_the_endpoints_of_a_grown_spec_show_their_parameters(
    command: str, grown: Mapping[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    text = _help(command, capsys)
    entries = " ".join(_endpoints_section(text)).split()
    assert set(grown) <= set(entries)
    for endpoint in grown.values():
        for parameter in endpoint.parameters:
            if parameter.required:
                # Its own option, in the entry and as an option of the command.
                assert option(parameter) in entries
                assert f"  {option(parameter)} VALUE" in text
            else:
                assert any(e.strip(",;") == parameter.name for e in entries)
