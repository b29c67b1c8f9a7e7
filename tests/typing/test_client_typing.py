"""Type-checked by mypy --strict: the generated endpoint functions accept service_api.Client.

Importing it is the only runtime test; nothing here talks to a server.
"""

import httpx

import service_api
from service_api_client.api.shipments import list_shipments
from service_api_client.drift import Drift
from service_api_client.models.shipment_page import ShipmentPage
from service_api_client.types import Response


def sync_call(client: service_api.Client) -> ShipmentPage | None:
    detailed: Response[object] = list_shipments.sync_detailed(
        client=client, page_size=10
    )
    del detailed
    parsed = list_shipments.sync(client=client)
    return parsed if isinstance(parsed, ShipmentPage) else None


async def async_call(client: service_api.Client) -> ShipmentPage | None:
    detailed: Response[object] = await list_shipments.asyncio_detailed(client=client)
    del detailed
    parsed = await list_shipments.asyncio(client=client.with_account("acct-2"))
    return parsed if isinstance(parsed, ShipmentPage) else None


def build() -> service_api.Client:
    return service_api.Client(
        "https://api.example.com/public/v3",
        "my-client",
        "my-secret",
        "acct-1",
        refresh_skew=30.0,
        retry=service_api.RetryPolicy(max_retries=3),
        rate_limit=90,
        httpx_args={"verify": True},
    )


def with_options(client: service_api.Client) -> service_api.Client:
    view: service_api.Client = client.with_options(
        max_retries=5, timeout=60.0, headers={"x-trace": "1"}
    )
    return view.with_options(retry=service_api.RetryPolicy(max_retries=0))


def from_environment() -> service_api.Client:
    return service_api.Client(user_agent="myapp/1.2")


def watching_drift() -> list[str]:
    seen: list[Drift] = []

    def answered(response: httpx.Response) -> None:
        del response

    observer: service_api.AnswerObserver = answered
    client = service_api.Client(on_drift=seen.append, observe=observer)
    quiet = service_api.Client(check_drift=False)
    found: list[Drift] = [*client.drift, *quiet.drift]
    return [f"{d.place}: {d.seen} ({d.count})" for d in found]


def test_module_imports() -> None:
    assert callable(watching_drift)
    assert callable(sync_call)
    assert callable(async_call)
    assert repr(build()).startswith("Client(")
    assert with_options(build()).retry_policy.max_retries == 0
