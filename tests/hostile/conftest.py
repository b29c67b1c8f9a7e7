"""Serve the hostile app on a free 127.0.0.1 port for the session; reset it per test."""

from __future__ import annotations

import socket
import ssl
import threading
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass

import httpx
import pytest
import uvicorn
from hostile_app import HostileState, create_app

from service_api_client import Client


@dataclass
class HostileServer:
    """The running hostile server: its base URL and its state."""

    base_url: str
    state: HostileState


@pytest.fixture(scope="session")
def hostile_server() -> Iterator[HostileServer]:
    state = HostileState()
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        config = uvicorn.Config(create_app(state), log_level="warning", lifespan="off")
        server = uvicorn.Server(config)
        thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
        thread.start()
        deadline = time.monotonic() + 10
        while not server.started:
            if time.monotonic() > deadline or not thread.is_alive():
                raise RuntimeError("the hostile server did not start")
            time.sleep(0.01)
        port = sock.getsockname()[1]
        try:
            yield HostileServer(f"http://127.0.0.1:{port}/public/v3", state)
        finally:
            server.should_exit = True
            thread.join(timeout=10)


@pytest.fixture
def hostile(hostile_server: HostileServer) -> HostileServer:
    """The hostile server, reset to honest behaviour with 25 records."""
    hostile_server.state.reset()
    return hostile_server


@pytest.fixture(scope="session")
def tls_context() -> ssl.SSLContext:
    """One TLS context for every client: loading the CA bundle is the slow part of
    creating an httpx client, and the loopback server never uses it."""
    return ssl.create_default_context()


@pytest.fixture
async def hostile_client(
    hostile: HostileServer, tls_context: ssl.SSLContext
) -> AsyncIterator[Client]:
    """A plain generated client of the hostile server (it asks for no credentials),
    its sync and async connection pools both closed at the end."""
    client = Client(base_url=hostile.base_url, timeout=httpx.Timeout(30.0), verify_ssl=tls_context)
    async with client:
        with client:
            yield client
