"""Deterministic records with the spec's fields and some undeclared ones."""

from pathlib import Path

import yaml
from spec_copy import merged_spec

from service_api_mock import DEMO_ACCOUNTS, MockConfig, MockService

GROWTH = Path(__file__).resolve().parents[1] / "spec" / "growth.yaml"


def test_same_seed_same_data_other_seed_other_data() -> None:
    first = MockService(MockConfig(seed=1)).dataset("shipments", "acct-1")
    again = MockService(MockConfig(seed=1)).dataset("shipments", "acct-1")
    other = MockService(MockConfig(seed=2)).dataset("shipments", "acct-1")
    assert first == again
    assert first != other


def test_records_setting_sizes_every_dataset() -> None:
    service = MockService(MockConfig(records=37))
    for resource in ("shipments", "devices"):
        for account in DEMO_ACCOUNTS:
            assert len(service.dataset(resource, account)) == 37


def test_ids_are_unique_across_accounts() -> None:
    service = MockService()
    for resource, key in (("shipments", "shipmentId"), ("devices", "deviceId")):
        ids = [
            r[key]
            for a in ("acct-1", "acct-2", "acct-3")
            for r in service.dataset(resource, a)
        ]
        assert len(ids) == len(set(ids)) == 3 * 120


def test_records_carry_declared_and_undeclared_fields() -> None:
    service = MockService()
    shipment = service.dataset("shipments", "acct-1")[0]
    assert {
        "shipmentId",
        "devices",
        "shipmentLegs",
        "referenceNumber",
        "status",
    } <= set(shipment)
    leg = shipment["shipmentLegs"][0]
    assert {
        "mode",
        "fromAddress",
        "toAddress",
        "fromCoordinates",
        "shipFromDate",
        "carrier",
    } <= set(leg)
    assert leg["mode"] in {"Road", "Air", "Ocean", "Rail"}
    device = service.dataset("devices", "acct-1")[0]
    declared = {
        "deviceId",
        "measurementTime",
        "coordinates",
        "temperature",
        "humidity",
        "battery",
    }
    assert declared | {"locationMethod", "serialNumber", "firmwareVersion"} <= set(
        device
    )
    assert -90 <= device["coordinates"]["latitude"] <= 90
    # Shipments name devices of their own account.
    own = {d["deviceId"] for d in service.dataset("devices", "acct-1")}
    assert set(shipment["devices"]) <= own


def test_a_sub_resource_has_records_under_each_parent_that_exists(
    tmp_path: Path,
) -> None:
    spec = tmp_path / "openapi.yaml"
    spec.write_text(yaml.safe_dump(merged_spec(GROWTH), sort_keys=False))
    service = MockService(MockConfig(records=6), spec=spec)
    first, second = [
        s["shipmentId"] for s in service.dataset("shipments", "acct-1")[:2]
    ]
    events = service.dataset("shipment-events", "acct-1", parents=(first,))
    assert len(events) == 6
    assert {event["shipmentId"] for event in events} == {first}
    again = MockService(MockConfig(records=6), spec=spec)
    assert again.dataset("shipment-events", "acct-1", parents=(first,)) == events
    others = service.dataset("shipment-events", "acct-1", parents=(second,))
    assert {event["shipmentId"] for event in others} == {second}
    assert len({e["eventId"] for e in events + others}) == 12
    assert service.dataset("shipment-events", "acct-1", parents=("nowhere",)) == []


def test_records_with_two_id_fields_have_distinct_identifiers(tmp_path: Path) -> None:
    spec = tmp_path / "openapi.yaml"
    spec.write_text(yaml.safe_dump(merged_spec(GROWTH), sort_keys=False))
    routes = MockService(spec=spec).dataset("routes", "acct-1")
    assert {"routeId", "carrierId"} <= set(routes[0])
    assert len({route["routeId"] for route in routes}) == len(routes) == 120
