"""Per-call options (``with_options``) and the user agent, in sync/async pairs."""

import asyncio
import sys
from typing import Any

import httpx
import pytest

import service_api
from service_api import testing
from service_api_client.api.shipments import list_shipments
from service_api_client.models.shipment_page import ShipmentPage
from service_api_mock import DEMO_CLIENT_ID, DEMO_CLIENT_SECRET, RunningMock

BASE = "https://api.test/public/v3"
RETRYABLE = (service_api.ServerError, service_api.RateLimitError)
EMPTY_PAGE = {"totalRecords": 0, "pageNumber": 1, "pageSize": 50, "data": []}


class Recorder:
    """A service that issues one token and answers every list with an empty page."""

    def __init__(self) -> None:
        self.requests: list[httpx.Request] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        if request.url.path.endswith("/authenticate"):
            return httpx.Response(
                200,
                json={
                    "access_token": "tok-1",
                    "token_type": "Bearer",
                    "expires_in": "3600",
                },
            )
        return httpx.Response(200, json=EMPTY_PAGE)

    def lists(self) -> list[httpx.Request]:
        return [r for r in self.requests if not r.url.path.endswith("/authenticate")]

    def tokens(self) -> list[httpx.Request]:
        return [r for r in self.requests if r.url.path.endswith("/authenticate")]


def recorded_client(service: Recorder, **kwargs: Any) -> service_api.Client:
    args = dict(kwargs.pop("httpx_args", {}))
    args["transport"] = httpx.MockTransport(service)
    return service_api.Client(
        BASE, "cid", "s3cret-value", "acct-1", httpx_args=args, **kwargs
    )


def mock_client(mock: RunningMock, **kwargs: Any) -> service_api.Client:
    return service_api.Client(
        mock.base_url, DEMO_CLIENT_ID, DEMO_CLIENT_SECRET, "acct-1", **kwargs
    )


# ---- with_options: retries ----------------------------------------------------------------


def test_sync_with_options_retries_per_view_and_leaves_the_client_alone(
    mock: RunningMock,
) -> None:
    with mock_client(mock) as client:
        list_shipments.sync(
            client=client
        )  # the token first: faults hit every operation
        mock.service.set_faults(fault_rate=1.0, retry_after=0.5)
        patient = client.with_options(max_retries=4)
        with testing.no_retry_sleep() as delays, pytest.raises(RETRYABLE):
            list_shipments.sync(client=patient)
        assert delays == [0.5] * 4
        with testing.no_retry_sleep() as delays, pytest.raises(RETRYABLE):
            list_shipments.sync(client=client.with_options(max_retries=0))
        assert delays == []
        with testing.no_retry_sleep() as delays, pytest.raises(RETRYABLE):
            list_shipments.sync(client=client)
        assert delays == [0.5] * service_api.RetryPolicy().max_retries  # the default, 8
    assert client.retry_policy == service_api.RetryPolicy()
    assert patient.retry_policy.max_retries == 4
    assert mock.service.count("listShipments") == 1 + 5 + 1 + 9
    assert mock.service.count("authenticate") == 1


@pytest.mark.anyio
async def test_async_with_options_retries_per_view_and_leaves_the_client_alone(
    mock: RunningMock,
) -> None:
    async with mock_client(mock) as client:
        await list_shipments.asyncio(client=client)
        mock.service.set_faults(fault_rate=1.0, retry_after=0.5)
        policy = service_api.RetryPolicy(max_retries=3)
        with testing.no_retry_sleep() as delays, pytest.raises(RETRYABLE):
            await list_shipments.asyncio(client=client.with_options(retry=policy))
        assert delays == [0.5] * 3
        with testing.no_retry_sleep() as delays, pytest.raises(RETRYABLE):
            await list_shipments.asyncio(client=client)
        assert delays == [0.5] * service_api.RetryPolicy().max_retries  # the default
    assert (
        mock.service.count("listShipments")
        == 1 + 4 + 1 + service_api.RetryPolicy().max_retries
    )
    assert mock.service.count("authenticate") == 1


def test_a_view_keeps_the_account_and_a_child_of_a_view_keeps_its_policy(
    mock: RunningMock,
) -> None:
    with mock_client(mock) as client:
        view = client.with_options(max_retries=5).with_account("acct-2")
        assert view.retry_policy.max_retries == 5
        assert view.account_id == "acct-2"
        assert client.with_options(timeout=3).account_id == "acct-1"
        page = list_shipments.sync(client=view)
        assert isinstance(page, ShipmentPage)
        wanted = [
            s["shipmentId"] for s in mock.service.dataset("shipments", "acct-2")[:50]
        ]
        assert [s.shipment_id for s in page.data] == wanted


def test_with_options_refuses_both_retry_forms_and_a_negative_count() -> None:
    client = service_api.Client(BASE, "cid", "s3cret-value")
    with pytest.raises(TypeError, match="max_retries or retry"):
        client.with_options(max_retries=1, retry=service_api.RetryPolicy())
    with pytest.raises(ValueError, match="max_retries"):
        client.with_options(max_retries=-1)
    # Keywords only: a bare number could be taken for a count or a timeout.
    with pytest.raises(TypeError, match="positional"):
        client.with_options(5)  # type: ignore[call-arg]


# ---- with_options: timeout and headers ------------------------------------------------------


def test_sync_with_options_timeout_and_headers_reach_the_wire_of_the_view_only() -> (
    None
):
    service = Recorder()
    with recorded_client(service, timeout=30.0) as client:
        view = client.with_options(timeout=2.5, headers={"X-Trace": "nightly"})
        list_shipments.sync(client=view)
        list_shipments.sync(client=client)
    first, second = service.lists()
    assert first.extensions["timeout"]["read"] == 2.5
    assert first.headers["x-trace"] == "nightly"
    assert first.headers["x-service-account-id"] == "acct-1"
    assert second.extensions["timeout"]["read"] == 30.0
    assert "x-trace" not in second.headers
    assert len(service.tokens()) == 1  # one token for the client and its view


@pytest.mark.anyio
async def test_async_with_options_timeout_and_headers_reach_the_wire_of_the_view_only() -> (
    None
):
    service = Recorder()
    async with recorded_client(service) as client:
        timeout = httpx.Timeout(1.0, read=7.0)
        view = client.with_options(timeout=timeout, headers={"X-Trace": "nightly"})
        await list_shipments.asyncio(client=view)
        await list_shipments.asyncio(client=client)
        await view.aclose()
    first, second = service.lists()
    assert first.extensions["timeout"] == timeout.as_dict()
    assert first.headers["x-trace"] == "nightly"
    assert second.extensions["timeout"]["read"] == 30.0
    assert "x-trace" not in second.headers
    assert len(service.tokens()) == 1


def test_one_iteration_runs_with_the_options_of_its_view() -> None:
    service = Recorder()
    with recorded_client(service) as client:
        items = list(
            service_api.paginate(
                list_shipments, client.with_options(headers={"X-Run": "7"})
            )
        )
    assert items == []
    assert [r.headers.get("x-run") for r in service.lists()] == ["7"]


def test_a_view_shares_the_sync_pool_of_its_client() -> None:
    service = Recorder()
    with recorded_client(service) as client:
        view = client.with_options(max_retries=0)
        list_shipments.sync(client=client)
        list_shipments.sync(client=view)
        ours = client.get_httpx_client()._transport._inner  # type: ignore[attr-defined]
        assert view.get_httpx_client()._transport._inner is ours  # type: ignore[attr-defined]
        assert isinstance(
            ours, httpx.MockTransport
        )  # the user's transport, not a new pool
    assert len(service.lists()) == 2


def loop_pool(client: service_api.Client) -> Any:
    """The running loop's pool of the client's direct route."""
    return client._shared.loop_pools[None]._open[asyncio.get_running_loop()][0]


@pytest.mark.anyio
async def test_views_share_the_async_pool_of_their_loop_and_leave_it_open(
    mock: RunningMock,
) -> None:
    async with mock_client(mock) as client:
        await list_shipments.asyncio(client=client)
        ours = loop_pool(client)  # this loop's pool, opened by the call
        for retries in range(5):  # a view per call opens no pool of its own
            view = client.with_options(max_retries=retries)
            assert isinstance(await list_shipments.asyncio(client=view), ShipmentPage)
            await view.aclose()
            assert loop_pool(view) is ours  # left open by the view
        assert ours._pool.connections  # still holding the connection the calls used
        assert isinstance(await list_shipments.asyncio(client=client), ShipmentPage)
    assert mock.service.count("authenticate") == 1


# ---- the user agent ---------------------------------------------------------------------


def expected_agent() -> str:
    python = f"{sys.version_info.major}.{sys.version_info.minor}"
    version = service_api._client._VERSION
    return f"service-api/{version} python/{python} httpx/{httpx.__version__}"


def test_sync_every_request_sends_the_user_agent_the_token_request_too() -> None:
    service = Recorder()
    with recorded_client(service) as client:
        list_shipments.sync(client=client)
    assert [r.headers["user-agent"] for r in service.requests] == [expected_agent()] * 2
    assert expected_agent().startswith("service-api/")


@pytest.mark.anyio
async def test_async_user_agent_is_extended_by_the_user() -> None:
    service = Recorder()
    async with recorded_client(service, user_agent="myapp/1.2") as client:
        await list_shipments.asyncio(client=client)
    agents = {r.headers["user-agent"] for r in service.requests}
    assert agents == {f"{expected_agent()} myapp/1.2"}


@pytest.mark.parametrize("where", ["client", "view"])
def test_a_user_agent_header_given_by_the_user_wins_whole(where: str) -> None:
    service = Recorder()
    headers = {"user-agent": "their-agent/9"}
    if where == "client":  # over user_agent= too
        client = recorded_client(
            service, user_agent="a/1", httpx_args={"headers": headers}
        )
    else:
        client = recorded_client(service).with_options(headers=headers)
    with client:
        list_shipments.sync(client=client)
    assert service.lists()[0].headers["user-agent"] == "their-agent/9"
