"""Deterministic records with the spec's fields and some undeclared ones."""

from service_api_mock import DEMO_ACCOUNTS, MockConfig, MockService


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
