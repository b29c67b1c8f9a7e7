"""What ``list`` takes (its endpoint and parameters), and the ``token`` and ``mock`` commands."""

from __future__ import annotations

import argparse
import datetime
import inspect
import os
import re
import types
import typing
from collections.abc import Mapping, Sequence
from typing import Any

import httpx

import service_api
import service_api_client
from service_api_cli._connection import make_client
from service_api_cli._exit_codes import ExitCode, UsageError
from service_api_cli._mock_entry import load_mock_main
from service_api_client.api import ListEndpoint
from service_api_client.api.authentication import authenticate
from service_api_client.models.o_auth_error import OAuthError
from service_api_client.models.token_request import TokenRequest
from service_api_client.models.token_response import TokenResponse

__all__ = ["find_endpoint", "parse_params", "run_mock", "run_token"]


# Parameters the pagination drives itself; offering them as --param would fight it.
PAGING_PARAMETERS = frozenset({"client", "page_number", "page_size"})


def endpoint_parameters(endpoint: ListEndpoint) -> dict[str, inspect.Parameter]:
    """The endpoint's own parameters (``--param NAME=VALUE``), from its generated function.

    Example::

        endpoint_parameters(LIST_ENDPOINTS["shipments"])   # {} today
    """
    signature = inspect.signature(endpoint.module.sync_detailed, eval_str=True)
    return {
        name: p
        for name, p in signature.parameters.items()
        if name not in PAGING_PARAMETERS
        and p.kind
        in (inspect.Parameter.KEYWORD_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    }


def find_endpoint(name: str, endpoints: Mapping[str, ListEndpoint]) -> ListEndpoint:
    """The endpoint called ``name`` (or by its module name, such as ``list_shipments``),
    among the generated ``LIST_ENDPOINTS``: an endpoint added to ``openapi.yaml`` is
    offered with no change here.

    Example::

        find_endpoint("shipments", LIST_ENDPOINTS)
    """
    if name in endpoints:
        return endpoints[name]
    for endpoint in endpoints.values():
        if endpoint.module.__name__.rsplit(".", 1)[-1] == name:
            return endpoint
    known = ", ".join(endpoints) or "none"
    raise UsageError(f"unknown endpoint {name!r} (known: {known})")


def _union_members(annotation: Any) -> list[Any]:
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        return [m for arg in typing.get_args(annotation) for m in _union_members(arg)]
    return [annotation]


def _convert(raw: str, annotation: Any) -> Any:
    # Generated parameters are scalars or Literal "enums", usually ``X | Unset``; try each
    # member of the union in a fixed order so "5" becomes 5 where an int is accepted.
    expected: list[str] = []
    for member in _union_members(annotation):
        if typing.get_origin(member) is typing.Literal:
            choices = typing.get_args(member)
            for choice in choices:
                if str(choice) == raw:
                    return choice
            expected.append("one of " + ", ".join(str(c) for c in choices))
        elif member is bool:
            lowered = raw.lower()
            if lowered in ("true", "1", "yes"):
                return True
            if lowered in ("false", "0", "no"):
                return False
            expected.append("true or false")
        elif member is int or member is float:
            try:
                return member(raw)
            except ValueError:
                expected.append("an integer" if member is int else "a number")
        elif member is str or member is inspect.Parameter.empty or member is Any:
            return raw
    if not expected:
        return raw
    raise ValueError("expected " + " or ".join(expected))


def parse_params(endpoint: ListEndpoint, pairs: Sequence[str]) -> dict[str, Any]:
    """Turn ``NAME=VALUE`` strings into keyword arguments of the endpoint's function.

    Names are checked against the generated function's signature; values are converted
    to the type it declares.

    Example::

        parse_params(find_endpoint("shipments", LIST_ENDPOINTS), ["status=delivered"])
    """
    out: dict[str, Any] = {}
    for pair in pairs:
        name, sep, raw = pair.partition("=")
        name = name.strip().replace("-", "_")
        if not sep or not name:
            raise UsageError(f"--param wants NAME=VALUE, got {pair!r}")
        if name in PAGING_PARAMETERS:
            raise UsageError(
                f"--param {name} is driven by the pagination; use --page-size"
            )
        parameters = endpoint_parameters(endpoint)
        parameter = parameters.get(name)
        if parameter is None:
            accepted = ", ".join(parameters) or "none"
            raise UsageError(
                f"endpoint {endpoint.name!r} has no parameter {name!r} (accepted: {accepted})"
            )
        try:
            out[name] = _convert(raw, parameter.annotation)
        except ValueError as exc:
            raise UsageError(f"--param {name}={raw!r}: {exc}") from None
    return out


def run_token(args: argparse.Namespace) -> int:
    """``service-api token``: obtain a token, print its type and expiry (and itself if asked).

    The generated ``authenticate`` endpoint sends the request and reads the answer into
    its ``TokenResponse`` model; what the command prints is checked first, and an
    answer it cannot use is a typed error that never shows the token. The client every
    other command would use is built first, so that a rate limit or store it cannot use
    is the same usage error here; the token itself is always asked of the service (a
    check of the credentials), never read from or written to ``--token-store``.

    Example::

        run_token(build_parser().parse_args(["token", "--show-token"]))
    """
    with make_client(args):  # the library's checks of every setting (and the prompt)
        pass
    # Those it accepted: the flag, else the variable it read.
    base_url = args.base_url or os.environ["SERVICE_API_BASE_URL"].strip()
    client_id = args.client_id or os.environ["SERVICE_API_CLIENT_ID"].strip()
    secret = args.client_secret or os.environ["SERVICE_API_CLIENT_SECRET"].strip()
    body = TokenRequest(
        client_id=client_id, client_secret=secret, grant_type="client_credentials"
    )
    url = f"{base_url.rstrip('/')}/authenticate"
    # Without --proxy (None), httpx reads the environment's proxies.
    api = service_api_client.Client(
        base_url,
        headers={"accept": "text/plain"},  # as the service's own client
        timeout=httpx.Timeout(30.0),
        httpx_args={"proxy": args.proxy},
    )
    try:
        with api:
            answer = authenticate.sync_detailed(client=api, body=body)
    except httpx.TimeoutException as exc:
        raise service_api.ApiTimeoutError(f"no answer in time from {base_url}") from exc
    except httpx.TransportError as exc:
        raise service_api.ApiConnectionError(
            f"no answer from {base_url} ({type(exc).__name__})"
        ) from exc
    except (ValueError, KeyError, TypeError):  # a 200 that is not a TokenResponse
        raise service_api.TokenResponseError(
            f"the answer of POST {url} is not a JSON object with an access_token, "
            "token_type Bearer and expires_in"
        ) from None
    status, token = answer.status_code, answer.parsed
    if status in (400, 401):  # RFC 6749: a malformed or refused client authentication
        code = f" {token.error}" if isinstance(token, OAuthError) else ""
        why = f"the service refused the client credentials ({status}{code}) for POST {url}"
        raise service_api.InvalidCredentialsError(why, status_code=status)
    if not isinstance(token, TokenResponse):
        hint = "; does the base URL end with /public/v3?" if status == 404 else ""
        raise service_api.ApiStatusError(
            f"POST {url} answered {status}{hint}", status_code=status
        )
    # The model's fields are as the JSON had them: the spec says strings, and a JSON
    # integer expires_in is accepted too.
    lifetime = str(token.expires_in).strip()
    # A token is a header value: printable ASCII without spaces.
    if not isinstance(token.access_token, str) or not re.fullmatch(
        r"[!-~]+", token.access_token
    ):
        raise service_api.TokenResponseError(
            f"the answer of POST {url} has no usable access_token"
        )
    if not re.fullmatch(r"[0-9]{1,9}", lifetime) or int(lifetime) < 1:
        raise service_api.TokenResponseError(
            f"the token response's expires_in is {token.expires_in!r:.40}, "
            "not a whole number of seconds (1 or more)"
        )
    expires = datetime.datetime.now(datetime.UTC) + datetime.timedelta(
        seconds=int(lifetime)
    )
    print(f"token_type: {token.token_type}")
    print(f"expires_in: {int(lifetime)} s (at {expires.isoformat(timespec='seconds')})")
    if args.show_token:
        print(f"access_token: {token.access_token}")
    return ExitCode.OK


def run_mock(argv: list[str]) -> int:
    """``service-api mock``: hand the arguments to the mock's own entry point.

    Example::

        run_mock(["--port", "8080"])
    """
    mock_main = load_mock_main()
    # ``--help`` and argparse errors in the mock end with SystemExit; pass its code on.
    try:
        return mock_main(argv, prog="service-api mock")
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else ExitCode.USAGE
