"""Serving a :class:`MockService`, or any ASGI app, with uvicorn on a loopback port."""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

import attrs
import uvicorn
from starlette.types import ASGIApp

from ._app import API_PREFIX
from ._config import MockConfig
from ._service import MockService

__all__ = ["MOCK_OPTIONS", "RunningMock", "running_mock", "serve_asgi"]

_START_TIMEOUT = 10.0
_STOP_TIMEOUT = 10.0


@attrs.frozen
class RunningMock:
    """A mock being served: where to reach it and the handle to control it.

    Example::

        with running_mock() as server:
            httpx.get(f"{server.base_url}/shipments")  # 401: no token
            server.service.count("listShipments", 401)
    """

    base_url: str
    """The public API's base address, such as ``http://127.0.0.1:53187/public/v3``."""
    service: MockService
    """The handle on the served mock."""

    @property
    def origin(self) -> str:
        """Scheme, host and port, where the control API lives under ``/__mock__/``.

        Example::

            httpx.get(f"{server.origin}/__mock__/counts")
        """
        return self.base_url.removesuffix(API_PREFIX)


# The uvicorn settings the mock runs with, by the command and by running_mock() alike.
MOCK_OPTIONS: dict[str, Any] = {
    # The mock logs one line per request itself; uvicorn's access log would double it.
    "access_log": False,
    "log_config": None,
    "lifespan": "off",
    # Links must reflect the request as sent, not headers a fuzzer may forge.
    "proxy_headers": False,
    "timeout_graceful_shutdown": 2,
}


@contextlib.contextmanager
def serve_asgi(
    app: ASGIApp, *, name: str = "asgi-app", **uvicorn_options: Any
) -> Iterator[str]:
    """Serve any ASGI app with uvicorn on ``127.0.0.1`` and a free port, in a background
    thread; yields its origin (``http://127.0.0.1:<port>``).

    The server is stopped, its thread joined and its socket closed on exit. Options go to
    ``uvicorn.Config`` (the defaults: warnings only, no lifespan). Handy for a test server
    of your own beside the mock, such as one that misbehaves on purpose.

    Example::

        with serve_asgi(Starlette(routes=[...])) as origin:
            httpx.get(f"{origin}/hello")
    """
    options: dict[str, Any] = {
        "log_level": "warning",
        "lifespan": "off",
        "timeout_graceful_shutdown": 2,
        **uvicorn_options,
    }
    # IPPROTO_TCP, not the default 0: asyncio sets TCP_NODELAY only on accepted sockets
    # whose proto says TCP, and without it every keep-alive answer waits ~40 ms for the
    # client's delayed ACK.
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
        server = uvicorn.Server(
            uvicorn.Config(app, host="127.0.0.1", port=port, **options)
        )
        thread = threading.Thread(
            target=server.run,
            kwargs={"sockets": [sock]},
            name=f"{name}:{port}",
            daemon=True,
        )
        thread.start()
        try:
            deadline = time.monotonic() + _START_TIMEOUT
            while not server.started:
                if not thread.is_alive():
                    raise RuntimeError(f"{name} stopped while starting")
                if time.monotonic() > deadline:
                    raise TimeoutError(f"{name} did not start in time")
                time.sleep(0.005)
            yield f"http://127.0.0.1:{port}"
        finally:
            server.should_exit = True
            thread.join(_STOP_TIMEOUT)
            if thread.is_alive():
                raise RuntimeError(f"{name} did not stop in time")
    finally:
        sock.close()


@contextlib.contextmanager
def running_mock(
    service: MockService | None = None, **config_overrides: Any
) -> Iterator[RunningMock]:
    """Serve a mock on ``127.0.0.1`` and a free port in a background thread.

    Pass a ``service`` to serve it, or configuration overrides to build a new one. The
    server is stopped, its thread joined and its socket closed on exit.

    Example::

        with running_mock(records=7, token_ttl=2) as server:
            print(server.base_url)  # http://127.0.0.1:<port>/public/v3
    """
    if service is None:
        service = MockService(MockConfig(**config_overrides))
    elif config_overrides:
        raise TypeError("pass either a service or configuration overrides, not both")
    with serve_asgi(service.app, name="service-api-mock", **MOCK_OPTIONS) as origin:
        yield RunningMock(base_url=f"{origin}{API_PREFIX}", service=service)
