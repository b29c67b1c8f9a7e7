"""Contains methods for accessing the API"""

from dataclasses import dataclass, field
from types import MappingProxyType, ModuleType
from typing import Any

from ..models.device import Device
from ..models.device_page import DevicePage
from ..models.shipment import Shipment
from ..models.shipment_page import ShipmentPage
from .devices import list_devices
from .shipments import list_shipments


@dataclass(frozen=True)
class ListEndpoint:
    """A list endpoint of the API, as the generator found it in the spec.

    Attributes:
        name: the URL path without slashes (``/shipments`` -> ``"shipments"``).
        module: the generated endpoint module (``list_shipments``).
        page_model: the model of one page (``ShipmentPage``).
        item_model: the model of one record (``Shipment``).
        id_field: the record's identifier as the API spells it (``"shipmentId"``), or
            ``None`` when the record has not exactly one top-level ``...Id`` field.

    Example::

        endpoint = LIST_ENDPOINTS["shipments"]
        endpoint.id_field   # "shipmentId"
    """

    name: str
    module: ModuleType = field(repr=False)
    page_model: type[Any] = field(repr=False)
    item_model: type[Any] = field(repr=False)
    id_field: str | None


LIST_ENDPOINTS: MappingProxyType[str, ListEndpoint] = MappingProxyType(
    {
        "devices": ListEndpoint(
            "devices",
            list_devices,
            DevicePage,
            Device,
            "deviceId",
        ),
        "shipments": ListEndpoint(
            "shipments",
            list_shipments,
            ShipmentPage,
            Shipment,
            "shipmentId",
        ),
    }
)
"""Every list endpoint of the API by name, sorted: ``LIST_ENDPOINTS["shipments"]``."""

__all__ = ["LIST_ENDPOINTS", "ListEndpoint"]
