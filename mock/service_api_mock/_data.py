"""Deterministic shipments and devices: the same seed and account give the same records.

Records carry the fields openapi.yaml declares plus a few it does not (``status``,
``referenceNumber``, ``carrier``, ``firmwareVersion``...), so that tests can prove a client
keeps fields it does not know.
"""

from __future__ import annotations

import random
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

__all__ = ["RESOURCES", "make_dataset"]

RESOURCES = ("shipments", "devices")

# A fixed origin keeps the dates stable across runs and days.
_EPOCH = datetime(2026, 1, 5, 8, 0, 0, tzinfo=UTC)

_PLACES: tuple[tuple[str, str, str, str, str, str, float, float], ...] = (
    # street, sublocality, locality, state, country, postalCode, latitude, longitude
    (
        "1 Harbour Road",
        "Port District",
        "Rotterdam",
        "South Holland",
        "NL",
        "3011",
        51.9225,
        4.4792,
    ),
    ("200 Container Way", "Terminal 4", "Hamburg", "Hamburg", "DE", "20457", 53.5461, 9.9661),
    ("88 Cargo Lane", "Heathrow", "London", "England", "GB", "TW6 2GA", 51.4700, -0.4543),
    ("9 Cold Chain Ave", "Elizabeth", "Newark", "NJ", "US", "07201", 40.6895, -74.1745),
    ("45 Logistics Blvd", "Jurong", "Singapore", "Singapore", "SG", "619587", 1.3329, 103.7436),
    ("7 Rue du Fret", "Roissy", "Paris", "Ile-de-France", "FR", "95700", 49.0097, 2.5479),
    ("300 Rail Yard St", "Eixample", "Barcelona", "Catalonia", "ES", "08013", 41.4036, 2.1744),
    ("12 Pharma Park", "Kowloon Bay", "Hong Kong", "Kowloon", "HK", "999077", 22.3193, 114.1694),
)
_MODES = ("Road", "Air", "Ocean", "Rail")
_STATUSES = ("Planned", "InTransit", "Delivered", "Delayed")
_CARRIERS = ("NorthSea Lines", "SkyFreight", "RailCargo", "BlueRoad Logistics")
_LOCATION_METHODS = ("GPS", "Cell", "WiFi")
_MODELS = ("TL-100", "TL-200 Pharma", "TL-300 Ocean")


def _rng(seed: int, resource: str, account: str) -> random.Random:
    # A string seed is hashed with SHA-512 by ``random``: stable across processes,
    # unlike ``hash()``, and distinct for each (seed, resource, account).
    return random.Random(f"{seed}/{resource}/{account}")  # noqa: S311 -- test data, not crypto


def _iso(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def _address(place: tuple[str, str, str, str, str, str, float, float]) -> dict[str, Any]:
    street, sublocality, locality, state, country, postal_code, _, _ = place
    return {
        "street": street,
        "sublocality": sublocality,
        "locality": locality,
        "state": state,
        "country": country,
        "postalCode": postal_code,
    }


def _coordinates(
    rng: random.Random, place: tuple[str, str, str, str, str, str, float, float]
) -> dict[str, Any]:
    latitude = max(-90.0, min(90.0, place[6] + rng.uniform(-0.05, 0.05)))
    longitude = max(-180.0, min(180.0, place[7] + rng.uniform(-0.05, 0.05)))
    return {"latitude": round(latitude, 6), "longitude": round(longitude, 6)}


def _device_ids(seed: int, account: str, count: int) -> list[str]:
    rng = _rng(seed, "device-ids", account)
    return [
        f"TRK-{uuid.UUID(int=rng.getrandbits(128), version=4).hex[:16].upper()}"
        for _ in range(count)
    ]


def _devices(seed: int, account: str, count: int) -> list[dict[str, Any]]:
    rng = _rng(seed, "devices", account)
    out: list[dict[str, Any]] = []
    for index, device_id in enumerate(_device_ids(seed, account, count)):
        place = rng.choice(_PLACES)
        measured = _EPOCH + timedelta(minutes=rng.randrange(0, 60 * 24 * 60))
        out.append(
            {
                "deviceId": device_id,
                "measurementTime": _iso(measured),
                "coordinates": _coordinates(rng, place),
                "temperature": round(rng.uniform(-25.0, 30.0), 1),
                "humidity": round(rng.uniform(10.0, 95.0), 1),
                "battery": float(rng.randrange(5, 101)),
                "locationMethod": rng.choice(_LOCATION_METHODS),
                # Undeclared in openapi.yaml: clients must keep them.
                "serialNumber": f"SN{rng.randrange(10**9, 10**10)}",
                "model": rng.choice(_MODELS),
                "firmwareVersion": f"{rng.randrange(1, 4)}.{rng.randrange(0, 10)}.{index % 7}",
            }
        )
    return out


def _shipments(seed: int, account: str, count: int) -> list[dict[str, Any]]:
    rng = _rng(seed, "shipments", account)
    device_ids = _device_ids(seed, account, max(count, 1))
    out: list[dict[str, Any]] = []
    for index in range(count):
        shipment_id = str(uuid.UUID(int=rng.getrandbits(128), version=4))
        start = _EPOCH + timedelta(hours=rng.randrange(0, 24 * 90))
        legs: list[dict[str, Any]] = []
        origin = rng.choice(_PLACES)
        for _ in range(rng.randrange(1, 4)):
            destination = rng.choice([p for p in _PLACES if p is not origin])
            legs.append(
                {
                    "mode": rng.choice(_MODES),
                    "fromAddress": _address(origin),
                    "toAddress": _address(destination),
                    "fromCoordinates": _coordinates(rng, origin),
                    "toCoordinates": _coordinates(rng, destination),
                    "shipFromDate": _iso(start),
                    "carrier": rng.choice(_CARRIERS),  # undeclared
                }
            )
            start += timedelta(hours=rng.randrange(6, 96))
            origin = destination
        out.append(
            {
                "shipmentId": shipment_id,
                "devices": rng.sample(device_ids, k=min(len(device_ids), rng.randrange(1, 3))),
                "shipmentLegs": legs,
                # Undeclared in openapi.yaml: clients must keep them.
                "referenceNumber": f"PO-{account.upper()}-{index + 1:05d}",
                "status": rng.choice(_STATUSES),
                "createdAt": _iso(_EPOCH + timedelta(minutes=index)),
            }
        )
    return out


def make_dataset(resource: str, account: str, *, seed: int, records: int) -> list[dict[str, Any]]:
    """Build the full ordered list of ``resource`` records of ``account``.

    Identifiers come from 128 random bits drawn per account, so they are unique across
    accounts in practice, and stable for a seed.

    Example::

        make_dataset("devices", "acct-1", seed=0, records=3)[0]["deviceId"]
    """
    if resource == "shipments":
        return _shipments(seed, account, records)
    if resource == "devices":
        return _devices(seed, account, records)
    raise ValueError(f"unknown resource {resource!r}; expected one of {RESOURCES}")
