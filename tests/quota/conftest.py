"""A real Redis server on a free loopback port, started and stopped by the fixture."""

from collections.abc import Iterator

import pytest
import redis
from quota_redis import redis_server


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
