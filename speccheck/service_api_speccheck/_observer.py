"""Passive learning: ``Client(observe=PATH)`` keeps the shapes of what the client reads.

The client calls the :class:`Observer` with every answer whose body it has read. Shapes
only (see :mod:`service_api_speccheck._shapes`): names, JSON types, formats, statuses,
content types and a few headers, never a value, an identifier, a token or a secret.
Sampled (every answer of an operation and status up to ``SAMPLED``, then one in
``SAMPLE_EVERY``) and bounded (the shapes' own bounds). The file is written with the
first answer, then at most every ``SAVE_EVERY`` seconds, and when the program ends; an
existing one is added to.
``service-api spec check --from PATH`` then reports on it and patches the spec.
"""

from __future__ import annotations

import atexit
import contextlib
import logging
import math
import os
import threading
import time
from collections import Counter
from pathlib import Path

import httpx

from service_api_spec import Spec, load_spec

from ._shapes import Matcher, Observation

__all__ = ["Observer", "packaged_spec"]

SAMPLED = 100
SAMPLE_EVERY = 10
SAVE_EVERY = 5.0

logger = logging.getLogger("service_api")


def packaged_spec() -> Path:
    """The spec the installed client was generated from: the copy a wheel carries with
    the mock, else the checkout's ``openapi.yaml``.

    Example::

        load_spec(packaged_spec())
    """
    here = Path(__file__).resolve().parents[1]
    copies = (here / "service_api_mock" / "openapi.yaml", here.parent / "openapi.yaml")
    return next((p for p in copies if p.is_file()), copies[-1])


class Observer:
    """Records the shapes of the answers it is called with into ``path`` (JSON).

    An existing file is read first and added to; one that is not an observation file is
    a :class:`SpecCheckError` (a ``ValueError``), so that nothing is lost.

    Example::

        with service_api.Client(observe="observed.json") as client:
            list(client.shipments.list(max_items=100))
        # then: service-api spec check --from observed.json
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        base_url: str | httpx.URL,
        spec: Spec | None = None,
    ) -> None:
        self.path = Path(path)
        self.match = Matcher(spec or load_spec(packaged_spec()), base_url)
        exists = self.path.is_file()
        self.observation = Observation.load(self.path) if exists else Observation()
        self.counts: Counter[tuple[str, int]] = Counter()
        self.lock = threading.RLock()
        self.saved = -math.inf  # the first answer is saved at once
        self.changed = False
        atexit.register(self.save)

    def __call__(self, response: httpx.Response) -> None:
        """Record ``response`` (an answer whose body was not read is left alone)."""
        op = self.match(response)
        if op is None:
            return
        with self.lock:
            key = (op.operation_id, response.status_code)
            self.counts[key] += 1
            if self.counts[key] > SAMPLED and self.counts[key] % SAMPLE_EVERY:
                return
            with contextlib.suppress(httpx.ResponseNotRead):
                self.observation.record(response, op)
                self.changed = True
            if time.monotonic() - self.saved > SAVE_EVERY:
                self.save()

    def save(self) -> None:
        """Write what was recorded since the last save (also called at exit)."""
        with self.lock:
            try:
                if self.changed:
                    self.observation.dump(self.path)
            except OSError as exc:
                logger.warning(
                    "cannot save the observed shapes to %s: %s", self.path, exc
                )
            self.saved = time.monotonic()
            self.changed = False
