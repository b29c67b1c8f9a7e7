"""What the generated package's values print as: ``UNSET``; a record as it came (its
fields by JSON name, as sent, the unset ones left out, a ``format: password`` field never);
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
    assert shown.startswith("Shipment({"), shown
    assert shown.endswith("})"), shown
    # The fields sent, by JSON name and as sent (the date's "Z"): no UNSET of a field
    # that was not.
    assert eval(shown.removeprefix("Shipment(")[:-1]) == raw  # noqa: S307
    assert "UNSET" not in shown
    assert repr(Shipment()) == "Shipment({})"
    # A value that did not fit its field is shown as sent, not as UNSET.
    device = Device.from_dict({"deviceId": 7, "measurementTime": "2024-05-01T08:30Z"})
    assert "UNSET" not in repr(device)
    assert "'deviceId': 7" in repr(device)
    assert "'measurementTime': '2024-05-01T08:30Z'" in repr(device)


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
