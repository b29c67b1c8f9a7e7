"""The error tree, what each error carries, redaction by position, non-healing errors."""

from __future__ import annotations

import asyncio
import json
import pickle
import socket
import time
from collections.abc import Callable
from typing import Any

import httpx
import pytest

import service_api
from service_api import testing
from service_api._errors import (
    MAX_BODY_CHARS,
    challenge,
    error_from_httpx,
    error_from_response,
    is_token_request,
    redacted_request,
)
from service_api._errors import (
    TOKEN_REQUEST_EXTENSION as TOKEN,
)
from service_api_client.api.shipments import list_shipments
from service_api_mock import DEMO_CLIENT_ID, DEMO_CLIENT_SECRET, RunningMock

BASE = "https://api.test/public/v3"


def answer(
    status: int,
    body: bytes = b"",
    headers: dict[str, str] | httpx.Headers | None = None,
) -> httpx.Response:
    request = httpx.Request(
        "GET", f"{BASE}/shipments", headers={"authorization": "Bearer t0k"}
    )
    response = httpx.Response(status, content=body, headers=headers, request=request)
    response.read()
    return response


# ---- the tree -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("status", "cls"),
    [
        (400, service_api.BadRequestError),
        (401, service_api.AuthenticationError),
        (403, service_api.PermissionDeniedError),
        (404, service_api.NotFoundError),
        (429, service_api.RateLimitError),
        (500, service_api.ServerError),
        (503, service_api.ServerError),
        (409, service_api.ApiStatusError),
    ],
)
def test_each_status_has_its_class(
    status: int, cls: type[service_api.ApiStatusError]
) -> None:
    error = error_from_response(answer(status))
    assert type(error) is cls
    assert error.status_code == status
    assert str(error).startswith(f"{status} ")
    assert f"GET {BASE}/shipments" in str(error)


def test_invalid_credentials_are_an_authentication_error() -> None:
    assert issubclass(
        service_api.InvalidCredentialsError, service_api.AuthenticationError
    )
    assert issubclass(service_api.TokenExpiredError, service_api.AuthenticationError)
    assert issubclass(service_api.InvalidResponseError, ValueError)
    assert issubclass(service_api.ApiTimeoutError, service_api.ApiConnectionError)
    assert issubclass(service_api.ApiTimeoutError, TimeoutError)


def test_retry_after_and_oauth_fields_are_read_from_the_answer() -> None:
    limited = error_from_response(answer(429, headers={"retry-after": "7"}))
    assert limited.retry_after == 7.0
    challenge = (
        'Bearer error="invalid_token", '
        "error_description=\"The token expired at '05/31/2024 13:45:10'\""
    )
    expired = error_from_response(answer(401, headers={"www-authenticate": challenge}))
    assert isinstance(expired, service_api.TokenExpiredError)
    assert expired.error == "invalid_token"
    # The message quotes the server's code and description as it wrote them.
    assert "invalid_token; The token expired at '05/31/2024 13:45:10'" in str(expired)
    refused = error_from_response(
        answer(
            401,
            json.dumps({"error": "invalid_client"}).encode(),
            {"content-type": "json"},
        )
    )
    assert refused.error == "invalid_client"  # type: ignore[attr-defined]


def test_the_body_is_bounded_and_the_request_has_no_credentials() -> None:
    error = error_from_response(answer(500, b"x" * 100_000))
    assert len(error.body) == MAX_BODY_CHARS
    assert error.request is not None
    assert error.request.headers["authorization"] == "[redacted]"
    assert "t0k" not in repr(error.request.headers)


def test_redaction_hides_only_the_secret_headers() -> None:
    headers = {
        "authorization": "Bearer t0k3n-abc",
        "proxy-authorization": "Basic cHJveHk=",
        "cookie": "session=s3ss10n",
        "x-service-account-id": "acct-1",
        "user-agent": "service-api/1",
        "accept": "application/json",
    }
    request = httpx.Request("GET", f"{BASE}/shipments?pageSize=5", headers=headers)
    copy = redacted_request(request)
    secret = {"authorization", "proxy-authorization", "cookie"}
    assert {k: v for k, v in copy.headers.items() if k in secret} == dict.fromkeys(
        secret, "[redacted]"
    )
    assert {k: v for k, v in copy.headers.items() if k not in secret} == {
        k: v for k, v in headers.items() if k not in secret
    } | {"host": "api.test"}
    assert str(copy.url) == f"{BASE}/shipments?pageSize=5"


def test_the_token_request_marker_survives_redaction_and_nothing_else_does() -> None:
    marked = httpx.Request(
        "POST", f"{BASE}/authenticate", extensions={TOKEN: True, "a": 1, "x": 1}
    )
    assert redacted_request(marked).extensions == {TOKEN: True}
    assert is_token_request(redacted_request(marked))
    assert not is_token_request(
        redacted_request(httpx.Request("GET", f"{BASE}/shipments"))
    )
    assert not is_token_request(None)


def test_a_body_nested_too_deeply_to_parse_is_kept_as_text() -> None:
    nested = b"[" * 1000 + b"]" * 1000  # deeper than json.loads goes: RecursionError
    error = error_from_response(answer(500, nested))
    assert type(error) is service_api.ServerError
    assert error.body == nested.decode()


def test_a_credential_field_in_a_json_body_is_blanked_where_it_stands() -> None:
    body = {"access_token": "public", "detail": "the public/v3 gateway failed"}
    error = error_from_response(answer(502, json.dumps(body).encode()))
    assert json.loads(error.body) == {
        "access_token": "[redacted]",
        "detail": body["detail"],
    }
    assert "public/v3 gateway failed" in str(error)  # the rest stays exact


def test_httpx_errors_map_to_typed_errors() -> None:
    request = httpx.Request("GET", f"{BASE}/shipments")
    timeout = error_from_httpx(httpx.ReadTimeout("timed out", request=request))
    assert isinstance(timeout, service_api.ApiTimeoutError)
    refused = error_from_httpx(
        httpx.ConnectError("[Errno 111] refused", request=request)
    )
    assert type(refused) is service_api.ApiConnectionError
    assert "[Errno 111] refused" in str(refused)
    broken = error_from_httpx(httpx.DecodingError("bad gzip", request=request))
    assert isinstance(broken, service_api.InvalidResponseError)
    # Our own request's protocol errors can quote a header value: only the class is shown.
    local = error_from_httpx(
        httpx.LocalProtocolError(
            "Illegal header value b'Bearer s3cr3t '", request=request
        )
    )
    assert "s3cr3t" not in str(local)
    assert "LocalProtocolError" in str(local)


def test_resumable_only_where_a_resume_can_succeed() -> None:
    for status, resumable in [(503, True), (401, True), (403, False), (400, False)]:
        error = error_from_response(answer(status))
        assert not error.resumable  # outside an iteration
        error.at_page(3, items_yielded=100)
        assert (error.start_page, error.resumable) == (3, resumable)
    refused = service_api.InvalidCredentialsError("refused", status_code=401)
    refused.at_page(1, items_yielded=0)
    assert not refused.resumable


# ---- www-authenticate: the service's exact form and anything else --------------------------

EXPIRED = (
    'Bearer error="invalid_token", '
    "error_description=\"The token expired at '05/31/2024 13:45:10'\""
)


def www(value: str) -> httpx.Headers:
    return httpx.Headers(
        {b"www-authenticate": value.encode()}
    )  # as the wire may carry it


def status_error(value: str) -> service_api.ApiStatusError:
    return error_from_response(answer(401, headers=www(value)))


def test_the_services_expired_token_header() -> None:
    assert challenge(www(EXPIRED), "error") == "invalid_token"
    description = "The token expired at '05/31/2024 13:45:10'"
    assert challenge(www(EXPIRED), "error_description") == description
    assert type(status_error(EXPIRED)) is service_api.TokenExpiredError
    assert (
        type(status_error('Bearer error="invalid_token"'))
        is service_api.AuthenticationError
    )


@pytest.mark.parametrize(
    "value",
    [
        "",
        "Bearer",
        'Basic realm="x"',
        "garbage ,,, ===",
        "Bearer error=",
        'x="unterminated',
        "Bearer error_description=\"expired at '13/45/2024 99:99:99'\"",
        "é" * 10_000,
    ],
)
def test_other_forms_never_raise(value: str) -> None:
    assert isinstance(status_error(value), service_api.AuthenticationError)
    assert challenge(www(value), "error") is None


def test_unquoted_and_escaped_values() -> None:
    headers = www(
        'Bearer realm=api, error=invalid_token, error_description="a \\"b\\""'
    )
    assert challenge(headers, "error") == "invalid_token"
    assert challenge(headers, "error_description") == 'a "b"'
    assert challenge(headers, "realm") == "api"


def test_parameters_without_scheme_and_the_first_occurrence_counts() -> None:
    assert challenge(www('error="invalid_token"'), "error") == "invalid_token"
    assert challenge(www('Bearer error="first", error="second"'), "error") == "first"
    assert challenge(www('Bearer xerror="no", error_x="no"'), "error") is None


def test_error_description_is_read_from_the_challenge_then_the_body() -> None:
    from_header = error_from_response(
        answer(401, headers={"www-authenticate": 'Bearer error_description="revoked"'})
    )
    assert isinstance(from_header, service_api.AuthenticationError)
    assert from_header.error_description == "revoked"
    body = json.dumps(
        {"error": "invalid_client", "error_description": "unknown client"}
    )
    from_body = error_from_response(answer(401, body.encode()))
    assert isinstance(from_body, service_api.AuthenticationError)
    assert (from_body.error, from_body.error_description) == (
        "invalid_client",
        "unknown client",
    )
    assert "unknown client" in str(from_body)


def test_what_the_server_said_is_quoted_cut_to_200_characters() -> None:
    body = json.dumps(
        {"title": "T" * 500, "detail": "the gateway failed", "other": "no"}
    )
    challenge = 'Bearer error="invalid_token", error_description="revoked"'
    error = error_from_response(
        answer(401, body.encode(), {"www-authenticate": challenge})
    )
    said = str(error).partition(": ")[2]
    assert said == "; ".join(
        ["T" * 200, "the gateway failed", "invalid_token", "revoked"]
    )


# ---- redaction by position ----------------------------------------------------------------

SHORT_SECRETS = ["a", "v3", "pub", "3/au", "publi", "public"]


def token_service(token: str) -> httpx.MockTransport:
    def handle(request: httpx.Request) -> httpx.Response:
        if request.url.path.endswith("/authenticate"):
            body = {"access_token": token, "token_type": "Bearer", "expires_in": "3600"}
            return httpx.Response(200, json=body)
        echo = {"error": "nope", "access_token": token, "path": request.url.path}
        return httpx.Response(403, json=echo)

    return httpx.MockTransport(handle)


def failure_texts(secret: str, mock: RunningMock) -> list[str]:
    """Every text a user sees for three failures, with ``secret`` as the client secret
    (or the issued token)."""
    texts = []
    with (
        service_api.Client(mock.base_url, DEMO_CLIENT_ID, secret) as refused,
        pytest.raises(service_api.InvalidCredentialsError) as info,
    ):
        list_shipments.sync(client=refused)
    texts += [str(info.value), repr(info.value.request), info.value.body]
    args = {"transport": token_service(secret)}
    with (
        service_api.Client(BASE, "cid", secret, "acct-1", httpx_args=args) as denied,
        pytest.raises(service_api.PermissionDeniedError) as denial,
    ):
        list_shipments.sync(client=denied)
    texts += [str(denial.value), repr(denial.value.request.headers), denial.value.body]  # type: ignore[union-attr]
    closed = "http://127.0.0.1:9/public/v3"
    with (
        service_api.Client(
            closed, "cid", secret, retry=service_api.RetryPolicy(max_retries=0)
        ) as c,
        pytest.raises(service_api.ApiConnectionError) as unreachable,
    ):
        list_shipments.sync(client=c)
    texts.append(str(unreachable.value))
    return texts


def test_short_secrets_leave_messages_exact_and_cannot_be_inferred(
    mock: RunningMock,
) -> None:
    reference = failure_texts("a-much-longer-reference-secret", mock)
    assert f"{mock.base_url}/authenticate" in reference[0]
    assert f"{BASE}/shipments" in reference[3]
    assert "[redacted]" in reference[5]  # the echoed token, blanked where it stood
    for secret in SHORT_SECRETS:
        # Identical texts whatever the secret: nothing in them depends on it.
        assert failure_texts(secret, mock) == reference, secret


# ---- errors that never heal, and settings refused at construction ------------------------


def test_tls_against_a_plain_http_server_is_not_retried(mock: RunningMock) -> None:
    url = mock.base_url.replace("http://", "https://")
    with (
        service_api.Client(url, DEMO_CLIENT_ID, DEMO_CLIENT_SECRET) as client,
        testing.no_retry_sleep() as delays,
        pytest.raises(service_api.ApiConnectionError, match="TLS") as info,
    ):
        list_shipments.sync(client=client)
    assert delays == []
    assert f"{url}/authenticate" in str(info.value)


def test_404_on_authenticate_is_not_retried_and_names_the_prefix(
    mock: RunningMock,
) -> None:
    bare = mock.base_url.removesuffix("/public/v3")
    with (
        service_api.Client(bare, DEMO_CLIENT_ID, DEMO_CLIENT_SECRET) as client,
        testing.no_retry_sleep() as delays,
        pytest.raises(service_api.NotFoundError, match="lacks its /public/v3 prefix"),
    ):
        list_shipments.sync(client=client)
    assert delays == []


def test_404_on_a_list_endpoint_names_the_prefix_when_the_base_url_lacks_it() -> None:
    def handle(request: httpx.Request) -> httpx.Response:
        if request.url.path.endswith("/authenticate"):
            return httpx.Response(
                200,
                json={"access_token": "tk", "token_type": "Bearer", "expires_in": "60"},
            )
        return httpx.Response(404)

    args = {"transport": httpx.MockTransport(handle)}
    for base, hinted in [("https://api.test/v3", True), (BASE, False)]:
        with (
            service_api.Client(base, "cid", "s3cret", httpx_args=args) as client,
            pytest.raises(service_api.NotFoundError) as info,
        ):
            list_shipments.sync(client=client)
        assert ("/public/v3 prefix" in str(info.value)) is hinted


@pytest.mark.parametrize(
    "url",
    [
        f"{BASE}?x=1",
        f"{BASE}#frag",
        f"{BASE}?",
        "ftp://api.test/public/v3",
        "/public/v3",
        "https:///public/v3",
    ],
)
def test_a_base_url_with_a_query_fragment_or_no_host_is_refused(url: str) -> None:
    with pytest.raises(ValueError, match="base_url"):
        service_api.Client(url, "cid", "s3cret")


def test_max_retries_and_retry_together_are_a_type_error() -> None:
    with pytest.raises(TypeError, match="max_retries or retry"):
        service_api.Client(
            BASE, "cid", "s3cret", max_retries=1, retry=service_api.RetryPolicy()
        )
    assert (
        service_api.Client(
            BASE, "cid", "s3cret", max_retries=5
        ).retry_policy.max_retries
        == 5
    )


def test_refused_credentials_are_caught_as_authentication_error_around_paginate(
    mock: RunningMock,
) -> None:
    with service_api.Client(
        mock.base_url, DEMO_CLIENT_ID, "wrong-secret-99", "acct-1"
    ) as c:
        try:
            for _ in service_api.paginate(list_shipments, c):
                pass
        except service_api.AuthenticationError as exc:
            caught: service_api.ServiceApiError = exc
    assert isinstance(caught, service_api.InvalidCredentialsError)
    assert caught.page_number == 1
    assert not caught.resumable  # a resume would be refused the same way


@pytest.mark.parametrize(
    "error",
    [
        service_api.ServerError("503", response=answer(503, b"{}")),
        service_api.ConfigurationError("no client_id", "SERVICE_API_CLIENT_ID"),
        service_api.InconsistentPageError("page 2 repeats", page_number=2),
        service_api.ApiTimeoutError("no answer in time"),
    ],
    ids=type,
)
def test_errors_cross_a_process_pool_whole(error: service_api.ServiceApiError) -> None:
    error.at_page(3, items_yielded=100)
    copy = pickle.loads(pickle.dumps(error))  # noqa: S301 - our own bytes
    assert (type(copy), copy.args, copy.start_page) == (type(error), error.args, 3)
    assert copy.__notes__ == error.__notes__
    assert vars(copy).keys() == vars(error).keys()
    if isinstance(error, service_api.ApiStatusError):
        assert isinstance(copy, service_api.ApiStatusError)
        assert copy.request is not None
        assert (copy.status_code, copy.body, str(copy.request.url)) == (
            503,
            "{}",
            f"{BASE}/shipments",
        )


def test_a_status_error_from_a_response_without_a_request() -> None:
    error = service_api.ServerError("500", response=httpx.Response(500, text="down"))
    assert (error.status_code, error.body, error.request) == (500, "down", None)


# ---- errors that say what to do -------------------------------------------------------------

UNKNOWN_HOST = "http://api.nothing.invalid/public/v3"


@pytest.fixture
def no_dns(monkeypatch: pytest.MonkeyPatch) -> None:
    """Names under ``.invalid`` (RFC 6761) resolve to nothing, as a resolver answers them,
    without asking one: no packet leaves the machine."""
    resolve = socket.getaddrinfo

    def getaddrinfo(host: object, *args: Any, **kwargs: Any) -> Any:
        if isinstance(host, str | bytes) and str(host).rstrip(".'").endswith(
            ".invalid"
        ):
            raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
        return resolve(host, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)


def failure(
    url: str, twin: str, **options: Any
) -> tuple[service_api.ServiceApiError, float]:
    """The error a first call against ``url`` ends with, and how long it took, with the
    default retry policy sleeping for real."""
    started = time.monotonic()
    client = service_api.Client(
        url, DEMO_CLIENT_ID, DEMO_CLIENT_SECRET, "acct-1", **options
    )
    try:
        if twin == "sync":
            list_shipments.sync(client=client)
        else:

            async def call() -> None:
                async with client:
                    await list_shipments.asyncio(client=client)

            asyncio.run(call())
    except service_api.ServiceApiError as exc:
        return exc, time.monotonic() - started
    finally:
        client.close()
    raise AssertionError("no error raised")


@pytest.mark.usefixtures("no_dns")
def test_an_unknown_host_ends_at_once_without_retries(twin: str) -> None:
    with testing.no_retry_sleep() as delays:
        error, _ = failure(UNKNOWN_HOST, twin)
    assert delays == []
    assert type(error) is service_api.ApiConnectionError
    assert "unknown host" in str(error)
    assert "check the base URL" in str(error)
    assert "api.nothing.invalid" in str(error)
    _, elapsed = failure(UNKNOWN_HOST, twin)  # retries sleeping for real: none
    assert elapsed < 1.0


def test_tls_against_a_plain_http_server_ends_at_once(
    mock: RunningMock, twin: str
) -> None:
    url = mock.base_url.replace("http://", "https://")
    with testing.no_retry_sleep() as delays:
        error, _ = failure(url, twin)
    assert delays == []
    assert type(error) is service_api.ApiConnectionError
    assert "TLS failed: an https:// URL for a plain-HTTP server" in str(error)
    _, elapsed = failure(url, twin)
    assert elapsed < 1.0


def test_a_server_that_never_answers_is_still_retried(twin: str) -> None:
    with (
        socket.socket() as silent
    ):  # accepts connections (the backlog) and never answers
        silent.bind(("127.0.0.1", 0))
        silent.listen(16)
        url = f"http://127.0.0.1:{silent.getsockname()[1]}/public/v3"
        with testing.no_retry_sleep() as delays:
            error, _ = failure(url, twin, timeout=0.2, max_retries=1)
    assert len(delays) == 1
    assert type(error) is service_api.ApiTimeoutError


def test_a_refused_connection_is_still_retried(twin: str) -> None:
    # Before any answer, on the short budget (the whole one after an answer: test_client).
    with testing.no_retry_sleep() as delays:
        error, _ = failure("http://127.0.0.1:9/public/v3", twin)
    assert len(delays) == 3
    assert type(error) is service_api.ApiConnectionError
    assert "unknown host" not in str(error)
    assert str(error).startswith("nothing listens at the base URL http://127.0.0.1:9/")


def test_a_missing_account_header_names_account_id_and_with_account(
    mock: RunningMock,
) -> None:
    with service_api.Client(
        mock.base_url, DEMO_CLIENT_ID, DEMO_CLIENT_SECRET, None
    ) as client:
        with pytest.raises(service_api.BadRequestError) as missing:
            list_shipments.sync(client=client)
        assert "x-service-account-id header is required" in str(missing.value)
        assert "pass account_id= or use client.with_account()" in str(missing.value)
        with pytest.raises(service_api.BadRequestError) as malformed:
            list_shipments.sync(client=client.with_account("acct-1"), page_size=0)
    assert "account_id=" not in str(
        malformed.value
    )  # sent with the header: another cause
    assert "pageSize" in str(malformed.value)


def test_the_body_kept_is_the_documented_2048_characters() -> None:
    assert len(error_from_response(answer(500, b"x" * 5000)).body) == 2048
    assert error_from_response(answer(500, b"y" * 2048)).body == "y" * 2048


def test_an_error_built_by_hand_has_no_status_and_an_empty_answer() -> None:
    error = service_api.ApiStatusError("no answer")
    assert (error.status_code, error.body, error.request) == (0, "", None)
    assert not error.headers


def test_options_of_the_errors_and_their_helpers_are_keywords_only() -> None:
    request = httpx.Request("GET", f"{BASE}/shipments")
    calls: list[Callable[[], object]] = [
        lambda: service_api.ServiceApiError("x", request),  # type: ignore[call-arg]
        lambda: service_api.ApiStatusError("x", answer(404)),  # type: ignore[call-arg]
        lambda: service_api.InconsistentPageError("x", 2),  # type: ignore[call-arg]
        lambda: service_api.ServerError("x").at_page(2, 10),  # type: ignore[call-arg]
        lambda: error_from_httpx(httpx.ConnectError("x"), request),  # type: ignore[call-arg]
    ]
    for call in calls:
        with pytest.raises(TypeError, match="positional"):
            call()
    assert str(service_api.ServiceApiError(message="by name")) == "by name"


def test_only_a_400_without_the_account_header_advises_on_the_account() -> None:
    assert "account header" in str(error_from_response(answer(400)))
    for status in (302, 399, 401, 409):
        assert "account header" not in str(error_from_response(answer(status)))


@pytest.mark.parametrize(
    ("url", "advised"),
    [
        ("https://api.test/v3/shipments", True),
        ("https://api.test/shipments", True),
        ("https://api.test/public/v3/shipments", False),
        ("https://api.test/gateway/public/v3/authenticate", False),
        (
            "https://api.test/public/v3",
            True,
        ),  # the prefix is a folder of the path, or absent
    ],
)
def test_only_a_404_from_a_url_without_the_prefix_advises_on_the_base_url(
    url: str, advised: bool
) -> None:
    prefix = "; the base URL probably lacks its /public/v3 prefix"
    for status in (400, 401, 403, 404, 405, 500):
        response = httpx.Response(status, request=httpx.Request("GET", url))
        message = str(error_from_response(response))
        assert message.endswith(prefix) is (advised and status == 404), (
            url,
            status,
            message,
        )


@pytest.mark.parametrize(
    ("status", "said"),
    [(404, "Not Found"), (503, "Service Unavailable"), (599, "error")],
)
def test_a_status_error_begins_with_the_status_and_its_reason(
    status: int, said: str
) -> None:
    # A status without a reason phrase of its own says "error".
    message = str(error_from_response(answer(status)))
    assert message.startswith(f"{status} {said} for GET {BASE}/shipments")


def test_a_challenge_is_read_in_its_first_4096_characters_only() -> None:
    # The cap keeps a hostile header cheap to parse: a value is cut where the cap falls.
    header = "Bearer error=" + "a" * 10_000
    assert challenge(www(header), "error") == "a" * (4096 - len("Bearer error="))
    late = "Bearer " + " " * 4096 + 'error="x"'
    assert challenge(www(late), "error") is None


@pytest.mark.parametrize(
    ("status", "kind"),
    [
        (499, service_api.ApiStatusError),
        (500, service_api.ServerError),
        (599, service_api.ServerError),
        (418, service_api.ApiStatusError),
    ],
)
def test_from_500_up_a_status_is_a_server_error(status: int, kind: type) -> None:
    assert type(error_from_response(answer(status))) is kind
