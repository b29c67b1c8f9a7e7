"""What a client shares with the clients made from it (``with_account()``,
``with_options()``): :class:`SharedResources`, among them the connection pools, by route
(``None`` for direct, else a proxy): one sync pool each, and one async pool each per
event loop.

An async connection belongs to the event loop that opened it: used from another loop it
fails ("Event loop is closed"), left open when its loop closes it leaks its socket. So
each loop gets pools of its own, closed by ``aclose()`` in that loop or when it ends.

The end of a loop is learnt without a task: each loop's pool is held by an async
generator started in that loop, and ``asyncio.run`` finalizes every live async generator
of its loop (``loop.shutdown_asyncgens()``, after cancelling the tasks, before closing the
loop), which runs the generator's ``finally``, closing the pool, inside its own loop.
The map from loop to pool is a plain ``dict``, not a weak one: the generator holds its
loop (asyncio keeps the loop's finalizer on it), so entries leave by hand: at the loop's
end, on ``aclose()``, or (a loop closed by hand) on ``close()`` or at the next new loop.
"""

from __future__ import annotations

import asyncio
import functools
import threading
import urllib.request
from collections.abc import AsyncGenerator, Callable, Hashable
from typing import Any

import httpx

from service_api._transport import GuardedTransport
from service_api_client.drift import DriftLog

_Entry = tuple[httpx.AsyncBaseTransport, AsyncGenerator[None]]
#: The ``httpx_args`` that configure a transport rather than a client.
_POOL_ARGS = ("verify", "cert", "trust_env", "http1", "http2", "limits")


def proxy_routes(proxy: Any, trust_env: bool) -> dict[str, httpx.Proxy | None]:
    """URL pattern to proxy (``None``: direct), as httpx routes them: ``proxy`` for every
    URL, else the environment's ``*_PROXY`` and ``NO_PROXY`` if ``trust_env``.

    Example::

        proxy_routes("http://proxy:3128", True)   # {"all://": Proxy("http://proxy:3128")}
    """
    if proxy is not None:
        return {
            "all://": proxy if isinstance(proxy, httpx.Proxy) else httpx.Proxy(proxy)
        }
    routes: dict[str, httpx.Proxy | None] = {}
    found = urllib.request.getproxies() if trust_env else {}
    for scheme, url in found.items():
        # A variable holding a host only is http://.
        if scheme in ("http", "https", "all"):
            routes[f"{scheme}://"] = httpx.Proxy(
                url if "://" in url else f"http://{url}"
            )
    bypassed = set(filter(None, found.get("no", "").replace(" ", "").split(",")))
    for host in bypassed:
        # A domain covers its subdomains; an IPv6 address is in brackets.
        pattern = f"all://[{host}]" if ":" in host else f"all://*{host}"
        routes[host if "://" in host else pattern] = None
    return {} if "*" in bypassed else routes


class LoopPools(httpx.AsyncBaseTransport):
    """One async transport per event loop, built by ``build()`` on first use there."""

    def __init__(self, build: Callable[..., httpx.AsyncBaseTransport]) -> None:
        self._build = build
        self._open: dict[asyncio.AbstractEventLoop, _Entry] = {}
        self._lock = threading.Lock()

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        """Send ``request`` through the running loop's transport."""
        loop = asyncio.get_running_loop()
        # Every request asks: no lock once the entry exists.
        entry = self._open.get(loop)
        if entry is None:
            transport = self._build()
            holder = self._close_at_end(transport)
            # Started in this loop: it is finalized when the loop ends.
            await anext(holder)
            self.drop_closed()
            entry = (transport, holder)
            with self._lock:
                self._open[loop] = entry
        return await entry[0].handle_async_request(request)

    async def _close_at_end(
        self, transport: httpx.AsyncBaseTransport
    ) -> AsyncGenerator[None]:
        try:
            yield
        finally:
            loop = asyncio.get_running_loop()
            with self._lock:
                # The loop ends: forget its entry, unless aclose() already replaced it.
                if transport in self._open.get(loop, ()):
                    del self._open[loop]
            await transport.aclose()

    async def aclose(self) -> None:
        """Close the running loop's transport now (built anew if needed)."""
        with self._lock:
            entry = self._open.pop(asyncio.get_running_loop(), None)
        if entry is not None:
            _, holder = entry
            await holder.aclose()  # its ``finally`` closes the transport

    def drop_closed(self) -> None:
        """Forget the transports of loops closed by hand (``asyncio.run`` finalizes its
        generators, ``loop.close()`` does not): their sockets went with their loop."""
        with self._lock:
            for loop in [k for k in self._open if k.is_closed()]:
                del self._open[loop]


class SharedResources:
    """What a client shares with the clients made from it: the token flow (``auth``),
    the guard's settings (``guard_args``: the origin, the size bound, the rate limiter
    and the user agent of :class:`~service_api._transport.GuardedTransport`), the
    arguments of its httpx clients, whether the service ever ``answered`` one of them,
    and the connection pools, by route: one sync pool each, one async pool each per
    event loop."""

    #: Called with every answer whose body the client has read (``Client(observe=)``).
    observe: Any = None
    #: Where the answers differ from the spec (``Client(on_drift=, check_drift=)``).
    drift: DriftLog

    def __init__(self, auth: Any, args: dict[str, Any], **guard_args: Any) -> None:
        """``args`` are the checked ``httpx_args``, for every httpx client made here;
        ``guard_args`` configure :class:`GuardedTransport`."""
        self.auth = auth
        self.transport = args.pop("transport", None)  # the user's, if any
        #: Set at the first answer of the service, whatever its status.
        self.answered = threading.Event()
        self.guard_args = {
            "base_url": httpx.URL(auth.base_url),
            "answered": self.answered,
            **guard_args,
        }
        # The user's mounts sit behind the same guard (theirs to close).
        mounts = args.pop("mounts", None) or {}
        self.mounts = {
            pattern: None if mount is None else self.guarded(mount)
            for pattern, mount in mounts.items()
        }
        self.pool_args = {name: args[name] for name in _POOL_ARGS if name in args}
        # Read once, as httpx reads the environment once per client.
        proxy = args.pop("proxy", None)
        self.proxies = proxy_routes(proxy, args.get("trust_env", True))
        self.args = {"auth": auth, **args}
        self.sync_pools: dict[Hashable, httpx.BaseTransport] = {}
        self.loop_pools: dict[Hashable, LoopPools] = {}

    def client_args(self, pool_class: type) -> dict[str, Any]:
        """The arguments of an httpx client, but base URL, headers and timeout: the auth,
        the ``httpx_args``, and as ``transport`` and ``mounts`` the user's transport, or
        the pools of each route httpx would take (direct, ``proxy``, or the environment's
        proxies), then the user's mounts; each behind the guard."""
        if self.transport is not None:  # httpx ignores the environment's proxies then
            transport = self.guarded(self.transport)
            return self.args | {"transport": transport, "mounts": self.mounts}
        # A pattern without a proxy (NO_PROXY) is served by the direct pool.
        mounts = {
            pattern: self.pool(pool_class, proxy)
            for pattern, proxy in self.proxies.items()
        }
        transport = self.pool(pool_class, None)
        return self.args | {"transport": transport, "mounts": mounts | self.mounts}

    def guarded(self, inner: Any) -> GuardedTransport:
        """``inner`` (a sync or async transport) behind the guard."""
        return GuardedTransport(inner, **self.guard_args)

    def pool(self, pool_class: type, proxy: httpx.Proxy | None) -> GuardedTransport:
        """The guarded pool of the route, direct or through ``proxy``: sync, or per loop for
        ``httpx.AsyncHTTPTransport``; built with the transport's ``httpx_args`` the first
        time (building costs an SSL context, too much for each client made)."""
        build = functools.partial(pool_class, proxy=proxy, **self.pool_args)
        route = None if proxy is None else (proxy.url, proxy.auth)
        if issubclass(pool_class, httpx.AsyncBaseTransport):
            return self.guarded(self.loop_pools.setdefault(route, LoopPools(build)))
        pool = self.sync_pools.get(route) or self.sync_pools.setdefault(route, build())
        return self.guarded(pool)

    def close(self) -> None:
        """Close the sync pools (a call made afterwards opens them again) and the user's
        transport, as ``httpx.Client.close`` does. An async pool can only be closed in its
        own loop: by :meth:`aclose` there, or at its end."""
        for pool in list(self.sync_pools.values()):
            pool.close()
        for pools in list(self.loop_pools.values()):
            pools.drop_closed()
        if isinstance(self.transport, httpx.BaseTransport):
            self.transport.close()

    async def aclose(self) -> None:
        """As :meth:`close`, closing the running loop's pools now."""
        for pools in list(self.loop_pools.values()):
            await pools.aclose()
        self.close()
