"""Contains all the data models used in inputs/outputs"""

from .address import Address
from .coordinates import Coordinates
from .device import Device
from .device_page import DevicePage
from .o_auth_error import OAuthError
from .problem_details import ProblemDetails
from .shipment import Shipment
from .shipment_leg import ShipmentLeg
from .shipment_page import ShipmentPage
from .token_request import TokenRequest
from .token_request_grant_type import TokenRequestGrantType
from .token_response import TokenResponse
from .token_response_token_type import TokenResponseTokenType

__all__ = (
    "Address",
    "Coordinates",
    "Device",
    "DevicePage",
    "OAuthError",
    "ProblemDetails",
    "Shipment",
    "ShipmentLeg",
    "ShipmentPage",
    "TokenRequest",
    "TokenRequestGrantType",
    "TokenResponse",
    "TokenResponseTokenType",
)
