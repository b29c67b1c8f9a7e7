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
            item_models=(Device,),
            page_size=50,
            max_page_size=50,
            parent=None,
            parent_fields=MappingProxyType({}),
            parameters=(),
        ),
        "shipments": ListEndpoint(
            "shipments",
            list_shipments,
            ShipmentPage,
            Shipment,
            "shipmentId",
            item_models=(Shipment,),
            page_size=50,
            max_page_size=50,
            parent=None,
            parent_fields=MappingProxyType({}),
            parameters=(),
        ),
    }
)
"""Every list endpoint of the API by name, sorted: ``LIST_ENDPOINTS["shipments"]``."""

TAG_ATTRIBUTES: MappingProxyType[str, str] = MappingProxyType(
    {
        "devices": "devices",
        "shipments": "shipments",
    }
)
"""The client's attribute of each tag of the spec (``client.<attribute>``), by the tag's
name: its module's name, ``_api`` after it where that would hide one of the client's."""

__all__ = ["LIST_ENDPOINTS", "TAG_ATTRIBUTES", "ListEndpoint", "ListParameter"]
