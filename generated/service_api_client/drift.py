"""Drift: where the service's answers differ from the spec the client was generated from.

Written by hand and copied as it is into the generated package by codegen/generate.py.
The records (:mod:`.records`) notice, while they parse, a field the spec does not
declare, a value of another type, a null the spec does not allow, a required field left
out and a value outside an enum; the client notices an answer's undeclared status or
header. Each is a :class:`Drift` at a *place* (``Shipment.status``, ``getShipment 202``),
told to the :class:`DriftLog` of the client that read the answer: said once per place at
WARNING through the ``service_api`` logger, with ``service-api spec check`` as the next
step, handed to the client's ``on_drift`` callback once per place, and counted.

A parse outside any client (``Shipment.from_dict(raw)``) tells nobody.

Example::

    log = DriftLog()
    with log.listening():
        Shipment.from_dict({"shipmentId": "s-1", "colour": "red"})
    log.findings[0].place  # 'Shipment.colour'
    log.findings[0].seen  # 'a field the spec does not declare (a string)'
"""

from __future__ import annotations

import contextlib
import contextvars
import logging
import re
import threading
from collections.abc import Callable, Container, Iterator, Mapping
from dataclasses import dataclass

import httpx

__all__ = [
    "MAX_PLACES",
    "OTHER_PLACES",
    "PLACE_LENGTH",
    "SAMPLED",
    "SAMPLE_EVERY",
    "TOLD_HEADERS",
    "Drift",
    "DriftLog",
    "summary",
]

logger = logging.getLogger("service_api")

#: Answers read with every record checked: the first ``SAMPLED`` of a client, then one
#: in ``SAMPLE_EVERY`` (a check costs little, telling the same place again a little more).
SAMPLED = 10
SAMPLE_EVERY = 20
#: Places one client keeps and says at most: a service that sends new keys in every record
#: (a map the spec does not declare) costs a bounded memory and log; the rest are counted
#: at the place ``OTHER_PLACES``. A place longer than ``PLACE_LENGTH`` is cut.
MAX_PLACES = 200
OTHER_PLACES = "(other places)"
PLACE_LENGTH = 120
#: The headers whose absence from the spec is drift: those a client acts on or reports
#: (the others, ``date``, ``server``, ``content-length``..., every answer has).
TOLD_HEADERS = re.compile(
    r"www-authenticate|retry-after|.*rate-?limit.*|.*(request|correlation|trace)-?id"
)


@dataclass
class Drift:
    """One place where answers differ from the spec.

    Attributes:
        place: where: ``Shipment.status`` (a model's field by its JSON name),
            ``getShipment 202`` (an operation's status), ``getShipment header x-trace``.
        seen: what was seen there, first: ``a value outside its enum: 'Lost'``.
        count: how many times it was seen since the client was made.
    """

    place: str
    seen: str
    count: int = 1

    def __str__(self) -> str:
        return f"{self.place}: {self.seen}"


class DriftLog:
    """The drift one client (and the clients made from it) met, by place.

    ``on_drift`` is called once per place, with the first :class:`Drift` seen there, in
    the thread that parsed the answer: keep it quick; what it raises is logged, never
    raised into the iteration.

    Example::

        client = service_api.Client(on_drift=lambda drift: alerts.append(str(drift)))
        ...
        client.drift  # every Drift met so far, with its count
    """

    def __init__(
        self, on_drift: Callable[[Drift], object] | None = None, *, enabled: bool = True
    ) -> None:
        self.on_drift = on_drift
        self.enabled = enabled
        self._places: dict[str, Drift] = {}
        self._lock = threading.Lock()
        self._answers = 0

    @property
    def findings(self) -> list[Drift]:
        """Every place met so far, in the order first met, with its count."""
        with self._lock:
            return [Drift(d.place, d.seen, d.count) for d in self._places.values()]

    def add(self, place: str, seen: str | Callable[[], str]) -> None:
        """Count ``seen`` at ``place``; the first time, say it and call ``on_drift``
        (``seen`` may be a function that says it, called only then)."""
        known = self._places.get(place)
        if known is not None:  # the common case, with no lock: a count may be lost
            known.count += 1
            return
        if len(self._places) >= MAX_PLACES:
            place, seen = OTHER_PLACES, f"more than {MAX_PLACES} places differ"
            known = self._places.get(place)
            if known is not None:
                known.count += 1
                return
        if callable(seen):
            seen = seen()
        if len(place) > PLACE_LENGTH:
            place = f"{place[: PLACE_LENGTH - 3]}..."
        with self._lock:
            known = self._places.get(place)
            if known is not None:
                known.count += 1
                return
            drift = self._places[place] = Drift(place, seen)
        logger.warning(
            "the service differs from the spec at %s: %s; next: service-api spec check",
            place,
            seen,
        )
        if self.on_drift is not None:
            try:
                self.on_drift(Drift(place, seen))
            except Exception:  # a callback's bug must not stop the iteration
                logger.exception("on_drift failed for %s", drift.place)

    def answer(
        self,
        operation: str,
        response: httpx.Response,
        success: Container[int],
        headers: Mapping[str, frozenset[str]] | None = None,
    ) -> contextlib.AbstractContextManager[None]:
        """Check an answer of ``operation`` the client reads: a status it does not
        declare (not in ``success``, below 400: an error is raised, not drift); in the
        sample (see :data:`SAMPLED`), the headers its answer does not name (of those
        :data:`TOLD_HEADERS` matches; ``headers``: the declared, by status key) and,
        within the context returned, the records read from it. Outside the sample the
        records are read as well, their drift not told."""
        status = response.status_code
        if self.enabled and status not in success and status < 400:
            self.add(f"{operation} {status}", "a status the spec does not declare")
        self._answers += 1  # a lost count under threads only shifts the sample
        taken = self._answers <= SAMPLED or self._answers % SAMPLE_EVERY == 0
        if not (taken and self.enabled):
            return contextlib.nullcontext()
        if headers is not None:
            self._headers(operation, response, headers)
        return self.listening()

    def _headers(
        self,
        operation: str,
        response: httpx.Response,
        declared: Mapping[str, frozenset[str]],
    ) -> None:
        status = response.status_code
        for key in (str(status), f"{status // 100}XX", "default"):
            if key in declared:
                named = declared[key]
                break
        else:
            return  # an undeclared status: told as such
        for name in response.headers:
            if TOLD_HEADERS.fullmatch(name) and name not in named:
                self.add(
                    f"{operation} {status} header {name}",
                    "a header the spec does not declare",
                )

    @contextlib.contextmanager
    def listening(self) -> Iterator[None]:
        """Within: what the records parsed in this context notice is told here."""
        token = _LISTENING.set(self)
        try:
            yield
        finally:
            _LISTENING.reset(token)


# The drift log of the answer being parsed in this thread or task (None: nobody's).
_LISTENING: contextvars.ContextVar[DriftLog | None] = contextvars.ContextVar(
    "service_api_drift", default=None
)


def summary(found: list[Drift]) -> str:
    """One line that sums up what differed (empty when nothing did): how many places,
    the places by count (most met first, eight at most), and the next step.

    Example::

        summary(client.drift)
        # 'the answers differed from the spec at 2 places: Shipment.colour (40),
        #  Shipment.status (3); next: service-api spec check'
    """
    if not found:
        return ""
    ranked = sorted(found, key=lambda d: -d.count)
    places = ", ".join(f"{d.place} ({d.count})" for d in ranked[:8])
    more = f" and {len(ranked) - 8} more" if len(ranked) > 8 else ""
    return (
        f"the answers differed from the spec at {len(ranked)} "
        f"place{'s' * (len(ranked) > 1)}: {places}{more}; next: service-api spec check"
    )
