"""What a command line asks for, read once: the job a command runs.

:func:`resolve_job` reads the parsed command line and the environment once, checks all
it can before any request (the endpoint and its parameters, the accounts, the output,
the client's settings) and returns a frozen job: :class:`ListJob`, :class:`LoadJob`,
:class:`TokenJob`, :class:`MockJob` or :class:`SpecJob`. The commands take the job
and never read the command line again.

The endpoints are read here and nowhere else in the command line: from the generated
registry ``LIST_ENDPOINTS``, with each one's parameters (``ListEndpoint.parameters``:
name, location, whether required, kind and choices), so that an endpoint or a parameter
added to ``openapi.yaml`` is offered after ``make``. A parameter is named by its spec
name (``createdAfter``) or its Python name (``created_after``) and converted by its kind.
"""

import argparse
import datetime
import os
import re
import uuid
from collections.abc import Mapping, Sequence
from typing import Any

import attrs

from service_api_cli._connection import (
    ENV_ACCOUNT_ID,
    Connection,
    resolve_accounts,
    resolve_connection,
)
from service_api_cli._exit_codes import UsageError
from service_api_cli._formats import choose_format
from service_api_client.api import LIST_ENDPOINTS, ListEndpoint, ListParameter


@attrs.frozen
class ListJob:
    """``service-api list``: one endpoint, its parameters, the accounts, where to write.

    Example::

        job = resolve_job(build_parser().parse_args(["list", "shipments", "-o", "s.csv"]))
        job.format   # "csv"
    """

    endpoint: ListEndpoint
    params: Mapping[str, Any]  # keyword arguments of the endpoint's function
    accounts: tuple[str, ...]
    connection: Connection
    output: str | None  # a file (or FIFO); None: standard output
    format: str
    tag: bool  # each record gets an "account" field
    page_size: int | None
    max_items: int | None
    concurrency: int
    restart: bool
    quiet: bool
    debug: bool


@attrs.frozen
class LoadJob:
    """``service-api load``: endpoints into a dlt destination, from the API or files.

    Example::

        job = resolve_job(build_parser().parse_args(["load", "shipments", "--account", "a"]))
        job.endpoints[0].name   # "shipments"
    """

    endpoints: tuple[ListEndpoint, ...]
    # endpoint -> keyword arguments of its function (a parent's id left out: every
    # parent's records)
    params: Mapping[str, Any]
    primary_keys: Mapping[str, str]  # endpoint -> identifier field, from --primary-key
    accounts: tuple[str, ...]  # with --from: at most one, for records without one
    connection: Connection | None  # None with --from: nothing is asked of the API
    files: tuple[str, ...]
    destination: str
    dataset: str
    pipeline_name: str
    pipelines_dir: str | None  # None: beside the DuckDB file, else dlt's default
    page_size: int | None
    concurrency: int
    quiet: bool


@attrs.frozen
class TokenJob:
    """``service-api token``: obtain a token, show its type and expiry.

    Example::

        TokenJob(connection, show_token=False)
    """

    connection: Connection
    show_token: bool


@attrs.frozen
class MockJob:
    """``service-api mock``: the arguments handed to the mock's own entry point.

    Example::

        MockJob(("--port", "8080"))
    """

    argv: tuple[str, ...]


@attrs.frozen
class SpecJob:
    """``service-api spec ...``: the arguments handed to the spec check, and the
    connection of the flags and ``SERVICE_API_*`` (None with ``--from``, which asks
    nothing of the service, or ``--help``).

    Example::

        SpecJob(("check", "--budget", "50"), connection)
    """

    argv: tuple[str, ...]
    connection: Connection | None


Job = ListJob | LoadJob | TokenJob | MockJob | SpecJob


def find_endpoint(name: str) -> ListEndpoint:
    """The endpoint called ``name`` among the generated ``LIST_ENDPOINTS``: an endpoint
    added to ``openapi.yaml`` is offered with no change here.

    Example::

        find_endpoint("shipments")
    """
    if name not in LIST_ENDPOINTS:
        known = ", ".join(LIST_ENDPOINTS) or "none"
        raise UsageError(f"unknown endpoint {name!r} (known: {known})")
    return LIST_ENDPOINTS[name]


def option(parameter: ListParameter) -> str:
    """The option that gives a parameter an endpoint requires (a parent's id in the
    path, a header), beside ``--param``: its Python name as an option (``shipment_id``:
    ``--shipment-id``).

    Example::

        option(find_endpoint("shipment-events").parameters[0])   # "--shipment-id"
    """
    return "--" + parameter.python_name.strip("_").replace("_", "-")


def _key(name: str) -> str:
    # The spec's name and the generated one differ in case and underscores only:
    # createdAfter, created_after and created-after are one parameter (type_ is type).
    return re.sub("[-_]", "", name).lower()


# How a value of each kind of the registry (ListParameter.kind) is read from the command
# line, and the form a usage error asks for: the types the generated functions take
# (they call isoformat() on a date).
KINDS: dict[str, Any] = {
    "string": (str, "text"),
    "integer": (int, "an integer"),
    "number": (float, "a number"),
    "boolean": ({"true": True, "false": False}.__getitem__, "true or false"),
    "date-time": (
        datetime.datetime.fromisoformat,
        "an ISO 8601 date-time, such as 2024-05-01T08:00:00Z",
    ),
    "date": (datetime.date.fromisoformat, "an ISO 8601 date, such as 2024-05-01"),
    "uuid": (uuid.UUID, "a UUID, such as 123e4567-e89b-12d3-a456-426614174000"),
}


def convert(parameter: ListParameter, raw: str) -> Any:
    """``raw`` as a value of ``parameter``, by its kind and choices in the registry: an
    enum's member, an integer, a number, true or false, an ISO 8601 date or date-time
    (with or without Z), a UUID, text; an array as comma-separated items, as text (the
    registry does not say what they are). A ValueError says the form expected.

    Example::

        convert(ListParameter("minRating", "min_rating", "query", kind="integer"), "4")
    """
    if parameter.kind == "array":
        return [item.strip() for item in raw.split(",")]
    if parameter.kind not in KINDS:
        raise ValueError(f"an {parameter.kind} cannot be given on the command line")
    read, form = KINDS[parameter.kind]
    if parameter.choices:
        read = {str(choice): choice for choice in parameter.choices}.__getitem__
        form = "one of " + ", ".join(map(str, parameter.choices))
    try:
        return read(raw)
    except (ValueError, KeyError):
        raise ValueError(f"expected {form}") from None


def _name_and_value(pair: str) -> tuple[str, str]:
    given, sep, raw = pair.partition("=")
    if not sep:
        raise UsageError(f"--param wants NAME=VALUE, got {pair!r}")
    return given, raw


def _takes(endpoint: ListEndpoint, name: str) -> bool:
    return any(_key(p.name) == _key(name) for p in endpoint.parameters)


def _refusal(endpoint: ListEndpoint, name: str, raw: str) -> str:
    """Why ``endpoint``'s parameter ``name`` does not take ``raw`` ("expected one of
    id, name"), or "" where it does."""
    parameter = {_key(p.name): p for p in endpoint.parameters}[_key(name)]
    try:
        convert(parameter, raw)
    except ValueError as exc:
        return str(exc)
    return ""


def _unknown_parameter(endpoints: Sequence[ListEndpoint], name: str) -> UsageError:
    # The page parameters are the pagination's: the registry leaves them out.
    def accepted(endpoint: ListEndpoint) -> str:
        return ", ".join(p.name for p in endpoint.parameters) or "none"

    pages = "records per page: --page-size"
    if len(endpoints) == 1:
        (endpoint,) = endpoints
        return UsageError(
            f"endpoint {endpoint.name!r} has no parameter {name!r} "
            f"(accepted: {accepted(endpoint)}; {pages})"
        )
    each = "; ".join(f"{e.name}: {accepted(e)}" for e in endpoints)
    return UsageError(
        f"no endpoint named has a parameter {name!r} (accepted: {each}; {pages})"
    )


def parse_params(
    endpoint: ListEndpoint, pairs: Sequence[str], *, parents: bool = False
) -> dict[str, Any]:
    """Turn ``NAME=VALUE`` strings into keyword arguments of the endpoint's function.

    A name is the spec's (``createdAfter``) or the function's (``created_after``); a
    value is read by :func:`convert`. A parameter the endpoint requires (a parent's
    identifier in the path, a header) must be given; with ``parents`` (``load``) a
    parent's identifier may be left out, for the records of every parent.

    Example::

        parse_params(find_endpoint("routes"), ["minRating=4", "status=Active"])
    """
    params = {}
    # The Python name is the spec's in snake case (type_ for type): one key for both.
    names = {_key(p.name): p for p in endpoint.parameters}
    for pair in pairs:
        given, raw = _name_and_value(pair)
        parameter = names.get(_key(given))
        if parameter is None:
            raise _unknown_parameter([endpoint], given)
        try:
            params[parameter.python_name] = convert(parameter, raw)
        except ValueError as exc:
            raise UsageError(f"--param {given}={raw!r}: {exc}") from None
    for parameter in endpoint.parameters:
        if not parameter.required or parameter.python_name in params:
            continue
        # load lists every parent's records when a parent's id is not given: the
        # records of the parent's list give it.
        listed = parents and endpoint.parent in LIST_ENDPOINTS
        if listed and parameter.name in endpoint.parent_fields:
            continue
        raise UsageError(
            f"endpoint {endpoint.name!r} needs {option(parameter)} VALUE "
            f"(or --param {parameter.name}=VALUE)"
        )
    return params


def params_by_endpoint(
    endpoints: Sequence[ListEndpoint], pairs: Sequence[str], *, parents: bool = False
) -> dict[str, dict[str, Any]]:
    """The keyword arguments of each endpoint's function (by its name), from
    ``NAME=VALUE`` strings: each goes to every endpoint that has a parameter of that
    name and takes the value (each converts it by its own kind and choices); a name
    that no endpoint has, or a value that none of those that have it takes, is a
    UsageError naming what each takes. Otherwise as :func:`parse_params`.

    Example::

        params_by_endpoint(
            [find_endpoint("routes"), find_endpoint("shipment-events")],
            ["x-request-source=cli", "type=Arrived"],
        )   # {"routes": {"x_request_source": "cli"}, "shipment-events": {"type_": ...}}
    """
    given: dict[str, list[str]] = {endpoint.name: [] for endpoint in endpoints}
    for pair in pairs:
        name, raw = _name_and_value(pair)
        takers = [endpoint for endpoint in endpoints if _takes(endpoint, name)]
        if not takers:
            raise _unknown_parameter(endpoints, name)
        # One name, several enums (sort: id, name of one list, created of another):
        # the value goes to those that take it.
        refused = {e.name: _refusal(e, name, raw) for e in takers}
        taking = [e for e in takers if not refused[e.name]]
        if not taking and len(takers) > 1:
            each = "; ".join(f"{n} {why}" for n, why in refused.items())
            raise UsageError(
                f"--param {name}={raw!r}: no endpoint named takes it ({each})"
            )
        for endpoint in taking or takers:  # one that refuses it: parse_params says why
            given[endpoint.name].append(pair)
    return {
        endpoint.name: parse_params(endpoint, given[endpoint.name], parents=parents)
        for endpoint in endpoints
    }


def resolve_job(args: argparse.Namespace) -> Job:
    """The job the parsed command line asks for, checked and frozen; the command line
    is not read after this.

    Example::

        job = resolve_job(build_parser().parse_args(["list", "shipments", "--account", "a"]))
    """
    if args.command == "mock":
        return MockJob(tuple(args.mock_args))
    if args.command == "token":
        return TokenJob(resolve_connection(args), show_token=args.show_token)
    if args.command == "spec":
        # No command, a help or a file to read: the service is not asked.
        offline = not args.spec_args or {"--from", "-h", "--help"} & {
            a.partition("=")[0] for a in args.spec_args
        }
        connection = None if offline else resolve_connection(args)
        return SpecJob(tuple(args.spec_args), connection)
    if args.command == "load":
        return _load_job(args)
    return _list_job(args)


def _list_job(args: argparse.Namespace) -> ListJob:
    endpoint = find_endpoint(args.endpoint)
    params = parse_params(endpoint, args.param)
    accounts = tuple(resolve_accounts(args.account))
    output = None if args.output in (None, "-") else args.output
    fmt = choose_format(args.format, output)
    folder = os.path.dirname(output or "")
    if output is not None and os.path.isdir(output):
        raise UsageError(f"cannot write --output {output!r}: it is a directory")
    if folder and not os.path.isdir(folder):
        raise UsageError(
            f"cannot write --output {output!r}: the folder {folder!r} does not exist"
        )
    return ListJob(
        endpoint=endpoint,
        params=params,
        accounts=accounts,
        connection=resolve_connection(args),
        output=output,
        format=fmt,
        tag=args.tag_account or len(accounts) > 1,
        page_size=args.page_size,
        max_items=args.max_items,
        concurrency=args.concurrency,
        restart=args.restart,
        quiet=args.quiet,
        debug=args.debug,
    )


def _file_accounts(
    args: argparse.Namespace, endpoints: Sequence[ListEndpoint], files: Sequence[str]
) -> tuple[str, ...]:
    """The account of ``--from``: at most one, for records without an "account" field."""
    if len(endpoints) != 1:
        raise UsageError(
            "--from loads files of one endpoint: name exactly one ENDPOINT"
        )
    for path in files:
        if not os.path.isfile(path):
            raise UsageError(f"--from {path!r}: no such file")
    accounts = []
    if args.account or os.environ.get(ENV_ACCOUNT_ID, "").strip():
        accounts = resolve_accounts(args.account)
    if len(accounts) > 1:
        raise UsageError("--from takes at most one --account, for records without one")
    return tuple(accounts)


def _load_job(args: argparse.Namespace) -> LoadJob:
    endpoints = tuple(dict.fromkeys(find_endpoint(name) for name in args.endpoints))
    # The field rows are merged on: --primary-key, else each record's identifier as
    # the registry found it in the spec (id_field); a list with neither replaces its
    # table at each load (service_api.dlt.source).
    keys = {e.name: args.primary_key for e in endpoints if args.primary_key}
    files = tuple(args.files or ())
    connection = None
    if files:
        accounts = _file_accounts(args, endpoints, files)
    else:
        accounts = tuple(resolve_accounts(args.account))
        connection = resolve_connection(args)
    # Each --param (and option of a parameter) goes to the endpoints named that take it.
    params = params_by_endpoint(endpoints, args.param, parents=True)
    for endpoint in endpoints:
        largest = endpoint.max_page_size
        if args.page_size and largest is not None and args.page_size > largest:
            raise UsageError(
                f"argument --page-size: must be at most {largest}, got "
                f"{args.page_size} (the largest page of {endpoint.name!r})"
            )
    return LoadJob(
        endpoints=endpoints,
        params=params,
        primary_keys=keys,
        accounts=accounts,
        connection=connection,
        files=files,
        destination=args.destination,
        dataset=args.dataset,
        pipeline_name=args.pipeline_name,
        pipelines_dir=args.pipelines_dir,
        page_size=args.page_size,
        concurrency=args.concurrency,
        quiet=args.quiet,
    )
