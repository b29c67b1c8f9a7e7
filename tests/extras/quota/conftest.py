"""The Redis fixtures of tests/extras/quota; they live in quota_redis (type-checked there: mypy
sees one ``conftest`` module per search path, and tests/hostile has one)."""

from quota_redis import redis_db, redis_url

__all__ = ["redis_db", "redis_url"]
