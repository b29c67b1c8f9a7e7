"""The ``token`` and ``mock`` commands."""

import datetime
import re
from collections.abc import Sequence
from typing import Any

import httpx

import service_api
import service_api_client
from service_api_cli._connection import Connection, make_client
from service_api_cli._exit_codes import ExitCode, lacks_version
from service_api_cli._job import TokenJob
from service_api_cli._mock_entry import load_mock_main
from service_api_client.api.authentication import authenticate
from service_api_client.models.o_auth_error import OAuthError
from service_api_client.models.token_request import TokenRequest
from service_api_client.models.token_response import TokenResponse


def _ask_token(connection: Connection) -> Any:
    """The answer of ``POST /authenticate`` to the connection's credentials, as the
    generated ``authenticate`` endpoint reads it."""
    base_url = connection.base_url
    body = TokenRequest(
        client_id=connection.client_id,
        client_secret=connection.client_secret,
        grant_type="client_credentials",
    )
    # Without --proxy (None), httpx reads the environment's proxies.
    api = service_api_client.Client(
        base_url,
        headers={"accept": "text/plain"},  # as the service's own client
        timeout=httpx.Timeout(30.0),
        httpx_args={"proxy": connection.options.get("proxy")},
    )
    try:
        with api:
            return authenticate.sync_detailed(client=api, body=body)
    except httpx.TransportError as exc:  # refused, reset, timed out
        raise service_api.ApiConnectionError(
            f"no answer from {base_url} ({type(exc).__name__})"
        ) from exc
    except (ValueError, KeyError, TypeError):  # a 200 that is not a TokenResponse
        raise service_api.TokenResponseError(
            f"the answer of POST {_token_url(base_url)} is not a JSON object with an "
            "access_token, token_type Bearer and expires_in"
        ) from None


def _token_url(base_url: str) -> str:
    return f"{base_url.rstrip('/')}/authenticate"


def _usable_token(answer: Any, base_url: str) -> tuple[TokenResponse, int]:
    """The token of ``answer`` and its lifetime in seconds; a typed error for an answer
    that is not a usable token (never showing the token)."""
    url = _token_url(base_url)
    status, token = answer.status_code, answer.parsed
    if status in (400, 401):  # RFC 6749: a malformed or refused client authentication
        code = f" {token.error}" if isinstance(token, OAuthError) else ""
        why = f"the service refused the client credentials ({status}{code}) for POST {url}"
        raise service_api.InvalidCredentialsError(why, status_code=status)
    if not isinstance(token, TokenResponse):
        hint = ""
        if status == 404 and lacks_version(base_url):
            hint = "; does the base URL end with /public/v3?"
        raise service_api.ApiStatusError(
            f"POST {url} answered {status}{hint}", status_code=status
        )
    # The fields as the JSON had them (by JSON name: a value that does not fit the
    # model is kept as sent): the spec says strings, a JSON integer expires_in is
    # accepted too.
    lifetime = str(token.get("expires_in")).strip()
    if token.get("token_type") != "Bearer":  # kept as sent by the model, not refused
        raise service_api.TokenResponseError(
            f"the answer of POST {url} is not a JSON object with an "
            "access_token, token_type Bearer and expires_in"
        )
    # A token is a header value: printable ASCII without spaces.
    if not re.fullmatch(r"[!-~]+", str(token.get("access_token"))):
        raise service_api.TokenResponseError(
            f"the answer of POST {url} has no usable access_token"
        )
    if not re.fullmatch(r"0*[1-9][0-9]{0,8}", lifetime):
        raise service_api.TokenResponseError(
            f"the token response's expires_in is {token.get('expires_in')!r:.40}, "
            "not a whole number of seconds (1 or more)"
        )
    return token, int(lifetime)


def run_token(job: TokenJob) -> int:
    """``service-api token``: obtain a token, print its type and expiry (and itself if asked).

    The generated ``authenticate`` endpoint sends the request and reads the answer into
    its ``TokenResponse`` model; what the command prints is checked first, and an
    answer it cannot use is a typed error that never shows the token. The client every
    other command would use is built first, so that a rate limit or store it cannot use
    is the same usage error here; the token itself is always asked of the service (a
    check of the credentials), never read from or written to ``--token-store``.

    Example::

        run_token(resolve_job(build_parser().parse_args(["token", "--show-token"])))
    """
    with make_client(job.connection):  # the library's checks of every setting
        pass
    answer = _ask_token(job.connection)
    token, lifetime = _usable_token(answer, job.connection.base_url)
    expires = datetime.datetime.now(datetime.UTC) + datetime.timedelta(seconds=lifetime)
    print(f"token_type: {token.get('token_type')}")
    print(f"expires_in: {lifetime} s (at {expires.isoformat(timespec='seconds')})")
    if job.show_token:
        print(f"access_token: {token.access_token}")
    return ExitCode.OK


def run_mock(argv: Sequence[str]) -> int:
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
