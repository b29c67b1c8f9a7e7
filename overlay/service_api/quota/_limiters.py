"""The limiters: a fixed rate (pyrate-limiter), and the quota learned from the service's
answers, in one process or once for every process of the integration.

The learned :class:`LearnedQuota` lives in memory for one process. Shared, it lives in the
store as one JSON record, read and written whole in one transaction (SQLite's ``BEGIN
IMMEDIATE``, Redis's ``WATCH``/``MULTI``) for every request granted and every answer: the
rate, the next free slot (one pacing for all processes), a pause, the accepted answers
of the last minute and a heartbeat per process. pyrate-limiter's buckets fix their rates
when built, so the learned rate is paced here; redis-py does the transactions. The
decisions are the record's own methods (no I/O), wherever the record is.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import logging
import math
import random
import re
import sqlite3
import threading
import time
import uuid
from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, TypeAlias, TypeVar

from pyrate_limiter import (
    AbstractBucket,
    Decision,
    Rate,
    RateItem,
    SQLiteBucket,
    StateBucket,
)

from service_api._retry import parse_retry_after
from service_api.quota import _stores as stores
from service_api.quota._stores import STORE_TIMEOUT as TIMEOUT

if TYPE_CHECKING:
    import httpx
    import redis.client

logger = logging.getLogger("service_api")
_T = TypeVar("_T")
_SCHEMA = """PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;
CREATE TABLE IF NOT EXISTS learned (key TEXT PRIMARY KEY, quota TEXT);"""
Clock: TypeAlias = Callable[[], float]
#: Requests per second a 429 never cuts the rate below (3 a minute).
MIN_RATE = 0.05
#: A 429 cuts the rate to this share of what the service accepted.
BETA = 0.97
#: After this many seconds without a 429 the rate is raised by ``GROWTH`` (a probe).
PROBE_EVERY = 30.0
GROWTH = 1.02
#: A process seen within this many seconds is alive (its share counts in an outage).
LIVE = 60.0
#: Seconds between attempts to reach a failed store again (on the wall clock's
#: multiples, so that the processes of an integration rejoin together).
REJOIN = 2.0


def stated_quota(
    headers: Mapping[str, str], now: float
) -> tuple[float | None, float | None]:
    """What an answer's rate-limit headers state: ``(requests per second, pause)``.

    Reads the IETF ``RateLimit`` / ``RateLimit-Policy`` fields (``q``, ``w``, ``r``,
    ``t``, or an early draft's ``limit``, ``remaining``, ``reset``) and
    ``X-RateLimit-Limit/Remaining/Reset`` (a reset past 10⁹ is a time since the epoch).
    What remains is spread over the time left (or, none left, a pause until the reset);
    else the policy's quota over its window. ``(None, None)`` when nothing is stated.

    Example::

        stated_quota({"RateLimit-Policy": '"default";q=100;w=60'}, time.time())  # (1.66.., None)
    """
    fields = {name.lower(): value for name, value in headers.items()}
    found: dict[str, float] = {}
    for field in ("ratelimit", "ratelimit-policy", "ratelimit-", "x-ratelimit-"):
        parts = [
            p.strip().partition("=") for p in re.split(r"[;,]", fields.get(field, ""))
        ]
        if field.endswith(
            "-"
        ):  # one field each: ratelimit-limit, x-ratelimit-reset, ...
            parts = [
                (n, "=", fields.get(field + n, ""))
                for n in ("limit", "remaining", "reset")
            ]
        for (
            name,
            _,
            value,
        ) in parts:  # a bare number is an early draft's limit: "100;w=60"
            with contextlib.suppress(ValueError):
                if math.isfinite(number := float((value or name).strip('"'))):
                    found.setdefault(name.lower() if value else "limit", number)
    remaining, reset = (
        found.get("r", found.get("remaining")),
        found.get("t", found.get("reset")),
    )
    if reset is not None and reset > 1e9:
        reset -= now
    if remaining is not None and reset is not None and reset > 0:
        return (None, reset) if remaining < 1 else (remaining / reset, None)
    limit, window = found.get("q", found.get("limit")), found.get("w")
    return (
        (limit / window, None)
        if limit and window and limit > 0 < window
        else (None, None)
    )


@dataclasses.dataclass
class LearnedQuota:
    """The integration's learned quota, as a store keeps it (times on the wall clock there).

    Example::

        quota = LearnedQuota()
        quota.take(time.time(), "worker-1")   # 0.0: nothing learned, nothing paced
    """

    rate: float | None = None  # requests per second; None until a 429 or headers
    next_at: float = 0.0  # the next free slot, for every process
    paused_until: float = 0.0  # a Retry-After, for every process
    changed_at: float = 0.0  # the last cut or raise
    probe_from: float | None = None  # the rate before the last raise, while on trial
    probe_every: float = PROBE_EVERY
    first_answer: float = 0.0
    accepted: dict[str, int] = dataclasses.field(
        default_factory=dict
    )  # per whole second
    seen: dict[str, float] = dataclasses.field(
        default_factory=dict
    )  # process: heartbeat

    @classmethod
    def decode(cls, data: bytes | str | None) -> LearnedQuota:
        """The record in ``data`` (a new one for ``None``); ``ValueError`` if it is not one."""
        try:
            quota = cls() if data is None else cls(**json.loads(data))
            fields = [
                *dataclasses.asdict(quota).values(),
                {s: int(s) for s in quota.accepted},
            ]
            numbers = [
                n for f in fields for n in (f.values() if isinstance(f, dict) else [f])
            ]
            if not all(
                isinstance(n, int | float) and math.isfinite(n) for n in numbers if n
            ):
                raise TypeError
        except (ValueError, TypeError, AttributeError, RecursionError) as exc:
            raise ValueError("not a learned quota") from exc
        return quota

    def encode(self) -> str:
        """The record as JSON."""
        return json.dumps(dataclasses.asdict(self))

    def goodput(self, now: float) -> tuple[int, float]:
        """Answers the service accepted over the last minute, and over how many seconds."""
        self.accepted = {
            s: n for s, n in self.accepted.items() if int(s) + 1 > now - 60.0
        }
        return sum(self.accepted.values()), min(60.0, now - (self.first_answer or now))

    def take(self, now: float, me: str) -> float:
        """``0.0`` and the next slot taken by process ``me``, or the seconds to wait."""
        self.seen[me] = now
        if (wait := self.paused_until - now) > 0 or self.rate is None:
            return max(wait, 0.0)
        if (wait := self.next_at - now) > 1e-6:
            return wait
        # A whole trial without a 429 while the rate is in use: raise it, on trial.
        accepted, span = self.goodput(now)
        if (
            now - self.changed_at >= self.probe_every
            and accepted >= 0.8 * self.rate * span
        ):
            self.probe_from, self.rate, self.changed_at = (
                self.rate,
                self.rate * GROWTH,
                now,
            )
        self.next_at = max(self.next_at, now) + 1.0 / max(self.rate, MIN_RATE)
        return 0.0

    def learn(
        self, now: float, status: int, retry_after: float | None, *stated: float | None
    ) -> None:
        """Learn from one answer: its status, its ``Retry-After`` (a 429's) and what its
        headers state (:func:`stated_quota`)."""
        self.first_answer = self.first_answer or now
        if status < 400:
            second = str(int(now))
            self.accepted[second] = self.accepted.get(second, 0) + 1
        self.seen = {p: seen for p, seen in self.seen.items() if seen > now - LIVE}
        rate, pause = stated
        if pause is not None:
            self.paused_until = max(self.paused_until, now + pause)
        if rate is not None:  # the service says: no guessing, no probing
            self.rate, self.probe_from, self.changed_at = rate, None, now
        if status != 429:
            return
        pause = 1.0 if retry_after is None else retry_after
        if now < self.paused_until:  # sent before the pause: already learnt from
            self.paused_until = max(self.paused_until, now + pause)
            return
        if self.probe_from is not None and now - self.changed_at < self.probe_every:
            # The last raise failed: back to the rate that held, and probe less often.
            self.rate, self.probe_every = (
                self.probe_from,
                min(self.probe_every * 2, 600.0),
            )
        elif rate is None:
            # What the service accepted, over the last minute and the pause it asks for:
            # after a first burst, the burst over the window it fills. A whole number of
            # seconds was rounded: by half a second, on average.
            accepted, span = self.goodput(now)
            late = pause - 0.5 if pause >= 1 and pause.is_integer() else pause
            self.rate, self.probe_every = (
                max(MIN_RATE, BETA * accepted / (span + late)),
                PROBE_EVERY,
            )
        self.probe_from, self.changed_at = None, now
        self.paused_until = self.next_at = now + pause


class _MemoryPlace:
    """The record in this process: alone, or in an outage of the shared store."""

    errors: tuple[type[BaseException], ...] = ()

    def __init__(self, quota: LearnedQuota) -> None:
        self.quota, self.name = quota, "in-process"

    def update(self, change: Callable[[LearnedQuota], _T]) -> _T:
        return change(self.quota)

    def close(self) -> None:
        """Nothing to close."""


class _SQLitePlace(_MemoryPlace):
    """The record in a SQLite file (one host): a row, changed in one write transaction."""

    errors = (sqlite3.Error, OSError, ValueError)

    def __init__(self, path: str, key: str) -> None:
        self.name = repr(str(stores.in_existing_directory(path, "rate store")))
        self._key = stores.digest(key)
        with stores.store_errors(
            self.errors, f"cannot use {self.name} as a rate store"
        ):
            self._db = sqlite3.connect(
                path, timeout=TIMEOUT, isolation_level=None, check_same_thread=False
            )
            # WAL: readers never wait for the writer; a rate lost in a crash is relearnt.
            self._db.executescript(_SCHEMA)

    def update(self, change: Callable[[LearnedQuota], _T]) -> _T:
        with self._db:  # commits, or rolls back on an error
            self._db.execute("BEGIN IMMEDIATE")
            found = self._db.execute(
                "SELECT quota FROM learned WHERE key=?", (self._key,)
            )
            quota = LearnedQuota.decode((found.fetchone() or [None])[0])
            result = change(quota)
            self._db.execute(
                "REPLACE INTO learned VALUES (?, ?)", (self._key, quota.encode())
            )
        return result

    def close(self) -> None:
        self._db.close()


class _RedisPlace(_MemoryPlace):
    """The record in Redis (several machines), changed in a ``WATCH``/``MULTI`` transaction
    (done again if another process changed it meanwhile)."""

    def __init__(self, url: str, key: str) -> None:
        import redis

        self.name = f"redis:{stores.redis_location(url)}"
        self._key = f"service-api:learned:{stores.digest(key)}"
        self.errors = (redis.RedisError, ValueError)
        self._redis = stores.redis_connection(url, "SERVICE_API_RATE_STORE")

    def update(self, change: Callable[[LearnedQuota], _T]) -> _T:
        results: list[
            _T
        ] = []  # of the last try: redis-py tries again after a WatchError

        def transaction(pipe: redis.client.Pipeline) -> None:
            quota = LearnedQuota.decode(pipe.get(self._key))
            results[:] = [change(quota)]
            pipe.multi()
            pipe.set(
                self._key, quota.encode(), ex=86_400
            )  # forgotten after a day unused

        self._redis.transaction(transaction, self._key)
        return results[0]

    def close(self) -> None:
        self._redis.close()


class AdaptiveRateLimiter:
    """Learns the service's quota from its answers: in this process, or once for every
    process of the integration in a shared ``store``.

    ``Client(rate_limit="adaptive")`` builds one for the process, ``rate_store=URL``
    (``sqlite:///path`` for one host, ``redis://host:port/db`` for several) one shared
    by every process naming the store (``key``, the client ID, keeps integrations apart).
    Until the service refuses a request, nothing is paced. A 429 seen by any process
    sets the rate for all to 0.97 times what the service accepted over the last
    minute and the ``Retry-After`` it asks (after a first burst: the burst over the
    window it filled), and that ``Retry-After`` pauses all. After 30 s
    without a 429 while the rate is in use, it is raised by 2 % for the whole
    integration, one probe at a time: a 429 on trial goes back to the rate that held and
    halves how often it probes. Rate-limit headers, when an answer has them, set the
    rate instead (IETF ``RateLimit`` and ``RateLimit-Policy``, ``X-RateLimit-*``).

    A store that cannot be used when it is built is a :class:`StoreError`. One that
    fails later leaves each process its share of the last rate (the rate over the
    processes seen in the last minute) with one warning; it rejoins when the store
    answers again (tried every 2 s), bringing the rate back to a store that lost it.

    Example::

        limiter = AdaptiveRateLimiter("sqlite:///var/tmp/quota.db", key="my-client")
        time.sleep(limiter.try_acquire())   # 0.0 when the slot is taken; else ask again
    """

    def __init__(
        self, store: str | None = None, *, key: str = "", clock: Clock = time.monotonic
    ):
        self._me = uuid.uuid4().hex[:12]  # this process, in the heartbeats
        self._clock = (
            clock if store is None else time.time
        )  # the store's: the wall clock
        path = (
            None if store is None else stores.store_path(store, "rate_store", "sqlite")
        )
        self._place: _MemoryPlace = _MemoryPlace(LearnedQuota())
        if store is not None:
            self._place = (
                _RedisPlace(store, key) if path is None else _SQLitePlace(path, key)
            )
        self._known, self._fallback = LearnedQuota(), self._place
        self._rejoin_at, self._lock = 0.0, threading.Lock()

        # Read and written once now: unreachable, unwritable or corrupt is an error here.
        def seen(quota: LearnedQuota) -> None:
            quota.seen[self._me], self._known = self._clock(), quota

        message = f"cannot use {self._place.name} as a rate store"
        with stores.store_errors(self._place.errors, message):
            self._place.update(seen)

    def __repr__(self) -> str:
        where = (
            "in-process fallback"
            if self._fallback is not self._place
            else self._place.name
        )
        return f"AdaptiveRateLimiter(store={where}, per_minute={self.per_minute})"

    @property
    def per_minute(self) -> float | None:
        """The rate it allows now, or ``None`` while it has learnt none (in this process;
        from a store: as last read)."""
        quota = (
            self._fallback.quota if self._fallback is not self._place else self._known
        )
        return None if quota.rate is None else quota.rate * 60.0

    def try_acquire(self) -> float:
        """``0.0`` and one slot taken, or the seconds until one frees."""
        return self._update(lambda q: q.take(self._clock(), self._me))

    def observe(self, response: httpx.Response) -> None:
        """Learn from an answer: a 429 (and its ``Retry-After``), an accepted answer, the
        rate-limit headers."""
        status, now, headers = response.status_code, self._clock(), response.headers
        pause = parse_retry_after(headers.get("retry-after")) if status == 429 else None
        stated = stated_quota(headers, now)
        self._update(lambda q: q.learn(now, status, pause, *stated))

    def close(self) -> None:
        """Close the store's connection."""
        with self._lock:
            self._place.close()

    def _update(self, change: Callable[[LearnedQuota], _T]) -> _T:
        def remembered(quota: LearnedQuota) -> _T:
            result = change(quota)
            self._known = quota
            return result

        with self._lock:
            now = self._clock()
            if self._fallback is not self._place and now >= self._rejoin_at:
                self._rejoin(now)
            if self._fallback is self._place:
                try:
                    return self._place.update(remembered)
                except self._place.errors as exc:
                    self._fall_back(now, exc)
            return self._fallback.update(change)

    def _fall_back(self, now: float, exc: BaseException) -> None:
        known = self._known
        live = max(1, sum(1 for seen in known.seen.values() if seen > now - LIVE))
        rate = None if known.rate is None else known.rate / live
        shown = "not learned yet" if rate is None else f"{rate * 60:.1f} a minute"
        logger.warning(
            "the shared rate store %s failed (%s); this process goes on alone at its share "
            "of the learned rate (%s, 1 of %d processes) until the store is back",
            self._place.name,
            type(exc).__name__,
            shown,
            live,
        )
        # Spread over one interval: the processes do not all send at the same instant.
        start = now + (0.0 if rate is None else random.uniform(0.0, 1.0 / rate))  # noqa: S311
        quota = LearnedQuota(rate, start, known.paused_until, now, first_answer=now)
        self._fallback = _MemoryPlace(quota)
        self._rejoin_at = (now // REJOIN + 1) * REJOIN

    def _rejoin(self, now: float) -> None:
        self._rejoin_at = (now // REJOIN + 1) * REJOIN
        known = self._known

        def join(quota: LearnedQuota) -> None:
            quota.seen[self._me] = now
            if quota.rate is None:  # a store that came back empty: the rate it had
                quota.rate, quota.changed_at = known.rate, now

        try:
            self._place.update(join)
        except self._place.errors:
            return
        logger.info("the shared rate store %s is back: shared again", self._place.name)
        self._fallback = self._place


# ---- a fixed rate --------------------------------------------------------------------

# A rate store: its bucket, the lock held from reading the clock to writing the entry, its
# name for messages and the errors it fails with. Every bucket is stamped in microseconds
# (pyrate-limiter reads them as milliseconds, its rates in the same unit): a wait rounded
# up to a whole millisecond would slow a sender that waits it out by up to a millisecond
# a request.
_RateStore: TypeAlias = tuple[
    AbstractBucket, AbstractContextManager[object], str, stores.Errors
]


def _shared_rate_store(
    url: str, per_minute: float, key: str, window: float
) -> _RateStore:
    # A whole number of requests per window, the window stretched to keep the rate.
    limit = max(1, round(per_minute * window / 60.0))
    rates = [Rate(limit, max(1, math.ceil(limit * 60_000_000 / per_minute)))]
    name = stores.digest(key)
    if (path := stores.store_path(url, "rate_store", "sqlite")) is not None:
        file = str(stores.in_existing_directory(path, "rate store"))
        errors = (sqlite3.Error, OSError)  # filelock's Timeout is an OSError
        with stores.store_errors(errors, f"cannot use {file!r} as a rate store"):
            bucket = SQLiteBucket.init_from_file(
                rates, f"rate_{name}", file, use_file_lock=True
            )
        return bucket, bucket.lock, f"sqlite:{file}", errors
    connection = stores.redis_connection(url, "SERVICE_API_RATE_STORE")
    where = stores.redis_location(url)
    import redis
    from pyrate_limiter import RedisBucket

    name = f"service-api:rate:{name}"
    with stores.store_errors((redis.RedisError,), f"cannot use Redis at {where}"):
        shared = RedisBucket.init(rates, connection, name)
    lock = connection.lock(f"{name}:lock", timeout=TIMEOUT, blocking_timeout=TIMEOUT)
    return shared, lock, f"redis:{where}", (redis.RedisError,)


class RateLimiter:
    """At most ``per_minute`` requests start in any minute, counted in a pyrate-limiter
    bucket.

    Without a ``store``, it counts in this process: GCRA in memory on ``clock``, requests
    spaced ``60 / per_minute`` seconds apart, idle time not saved up. With a ``store``
    URL, it counts where every process naming it shares the count: a sliding window log
    in a SQLite file under a file lock (``sqlite:///path``, one host) or in Redis
    (``redis://host:port/db``, several machines), on the wall clock (machines sharing
    Redis need NTP). Windows of about ``window`` seconds hold ``per_minute * window / 60``
    requests, so requests are spread rather than sent as a minute's burst; ``key`` (the
    integration's client ID) keeps other integrations' counts in the same store apart.
    A store that cannot be used is a :class:`StoreError` here (Redis gets
    2 seconds to answer); a bad rate or URL a ``ValueError``.

    If the store fails while in use, the limiter logs one warning and goes on counting
    in memory at the same rate: the export continues, only the sharing is lost.

    Example::

        limiter = RateLimiter(90, store="sqlite:///var/tmp/quota.db", key="my-client")
        time.sleep(limiter.try_acquire())   # 0.0 when the slot is taken; else ask again
    """

    def __init__(
        self,
        per_minute: float,
        *,
        store: str | None = None,
        key: str = "",
        window: float = 1.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if not 0 < per_minute < math.inf:
            raise ValueError(
                "rate_limit must be a positive number of requests per minute"
            )
        self.per_minute = float(per_minute)
        self._clock = clock if store is None else time.time
        shared = (
            None
            if store is None
            else _shared_rate_store(store, per_minute, key, window)
        )
        self._bucket, self._store_lock, self._store, self._errors = (
            shared or _memory_store(per_minute, "in-process")
        )
        # Reentrant: a call the failing store refused is asked again of the fallback.
        self._lock = threading.RLock()
        self._leaked_at = 0

    def __repr__(self) -> str:
        return f"RateLimiter(per_minute={self.per_minute:g}, store={self._store!r})"

    def try_acquire(self) -> float:
        """Take the slot for one request if it is free now (return ``0.0``); otherwise
        return the seconds until it frees, without taking it."""
        with self._lock:
            try:
                # The buckets count only entries stamped up to the new one, so one written
                # late with an earlier time would let one request too many into a window.
                with self._store_lock:
                    now = round(self._clock() * 1_000_000)
                    decision = self._bucket.put_decision(RateItem("service-api", now))
                assert isinstance(decision, Decision)  # a sync bucket
                # pyrate-limiter's Limiter drops expired entries from a background thread;
                # this limiter does it inline, every few seconds, with no thread to manage.
                if decision.allowed and now - self._leaked_at >= 5_000_000:
                    self._leaked_at = now
                    self._bucket.leak(now)
            except self._errors as exc:
                logger.warning(
                    "the shared rate store %s failed (%s); %g a minute in this process alone",
                    self._store,
                    type(exc).__name__,
                    self.per_minute,
                )
                self._clock, fallback = time.monotonic, "in-process fallback"
                store = _memory_store(self.per_minute, fallback)
                self._bucket, self._store_lock, self._store, self._errors = store
                return self.try_acquire()
            # At least one unit: a zero would make the caller ask again at once.
            return (
                0.0
                if decision.allowed
                else max(decision.retry_after_ms or 0, 1) / 1_000_000
            )

    def observe(self, response: httpx.Response) -> None:
        """A fixed rate learns nothing from answers (the retry waits out a 429)."""

    def close(self) -> None:
        """Close the store's connection."""
        with self._lock, contextlib.suppress(*self._errors):
            self._bucket.close()


def _memory_store(per_minute: float, name: str) -> _RateStore:
    interval = max(1, round(60_000_000 / per_minute))
    return StateBucket([Rate(1, interval)]), contextlib.nullcontext(), name, ()
