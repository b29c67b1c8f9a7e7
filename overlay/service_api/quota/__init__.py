"""The request budget and the token shared by processes (``pip install 'service-api[quota]'``).

The client imports this package only when it is asked for: ``Client(rate_limit=N |
"adaptive", rate_store=URL, token_store=URL)`` call :func:`limiter` and
:func:`token_store`. A ``redis://`` store needs ``pip install 'service-api[redis]'``.

* :class:`RateLimiter`: a fixed rate (pyrate-limiter), in this process or in a store
  every process that names it shares: a SQLite file (one host) or Redis (several machines).
* :class:`AdaptiveRateLimiter`: learns the quota from 429 answers, in one process.
* :class:`FileTokenStore` (and a Redis store): the integration's token, shared.
* :class:`StoreError`: a store that cannot be used.

Example::

    from service_api.quota import FileTokenStore

    store = FileTokenStore("/var/tmp/service-api.token", key="my-client")
    client = service_api.Client(token_store=store, rate_limit=90)
"""

from service_api.quota._limiter import AdaptiveRateLimiter, RateLimiter, limiter
from service_api.quota._stores import FileTokenStore, StoreError, token_store

__all__ = [
    "AdaptiveRateLimiter",
    "FileTokenStore",
    "RateLimiter",
    "StoreError",
    "limiter",
    "token_store",
]
