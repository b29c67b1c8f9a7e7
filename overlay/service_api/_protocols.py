"""What the core knows of the optional features: three small protocols and a record.

The transports ask a :class:`RequestLimiter` before every request; the token flow reads
and writes a :class:`TokenStore`; the retry loop hands every answer read to an
:class:`AnswerObserver`. The implementations (fixed, shared and adaptive limiters, file
and Redis token stores) live in ``service_api.quota``, installed with
``pip install 'service-api[quota]'``; the spec check's ``Observer`` is an answer
observer (the ``spec`` extra). One of one's own needs no extra: the core imports none.
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import Protocol

import httpx


class RequestLimiter(Protocol):
    """What the transports ask before every request they send and tell after each answer.

    Example::

        while (wait := limiter.try_acquire()) > 0:
            time.sleep(wait)
        response = send(request)
        limiter.observe(response)
    """

    def try_acquire(self) -> float:
        """``0.0`` when a request may be sent now (its slot is taken); otherwise the
        seconds to wait before asking again."""

    def observe(self, response: httpx.Response) -> None:
        """Learn from one answer of the service (its status, ``Retry-After``, rate-limit
        headers), before its body is read."""


@dataclass(frozen=True, slots=True)
class StoredToken:
    """A bearer token as a store keeps it.

    Attributes:
        access_token: the token itself (never shown in a repr).
        expires_at: when it stops working, in seconds since the epoch (``time.time()``
            of the process that fetched it, at the moment it sent the request).

    Example::

        StoredToken("eyJ...", expires_at=time.time() + 3600)
    """

    access_token: str = field(repr=False)
    expires_at: float


class TokenStore(Protocol):
    """A place shared by processes where the integration's current token is kept.

    Every method may raise ``OSError`` (or a store-specific error) when the store is
    unreachable or corrupt: the client then fetches a token itself, never crashes.
    ``service_api.quota`` has a file and a Redis store; any object with these three
    methods will do, with no extra installed.

    Example::

        class MemoryStore:
            def __init__(self) -> None:
                self.token: StoredToken | None = None
                self._lock = threading.Lock()

            def load(self) -> StoredToken | None:
                return self.token

            def save(self, token: StoredToken) -> None:
                self.token = token

            @contextlib.contextmanager
            def lock(self) -> Iterator[None]:
                with self._lock:
                    yield

        client = service_api.Client(token_store=MemoryStore())
    """

    def load(self) -> StoredToken | None:
        """The stored token, or ``None`` when there is none (or it cannot be read)."""

    def save(self, token: StoredToken) -> None:
        """Store ``token`` for the other processes."""

    def lock(self) -> AbstractContextManager[None]:
        """Hold while refreshing, so that one process at a time fetches a token."""


class AnswerObserver(Protocol):
    """Called by the client with every answer whose body it has read (``Client(observe=)``),
    in the thread or task that read it: keep it quick, and never let it raise.

    ``service_api_speccheck.Observer("observed.json")`` (the ``spec`` extra) is one: it
    keeps the shapes of the answers for ``service-api spec check --from``.

    Example::

        statuses = collections.Counter()
        client = service_api.Client(observe=lambda answer: statuses.update([answer.status_code]))
    """

    def __call__(self, response: httpx.Response, /) -> None:
        """Look at one answer (its body is read: ``response.content``)."""
