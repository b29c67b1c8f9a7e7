"""The generated client used on its own never crashes on an error body.

Error bodies are whatever the service or a proxy in front of it writes: nothing, an
HTML page, a truncated JSON document, JSON of another shape. On every declared error
status of every operation, sync and async, with ``raise_on_unexpected_status`` on or
off, the generated functions return a value (the error model when the body is one,
else ``None`` or the text) and never raise ``JSONDecodeError``; an undeclared status
raises ``errors.UnexpectedStatus`` only when asked to; the doors of the plain generated
client (``client.shipments.get()``, ``await client.aio.shipments.create()``) raise
``errors.UnexpectedStatus`` for any answer but the success.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from types import ModuleType
from typing import Any

import httpx
import pytest

from service_api_client import Client, errors
from service_api_client.api.authentication import authenticate
from service_api_client.api.devices import list_devices
from service_api_client.api.shipments import (
    create_shipment,
    get_shipment,
    list_shipments,
)
from service_api_client.models import OAuthError, ProblemDetails, Shipment, TokenRequest

BODIES: dict[str, tuple[bytes, str]] = {
    "empty": (b"", "application/json"),
    "html": (b"<html><body><h1>502 Bad Gateway</h1></body></html>", "text/html"),
    "html-said-json": (
        b"<html><body>Too many requests</body></html>",
        "application/json",
    ),
    "text": (b"Service Unavailable", "text/plain"),
    "truncated-json": (b'{"type": "about:blank", "tit', "application/problem+json"),
    "json-list": (b"[1, 2, 3]", "application/json"),
    "json-string": (b'"denied"', "application/json"),
    "json-null": (b"null", "application/json"),
    "not-utf8": (b"\xff\xfe\x00garbage", "application/json"),
}

# The operations, their call arguments, and their declared error statuses.
OPERATIONS: dict[str, tuple[ModuleType, dict[str, Any], list[int]]] = {
    "list_shipments": (list_shipments, {}, [400, 401, 403, 429, 500, 502, 503]),
    "list_devices": (list_devices, {"page_size": 10}, [400, 401, 403, 429, 500, 503]),
    "get_shipment": (
        get_shipment,
        {"shipment_id": "s-1"},
        [400, 401, 403, 404, 429, 500],
    ),
    "create_shipment": (
        create_shipment,
        {"body": Shipment()},
        [400, 401, 403, 429, 503],
    ),
    "authenticate": (
        authenticate,
        {
            "body": TokenRequest(
                client_id="my-client",
                client_secret="s3cret",
                grant_type="client_credentials",
            )
        },
        [400, 401, 429, 500, 503],
    ),
}
UNDECLARED = [404, 409, 418]

CASES = [
    pytest.param(name, status, body, id=f"{name}-{status}-{body}")
    for name, (_, _, statuses) in OPERATIONS.items()
    for status in statuses
    for body in BODIES
]


def _client(status: int, body: str, *, raise_on_unexpected_status: bool) -> Client:
    content, content_type = BODIES[body]

    def answer(request: httpx.Request) -> httpx.Response:
        return httpx.Response(
            status, content=content, headers={"content-type": content_type}
        )

    return Client(
        base_url="http://127.0.0.1:9/public/v3",
        raise_on_unexpected_status=raise_on_unexpected_status,
        httpx_args={"transport": httpx.MockTransport(answer)},
    )


def _call_both(module: ModuleType, client: Client, kwargs: dict[str, Any]) -> list[Any]:
    """The parsed answer of ``sync_detailed`` and of ``asyncio_detailed``."""

    async def async_call() -> Any:
        return (await module.asyncio_detailed(client=client, **kwargs)).parsed

    return [
        module.sync_detailed(client=client, **kwargs).parsed,
        asyncio.run(async_call()),
    ]


@pytest.mark.parametrize("raise_on_unexpected_status", [False, True])
@pytest.mark.parametrize(("name", "status", "body"), CASES)
def test_a_declared_error_status_never_raises(
    name: str, status: int, body: str, raise_on_unexpected_status: bool
) -> None:
    module, kwargs, _ = OPERATIONS[name]
    client = _client(
        status, body, raise_on_unexpected_status=raise_on_unexpected_status
    )
    for parsed in _call_both(module, client, kwargs):
        # No body here is a valid error model: the answer is None, or the 429's text.
        assert parsed is None or parsed == BODIES[body][0].decode(errors="replace")


@pytest.mark.parametrize(
    ("name", "status", "content", "model"),
    [
        (
            "list_shipments",
            400,
            b'{"title": "Bad Request", "status": 400}',
            ProblemDetails,
        ),
        (
            "list_devices",
            403,
            b'{"title": "Forbidden", "status": "403"}',
            ProblemDetails,
        ),
        ("authenticate", 401, b'{"error": "invalid_client"}', OAuthError),
    ],
)
def test_an_error_body_that_is_its_model_is_parsed(
    name: str, status: int, content: bytes, model: type[Any]
) -> None:
    module, kwargs, _ = OPERATIONS[name]
    transport = httpx.MockTransport(
        lambda request: httpx.Response(status, content=content)
    )
    client = Client(base_url="http://127.0.0.1:9", httpx_args={"transport": transport})
    for parsed in _call_both(module, client, kwargs):
        assert isinstance(parsed, model)
        assert parsed.to_dict() == httpx.Response(200, content=content).json()


@pytest.mark.parametrize("status", UNDECLARED)
@pytest.mark.parametrize("body", ["empty", "html", "truncated-json"])
def test_an_undeclared_status_raises_only_when_asked(status: int, body: str) -> None:
    assert _call_both(
        list_shipments, _client(status, body, raise_on_unexpected_status=False), {}
    ) == [
        None,
        None,
    ]
    strict = _client(status, body, raise_on_unexpected_status=True)
    with pytest.raises(errors.UnexpectedStatus) as caught:
        list_shipments.sync_detailed(client=strict)
    assert caught.value.status_code == status


# The doors of the plain generated client, sync and awaited, and the status of their success.
DOORS: dict[str, tuple[str, dict[str, Any], int]] = {
    "get": ("get", {"shipment_id": "s-1"}, 200),
    "create": ("create", {"body": Shipment(devices=["d-1"])}, 201),
}


def _doors(client: Client, name: str) -> list[Callable[[], Any]]:
    operation, kwargs, _ = DOORS[name]

    async def awaited() -> Any:
        return await getattr(client.aio.shipments, operation)(**kwargs)

    return [
        lambda: getattr(client.shipments, operation)(**kwargs),
        lambda: asyncio.run(awaited()),
    ]


@pytest.mark.parametrize(
    ("name", "status"),
    [
        (name, status)
        for name in DOORS
        for status in (200, 201, 204, 302, 400, 401, 404, 429, 503)
        if status != DOORS[name][2]
    ],
)
def test_a_door_raises_unexpected_status_for_any_other_answer(
    name: str, status: int
) -> None:
    client = _client(status, "html", raise_on_unexpected_status=False)
    for call in _doors(client, name):
        with pytest.raises(errors.UnexpectedStatus) as caught:
            call()
        assert caught.value.status_code == status


@pytest.mark.parametrize("name", list(DOORS))
def test_a_door_returns_the_success_model(name: str) -> None:
    record = b'{"shipmentId": "s-1", "devices": ["d-1"], "status": "open"}'
    status = DOORS[name][2]
    transport = httpx.MockTransport(
        lambda request: httpx.Response(status, content=record)
    )
    client = Client(base_url="http://127.0.0.1:9", httpx_args={"transport": transport})
    for call in _doors(client, name):
        shipment = call()
        assert type(shipment) is Shipment
        assert (shipment.shipment_id, shipment["status"]) == ("s-1", "open")
