"""Contains methods for accessing the API"""

from types import MappingProxyType

from ..list_endpoints import ListEndpoint, ListParameter
from ..models.device import Device
from ..models.device_page import DevicePage
from ..models.shipment import Shipment
from ..models.shipment_page import ShipmentPage
from .devices import list_devices
from .shipments import list_shipments

LIST_ENDPOINTS: MappingProxyType[str, ListEndpoint] = MappingProxyType(
    {
        "devices": ListEndpoint(
            "devices",
            list_devices,
            DevicePage,
            Device,
            "deviceId",
            parameters=(),
        ),
        "shipments": ListEndpoint(
            "shipments",
            list_shipments,
            ShipmentPage,
            Shipment,
            "shipmentId",
            parameters=(),
        ),
    }
)
"""Every list endpoint of the API by name, sorted: ``LIST_ENDPOINTS["shipments"]``."""

__all__ = ["LIST_ENDPOINTS", "ListEndpoint", "ListParameter"]
