"""Every public class of ``service_api``, built the way the client builds it, holding
real credentials: its ``repr`` and ``str`` (and those of what it carries: request,
headers, body, cause) show no client secret and no token.

The instances come from real calls: the mock over loopback for what it can play, an
``httpx.MockTransport`` for the answers it never gives. A public class added later
fails :func:`test_every_public_class_is_covered` until it is built here too.
"""

from __future__ import annotations

import inspect
import socket
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

import service_api
import service_api.quota
from service_api import testing
from service_api_client.api.shipments import list_shipments
from service_api_mock import DEMO_CLIENT_ID, DEMO_CLIENT_SECRET, RunningMock

TRANSPORT_TOKEN = "repr-token-Vd93LqA0"
TRANSPORT_SECRET = "repr-secret-Nw51ZeT7"
WRONG_SECRET = "wrong-secret-Pj27XcM4"
# Protocols describe what generated code offers; they have no instances of their own.
NOT_INSTANTIABLE = {"AnswerObserver", "ListOperation", "PageModel", "TokenStore"}
# Roots: covered by any instance of a subclass.
ROOTS = {
    "ServiceApiError",
    "ApiStatusError",
    "InvalidResponseError",
    "ApiConnectionError",
}


EXPIRED_CHALLENGE = (
    'Bearer error="invalid_token", '
    "error_description=\"The token expired at '01/02/2025 03:04:05'\""
)


def transport_client(
    answer: Callable[[httpx.Request], httpx.Response],
) -> service_api.Client:
    """A client whose token request succeeds and whose other requests get ``answer``."""

    def handler(request: httpx.Request) -> httpx.Response:
        if request.url.path.endswith("/authenticate"):
            return httpx.Response(
                200,
                json={
                    "access_token": TRANSPORT_TOKEN,
                    "token_type": "Bearer",
                    "expires_in": "60",
                },
            )
        return answer(request)

    return service_api.Client(
        "http://repr.invalid/public/v3",
        "repr-client",
        TRANSPORT_SECRET,
        "acct-1",
        max_retries=0,
        httpx_args={"transport": httpx.MockTransport(handler)},
    )


def raised(call: Callable[[], object]) -> service_api.ServiceApiError:
    try:
        call()
    except service_api.ServiceApiError as exc:
        return exc
    raise AssertionError("no error raised")


def page_number_lie(request: httpx.Request) -> httpx.Response:
    return httpx.Response(
        200, json={"totalRecords": 9, "pageNumber": 7, "pageSize": 50, "data": []}
    )


def beyond_total(request: httpx.Request) -> httpx.Response:
    # Two records under totalRecords 1: the second is ignored, with a PaginationWarning.
    body = {
        "totalRecords": 1,
        "pageNumber": 1,
        "pageSize": 50,
        "data": [{"shipmentId": "s-1"}, {"shipmentId": "s-2"}],
    }
    return httpx.Response(200, json=body)


@pytest.fixture
def instances(
    mock: RunningMock, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> list[object]:
    out: list[object] = []
    monkeypatch.delenv("SERVICE_API_CLIENT_SECRET", raising=False)
    out.append(raised(lambda: service_api.Client(mock.base_url, DEMO_CLIENT_ID)))
    closed_port = socket.socket()
    closed_port.bind(("127.0.0.1", 0))
    port = closed_port.getsockname()[1]
    closed_port.close()

    def client(account: str | None = "acct-1", **kw: Any) -> service_api.Client:
        return service_api.Client(
            mock.base_url,
            DEMO_CLIENT_ID,
            DEMO_CLIENT_SECRET,
            account,
            max_retries=0,
            **kw,
        )

    with client() as c, client(None) as no_account, client("acct-3") as foreign_account:
        pager = c.shipments.list()
        pages = list(pager.pages())
        out += [pager, pager.pages()]
        out += [c, c.with_account("acct-2"), service_api.RetryPolicy(), *pages]
        out.append(raised(lambda: list_shipments.sync(client=no_account)))
        out.append(raised(lambda: list_shipments.sync(client=foreign_account)))
        out.append(raised(lambda: c.get_httpx_client().get("/no-such-endpoint")))
        mock.service.set_faults(fault_rate=1.0, retry_after=0.001)
        with testing.no_retry_sleep():
            seen: set[type] = set()
            for _ in range(40):  # 503 or 429 at random, half and half
                exc = raised(lambda: list_shipments.sync(client=c))
                if type(exc) not in seen:
                    seen.add(type(exc))
                    out.append(exc)
                if len(seen) == 2:
                    break
        mock.service.set_faults(fault_rate=0.0)
    with service_api.Client(
        mock.base_url, DEMO_CLIENT_ID, WRONG_SECRET, "acct-1"
    ) as wrong:
        out.append(raised(lambda: list_shipments.sync(client=wrong)))
    dead = service_api.Client(
        f"http://127.0.0.1:{port}/public/v3", "x", TRANSPORT_SECRET, "a"
    )
    with dead, testing.no_retry_sleep():
        out.append(raised(lambda: list_shipments.sync(client=dead)))

    def unauthorized(request: httpx.Request) -> httpx.Response:
        return httpx.Response(
            401, headers={"www-authenticate": 'Bearer error="invalid_token"'}
        )

    def expired(request: httpx.Request) -> httpx.Response:
        return httpx.Response(401, headers={"www-authenticate": EXPIRED_CHALLENGE})

    def not_json(request: httpx.Request) -> httpx.Response:
        return httpx.Response(
            200, content=b"{nope", headers={"content-type": "application/json"}
        )

    def timeout(request: httpx.Request) -> httpx.Response:
        raise httpx.ReadTimeout("no answer", request=request)

    for answer in (unauthorized, expired, not_json, timeout):
        with transport_client(answer) as tc, testing.no_retry_sleep():
            out.append(raised(lambda: list_shipments.sync(client=tc)))
    with transport_client(page_number_lie) as tc:
        failure = raised(lambda: list(service_api.paginate(list_shipments, tc)))
        out += [failure, failure.__cause__]

    def odd_record(request: httpx.Request) -> httpx.Response:
        return httpx.Response(
            200, json={"totalRecords": 1, "pageNumber": 1, "pageSize": 50, "data": [7]}
        )

    with transport_client(odd_record) as tc:
        pager = service_api.paginate(list_shipments, tc)
        out += [pager, raised(lambda: list(pager))]

    # A token shared through a file (the store, and the token it keeps), and a store that
    # cannot be used, refused when the client is built.
    store = service_api.quota.FileTokenStore(tmp_path / "token", key=DEMO_CLIENT_ID)
    with service_api.Client(
        mock.base_url, DEMO_CLIENT_ID, DEMO_CLIENT_SECRET, "acct-1", token_store=store
    ) as shared:
        list_shipments.sync(client=shared)
    out += [store, store.load()]
    with pytest.raises(service_api.quota.StoreError) as unusable:
        service_api.Client(
            mock.base_url,
            DEMO_CLIENT_ID,
            DEMO_CLIENT_SECRET,
            rate_store=f"sqlite:///{tmp_path}/no-such-dir/quota.db",
        )
    out.append(unusable.value)
    with (
        transport_client(beyond_total) as tc,
        warnings.catch_warnings(record=True) as caught,
    ):
        warnings.simplefilter("always")
        list(service_api.paginate(list_shipments, tc))
        out += [w.message for w in caught]

    def no_access_token(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, json={"token_type": "Bearer", "expires_in": "60"})

    bad_token = service_api.Client(
        "http://repr.invalid/public/v3",
        "repr-client",
        TRANSPORT_SECRET,
        httpx_args={"transport": httpx.MockTransport(no_access_token)},
    )
    with bad_token:
        out.append(raised(lambda: list_shipments.sync(client=bad_token)))
    return out


def texts_of(obj: object) -> Iterator[str]:
    yield repr(obj)
    yield str(obj)
    if isinstance(obj, BaseException):
        for name in (
            "request",
            "headers",
            "body",
            "error",
            "error_description",
            "__cause__",
        ):
            value = getattr(obj, name, None)
            if value is not None:
                yield repr(value)
                yield str(value)
        request = getattr(obj, "request", None)
        if isinstance(request, httpx.Request):
            yield repr(list(request.headers.items()))
            yield str(request.url)


def test_no_public_object_shows_a_secret(
    instances: list[object], mock: RunningMock
) -> None:
    secrets = [
        DEMO_CLIENT_SECRET,
        TRANSPORT_SECRET,
        WRONG_SECRET,
        TRANSPORT_TOKEN,
        *mock.service.issued_tokens(),
    ]
    assert len(secrets) > 4  # the mock issued tokens, so there was something to leak
    for obj in instances:
        for text in texts_of(obj):
            for secret in secrets:
                assert secret not in text, f"a secret shows in {type(obj).__name__}"


def test_every_public_class_is_covered(instances: list[object]) -> None:
    built = {type(obj) for obj in instances}
    for name in [n for n in dir(service_api) if not n.startswith("_")]:
        cls = getattr(service_api, name)
        if not inspect.isclass(cls) or name in NOT_INSTANTIABLE:
            continue
        if name in ROOTS:
            assert any(isinstance(obj, cls) for obj in instances), name
        else:
            assert cls in built, (
                f"no {name} was built: add one to the instances fixture"
            )
