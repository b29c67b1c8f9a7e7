"""The request budget and the token shared by processes (``pip install 'service-api[quota]'``).

The client imports this package only when it is asked for: ``Client(rate_limit=N |
"adaptive", rate_store=URL, token_store=URL)`` call :func:`limiter` and
:func:`token_store`. A ``redis://`` store needs ``pip install 'service-api[redis]'``.

* :class:`RateLimiter`: a fixed rate (pyrate-limiter), in this process or in a store
  every process that names it shares: a SQLite file (one host) or Redis (several machines).
* :class:`AdaptiveRateLimiter`: learns the quota from 429 answers (and rate-limit
  headers, when sent), in one process or once for every process sharing a store.
* :class:`FileTokenStore` (and a Redis store): the integration's token, shared.
* :class:`StoreError`: a store that cannot be used.

A rate store that fails mid-run costs one warning: each process goes on alone at its
share of the rate, fixed or learned (the processes are counted from their heartbeats in
the store), and counts in the store again once it answers.

A limiter only says how long a request must wait (under a threading lock, so it works
the same from any thread or event loop); the sync and async transports do the waiting.
A token store lets N worker processes (cron jobs, Celery or Airflow tasks) of one
integration authenticate about once per token lifetime instead of N times: the client
reads a token another process stored before fetching its own, and stores each token it
fetches. Only one process refreshes at a time (the store's lock, checked again once held).

Example::

    from service_api.quota import FileTokenStore

    store = FileTokenStore("/var/tmp/service-api.token", key="my-client")
    client = service_api.Client(token_store=store, rate_limit=90)
"""

from __future__ import annotations

import threading
import weakref

from service_api._protocols import RequestLimiter
from service_api.quota._limiters import AdaptiveRateLimiter, RateLimiter
from service_api.quota._stores import FileTokenStore, StoreError, token_store

__all__ = [
    "AdaptiveRateLimiter",
    "FileTokenStore",
    "RateLimiter",
    "StoreError",
    "limiter",
    "token_store",
]

# One limiter per integration and setting in a process: two ``Client`` objects of the same
# integration (a script that makes one per account, a worker that makes one per task) share
# their budget as children of one client do. Weak, so a limiter lives as long as a client.
_LIMITERS = weakref.WeakValueDictionary[
    tuple[str, object, str | None], RequestLimiter
]()
_LIMITERS_LOCK = threading.Lock()


def limiter(
    rate_limit: float | str | None, rate_store: str | None, *, key: str
) -> RequestLimiter | None:
    """The limiter ``Client(rate_limit=..., rate_store=...)`` uses: the same object for
    every client of one integration (``key``, its client ID) with the same settings in
    this process.

    * ``rate_limit="adaptive"``: :class:`AdaptiveRateLimiter`, in this process or, with
      ``rate_store``, learned once for every process of the integration;
    * with ``rate_store``: one budget in that store at ``rate_limit`` a minute, or 90
      (the public figure of about 100, less 10 %) when it is ``None``;
    * a number: that many requests a minute in this process (:class:`RateLimiter`).

    Example::

        shared = limiter(90, "sqlite:///var/tmp/quota.db", key="my-client")
    """
    if isinstance(rate_limit, str) and rate_limit != "adaptive":
        raise ValueError(
            f"rate_limit must be a number, 'adaptive' or None, not {rate_limit!r}"
        )
    if rate_limit is None and rate_store is None:
        return None
    with _LIMITERS_LOCK:
        found = _LIMITERS.get((key, rate_limit, rate_store))
        if found is not None:
            return found
        if rate_limit == "adaptive":
            found = AdaptiveRateLimiter(rate_store, key=key)
        else:
            per_minute = 90.0 if isinstance(rate_limit, str | None) else rate_limit
            found = RateLimiter(per_minute, store=rate_store, key=key)
        _LIMITERS[key, rate_limit, rate_store] = found
        return found
