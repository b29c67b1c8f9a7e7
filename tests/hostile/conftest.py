"""Serve the hostile app on a free 127.0.0.1 port for the session; reset it per test."""

from __future__ import annotations

import ssl
from collections.abc import AsyncIterator, Iterator

import httpx
import pytest
from hostile_app import HostileServer, HostileState, create_app

from service_api_client import Client
from service_api_mock import serve_asgi


@pytest.fixture(scope="session")
def hostile_server() -> Iterator[HostileServer]:
    state = HostileState()
    with serve_asgi(create_app(state), name="hostile-server") as origin:
        yield HostileServer(f"{origin}/public/v3", state)


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
    client = Client(
        base_url=hostile.base_url, timeout=httpx.Timeout(30.0), verify_ssl=tls_context
    )
    async with client:
        with client:
            yield client
