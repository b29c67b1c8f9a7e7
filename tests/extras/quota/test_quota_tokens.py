"""The token shared by the processes of one integration: a 0600 file or Redis."""

import multiprocessing
import os
import stat
import time
from pathlib import Path

import pytest
import redis
from quota_workers import process_pool, refresh_once

from service_api import StoredToken
from service_api.quota import FileTokenStore, StoreError, token_store


@pytest.fixture(params=["file", "redis"])
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "file":
        return f"file://{tmp_path / 'token.json'}"
    url: str = request.getfixturevalue("redis_db")
    return url


def test_a_saved_token_is_loaded_by_another_store_object(store_url: str) -> None:
    first = token_store(store_url, key="demo-client")
    assert first.load() is None
    first.save(StoredToken("tok-abc", time.time() + 600))
    loaded = token_store(store_url, key="demo-client").load()
    assert loaded is not None
    assert loaded.access_token == "tok-abc"
    assert loaded.expires_at == pytest.approx(time.time() + 600, abs=5)
    assert "tok-abc" not in repr(loaded) + repr(first)


def test_another_integrations_token_is_not_used(store_url: str) -> None:
    token_store(store_url, key="other-client").save(
        StoredToken("theirs", time.time() + 600)
    )
    assert token_store(store_url, key="demo-client").load() is None
    assert token_store(store_url, key="other-client").load() is not None


def test_one_process_of_eight_fetches_the_token(store_url: str, redis_db: str) -> None:
    context = multiprocessing.get_context("spawn")
    with (
        context.Manager() as manager,
        process_pool(8) as pool,
    ):
        start = manager.Barrier(8)
        futures = [
            pool.submit(refresh_once, store_url, redis_db, start) for _ in range(8)
        ]
        tokens = [f.result(timeout=60) for f in futures]
    with redis.Redis.from_url(redis_db) as connection:
        assert connection.get("fetches") == b"1"
    assert set(tokens) == {"token-1"}


def test_the_token_file_is_private(tmp_path: Path) -> None:
    path = tmp_path / "token.json"
    path.write_text("{}")
    path.chmod(0o644)
    store = FileTokenStore(path, key="demo-client")
    with pytest.raises(StoreError, match="open to other users"):
        store.load()
    store.save(StoredToken("tok", time.time() + 600))  # replaced by a private file
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert store.load() is not None
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".token.json")]


@pytest.mark.parametrize(
    "content",
    [
        b"",
        b"not json",
        b"[]",
        b'{"access_token": 5, "expires_at": 1}',
        b'{"expires_at": "x"}',
        b'{"access_token": "tok", "expires_at": 1e999}',
        b'{"access_token": "tok", "expires_at": 1' + b"0" * 400 + b"}",
    ],
)
def test_a_corrupt_file_is_a_store_error_without_its_content(
    tmp_path: Path, content: bytes
) -> None:
    path = tmp_path / "token.json"
    path.write_bytes(content)
    path.chmod(0o600)
    with pytest.raises(StoreError, match="not a token") as caught:
        FileTokenStore(path, key="demo-client").load()
    if content:
        assert content.decode() not in str(caught.value)


def test_corrupt_redis_content_is_a_store_error(redis_db: str) -> None:
    store = token_store(redis_db, key="demo-client")
    store.save(StoredToken("tok", time.time() + 600))
    with redis.Redis.from_url(redis_db) as connection:
        (name,) = connection.keys("service-api:token:*")
        connection.set(name, b"\xff\xfe garbage")
    with pytest.raises(StoreError, match="not a token"):
        store.load()


def test_a_held_lock_is_a_store_error_after_the_timeout(tmp_path: Path) -> None:
    path = tmp_path / "token.json"
    holder = FileTokenStore(path, key="demo-client")
    waiter = FileTokenStore(path, key="demo-client", lock_timeout=0.2)
    with holder.lock():
        started = time.monotonic()
        with pytest.raises(StoreError, match="cannot lock"), waiter.lock():
            pass
        assert time.monotonic() - started < 5


@pytest.mark.parametrize(
    ("url", "error"),
    [
        ("ftp://h/x", ValueError),
        ("file://otherhost/x", ValueError),
        ("redis://:hunter2@127.0.0.1:1/0", StoreError),
    ],
)
def test_bad_token_store_urls(url: str, error: type[Exception]) -> None:
    with pytest.raises(error) as caught:
        token_store(url, key="k")
    assert "hunter2" not in str(caught.value)


def test_a_token_file_in_a_missing_directory_is_a_store_error(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="does not exist"):
        token_store(f"file://{tmp_path}/none/token.json", key="k")
