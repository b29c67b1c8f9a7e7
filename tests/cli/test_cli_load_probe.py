"""Which list ``service-api load`` checks the accounts on, before the destination is
touched: chosen explicitly, and refused when no list can be asked."""

from __future__ import annotations

import dataclasses

import attrs
import pytest

import service_api_cli._load
from service_api_cli._app import build_parser
from service_api_cli._exit_codes import ExitCode, UsageError, exit_code_for
from service_api_cli._job import LoadJob, option, resolve_job
from service_api_cli._load import probe_endpoint
from service_api_client.api import LIST_ENDPOINTS, ListEndpoint, ListParameter


@pytest.fixture
def job(monkeypatch: pytest.MonkeyPatch) -> LoadJob:
    """A load of every list of the registry, for one account."""
    monkeypatch.setenv("SERVICE_API_BASE_URL", "http://127.0.0.1:9/public/v3")
    monkeypatch.setenv("SERVICE_API_CLIENT_ID", "id")
    monkeypatch.setenv("SERVICE_API_CLIENT_SECRET", "secret")
    argv = ["load", *LIST_ENDPOINTS, "--account", "acct-1"]
    for endpoint in LIST_ENDPOINTS.values():
        # The id of a parent that is listed may be left out (every parent's records);
        # any other parameter a list requires may not.
        for parameter in endpoint.parameters:
            listed = endpoint.parent in LIST_ENDPOINTS
            if listed and parameter.name in endpoint.parent_fields:
                continue
            if parameter.required:
                argv += ["--param", f"{parameter.name}={_value(parameter)}"]
    loaded = resolve_job(build_parser().parse_args(argv))
    assert isinstance(loaded, LoadJob)
    return loaded


def _value(parameter: ListParameter) -> str:
    return str(parameter.choices[0]) if parameter.choices else "1"


def _under_a_parent(endpoint: ListEndpoint) -> ListEndpoint:
    """``endpoint`` as a list under a parent: a required path parameter more."""
    parent_id = ListParameter("parentId", "parent_id", "path", required=True)
    return dataclasses.replace(endpoint, parameters=(parent_id, *endpoint.parameters))


def test_the_first_endpoint_named_that_has_its_parameters_is_probed(
    job: LoadJob,
) -> None:
    qualified = [
        e
        for e in job.endpoints
        if all(p.python_name in job.params[e.name] for p in e.parameters if p.required)
    ]
    assert qualified, "no list of the registry can be probed as given"
    endpoint, params = probe_endpoint(job)
    assert endpoint == qualified[0]
    assert params == job.params[endpoint.name]


def test_a_list_under_a_parent_without_its_id_probes_a_list_that_needs_none(
    job: LoadJob,
) -> None:
    child = _under_a_parent(job.endpoints[0])
    job = attrs.evolve(job, endpoints=(child,), params={child.name: {}})
    free = [
        e for e in LIST_ENDPOINTS.values() if not any(p.required for p in e.parameters)
    ]
    assert free, "every list of the registry requires a parameter"
    assert probe_endpoint(job) == (free[0], {})


def test_no_list_that_can_be_asked_is_a_usage_error_naming_an_option(
    job: LoadJob, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Every list of the registry, and the one named, under a parent.
    children = {name: _under_a_parent(e) for name, e in LIST_ENDPOINTS.items()}
    monkeypatch.setattr(service_api_cli._load, "LIST_ENDPOINTS", children)
    first = next(iter(children.values()))
    job = attrs.evolve(job, endpoints=(first,), params={first.name: {}})
    with pytest.raises(UsageError) as refused:
        probe_endpoint(job)
    assert f"{option(first.parameters[0])} VALUE for {first.name}" in str(refused.value)
    assert exit_code_for(refused.value) == ExitCode.USAGE
