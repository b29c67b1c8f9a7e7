"""What the generated package's values print as: ``UNSET``; a record as it came (its
fields by JSON name, as sent, in the order sent, bounded as reprlib bounds, the unset
ones left out, a ``format: password`` field never);
a client and its doors by class and base URL, without headers, token or secret."""

from __future__ import annotations

import service_api
import service_api_client
from service_api_client.models import Device, Shipment, TokenRequest
from service_api_client.types import UNSET

BASE_URL = "http://127.0.0.1:9/public/v3"


def test_unset_prints_as_unset() -> None:
    assert repr(UNSET) == str(UNSET) == "UNSET"
    assert repr([UNSET]) == "[UNSET]"


def test_a_record_prints_as_it_came() -> None:
    raw = {
        "shipmentId": "s-1",
        "shipmentLegs": [{"mode": "Road", "shipFromDate": "2024-05-01T08:30:00Z"}],
        "note": "fragile",
    }
    shipment = Shipment.from_dict(raw)
    shown = repr(shipment)
    # The fields sent, by JSON name, as sent (the date's "Z") and in the order sent;
    # a nested record as a record; no UNSET of a field that was not sent.
    assert shown == (
        "Shipment({'shipmentId': 's-1', 'shipmentLegs': [ShipmentLeg({'mode': 'Road', "
        "'shipFromDate': '2024-05-01T08:30:00Z'})], 'note': 'fragile'})"
    ), shown
    assert repr(Shipment()) == "Shipment({})"
    # A value that did not fit its field is shown as sent, not as UNSET.
    device = Device.from_dict({"deviceId": 7, "measurementTime": "2024-05-01T08:30Z"})
    assert repr(device) == (
        "Device({'deviceId': 7, 'measurementTime': '2024-05-01T08:30Z'})"
    )


def test_a_record_prints_in_the_order_its_fields_came() -> None:
    raw = {"note": "n", "status": "Planned", "shipmentId": "s-1"}
    shipment = Shipment.from_dict(raw)
    assert repr(shipment) == (
        "Shipment({'note': 'n', 'status': 'Planned', 'shipmentId': 's-1'})"
    )
    assert list(shipment.keys()) == list(raw) == list(shipment.to_dict())


def test_a_record_repr_is_bounded_as_reprlib_bounds() -> None:
    leg = {
        "mode": "Road",
        "fromAddress": {"locality": "x" * 500, "countryCode": "DE"},
        "toAddress": {"locality": "Hamburg", "street": {"deep": {"deeper": [1]}}},
    }
    raw = {
        "shipmentId": "s" * 1000,
        "devices": [f"d-{n}" for n in range(100)],
        "shipmentLegs": [leg] * 10,
        **{f"extra{n}": n for n in range(30)},
    }
    shown = repr(Shipment.from_dict(raw))
    assert len(shown) < 700, len(shown)
    assert shown.startswith("Shipment({'shipmentId': 'ssss"), shown
    assert "..." in shown
    assert "'d-0', 'd-1'" in shown
    assert "'d-99'" not in shown
    assert "ShipmentLeg({'mode': 'Road'" in shown
    assert "x" * 100 not in shown
    assert "extra29" not in shown


def test_a_password_field_is_left_out_of_the_repr() -> None:
    request = TokenRequest(
        client_id="cid", client_secret="not-for-logs", grant_type="client_credentials"
    )
    assert repr(request) == (
        "TokenRequest({'client_id': 'cid', 'grant_type': 'client_credentials'})"
    )


def test_a_client_and_its_doors_print_by_class_and_base_url() -> None:
    plain = service_api_client.Client(base_url=BASE_URL, headers={"x-key": "k-1"})
    assert repr(plain) == f"Client(base_url={BASE_URL!r})"
    assert (
        repr(plain.shipments) == f"<ShipmentsResource of Client(base_url={BASE_URL!r})>"
    )
    assert repr(plain.aio.shipments) == (
        f"<AsyncShipmentsResource of Client(base_url={BASE_URL!r})>"
    )
    assert repr(plain.aio) == f"<AsyncResources of Client(base_url={BASE_URL!r})>"
    signed = service_api_client.AuthenticatedClient(base_url=BASE_URL, token="tok-123")
    assert repr(signed) == f"AuthenticatedClient(base_url={BASE_URL!r})"
    assert "tok-123" not in repr(signed.devices)


def test_the_doors_of_service_api_client_print_its_repr() -> None:
    with service_api.Client(BASE_URL, "cid", "a-secret", "acct-1") as client:
        assert repr(client.shipments) == f"<ShipmentsResource of {client!r}>"
        assert repr(client.aio.devices) == f"<AsyncDevicesResource of {client!r}>"
        assert "a-secret" not in repr(client.shipments)
