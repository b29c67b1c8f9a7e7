"""Where processes of one integration share their bearer token.

A :class:`TokenStore` lets N worker processes (cron jobs, Celery or Airflow tasks) of one
integration authenticate about once per token lifetime instead of N times: the client
reads a token another process stored before fetching its own, and stores each token it
fetches. Only one process refreshes at a time (the store's lock, checked again once held).
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import Protocol


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

    Example::

        with store.lock():
            token = store.load()
            if token is None or token.expires_at < time.time() + 60:
                store.save(fetch_new_token())
    """

    def load(self) -> StoredToken | None:
        """The stored token, or ``None`` when there is none (or it cannot be read)."""
        ...

    def save(self, token: StoredToken) -> None:
        """Store ``token`` for the other processes."""
        ...

    def lock(self) -> AbstractContextManager[None]:
        """Hold while refreshing, so that one process at a time fetches a token."""
        ...
