"""Serve the mock for benchmarks: ``python -m bench._serve_mock --port N``.

The mock's own command (``python -m service_api_mock``) binds its listening socket
itself and hands it to uvicorn. A socket made with ``socket.socket(AF_INET,
SOCK_STREAM)`` has ``proto == 0``, and asyncio only switches Nagle's algorithm off
(``TCP_NODELAY``) on accepted sockets whose ``proto`` is ``IPPROTO_TCP``; every
keep-alive request then waits for the client's delayed ACK, about 40 ms on Linux,
which would drown whatever the client does. Here uvicorn binds the port itself, so
the accepted sockets get ``TCP_NODELAY`` and the numbers measure the client. The
application served is the mock's own (:attr:`service_api_mock.MockService.app`);
per-request logging stays off, as it would only measure the terminal.

Example::

    python -m bench._serve_mock --port 8099
"""

from __future__ import annotations

import argparse
import logging
from collections.abc import Sequence

import uvicorn

from service_api_mock import MockConfig, MockService

__all__ = ["main"]


def main(argv: Sequence[str] | None = None) -> None:
    """Serve a default-configured mock on 127.0.0.1:<port> until terminated."""
    parser = argparse.ArgumentParser(prog="python -m bench._serve_mock")
    parser.add_argument("--port", type=int, required=True)
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING)
    service = MockService(MockConfig())
    config = uvicorn.Config(
        service.app,
        host="127.0.0.1",
        port=args.port,
        access_log=False,
        log_config=None,
        log_level="warning",
        lifespan="off",
        proxy_headers=False,
        timeout_graceful_shutdown=2,
    )
    uvicorn.Server(config).run()


if __name__ == "__main__":
    main()
