"""Deterministic records: the same seed, resource and account give the same records.

Any record type is built from its schema (:func:`build_records`). Shipments and devices
have richer generators of their own: realistic places and dates, and a few fields the spec
does not declare (``status``, ``referenceNumber``, ``carrier``, ``firmwareVersion``...), so
that tests can prove a client keeps fields it does not know.
"""

from __future__ import annotations

import copy
import random
import uuid
from collections.abc import Callable, Mapping
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ._spec import RecordType, SpecDocument

__all__ = ["REALISTIC", "build_records", "make_dataset", "new_id", "sample_record"]

# A fixed origin keeps the dates stable across runs and days.
_EPOCH = datetime(2026, 1, 5, 8, 0, 0, tzinfo=UTC)

_Place = tuple[str, str, str, str, str, str, float, float]
_PLACES: tuple[_Place, ...] = (
    # street, sublocality, locality, state, country, postalCode, latitude, longitude
    (
        "1 Harbour Road",
        "Port District",
        "Rotterdam",
        "Zuid-Holland",
        "NL",
        "3011",
        51.92,
        4.48,
    ),
    (
        "200 Container Way",
        "Terminal 4",
        "Hamburg",
        "Hamburg",
        "DE",
        "20457",
        53.5461,
        9.9661,
    ),
    (
        "88 Cargo Lane",
        "Heathrow",
        "London",
        "England",
        "GB",
        "TW6 2GA",
        51.4700,
        -0.4543,
    ),
    ("9 Cold Chain Ave", "Elizabeth", "Newark", "NJ", "US", "07201", 40.6895, -74.1745),
    (
        "45 Logistics Blvd",
        "Jurong",
        "Singapore",
        "Singapore",
        "SG",
        "619587",
        1.3329,
        103.7436,
    ),
    (
        "7 Rue du Fret",
        "Roissy",
        "Paris",
        "Ile-de-France",
        "FR",
        "95700",
        49.0097,
        2.5479,
    ),
    (
        "300 Rail Yard St",
        "Eixample",
        "Barcelona",
        "Catalonia",
        "ES",
        "08013",
        41.4036,
        2.1744,
    ),
    (
        "12 Pharma Park",
        "Kowloon Bay",
        "Hong Kong",
        "Kowloon",
        "HK",
        "999077",
        22.3193,
        114.1694,
    ),
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


_ADDRESS = ("street", "sublocality", "locality", "state", "country", "postalCode")


def _address(place: _Place) -> dict[str, Any]:
    return dict(zip(_ADDRESS, place[:6], strict=True))


def _coordinates(rng: random.Random, place: _Place) -> dict[str, Any]:
    latitude = max(-90.0, min(90.0, place[6] + rng.uniform(-0.05, 0.05)))
    longitude = max(-180.0, min(180.0, place[7] + rng.uniform(-0.05, 0.05)))
    return {"latitude": round(latitude, 6), "longitude": round(longitude, 6)}


def _device_ids(seed: int, account: str, count: int) -> list[str]:
    rng = _rng(seed, "device-ids", account)
    ids = (uuid.UUID(int=rng.getrandbits(128), version=4) for _ in range(count))
    return [f"TRK-{i.hex[:16].upper()}" for i in ids]


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
                "devices": rng.sample(
                    device_ids, k=min(len(device_ids), rng.randrange(1, 3))
                ),
                "shipmentLegs": legs,
                # Undeclared in openapi.yaml: clients must keep them.
                "referenceNumber": f"PO-{account.upper()}-{index + 1:05d}",
                "status": rng.choice(_STATUSES),
                "createdAt": _iso(_EPOCH + timedelta(minutes=index)),
            }
        )
    return out


_Generator = Callable[[int, str, int], list[dict[str, Any]]]
REALISTIC: Mapping[str, _Generator] = {"shipments": _shipments, "devices": _devices}
"""The record types with a generator of their own: resource name to ``(seed, account, n)``."""


def make_dataset(
    resource: str, account: str, *, seed: int, records: int
) -> list[dict[str, Any]]:
    """Build the full ordered list of ``resource`` records (shipments or devices) of ``account``.

    Identifiers come from 128 random bits drawn per account, so they are unique across
    accounts in practice, and stable for a seed.

    Example::

        make_dataset("devices", "acct-1", seed=0, records=3)[0]["deviceId"]
    """
    return REALISTIC[resource](seed, account, records)


def build_records(
    document: SpecDocument,
    record_type: RecordType,
    account: str,
    *,
    seed: int,
    count: int,
) -> list[dict[str, Any]]:
    """The ``count`` records of ``record_type`` for ``account``, built from its schema.

    The record's identifier field gets a unique value (a UUID string, or 1, 2, 3... for an
    integer). Raises ``ValueError`` for a schema it cannot build (a string with a
    ``pattern`` but no ``examples``, a recursion that never ends).

    Example::

        build_records(spec.document, spec.resources["alerts"], "acct-1", seed=0, count=3)
    """
    if record_type.realistic:
        return REALISTIC[record_type.name](seed, account, count)
    builder = _SchemaBuilder(document, _rng(seed, record_type.name, account))
    out: list[dict[str, Any]] = []
    for index in range(count):
        record = builder.value({"$ref": record_type.pointer}, record_type.name, 0)
        if not isinstance(record, dict):
            raise ValueError("a record must be a JSON object")
        if record_type.id_field is not None:
            record[record_type.id_field] = new_id(record_type, builder.rng, index + 1)
        out.append(record)
    return out


def sample_record(document: SpecDocument, record_type: RecordType) -> dict[str, Any]:
    """One record of ``record_type``, to check at start-up that the schema takes it.

    Example::

        sample_record(spec.document, spec.resources["shipments"])
    """
    return build_records(document, record_type, "sample", seed=0, count=1)[0]


def new_id(record_type: RecordType, rng: random.Random, number: int) -> int | str:
    """An identifier of ``record_type``: ``number`` if it is an integer, else a UUID.

    Example::

        new_id(spec.resources["shipments"], random.Random(0), 1)  # "4d0a..."
    """
    if "integer" in record_type.id_types or "number" in record_type.id_types:
        return number
    return str(uuid.UUID(int=rng.getrandbits(128), version=4))


_MAX_DEPTH = 8


class _SchemaBuilder:
    """Builds a value that fits a JSON Schema: the first alternative of a choice, every
    property of an object, a value within the bounds, an example or enum member if given."""

    def __init__(self, document: SpecDocument, rng: random.Random) -> None:
        self.document = document
        self.rng = rng

    def value(self, schema: Any, name: str, depth: int) -> Any:
        schema = self.document.resolve(schema)[0]
        if not isinstance(schema, Mapping):
            return None  # true / false / {}: anything, so null
        if depth > _MAX_DEPTH:
            raise ValueError(
                f"{name}: the schema nests deeper than {_MAX_DEPTH} levels"
            )
        if "const" in schema:
            return copy.deepcopy(schema["const"])
        for key in ("examples", "enum"):
            if schema.get(key):
                return copy.deepcopy(self.rng.choice(schema[key]))
        if "example" in schema:
            return copy.deepcopy(schema["example"])
        if "allOf" in schema:
            merged: dict[str, Any] = {}
            for part in schema["allOf"]:
                part_value = self.value(part, name, depth + 1)
                merged.update(part_value if isinstance(part_value, dict) else {})
            return merged
        for key in ("anyOf", "oneOf"):
            if key in schema:
                options = [self.document.resolve(o)[0] for o in schema[key]]
                useful = [o for o in options if o != {"type": "null"}]
                return self.value((useful or options)[0], name, depth + 1)
        declared = schema.get("type", [])
        types = [
            t
            for t in ([declared] if isinstance(declared, str) else declared)
            if t != "null"
        ]
        kind = types[0] if types else ("object" if "properties" in schema else "")
        return self._typed(kind, schema, name, depth)

    def _typed(
        self, kind: str, schema: Mapping[str, Any], name: str, depth: int
    ) -> Any:
        rng = self.rng
        if kind == "object":
            properties: Mapping[str, Any] = schema.get("properties") or {}
            return {
                key: self.value(sub, key, depth + 1) for key, sub in properties.items()
            }
        if kind == "array":
            low = int(schema.get("minItems", 1))
            count = rng.randint(low, max(low, min(int(schema.get("maxItems", 3)), 3)))
            return [
                self.value(schema.get("items"), name, depth + 1) for _ in range(count)
            ]
        if kind in ("integer", "number"):
            low = schema.get("minimum", schema.get("exclusiveMinimum", -1) + 1)
            high = schema.get("maximum", schema.get("exclusiveMaximum", low + 1001) - 1)
            if kind == "integer":
                return rng.randint(int(low), int(high))
            return round(rng.uniform(low, high), 2) if high - low > 0.02 else low
        if kind == "boolean":
            return rng.random() < 0.5
        if kind == "string":
            return self._string(schema, name)
        return None

    def _string(self, schema: Mapping[str, Any], name: str) -> str:
        rng = self.rng
        moment = _EPOCH + timedelta(minutes=rng.randrange(0, 60 * 24 * 90))
        by_format: dict[str, Callable[[], str]] = {
            "date-time": lambda: _iso(moment),
            "date": lambda: moment.date().isoformat(),
            "uri": lambda: f"https://example.com/{name}/{rng.randrange(1000)}",
            "email": lambda: f"{name.lower()}{rng.randrange(1000)}@example.com",
            "uuid": lambda: str(uuid.UUID(int=rng.getrandbits(128), version=4)),
        }
        if schema.get("format") in by_format:
            return by_format[schema["format"]]()
        if "pattern" in schema:
            raise ValueError(
                f"{name}: a string with a pattern needs examples to build one"
            )
        text = f"{name}-{rng.randrange(1000, 10000)}".ljust(
            int(schema.get("minLength", 0)), "x"
        )
        return text[: int(schema.get("maxLength", len(text)))]
