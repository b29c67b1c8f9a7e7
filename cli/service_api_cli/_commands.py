"""The sub-commands: ``list``, ``token`` and ``mock``."""

from __future__ import annotations

import argparse
import datetime
import inspect
import os
import re
import sys
import types
import typing
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import IO, Any

import httpx

import service_api
import service_api_client
from service_api_cli._config import Settings, resolve_accounts
from service_api_cli._connection import (
    ConnectionOptions,
    make_client,
    options_from,
    shown_url,
)
from service_api_cli._destination import Outcome, open_output
from service_api_cli._exit_codes import ExitCode, UsageError, describe_error, exit_code_for
from service_api_cli._export import ExportResult, PageLike, export, resume_commands
from service_api_cli._formats import choose_format
from service_api_cli._interrupts import InterruptGuard
from service_api_cli._mock_entry import load_mock_main
from service_api_cli._output import make_writer
from service_api_cli._progress import make_progress
from service_api_client.api import LIST_ENDPOINTS, ListEndpoint
from service_api_client.api.authentication import authenticate
from service_api_client.models.o_auth_error import OAuthError
from service_api_client.models.token_request import TokenRequest
from service_api_client.models.token_response import TokenResponse

__all__ = ["find_endpoint", "parse_params", "run_list", "run_mock", "run_token"]

PROG = "service-api"


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
        and p.kind in (inspect.Parameter.KEYWORD_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
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
                f"--param {name} is driven by the pagination; use --page-size / --start-page"
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


def _say(message: str) -> None:
    print(f"{PROG}: {message}", file=sys.stderr, flush=True)


def _base_resume_argv(args: argparse.Namespace) -> list[str]:
    # Everything that shapes page numbers and records must be the same on resume.
    argv = [PROG]
    # Connection flags come along (the secret never does: it is in the environment or
    # typed again at the prompt).
    if args.base_url:
        argv += ["--base-url", args.base_url]
    if args.client_id:
        argv += ["--client-id", args.client_id]
    if args.proxy is not None and args.proxy == shown_url(args.proxy):
        argv += ["--proxy", args.proxy]
    if args.retries is not None:
        argv += ["--retries", str(args.retries)]
    if args.rate_limit is not None:
        argv += ["--rate-limit", args.rate_limit]
    for flag, url in (("--rate-store", args.rate_store), ("--token-store", args.token_store)):
        if url is not None and url == shown_url(url):
            argv += [flag, url]
    argv += ["list", args.endpoint, "--page-size", str(args.page_size)]
    if args.concurrency != 1:
        argv += ["--concurrency", str(args.concurrency)]
    argv += ["--format", args.format]
    for pair in args.param:
        argv += ["--param", pair]
    if args.tag_account or len(args.accounts) > 1:
        argv.append("--tag-account")
    return argv


def run_list(
    args: argparse.Namespace, settings_from: Callable[[argparse.Namespace], Settings]
) -> int:
    """``service-api list``: export an endpoint for every account, then print a summary."""
    endpoint = find_endpoint(args.endpoint, LIST_ENDPOINTS)
    params = parse_params(endpoint, args.param)
    args.accounts = resolve_accounts(args.account, _environ())
    args.format = choose_format(args.format, args.output)
    if args.append and args.output in (None, "-"):
        raise UsageError("--append needs --output FILE")
    if args.append and args.format != "jsonl":
        raise UsageError("--append works with --format jsonl only (a CSV has one header)")
    if args.keep_partial and args.output in (None, "-"):
        raise UsageError("--keep-partial needs --output FILE")
    options = options_from(args)
    settings = settings_from(args)
    tag = args.tag_account or len(args.accounts) > 1
    with (
        make_client(settings, args.accounts[0], options) as client,
        open_output(args.output, append=args.append) as output,
        InterruptGuard() as guard,
    ):

        def pages(account: str, start_page: int) -> Iterator[PageLike]:
            # One child client per account, sharing the token; closed before the parent.
            with client.with_account(account) as child:
                yield from service_api.paginate(
                    endpoint.module,
                    child,
                    page_size=args.page_size,
                    start_page=start_page,
                    concurrency=args.concurrency,
                    **params,
                ).pages()

        writer = output.track(make_writer(args.format, output.stream))
        # Records streaming to the same terminal would tear the bar apart; a table is
        # drawn after the bar is gone, so it does not.
        records_on_terminal = output.is_stdout and args.format != "table" and _is_tty(output.stream)
        progress = make_progress(_is_tty(sys.stderr) and not records_on_terminal)
        try:
            result = export(
                accounts=args.accounts,
                start_page=args.start_page,
                page_size=args.page_size,
                max_items=args.max_items,
                pages=pages,
                writer=writer,
                progress=progress,
                guard=guard,
                tag=tag,
            )
        finally:
            progress.close()
        with guard.critical():
            # Even after an error or Ctrl-C a CSV or table is completed with the pages
            # written (the file is kept only with --keep-partial). A failure here (a full
            # disk) stands for the export's own when it had none.
            try:
                writer.close()
            except Exception as exc:
                result.error = result.error or exc
            outcome = output.finish(complete=result.error is None, keep_partial=args.keep_partial)
    return _report(result, outcome, args)


def _report(result: ExportResult, outcome: Outcome, args: argparse.Namespace) -> int:
    to_file = args.output not in (None, "-")
    destination = args.output if to_file else "stdout"
    error = result.error
    if isinstance(error, BrokenPipeError) and not to_file:
        # The reader went away (``| head``): say so once and keep the interpreter from
        # complaining again when it flushes stdout at exit.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
        _say("error: the output was closed before the export ended (broken pipe)")
        _say(result.summary(destination))
        return ExitCode.FAILURE
    if error is None:
        _say(result.summary(destination))
        return ExitCode.OK
    # The error first, then what was done before it, then how to go on.
    if isinstance(error, KeyboardInterrupt):
        _say("interrupted")
    else:
        if args.debug:
            import traceback

            traceback.print_exception(error)
        _say(f"error: {describe_error(error)}")
    code = exit_code_for(error)
    if outcome is Outcome.UNCHANGED:
        _say(result.summary(None))
        if args.keep_partial or result.pages == 0:
            _say(f"{args.output} was left as it was: no page was written")
        else:
            _say(f"{args.output} was left as it was: the partial output was discarded")
        if _resumable(error) and not args.keep_partial:
            _say("rerun the command (with --keep-partial, whole pages of a failed run are kept)")
        return code
    _say(result.summary(destination))
    if result.records == 0 and code not in (ExitCode.API, ExitCode.INTERRUPTED):
        # Nothing written and a cause that a rerun will not cure: no resume advice.
        return code
    if not _resumable(error):
        return code
    resume = resume_commands(
        result,
        _base_resume_argv(args),
        output=args.output if to_file else None,
        append=args.format == "jsonl",
    )
    for command in resume:
        _say(f"resume with: {command}")
    if resume and args.proxy is not None and args.proxy != shown_url(args.proxy):
        _say("(add your --proxy to it: it holds a password, which is not printed)")
    for flag, url in (("--rate-store", args.rate_store), ("--token-store", args.token_store)):
        if resume and url is not None and url != shown_url(url):
            _say(f"(add your {flag} to it: it holds a password, which is not printed)")
    return code


def _resumable(error: BaseException) -> bool:
    # Failures a resume cannot fix (refused credentials, permission, bad request) fail
    # again the same way; Ctrl-C, a full disk, network and server failures can be resumed.
    if not isinstance(error, service_api.ServiceApiError):
        return True
    if error.start_page is not None:
        return error.resumable
    return not isinstance(
        error,
        service_api.InvalidCredentialsError
        | service_api.PermissionDeniedError
        | service_api.BadRequestError,
    )


def _is_tty(stream: IO[str]) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # replaced or closed streams
        return False


def _environ() -> dict[str, str]:
    return dict(os.environ)


def run_token(settings: Settings, options: ConnectionOptions, *, show_token: bool) -> int:
    """``service-api token``: obtain a token, print its type and expiry (and itself if asked).

    The generated ``authenticate`` endpoint sends the request and reads the answer into
    its ``TokenResponse`` model; what the command prints is checked first, and an
    answer it cannot use is a typed error that never shows the token. The client every
    other command would use is built first, so that a rate limit or store it cannot use
    is the same usage error here; the token itself is always asked of the service (a
    check of the credentials), never read from or written to ``--token-store``.
    """
    with make_client(settings, None, options):
        pass
    body = TokenRequest(
        client_id=settings.client_id,
        client_secret=settings.client_secret,
        grant_type="client_credentials",
    )
    url = f"{settings.base_url.rstrip('/')}/authenticate"
    # Without --proxy (None), httpx reads the environment's proxies.
    api = service_api_client.Client(
        settings.base_url,
        headers={"accept": "text/plain"},  # as the service's own client
        timeout=httpx.Timeout(30.0),
        httpx_args={"proxy": options.proxy},
    )
    try:
        with api:
            answer = authenticate.sync_detailed(client=api, body=body)
    except httpx.TimeoutException as exc:
        raise service_api.ApiTimeoutError(f"no answer in time from {settings.base_url}") from exc
    except httpx.TransportError as exc:
        raise service_api.ApiConnectionError(
            f"no answer from {settings.base_url} ({type(exc).__name__})"
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
        raise service_api.ApiStatusError(f"POST {url} answered {status}{hint}", status_code=status)
    # The model's fields are as the JSON had them: the spec says strings, and a JSON
    # integer expires_in is accepted too.
    lifetime = str(token.expires_in).strip()
    # A token is a header value: printable ASCII without spaces.
    if not isinstance(token.access_token, str) or not re.fullmatch(r"[!-~]+", token.access_token):
        raise service_api.TokenResponseError(f"the answer of POST {url} has no usable access_token")
    if not re.fullmatch(r"[0-9]{1,9}", lifetime) or int(lifetime) < 1:
        raise service_api.TokenResponseError(
            f"the token response's expires_in is {token.expires_in!r:.40}, "
            "not a whole number of seconds (1 or more)"
        )
    expires = datetime.datetime.now(datetime.UTC) + datetime.timedelta(seconds=int(lifetime))
    print(f"token_type: {token.token_type}")
    print(f"expires_in: {int(lifetime)} s (at {expires.isoformat(timespec='seconds')})")
    if show_token:
        print(f"access_token: {token.access_token}")
    return ExitCode.OK


def run_mock(argv: list[str]) -> int:
    """``service-api mock``: hand the arguments to the mock's own entry point."""
    mock_main = load_mock_main()
    # ``--help`` and argparse errors in the mock end with SystemExit; pass its code on.
    try:
        return mock_main(argv)
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else ExitCode.USAGE
