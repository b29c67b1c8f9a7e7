"""Deterministic records: the same seed, resource, account and parent give the same
records.

Any resource's records are built from its schema (:func:`build_records`). Shipments and
devices have richer generators of their own: realistic places and dates, and a few fields
the spec does not declare (``status``, ``referenceNumber``, ``carrier``,
``firmwareVersion``...), so that tests can prove a client keeps fields it does not know.
"""

from __future__ import annotations

import random
import uuid
from collections.abc import Callable, Mapping
from datetime import timedelta
from typing import Any

from service_api_spec import Resource

from ._schemas import EPOCH, Schemas, iso

__all__ = ["REALISTIC", "build_records", "make_dataset", "new_id", "seeded"]

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


def seeded(*names: object) -> random.Random:
    """A random generator of its own for ``names`` (the seed, a resource, an account...).

    Example::

        seeded(0, "shipments", "acct-1").random()  # the same number in every process
    """
    # A string seed is hashed with SHA-512 by ``random``: stable across processes,
    # unlike ``hash()``, and distinct for each sequence of names.
    return random.Random("/".join(str(name) for name in names))  # noqa: S311 -- not crypto


_ADDRESS = ("street", "sublocality", "locality", "state", "country", "postalCode")


def _address(place: _Place) -> dict[str, Any]:
    return dict(zip(_ADDRESS, place[:6], strict=True))


def _coordinates(rng: random.Random, place: _Place) -> dict[str, Any]:
    latitude = max(-90.0, min(90.0, place[6] + rng.uniform(-0.05, 0.05)))
    longitude = max(-180.0, min(180.0, place[7] + rng.uniform(-0.05, 0.05)))
    return {"latitude": round(latitude, 6), "longitude": round(longitude, 6)}


def _device_ids(seed: int, account: str, count: int) -> list[str]:
    rng = seeded(seed, "device-ids", account)
    ids = (uuid.UUID(int=rng.getrandbits(128), version=4) for _ in range(count))
    return [f"TRK-{i.hex[:16].upper()}" for i in ids]


def _devices(seed: int, account: str, count: int) -> list[dict[str, Any]]:
    rng = seeded(seed, "devices", account)
    out: list[dict[str, Any]] = []
    for index, device_id in enumerate(_device_ids(seed, account, count)):
        place = rng.choice(_PLACES)
        measured = EPOCH + timedelta(minutes=rng.randrange(0, 60 * 24 * 60))
        out.append(
            {
                "deviceId": device_id,
                "measurementTime": iso(measured),
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
    rng = seeded(seed, "shipments", account)
    device_ids = _device_ids(seed, account, max(count, 1))
    out: list[dict[str, Any]] = []
    for index in range(count):
        shipment_id = str(uuid.UUID(int=rng.getrandbits(128), version=4))
        start = EPOCH + timedelta(hours=rng.randrange(0, 24 * 90))
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
                    "shipFromDate": iso(start),
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
                "createdAt": iso(EPOCH + timedelta(minutes=index)),
            }
        )
    return out


_Generator = Callable[[int, str, int], list[dict[str, Any]]]
REALISTIC: Mapping[str, _Generator] = {"shipments": _shipments, "devices": _devices}
"""The resources with a generator of their own: resource name to ``(seed, account, n)``."""


def make_dataset(
    resource: str, account: str, *, seed: int, records: int
) -> list[dict[str, Any]]:
    """The full ordered list of ``resource`` records (shipments or devices) of ``account``.

    Identifiers come from 128 random bits drawn per account, so they are unique across
    accounts in practice, and stable for a seed.

    Example::

        make_dataset("devices", "acct-1", seed=0, records=3)[0]["deviceId"]
    """
    return REALISTIC[resource](seed, account, records)


def build_records(
    schemas: Schemas,
    resource: Resource,
    *,
    account: str,
    parents: tuple[Any, ...] = (),
    seed: int,
    count: int,
    realistic: bool = False,
    chosen: Mapping[str, tuple[Any, ...]] | None = None,
) -> list[dict[str, Any]]:
    """The ``count`` records of ``resource`` for ``account`` (under the parent ids
    ``parents``, for a sub-resource), built from its schema; by its generator of
    :data:`REALISTIC` if ``realistic``.

    The identifier field gets a distinct value (1, 2, 3... for an integer, else a UUID);
    the fields named as the parents' path parameters get their ids; a field of
    ``chosen`` (a list's filter with an enum) a member of it, where the schema takes it.

    Example::

        build_records(schemas, spec.resources["alerts"], account="acct-1", seed=0, count=3)
    """
    pointer = str(resource.pointer)
    if realistic:
        records = REALISTIC[resource.name](seed, account, count)
        return [_chosen(schemas, pointer, r, n, chosen) for n, r in enumerate(records)]
    rng = seeded(seed, resource.name, account, *parents)
    records = []
    used: set[str] = set()
    field = resource.id_field
    takes_new_id = True
    for number in range(1, count + 1):
        record = schemas.build(pointer, rng, resource.name)
        if not isinstance(record, dict):
            record = {}
        if field is not None and number == 1:
            # Whether the schema takes 1, 2, 3... (or UUIDs) is the same for every record.
            wanted = new_id(resource.id_kind, random.Random(0), 1)  # noqa: S311
            takes_new_id = schemas.error(pointer, {**record, field: wanted}) is None
        if field is not None:
            record[field] = fresh_id(
                schemas,
                resource,
                rng,
                number,
                used=used,
                record=record if not takes_new_id else {},
            )
            used.add(str(record[field]))
        for name, value in zip(resource.parent_parameters, parents, strict=False):
            if name in resource.fields and value is not None:
                record[name] = value
        records.append(_chosen(schemas, pointer, record, number - 1, chosen))
    return records


def _chosen(
    schemas: Schemas,
    pointer: str,
    record: dict[str, Any],
    index: int,
    chosen: Mapping[str, tuple[Any, ...]] | None,
) -> dict[str, Any]:
    """``record`` (the ``index``-th) with each field of ``chosen`` set to a member in
    turn, where its schema takes it."""
    for name, members in (chosen or {}).items():
        drawn = members[index % len(members)]
        if schemas.error(pointer, {**record, name: drawn}) is None:
            record[name] = drawn
    return record


def fresh_id(
    schemas: Schemas,
    resource: Resource,
    rng: random.Random,
    number: int,
    *,
    used: set[str],
    record: dict[str, Any],
) -> Any:
    """An identifier for ``record`` (of ``resource``) that no record of ``used`` has
    (compared as text): :func:`new_id` where the record's schema takes it (or no
    ``record`` is given), else a value its schema builds (a pattern's, an enum's),
    drawn again until it is new.

    Example::

        fresh_id(schemas, resources["alerts"], random.Random(0), 1, used=set(), record={})
    """
    field = str(resource.id_field)
    wanted = new_id(resource.id_kind, rng, number)
    pointer = str(resource.pointer)
    if schemas.error(pointer, {**record, field: wanted}) is None or not record:
        return wanted
    found = record.get(field, wanted)
    for _ in range(20):
        if str(found) not in used:
            break
        found = (schemas.build(pointer, rng, resource.name) or {}).get(field, wanted)
    return found


def new_id(kind: str, rng: random.Random, number: int) -> int | str:
    """An identifier of the kind ``kind`` (a :class:`service_api_spec.Resource`'s
    ``id_kind``): ``number`` for an integer or a number, else a UUID drawn from ``rng``.

    Example::

        new_id("string", random.Random(0), 1)  # "cd613e30-d8f1-4adf-91b7-584a2265b1f5"
    """
    if kind in ("integer", "number"):
        return number
    return str(uuid.UUID(int=rng.getrandbits(128), version=4))
