"""A real ``redis-server`` for the tests, on a free loopback port (no fake in its place)."""

import contextlib
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis

REDIS_MISSING = (
    "redis-server is not installed (make .venv/.installed installs Debian's package "
    "with apt-get when it runs as root)"
)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _wait_until_ready(
    url: str, process: subprocess.Popen[bytes], deadline: float
) -> None:
    while True:
        if process.poll() is not None:
            raise RuntimeError(
                f"redis-server exited with {process.returncode} at start"
            )
        try:
            with redis.Redis.from_url(url, socket_connect_timeout=0.2) as connection:
                connection.ping()
            return
        except redis.ConnectionError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.02)  # polling the port: nothing to wait on but the server


@contextlib.contextmanager
def redis_server(directory: Path, port: int = 0) -> Iterator[str]:
    """Start ``redis-server`` on a free loopback port, or ``port`` (no persistence); stop
    it on exit."""
    executable = shutil.which("redis-server")
    if executable is None:
        pytest.skip(REDIS_MISSING)
    port = port or _free_port()
    options = {
        "--bind": "127.0.0.1",
        "--port": str(port),
        "--save": "",
        "--appendonly": "no",
        "--dir": str(directory),
    }
    command = [executable]
    for option, value in options.items():
        command += [option, value]
    process = subprocess.Popen(
        command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    url = f"redis://127.0.0.1:{port}/0"
    try:
        _wait_until_ready(url, process, time.monotonic() + 10.0)
        yield url
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@pytest.fixture(scope="session")
def redis_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """``redis://127.0.0.1:<port>/0`` of a server for the whole session."""
    with redis_server(tmp_path_factory.mktemp("redis")) as url:
        yield url


@pytest.fixture
def redis_db(redis_url: str) -> str:
    """The session's Redis, emptied before the test."""
    with redis.Redis.from_url(redis_url) as connection:
        connection.flushdb()
    return redis_url
