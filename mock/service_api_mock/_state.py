"""The mock's mutable state: tokens, clock offset, counters, faults and data.

The state is shared by the event loop serving requests (in a background thread when the
mock runs under uvicorn) and by the test thread driving the handle, so every method
takes a lock for the few statements that touch it. No method awaits while holding it.
"""

from __future__ import annotations

import collections
import copy
import hmac
import json
import math
import random
import secrets
import threading
import time
from collections.abc import Mapping
from typing import Any

import attrs

from ._config import MockConfig
from ._data import build_records, fresh_id
from ._spec import MockSpec

__all__ = [
    "FAULT_FIELDS",
    "Collection",
    "FaultPlan",
    "IssuedToken",
    "MockState",
    "encode_json",
]

FAULT_FIELDS: tuple[str, ...] = (
    "drop_rate",
    "fault_rate",
    "latency_jitter_ms",
    "latency_ms",
)
FAULT_FIELDS += ("rate_limit", "rate_window", "retry_after")


@attrs.frozen
class IssuedToken:
    """A token the mock issued: the integration it was issued to and when it expires.

    Example::

        IssuedToken(client_id="demo-client", expires_at=time.time() + 3600)
    """

    client_id: str
    expires_at: float


@attrs.frozen
class Collection:
    """Where records live: the records of one resource for one account, under the ids of
    its parents for a sub-resource (the events of one shipment), none for the others.

    Example::

        Collection("shipment-events", "acct-1", ("0b6c1ab4-...",))
    """

    resource: str
    account: str
    parents: tuple[Any, ...] = ()


@attrs.frozen
class FaultPlan:
    """What happens to one request before it reaches its handler.

    Example::

        FaultPlan(delay=0.05, drop=False, status=None)
    """

    delay: float
    drop: bool
    status: int | None


class MockState:
    """All the state of one mock; see :class:`service_api_mock.MockService` for the handle.

    Example::

        state = MockState(MockConfig(), load_spec())
        token = state.issue_token("demo-client")
    """

    def __init__(self, config: MockConfig, spec: MockSpec) -> None:
        self.spec = spec
        self._lock = threading.Lock()
        self._initial = config
        self.reset()

    # ---- configuration -------------------------------------------------------------

    def reset(self, **overrides: Any) -> None:
        if "spec" in overrides and overrides["spec"] != self._initial.spec:
            raise ValueError("the spec of a running mock is fixed; start another one")
        config = attrs.evolve(self._initial, **overrides)
        with self._lock:
            # The configuration in force: the initial one, these overrides, later fault settings.
            self.config = config
            self._offset = 0.0
            # Every token issued since the reset, in order; a revoked one maps to None.
            self._tokens: dict[str, IssuedToken | None] = {}
            self._counts: dict[str, collections.Counter[int]] = {}
            # Why each answer that did not fit its schema was refused (validate_answers).
            self._invalid: list[str] = []
            self._hits: dict[str, collections.deque[float]] = {}
            self._data: dict[Collection, tuple[list[dict[str, Any]], list[bytes]]] = {}
            # The ids of records deleted, by collection, as text: gone, not adopted again.
            self._deleted: set[tuple[Collection, str]] = set()
            self._rng = random.Random(config.seed)  # noqa: S311 -- reproducible faults, not crypto
            # Identifiers of created records: a generator apart, so faults stay as they were.
            self._ids = random.Random(f"{config.seed}/ids")  # noqa: S311 -- not crypto

    def set_faults(self, **changes: Any) -> MockConfig:
        unknown = sorted(set(changes) - set(FAULT_FIELDS))
        if unknown:
            raise TypeError(f"not a fault setting: {', '.join(unknown)}")
        config = attrs.evolve(self.config, **changes)
        with self._lock:
            self.config = config
            if "rate_limit" in changes or "rate_window" in changes:
                self._hits.clear()
        return config

    # ---- clock and tokens ----------------------------------------------------------

    def now(self) -> float:
        """Seconds since the epoch on the mock's clock (the wall clock plus the offset)."""
        return time.time() + self._offset

    def advance_clock(self, seconds: float) -> float:
        if not math.isfinite(seconds):
            raise ValueError("the clock advances by a finite number of seconds")
        with self._lock:
            self._offset += seconds
            return self._offset

    def check_client(self, client_id: str, client_secret: str) -> bool:
        creds = self.config.clients.get(client_id)
        if creds is None:
            # Compare anyway so that unknown and known IDs take the same time.
            hmac.compare_digest(client_secret.encode(), b"-")
            return False
        return hmac.compare_digest(client_secret.encode(), creds.secret.encode())

    def accounts_of(self, client_id: str) -> tuple[str, ...]:
        creds = self.config.clients.get(client_id)
        return creds.accounts if creds is not None else ()

    def issue_token(self, client_id: str) -> str:
        # 32 random bytes: 256 bits, twice the 128 a bearer token needs, and opaque.
        token = secrets.token_urlsafe(32)
        with self._lock:
            self._tokens[token] = IssuedToken(
                client_id, self.now() + self.config.token_ttl
            )
        return token

    def token(self, token: str) -> IssuedToken | None:
        """The token as issued, expired or not; ``None`` if never issued, or revoked."""
        with self._lock:
            return self._tokens.get(token)

    def revoke_tokens(self) -> None:
        with self._lock:
            self._tokens = dict.fromkeys(self._tokens)

    def issued_tokens(self) -> list[str]:
        with self._lock:
            return list(self._tokens)

    # ---- counters ------------------------------------------------------------------

    def record(self, operation: str, status: int) -> None:
        with self._lock:
            self._counts.setdefault(operation, collections.Counter())[status] += 1

    def counts(self) -> dict[str, dict[int, int]]:
        with self._lock:
            return {
                op: dict(sorted(c.items())) for op, c in sorted(self._counts.items())
            }

    def note_invalid_answer(self, reason: str) -> None:
        """Keep ``reason``: an answer the mock built did not fit its schema."""
        with self._lock:
            self._invalid.append(reason)

    def invalid_answers(self) -> list[str]:
        """Why each answer refused since the reset did not fit its schema, in order."""
        with self._lock:
            return list(self._invalid)

    def count(self, operation: str | None = None, status: int | None = None) -> int:
        # The per-status counts of the operations asked for, then those of the status.
        chosen = [
            by_code for op, by_code in self.counts().items() if operation in (None, op)
        ]
        return sum(
            n
            for by_code in chosen
            for code, n in by_code.items()
            if status in (None, code)
        )

    # ---- faults --------------------------------------------------------------------

    def plan_faults(self) -> FaultPlan:
        config = self.config
        with self._lock:
            # Always four draws, whatever the settings, so that the sequence of decisions
            # for a seed does not depend on which faults happen to be switched on.
            jitter, drop, fault, kind = (self._rng.random() for _ in range(4))
        delay = (config.latency_ms + jitter * config.latency_jitter_ms) / 1000.0
        status: int | None = None
        is_dropped = drop < config.drop_rate
        if not is_dropped and fault < config.fault_rate:
            status = 503 if kind < 0.5 else 429
        return FaultPlan(delay, is_dropped, status)

    def rate_limit_wait(self, client_id: str) -> float | None:
        """Count one request of ``client_id``; the seconds to wait if over the quota.

        The quota belongs to the integration (the client ID), whatever the account or the
        connection: a sliding window log of the accepted requests. A refused request is
        not counted, so a client that waits as told gets through at the quota's pace.
        """
        config = self.config
        if config.rate_limit is None:
            return None
        window = config.rate_window
        limit = max(1, round(config.rate_limit * window / 60.0))
        now = self.now()
        with self._lock:
            hits = self._hits.setdefault(client_id, collections.deque())
            while hits and hits[0] <= now - window:
                hits.popleft()
            if len(hits) >= limit:
                return max(hits[0] + window - now, 0.0)
            hits.append(now)
            return None

    # ---- data ----------------------------------------------------------------------

    def records(self, place: Collection) -> tuple[list[dict[str, Any]], list[bytes]]:
        """The records of ``place`` as served, built on first use, and each one encoded
        as compact JSON (encoding a page was most of the cost of a listing)."""
        resource = self.spec.resources.get(place.resource)
        if resource is None or resource.pointer is None:
            known = ", ".join(sorted(self.spec.resources))
            raise ValueError(
                f"unknown resource {place.resource!r}; expected one of {known}"
            )
        found = self._data.get(place)
        if found is None:
            config = self.config
            # A sub-resource has records under its parents only: none under an unknown one.
            count = config.records if self.has_parent(place) else 0
            records = build_records(
                self.spec.schemas,
                resource,
                account=place.account,
                parents=place.parents,
                seed=config.seed,
                count=count,
                realistic=place.resource in self.spec.realistic,
                chosen=self.spec.chosen.get(place.resource),
            )
            with self._lock:
                pair = (records, [encode_json(r) for r in records])
                found = self._data.setdefault(place, pair)
        return found

    def find(self, place: Collection, record_id: object) -> int | None:
        """The position of the record of ``place`` whose identifier is ``record_id``, if
        any (compared as text: the ``7`` of a path is the record ``7``)."""
        field = str(self.spec.resources[place.resource].id_field)
        records = self.records(place)[0]
        wanted = str(record_id)
        with self._lock:
            for index, record in enumerate(records):
                if str(record.get(field)) == wanted:
                    return index
        return None

    def collection(
        self, resource: str, account: str, parents: tuple[Any, ...] = ()
    ) -> Collection:
        """Where the records of ``resource`` under the path parameters ``parents`` (in
        the order of its ``parent_parameters``) are. Only a parameter naming a record
        of an ancestor resource tells collections apart: one that names no record
        (``{owner}`` of ``/repos/{owner}/{repo}/comments``) is left out (None), so any
        value of it finds the same records."""
        found = self.spec.resources.get(resource)
        if found is None:
            return Collection(resource, account, parents)
        naming = set()
        ancestor = self.spec.resources.get(str(found.parent))
        names = found.parent_parameters
        while ancestor is not None:
            # The parameter after the ancestor's own names one of its records.
            at = len(ancestor.parent_parameters)
            if ancestor.id_field is not None and at < len(names):
                naming.add(names[at])
            ancestor = self.spec.resources.get(str(ancestor.parent))
        kept = tuple(
            value if name in naming else None
            for name, value in zip(found.parent_parameters, parents, strict=False)
        )
        return Collection(resource, account, kept)

    def has_parent(self, place: Collection) -> bool:
        """Whether the parent record ``place`` belongs to exists: always for a resource
        whose parent is no resource with an identifier (or that has no parent)."""
        resource = self.spec.resources[place.resource]
        parent = self.spec.resources.get(str(resource.parent))
        if parent is None or parent.id_field is None or not place.parents:
            return True
        above = Collection(
            parent.name,
            place.account,
            place.parents[: len(parent.parent_parameters)],
        )
        return self.find(above, place.parents[-1]) is not None

    def create(self, place: Collection, record: Mapping[str, Any]) -> dict[str, Any]:
        """Add ``record`` at the end under a new identifier (and its parents' ids); the
        record as stored."""
        resource = self.spec.resources[place.resource]
        pointer = str(resource.pointer)
        created = self.spec.schemas.answerable(pointer, record, self._ids)
        for name, value in zip(resource.parent_parameters, place.parents, strict=False):
            if name in resource.fields and value is not None:
                created[name] = value
        field = resource.id_field
        if field is not None:
            used = [r.get(field) for r in self.records(place)[0]]
            number = max((u for u in used if isinstance(u, int)), default=0) + 1
            created[field] = fresh_id(
                self.spec.schemas,
                resource,
                self._ids,
                number,
                used={str(u) for u in used},
                record=created,
            )
        self.store(place, None, created)
        return created

    def deleted(self, place: Collection, record_id: object) -> bool:
        """Whether the record of ``place`` with the identifier ``record_id`` (compared as
        text) was deleted since the reset."""
        return (place, str(record_id)) in self._deleted

    def adopt(self, place: Collection, record_id: object) -> int:
        """Add a record built for ``record_id`` to ``place`` (of a resource no operation
        lists or creates, whose every id names a record); its position."""
        resource = self.spec.resources[place.resource]
        pointer = str(resource.pointer)
        rng = random.Random(f"{self.config.seed}/{place}/{record_id}")  # noqa: S311
        record = self.spec.schemas.build(pointer, rng, resource.name)
        record = record if isinstance(record, dict) else {}
        field = str(resource.id_field)
        # The id as asked for where the schema takes it, else the built one.
        if (
            self.spec.schemas.error(pointer, {**record, field: record_id}) is None
            or field not in record
        ):
            record[field] = record_id
        self.store(place, None, record)
        return len(self.records(place)[0]) - 1

    def store(
        self, place: Collection, index: int | None, record: dict[str, Any] | None
    ) -> None:
        """Put ``record`` at ``index`` (``None``: append), or remove the one there."""
        records, encoded = self.records(place)
        field = str(self.spec.resources[place.resource].id_field)
        with self._lock:
            if record is None:
                gone = records[index].get(field)  # type: ignore[index]  # remove needs one
                self._deleted.add((place, str(gone)))
                del records[index], encoded[index]  # type: ignore[index]
            elif index is None:
                records.append(record)
                encoded.append(encode_json(record))
            else:
                records[index], encoded[index] = record, encode_json(record)

    def update_record(
        self, place: Collection, index: int, changes: Mapping[str, Any]
    ) -> dict[str, Any]:
        """Merge ``changes`` into the record at ``index`` (top-level fields); the new record.

        The record keeps its place (so its page).
        """
        records = self.records(place)[0]
        if not -len(records) <= index < len(records):
            raise IndexError(
                f"{place.resource} of {place.account!r} has {len(records)} records, "
                f"not {index}"
            )
        updated = {**records[index], **copy.deepcopy(dict(changes))}
        # store() encodes before it puts: what the API could not send is refused unserved.
        self.store(place, index % len(records), updated)
        return copy.deepcopy(updated)


def encode_json(value: object) -> bytes:
    """Compact JSON, as Starlette's ``JSONResponse`` writes it.

    Example::

        encode_json({"a": 1})  # b'{"a":1}'
    """
    return json.dumps(
        value, ensure_ascii=False, allow_nan=False, separators=(",", ":")
    ).encode()
