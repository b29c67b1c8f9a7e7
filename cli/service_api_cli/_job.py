"""What a command line asks for, read once: the job a command runs.

:func:`resolve_job` reads the parsed command line and the environment once, checks all
it can before any request (the endpoint and its parameters, the accounts, the output,
the client's settings) and returns a frozen job: :class:`ListJob`, :class:`LoadJob`,
:class:`TokenJob` or :class:`MockJob`. The commands take the job and never read the
command line again.

The endpoints are read here and nowhere else in the command line: from the generated
registry ``LIST_ENDPOINTS``, with each one's parameters (``ListEndpoint.parameters``:
name, location, whether required, kind and choices), so that an endpoint or a parameter
added to ``openapi.yaml`` is offered after ``make``. A parameter is named by its spec
name (``createdAfter``) or its Python name (``created_after``) and converted by its kind.
"""

import argparse
import dataclasses
import datetime
import os
import uuid
from collections.abc import Callable, Mapping, Sequence
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

# Where a parameter has an option of its own (--shipment-id S1), beside --param.
OPTION_LOCATIONS = ("path", "header")


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
    page_size: int
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
    params: Mapping[str, Mapping[str, Any]]
    primary_keys: Mapping[str, str]  # endpoint -> identifier field, from --primary-key
    accounts: tuple[str, ...]  # with --from: at most one, for records without one
    connection: Connection | None  # None with --from: nothing is asked of the API
    files: tuple[str, ...]
    destination: str
    dataset: str
    pipeline_name: str
    pipelines_dir: str | None  # None: beside the DuckDB file, else dlt's default
    page_size: int
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


Job = ListJob | LoadJob | TokenJob | MockJob


def find_endpoint(name: str) -> ListEndpoint:
    """The endpoint called ``name`` (or by its module name, such as ``list_shipments``),
    among the generated ``LIST_ENDPOINTS``: an endpoint added to ``openapi.yaml`` is
    offered with no change here.

    Example::

        find_endpoint("shipments")
    """
    if name in LIST_ENDPOINTS:
        return LIST_ENDPOINTS[name]
    for endpoint in LIST_ENDPOINTS.values():
        if endpoint.module.__name__.rsplit(".", 1)[-1] == name:
            return endpoint
    known = ", ".join(LIST_ENDPOINTS) or "none"
    raise UsageError(f"unknown endpoint {name!r} (known: {known})")


def option(parameter: ListParameter) -> str:
    """The option that gives a path or header parameter, beside ``--param``: its Python
    name as an option (``shipment_id``: ``--shipment-id``).

    Example::

        option(find_endpoint("shipment-events").parameters[0])   # "--shipment-id"
    """
    return "--" + parameter.python_name.strip("_").replace("_", "-")


def _key(name: str) -> str:
    # The spec's name and the generated one differ in case and underscores only:
    # createdAfter, created_after and created-after are one parameter (type_ is type).
    return name.replace("_", "").replace("-", "").lower()


def _parameter(endpoint: ListEndpoint, pair: str) -> ListParameter | None:
    """The parameter ``NAME=VALUE`` names, by its spec or Python name."""
    name = _key(pair.partition("=")[0])
    for parameter in endpoint.parameters:
        if name in (_key(parameter.name), _key(parameter.python_name)):
            return parameter
    return None


# How a value of each kind of the registry (ListParameter.kind) is read from the command
# line, and the form a usage error asks for: the types the generated functions take
# (they call isoformat() on a date).
KINDS: dict[str, tuple[Callable[[str], Any], str]] = {
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
    (with or without Z), a UUID, text; an array as comma-separated items. A ValueError
    says the form expected.

    Example::

        convert(ListParameter("minRating", "min_rating", "query", kind="integer"), "4")
    """
    if parameter.kind == "array":
        # The registry does not say what an array's items are: each goes as text.
        item = dataclasses.replace(parameter, kind="string")
        return [convert(item, part.strip()) for part in raw.split(",")]
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
    params: dict[str, Any] = {}
    for pair in pairs:
        given, sep, raw = pair.partition("=")
        given = given.strip()
        parameter = _parameter(endpoint, pair)
        if not sep or not given:
            raise UsageError(f"--param wants NAME=VALUE, got {pair!r}")
        if _key(given) in ("pagenumber", "pagesize"):
            raise UsageError(
                f"--param {given} is driven by the pagination; use --page-size"
            )
        if parameter is None:
            accepted = ", ".join(p.name for p in endpoint.parameters) or "none"
            raise UsageError(
                f"endpoint {endpoint.name!r} has no parameter {given!r} "
                f"(accepted: {accepted})"
            )
        try:
            params[parameter.python_name] = convert(parameter, raw)
        except ValueError as exc:
            raise UsageError(f"--param {given}={raw!r}: {exc}") from None
    for parameter in endpoint.parameters:
        if not parameter.required or parameter.python_name in params:
            continue
        # load lists every parent's records when a parent's id is not given: those
        # of the list whose records' identifier it is.
        ids = [other.id_field for other in LIST_ENDPOINTS.values()]
        if parents and parameter.location == "path" and parameter.name in ids:
            continue
        spelled = f"--param {parameter.name}=VALUE"
        if parameter.location in OPTION_LOCATIONS:
            spelled = f"{option(parameter)} VALUE (or {spelled})"
        raise UsageError(f"endpoint {endpoint.name!r} needs {spelled}")
    return params


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
    if args.command == "load":
        return _load_job(args)
    return _list_job(args)


def _check_output(path: str) -> None:
    folder = os.path.dirname(path)
    if os.path.isdir(path):
        raise UsageError(f"cannot write --output {path!r}: it is a directory")
    if not os.path.isdir(folder or "."):
        raise UsageError(
            f"cannot write --output {path!r}: the folder {folder!r} does not exist"
        )


def _list_job(args: argparse.Namespace) -> ListJob:
    endpoint = find_endpoint(args.endpoint)
    params = parse_params(endpoint, args.param)
    accounts = tuple(resolve_accounts(args.account))
    output = None if args.output in (None, "-") else args.output
    fmt = choose_format(args.format, output)
    if output is not None:
        _check_output(output)
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
    # the registry found it in the spec (id_field); a load without either is refused.
    for endpoint in endpoints:
        if endpoint.id_field is None and not args.primary_key:
            raise UsageError(
                f"endpoint {endpoint.name!r} has no single identifier field to merge "
                "rows on: name one with --primary-key FIELD"
            )
    keys = {}
    if args.primary_key:
        keys = {endpoint.name: args.primary_key for endpoint in endpoints}
    files = tuple(args.files or ())
    connection = None
    if files:
        accounts = _file_accounts(args, endpoints, files)
    else:
        accounts = tuple(resolve_accounts(args.account))
        connection = resolve_connection(args)
    # Each endpoint takes the parameters it has; one that none has is refused.
    for pair in args.param:
        if not any(_parameter(endpoint, pair) for endpoint in endpoints):
            parse_params(endpoints[0], [pair])
    params = {
        endpoint.name: parse_params(
            endpoint,
            [pair for pair in args.param if _parameter(endpoint, pair)],
            parents=True,
        )
        for endpoint in endpoints
    }
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
