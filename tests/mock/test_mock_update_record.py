"""``MockService.update_record``: records change between two listings, as real data does."""

import math

import httpx
import pytest

from service_api_mock import MockService

pytestmark = pytest.mark.anyio


async def test_an_updated_record_is_served_in_its_place(
    client: httpx.AsyncClient, service: MockService, token: str
) -> None:
    headers = {"Authorization": f"Bearer {token}", "x-service-account-id": "acct-1"}
    before = (
        await client.get("/shipments", params={"pageNumber": 2}, headers=headers)
    ).json()
    original = service.dataset("shipments", "acct-1")[50]

    served = service.update_record(
        "shipments", "acct-1", 50, {"status": "Lost", "extra": [1]}
    )

    assert served == {**original, "status": "Lost", "extra": [1]}
    after = (
        await client.get("/shipments", params={"pageNumber": 2}, headers=headers)
    ).json()
    assert after["data"][0] == served
    assert after["data"][1:] == before["data"][1:]
    assert after["totalRecords"] == before["totalRecords"]
    # A reset brings the generated record back.
    service.reset()
    assert service.dataset("shipments", "acct-1")[50] == original


def test_the_returned_record_is_a_copy(service: MockService) -> None:
    served = service.update_record("devices", "acct-2", 0, {"battery": 3.0})
    served["battery"] = 99.0
    assert service.dataset("devices", "acct-2")[0]["battery"] == 3.0


@pytest.mark.parametrize(
    ("resource", "index", "changes", "error"),
    [
        ("parcels", 0, {}, ValueError),
        ("devices", 120, {}, IndexError),
        ("devices", 0, {"battery": math.nan}, ValueError),
        ("devices", 0, {"battery": object()}, TypeError),
    ],
)
def test_bad_changes_are_refused_and_nothing_changes(
    service: MockService,
    resource: str,
    index: int,
    changes: dict[str, object],
    error: type,
) -> None:
    before = service.dataset("devices", "acct-1")
    with pytest.raises(error):
        service.update_record(resource, "acct-1", index, changes)
    assert service.dataset("devices", "acct-1") == before
