"""A throw-away ``redis-server`` for the quota cases, on a free loopback port; stopped and
started again, empty, on the same port, as a store that fails and comes back.

Example::

    server = RedisServer.installed(Path("/tmp/work"))
    if server is not None:
        server.start()
        print(server.url)  # redis://127.0.0.1:<port>/0
        server.stop()
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
from pathlib import Path

import redis

__all__ = ["RedisServer"]


class RedisServer:
    """``redis-server`` without persistence, bound to 127.0.0.1 on a port chosen once.

    Example::

        server = RedisServer("/usr/bin/redis-server", Path("/tmp/work"))
    """

    def __init__(self, executable: str, directory: Path) -> None:
        self._executable = executable
        self._directory = directory
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            self.port: int = sock.getsockname()[1]
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self._process: subprocess.Popen[bytes] | None = None

    @classmethod
    def installed(cls, directory: Path) -> RedisServer | None:
        """A server to start in ``directory``, or ``None`` if redis-server is not
        installed."""
        executable = shutil.which("redis-server")
        return None if executable is None else cls(executable, directory)

    def start(self) -> None:
        """Start it (empty) and wait until it answers; a ``RuntimeError`` after 10 s."""
        options = {
            "--bind": "127.0.0.1",
            "--port": str(self.port),
            "--save": "",
            "--appendonly": "no",
            "--dir": str(self._directory),
        }
        command = [self._executable]
        for option, value in options.items():
            command += [option, value]
        self._process = subprocess.Popen(
            command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        deadline = time.monotonic() + 10
        while not self._answers():
            if time.monotonic() > deadline or self._process.poll() is not None:
                self.stop()
                raise RuntimeError(f"redis-server did not start on port {self.port}")
            time.sleep(0.02)  # polling the port: nothing to wait on but the server

    def stop(self) -> None:
        """Stop it, if it runs."""
        process = self._process
        self._process = None
        if process is not None:
            process.terminate()
            process.wait(timeout=10)

    def flush(self) -> None:
        """Forget everything it holds."""
        with redis.Redis.from_url(self.url) as connection:
            connection.flushdb()

    def _answers(self) -> bool:
        try:
            with redis.Redis.from_url(
                self.url, socket_connect_timeout=0.2
            ) as connection:
                connection.ping()
        except redis.ConnectionError:
            return False
        return True
