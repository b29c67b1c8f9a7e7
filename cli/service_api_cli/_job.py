"""What a command line asks for, read once: the job a command runs.

:func:`resolve_job` reads the parsed command line and the environment once, checks all
it can before any request (the endpoint and its parameters, the accounts, the output,
the client's settings) and returns a frozen job: :class:`ListJob`, :class:`LoadJob`,
:class:`TokenJob`, :class:`MockJob` or :class:`SpecJob`. The commands take the job
and never read the command line again.

The endpoints are read here and nowhere else in the command line: from the generated
registry ``LIST_ENDPOINTS`` and the signature of each endpoint's generated function, so
that an endpoint or a parameter added to ``openapi.yaml`` is offered after ``make``.
A parameter is named by its spec name (``createdAfter``) or its Python name
(``created_after``) and converted to the type the function declares.
"""

import argparse
import datetime
import inspect
import os
import types
import typing
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
from service_api_client.api import LIST_ENDPOINTS, ListEndpoint

# Parameters the pagination drives itself; offering them as --param would fight it.
PAGING_PARAMETERS = frozenset({"client", "page_number", "page_size"})


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


def endpoint_parameters(endpoint: ListEndpoint) -> dict[str, inspect.Parameter]:
    """The endpoint's own parameters (``--param NAME=VALUE``), from its generated function.

    Example::

        endpoint_parameters(LIST_ENDPOINTS["shipments"])   # {} today
    """
    signature = inspect.signature(endpoint.module.sync_detailed, eval_str=True)
    parameters = dict(signature.parameters)
    for name in PAGING_PARAMETERS:
        parameters.pop(name, None)
    return parameters


def _key(name: str) -> str:
    # The spec's name and the generated one differ in case and underscores only:
    # createdAfter, created_after and created-after are one parameter (from_ is from).
    return name.replace("_", "").replace("-", "").lower()


def _choice(raw: str, choices: Sequence[Any]) -> Any:
    for choice in choices:
        if str(choice) == raw:
            return choice
    raise ValueError("one of " + ", ".join(str(c) for c in choices))


# What the command line can spell, with the form it expects.
_FORMS = {
    int: "an integer",
    float: "a number",
    datetime.datetime: "an ISO 8601 date-time, such as 2024-05-01T08:00:00Z",
    datetime.date: "an ISO 8601 date, such as 2024-05-01",
}


def _as_type(raw: str, member: Any) -> Any:
    """``raw`` as ``member``, one type of a parameter's annotation (the generator
    writes an enum as a ``Literal``); else a ValueError naming the form expected, or a
    TypeError for a type the command line has no spelling for (``Unset``, a model)."""
    if typing.get_origin(member) is typing.Literal:
        return _choice(raw, typing.get_args(member))
    if member is bool:
        return _choice(raw.lower(), ["true", "false"]) == "true"
    if member in _FORMS:
        try:
            return member(raw) if member in (int, float) else member.fromisoformat(raw)
        except ValueError:
            raise ValueError(_FORMS[member]) from None
    if member in (str, Any, inspect.Parameter.empty):
        return raw
    raise TypeError(member)


def _convert(raw: str, annotation: Any) -> Any:
    # Generated parameters are scalars, dates or enums, usually ``X | Unset``; each
    # member of the union is tried in turn, so "5" becomes 5 where an int is accepted.
    members = [annotation]
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        members = list(typing.get_args(annotation))  # Python flattens nested unions
    expected = []
    for member in members:
        try:
            return _as_type(raw, member)
        except ValueError as exc:
            expected.append(str(exc))
        except TypeError:
            continue
    if not expected:
        return raw
    raise ValueError("expected " + " or ".join(expected))


def parse_params(endpoint: ListEndpoint, pairs: Sequence[str]) -> dict[str, Any]:
    """Turn ``NAME=VALUE`` strings into keyword arguments of the endpoint's function.

    A name is the spec's (``createdAfter``) or the function's (``created_after``); a
    value is converted to the type the function declares: an integer, a number, true or
    false, one of an enum's values, an ISO 8601 date or date-time. A parameter the
    function requires (a parent's identifier in the path) must be given.

    Example::

        parse_params(find_endpoint("alerts"), ["severity=high", "createdAfter=2024-05-01"])
    """
    parameters = endpoint_parameters(endpoint)
    names = {_key(name): name for name in parameters}
    paging = {_key(name) for name in PAGING_PARAMETERS}
    params: dict[str, Any] = {}
    for pair in pairs:
        given, sep, raw = pair.partition("=")
        given = given.strip()
        if not sep or not given:
            raise UsageError(f"--param wants NAME=VALUE, got {pair!r}")
        if _key(given) in paging:
            raise UsageError(
                f"--param {given} is driven by the pagination; use --page-size"
            )
        name = names.get(_key(given))
        if name is None:
            accepted = ", ".join(parameters) or "none"
            raise UsageError(
                f"endpoint {endpoint.name!r} has no parameter {given!r} "
                f"(accepted: {accepted})"
            )
        try:
            params[name] = _convert(raw, parameters[name].annotation)
        except ValueError as exc:
            raise UsageError(f"--param {given}={raw!r}: {exc}") from None
    for name, parameter in parameters.items():
        if parameter.default is parameter.empty and name not in params:
            raise UsageError(f"endpoint {endpoint.name!r} needs --param {name}=VALUE")
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
    if args.command == "spec":
        offline = {"--from", "-h", "--help"} & {
            a.partition("=")[0] for a in args.spec_args
        }
        connection = None if offline else resolve_connection(args)
        return SpecJob(tuple(args.spec_args), connection)
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
    return LoadJob(
        endpoints=endpoints,
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
