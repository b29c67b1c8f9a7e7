"""A whole session at DEBUG: no secret or issued token in logs, reprs or error text."""

import logging

import pytest

import service_api
from service_api import testing
from service_api_client.api.shipments import list_shipments
from service_api_mock import DEMO_CLIENT_ID, DEMO_CLIENT_SECRET, RunningMock


def test_debug_session_leaks_nothing(
    mock: RunningMock, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    for name in ("httpx", "httpcore", "service_api"):
        caplog.set_level(logging.DEBUG, logger=name)
    mock.service.reset(token_ttl=2)
    texts: list[str] = []
    with service_api.Client(
        mock.base_url, DEMO_CLIENT_ID, DEMO_CLIENT_SECRET, "acct-1"
    ) as client:
        texts += [repr(client), str(client), repr(client.retry_policy)]
        list_shipments.sync(client=client)
        mock.service.advance_clock(10)  # expired: 401, refresh, replay
        list_shipments.sync(client=client)
        mock.service.revoke_tokens()
        list_shipments.sync(client=client)
        transport = client.get_httpx_client()._transport
        texts += [repr(transport), repr(client.get_httpx_client().auth)]
        for account in ("acct-9", None):
            with pytest.raises(service_api.ApiStatusError) as info:
                list_shipments.sync(client=client.with_account(account))
            texts += [str(info.value), repr(info.value), repr(info.value.request)]
        mock.service.set_faults(fault_rate=1.0, retry_after=0.5)
        with (
            testing.no_retry_sleep(),
            pytest.raises(service_api.ApiStatusError) as info,
        ):
            list_shipments.sync(client=client)
        texts += [str(info.value), info.value.body]
    mock.service.set_faults(fault_rate=0.0)
    with (
        service_api.Client(mock.base_url, DEMO_CLIENT_ID, "not-the-secret-42") as bad,
        pytest.raises(service_api.InvalidCredentialsError) as refused,
    ):
        list_shipments.sync(client=bad)
    texts.append(str(refused.value))

    tokens = mock.service.issued_tokens()
    assert len(tokens) >= 3
    assert any(r.name.startswith("httpcore") for r in caplog.records)
    assert any(
        r.name == "service_api" and "token" in r.getMessage() for r in caplog.records
    )
    assert any(
        r.name == "service_api" and "retrying" in r.getMessage() for r in caplog.records
    )
    captured = texts + [r.getMessage() for r in caplog.records] + [caplog.text]
    for secret in [DEMO_CLIENT_SECRET, "not-the-secret-42", *tokens]:
        assert not any(secret in text for text in captured)
