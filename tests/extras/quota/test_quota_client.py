"""The client's quota and token arguments against the mock over loopback HTTP."""

import bisect
import time
from pathlib import Path

import pytest
from pyrate_limiter import RateItem, SQLiteBucket

import service_api
from service_api.quota import StoreError
from service_api_client.api.shipments import list_shipments
from service_api_mock import DEMO_CLIENT_ID, DEMO_CLIENT_SECRET, RunningMock


def client(mock: RunningMock, **kwargs: object) -> service_api.Client:
    return service_api.Client(
        mock.base_url,
        DEMO_CLIENT_ID,
        DEMO_CLIENT_SECRET,
        "acct-1",
        **kwargs,  # type: ignore[arg-type]
    )


def test_two_clients_on_one_sqlite_budget_stay_under_the_quota(
    mock: RunningMock, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # 600 per minute counted over 1 s: 10 a second. Each client alone would send 9.5.
    mock.service.reset(records=400)
    mock.service.set_faults(rate_limit=600, rate_window=1.0)
    # The slots the shared store granted, stamped by the limiter itself (microseconds).
    # The mock's own count also sees how late each request reached it, which a busy
    # machine stretches: whether it answers 429 is chance, the limiter's stamps are not.
    granted: list[int] = []
    put_decision = SQLiteBucket.put_decision

    def recording_put_decision(bucket: SQLiteBucket, item: RateItem) -> object:
        decision = put_decision(bucket, item)
        if getattr(decision, "allowed", False):
            granted.append(item.timestamp)
        return decision

    monkeypatch.setattr(SQLiteBucket, "put_decision", recording_put_decision)
    store = f"sqlite://{tmp_path}/quota.db"
    with (
        client(mock, rate_limit=570, rate_store=store) as first,
        client(mock, rate_limit=570, rate_store=store) as second,
    ):
        for _ in range(2):
            for each in (first, second):
                items = list(service_api.paginate(list_shipments, each, page_size=50))
                assert len(items) == 400
    assert len(granted) >= 4 * 8  # every page request (and token request) took a slot
    granted.sort()
    busiest = max(
        bisect.bisect_left(granted, t + 1_000_000) - i for i, t in enumerate(granted)
    )
    assert busiest <= 10  # never more in any second than the service allows
    assert mock.service.count("listShipments", 200) == 4 * 8


def test_the_adaptive_limiter_exports_everything_under_a_quota(
    mock: RunningMock,
) -> None:
    mock.service.reset(records=1000)
    mock.service.set_faults(rate_limit=1200, rate_window=1.0)  # 20 a second
    with client(mock, rate_limit="adaptive", max_retries=8) as paced:
        ids = [s.shipment_id for s in service_api.paginate(list_shipments, paced)]
    assert len(ids) == len(set(ids)) == 1000


def test_processes_share_one_token_through_a_file(
    mock: RunningMock, tmp_path: Path
) -> None:
    store = f"file://{tmp_path}/token.json"
    for _ in range(3):  # three "processes", one after another
        with client(mock, token_store=store) as each:
            assert list_shipments.sync(client=each, page_size=1) is not None
    assert mock.service.count("authenticate") == 1


def test_an_unreachable_rate_store_is_refused_at_construction(
    mock: RunningMock,
) -> None:
    with pytest.raises(StoreError, match="cannot reach Redis"):
        client(mock, rate_store="redis://127.0.0.1:1/0")


def test_rate_arguments_are_checked(mock: RunningMock) -> None:
    with pytest.raises(ValueError, match="rate_limit must be"):
        client(mock, rate_limit="fast")
    with pytest.raises(ValueError, match="rate_store must be"):
        client(mock, rate_store="memcached://127.0.0.1/0")


def test_a_store_alone_opts_in_at_90_a_minute(
    mock: RunningMock, tmp_path: Path
) -> None:
    with client(mock, rate_store=f"sqlite://{tmp_path}/q.db") as shared:
        assert list_shipments.sync(client=shared, page_size=1) is not None
    assert mock.service.count("listShipments", 200) == 1


def test_client_side_rate_limit_spaces_requests(mock: RunningMock) -> None:
    with client(mock, rate_limit=600) as c:  # one request per 0.1 s
        started = time.monotonic()
        for _ in range(4):
            list_shipments.sync(client=c, page_size=1)
        elapsed = time.monotonic() - started
    # 5 requests (token included): the 2nd to 5th wait 0.1 s each
    assert elapsed >= 0.39
