"""The limiters: a fixed rate (pyrate-limiter), and the quota learned from the service's
answers, in one process or once for every process of the integration.

The learned :class:`LearnedQuota` lives in memory for one process. Shared, it lives in the
store as one JSON record, read and written whole in one transaction (SQLite's ``BEGIN
IMMEDIATE``, Redis's ``WATCH``/``MULTI``) for every request granted and every answer: the
rate, the next free slot (one pacing for all processes), a pause, the accepted answers
of the last minute and a heartbeat per process. pyrate-limiter's buckets fix their rates
when built, so the learned rate is paced here; redis-py does the transactions. The
decisions are the record's own methods (no I/O), wherever the record is.

While a store fails, each process goes on alone at its share of the rate, fixed or
learned (the rate over the processes whose heartbeat the store held in the last minute),
and tries the store again every 2 s.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
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
    RedisBucket,
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
#: Seconds between two heartbeats of a process on a fixed shared budget.
HEARTBEAT = 1.0


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
    items = [
        *re.split(r"[;,]", fields.get("ratelimit", "")),
        *re.split(r"[;,]", fields.get("ratelimit-policy", "")),
        # One header each: ratelimit-limit, x-ratelimit-reset, ...
        *(
            f"{name}={fields.get(prefix + name, '')}"
            for prefix in ("ratelimit-", "x-ratelimit-")
            for name in ("limit", "remaining", "reset")
        ),
    ]
    found: dict[str, float] = {}
    for item in items:
        name, _, value = item.strip().partition("=")
        # A bare number is an early draft's limit: "100;w=60".
        with contextlib.suppress(ValueError):
            number = float((value or name).strip('"'))
            if math.isfinite(number):
                found.setdefault(name.lower() if value else "limit", number)
    remaining = found.get("r", found.get("remaining"))
    # Unstated: 0, as good as no reset, no limit, no window.
    reset = found.get("t", found.get("reset", 0.0))
    if reset > 1e9:
        reset -= now
    if remaining is not None and reset > 0:
        if remaining < 1:
            return None, reset
        return remaining / reset, None
    limit = found.get("q", found.get("limit", 0.0))
    window = found.get("w", 0.0)
    if limit > 0 and window > 0:
        return limit / window, None
    return None, None


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
    # Accepted answers per whole second (its number, as a string: a JSON key).
    accepted: dict[str, int] = dataclasses.field(default_factory=dict)
    # The heartbeats: each process's last request or answer.
    seen: dict[str, float] = dataclasses.field(default_factory=dict)

    @classmethod
    def decode(cls, data: bytes | str | None) -> LearnedQuota:
        """The record in ``data`` (a new one for ``None``); ``ValueError`` if it is not one."""
        try:
            quota = cls() if data is None else cls(**json.loads(data))
            # Every field a number; only the rate and the rate on trial may be unknown.
            numbers = [
                quota.next_at,
                quota.paused_until,
                quota.changed_at,
                quota.probe_every,
                quota.first_answer,
                *(rate for rate in (quota.rate, quota.probe_from) if rate is not None),
                *quota.accepted.values(),
                *quota.seen.values(),
                *map(int, quota.accepted),  # whole seconds
            ]
            # isfinite refuses what is not a number (TypeError) or too large (Overflow).
            if not all(map(math.isfinite, numbers)):
                raise TypeError
        except (
            ValueError,
            TypeError,
            AttributeError,
            RecursionError,
            OverflowError,
        ) as exc:
            raise ValueError("not a learned quota") from exc
        return quota

    def encode(self) -> str:
        """The record as JSON."""
        return json.dumps(dataclasses.asdict(self))

    def goodput(self, now: float) -> tuple[int, float]:
        """Answers the service accepted over the last minute, and over how many seconds."""
        self.accepted = {
            second: count
            for second, count in self.accepted.items()
            if int(second) + 1 > now - 60.0
        }
        span = min(60.0, now - (self.first_answer or now))
        return sum(self.accepted.values()), span

    def take(self, now: float, me: str) -> float:
        """``0.0`` and the next slot taken by process ``me``, or the seconds to wait."""
        self.seen[me] = now
        wait = self.paused_until - now
        if wait > 0 or self.rate is None:
            return max(wait, 0.0)
        wait = self.next_at - now
        if wait > 1e-6:
            return wait
        # A whole trial without a 429 while the rate is in use: raise it, on trial.
        accepted, span = self.goodput(now)
        trial_over = now - self.changed_at >= self.probe_every
        if trial_over and accepted >= 0.8 * self.rate * span:
            self.probe_from = self.rate
            self.rate = self.rate * GROWTH
            self.changed_at = now
        self.next_at = max(self.next_at, now) + 1.0 / max(self.rate, MIN_RATE)
        return 0.0

    def learn(
        self,
        now: float,
        status: int,
        *,
        retry_after: float | None = None,
        stated: tuple[float | None, float | None] = (None, None),
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
            self.rate = rate
            self.probe_from = None
            self.changed_at = now
        if status != 429:
            return
        pause = 1.0 if retry_after is None else retry_after
        if now < self.paused_until:  # sent before the pause: already learnt from
            self.paused_until = max(self.paused_until, now + pause)
            return
        if self.probe_from is not None and now - self.changed_at < self.probe_every:
            # The last raise failed: back to the rate that held, and probe less often.
            self.rate = self.probe_from
            self.probe_every = min(self.probe_every * 2, 600.0)
        elif rate is None:
            # What the service accepted, over the last minute and the pause it asks for:
            # after a first burst, the burst over the window it fills. A whole number of
            # seconds was rounded: by half a second, on average.
            accepted, span = self.goodput(now)
            late = pause - 0.5 if pause >= 1 and pause.is_integer() else pause
            self.rate = max(MIN_RATE, BETA * accepted / (span + late))
            self.probe_every = PROBE_EVERY
        self.probe_from = None
        self.changed_at = now
        self.paused_until = now + pause
        self.next_at = now + pause


# ---- where the record is kept ----------------------------------------------------------


class RecordInMemory:
    """The record in this process: alone, or in an outage of the shared store.

    ``quota`` is the record itself here; in a store, the record as last read there.
    """

    errors: stores.Errors = ()
    name = "in-process"

    def __init__(self, quota: LearnedQuota) -> None:
        self.quota = quota

    def update(self, change: Callable[[LearnedQuota], _T]) -> _T:
        """Apply ``change`` to the record (in one transaction, in a store); its result."""
        return change(self.quota)

    def close(self) -> None:
        """Nothing to close."""


class RecordInSQLite(RecordInMemory):
    """The record in a SQLite file (one host): a row, changed in one write transaction."""

    errors = (sqlite3.Error, OSError, ValueError)

    def __init__(self, path: str, key: str) -> None:
        self.path = path
        self.name = repr(str(stores.in_existing_directory(path, "rate store")))
        self._key = stores.digest(key)
        self.quota = LearnedQuota()
        message = f"cannot use {self.name} as a rate store"
        with stores.store_errors(self.errors, message):
            self._db = sqlite3.connect(
                path, timeout=TIMEOUT, isolation_level=None, check_same_thread=False
            )
            # WAL: readers never wait for the writer; a rate lost in a crash is relearnt.
            # Turning it on needs the file alone, and SQLite does not wait for that:
            # processes that start together take turns until TIMEOUT.
            deadline = time.monotonic() + TIMEOUT
            while True:
                try:
                    self._db.executescript(_SCHEMA)
                    break
                except sqlite3.OperationalError:
                    if time.monotonic() > deadline:
                        raise
                    time.sleep(0.01)

    def update(self, change: Callable[[LearnedQuota], _T]) -> _T:
        with self._db:  # commits, or rolls back on an error
            self._db.execute("BEGIN IMMEDIATE")
            # No row yet: a new record.
            (data,) = self._db.execute(
                "SELECT quota FROM learned WHERE key=?", [self._key]
            ).fetchone() or [None]
            quota = LearnedQuota.decode(data)
            result = change(quota)
            self.quota = quota
            self._db.execute(
                "REPLACE INTO learned VALUES (?, ?)", [self._key, quota.encode()]
            )
        return result

    def close(self) -> None:
        self._db.close()


class RecordInRedis(RecordInMemory):
    """The record in Redis (several machines), changed in a ``WATCH``/``MULTI`` transaction
    (done again if another process changed it meanwhile)."""

    def __init__(self, url: str, key: str) -> None:
        import redis

        self.name = f"redis:{stores.redis_location(url)}"
        self._key = f"service-api:learned:{stores.digest(key)}"
        self.errors = (redis.RedisError, ValueError)
        self.connection = stores.redis_connection(url, "SERVICE_API_RATE_STORE")
        self.quota = LearnedQuota()

    def update(self, change: Callable[[LearnedQuota], _T]) -> _T:
        # The result of the last try: redis-py tries again after a WatchError.
        results: list[_T] = []

        def transaction(pipe: redis.client.Pipeline) -> None:
            quota = LearnedQuota.decode(pipe.get(self._key))
            results[:] = [change(quota)]
            self.quota = quota
            pipe.multi()
            # Forgotten after a day unused.
            pipe.set(self._key, quota.encode(), ex=86_400)

        self.connection.transaction(transaction, self._key)
        return results[0]

    def close(self) -> None:
        self.connection.close()


def record_in_store(url: str, key: str) -> RecordInMemory:
    """The record of integration ``key`` in the store ``url`` (``sqlite:///path`` or
    ``redis://...``); a :class:`StoreError` if the store cannot be used.

    Example::

        record = record_in_store("sqlite:///var/tmp/quota.db", "my-client")
        record.update(lambda quota: quota.rate)  # None: nothing learned yet
    """
    path = stores.store_path(url, "rate_store", "sqlite")
    if path is None:
        return RecordInRedis(url, key)
    return RecordInSQLite(path, key)


def next_rejoin(now: float) -> float:
    """When a process alone in an outage tries the store again: the next multiple of
    ``REJOIN`` seconds on the wall clock, the same moment for every process."""
    return (now // REJOIN + 1) * REJOIN


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
        self._lock = threading.Lock()
        # The record the processes share (or this process's own, without a store).
        self._shared = RecordInMemory(LearnedQuota())
        # This process's own record while the store fails; None while it answers.
        self._alone: RecordInMemory | None = None
        self._rejoin_at = 0.0
        self._clock = clock
        if store is not None:
            self._clock = time.time  # the store's: the wall clock
            self._shared = record_in_store(store, key)
        # Read and written once now: unreachable, unwritable or corrupt is an error here.
        message = f"cannot use {self._shared.name} as a rate store"
        with stores.store_errors(self._shared.errors, message):
            self._shared.update(self._join)

    def __repr__(self) -> str:
        where = self._shared.name if self._alone is None else "in-process fallback"
        return f"AdaptiveRateLimiter(store={where}, per_minute={self.per_minute})"

    @property
    def per_minute(self) -> float | None:
        """The rate it allows now, or ``None`` while it has learnt none (in this process;
        from a store: as last read)."""
        rate = (self._alone or self._shared).quota.rate
        return None if rate is None else rate * 60.0

    def try_acquire(self) -> float:
        """``0.0`` and one slot taken, or the seconds until one frees."""
        return self._update(lambda quota: quota.take(self._clock(), self._me))

    def observe(self, response: httpx.Response) -> None:
        """Learn from an answer: a 429 (and its ``Retry-After``), an accepted answer, the
        rate-limit headers."""
        now = self._clock()
        status = response.status_code
        # Read from a 429 only (learn's rule).
        pause = parse_retry_after(response.headers.get("retry-after"))
        stated = stated_quota(response.headers, now)
        self._update(
            lambda quota: quota.learn(now, status, retry_after=pause, stated=stated)
        )

    def close(self) -> None:
        """Close the store's connection."""
        with self._lock:
            self._shared.close()

    def _update(self, change: Callable[[LearnedQuota], _T]) -> _T:
        with self._lock:
            now = self._clock()
            if self._alone is not None and now >= self._rejoin_at:
                self._rejoin(now)
            if self._alone is None:
                try:
                    return self._shared.update(change)
                except self._shared.errors as exc:
                    self._alone = self._fall_back(now, exc)
            return self._alone.update(change)

    def _fall_back(self, now: float, exc: BaseException) -> RecordInMemory:
        known = self._shared.quota
        live = max(1, sum(1 for seen in known.seen.values() if seen > now - LIVE))
        rate = None if known.rate is None else known.rate / live
        shown = "not learned yet" if rate is None else f"{rate * 60:.1f} a minute"
        logger.warning(
            "the shared rate store %s failed (%s); this process goes on alone at its share "
            "of the learned rate (%s, 1 of %d processes) until the store is back",
            self._shared.name,
            type(exc).__name__,
            shown,
            live,
        )
        self._rejoin_at = next_rejoin(now)
        # Spread over one interval: the processes do not all send at the same instant.
        start = now if rate is None else now + random.uniform(0.0, 1.0 / rate)  # noqa: S311
        quota = LearnedQuota(
            rate, start, known.paused_until, changed_at=now, first_answer=now
        )
        return RecordInMemory(quota)

    def _join(self, quota: LearnedQuota) -> None:
        """Leave this process's heartbeat in the shared record."""
        now = self._clock()
        quota.seen[self._me] = now
        if quota.rate is None:  # a store that came back empty: the rate it had
            quota.rate = self._shared.quota.rate
            quota.changed_at = now

    def _rejoin(self, now: float) -> None:
        self._rejoin_at = next_rejoin(now)
        try:
            self._shared.update(self._join)
        except self._shared.errors:
            return
        logger.info("the shared rate store %s is back: shared again", self._shared.name)
        self._alone = None


# ---- a fixed rate --------------------------------------------------------------------


@dataclasses.dataclass
class _Budget:
    """Where a fixed budget is counted: its pyrate-limiter bucket, the lock held from
    reading the clock to writing the entry, its name for messages, and the processes'
    heartbeats beside it, in a learned quota record of their own (only its heartbeats
    used: one format and one kind of transaction for both limiters), whose errors are
    the budget's. In this process, that record is in memory and holds this process only.

    Every bucket is stamped in microseconds (pyrate-limiter reads them as milliseconds,
    its rates in the same unit): a wait rounded up to a whole millisecond would slow a
    sender that waits it out by up to a millisecond a request.
    """

    bucket: AbstractBucket
    lock: AbstractContextManager[object]
    name: str
    heartbeats: RecordInMemory

    def beat(self, me: str, now: float) -> int:
        """Leave process ``me``'s heartbeat; how many processes left one in the last
        minute."""

        def beat(quota: LearnedQuota) -> int:
            quota.seen[me] = now
            quota.seen = {
                p: seen for p, seen in quota.seen.items() if seen > now - LIVE
            }
            return len(quota.seen)

        return self.heartbeats.update(beat)

    def close(self) -> None:
        with contextlib.suppress(*self.heartbeats.errors):
            self.bucket.close()
            self.heartbeats.close()


def _in_memory(per_minute: float, name: str) -> _Budget:
    bucket = StateBucket([Rate(1, max(1, round(60_000_000 / per_minute)))])
    heartbeats = RecordInMemory(LearnedQuota())
    return _Budget(bucket, contextlib.nullcontext(), name, heartbeats)


def _in_store(url: str, per_minute: float, *, key: str, window: float) -> _Budget:
    """The budget of integration ``key`` in the store ``url``; a :class:`StoreError` if it
    cannot be used."""
    # A whole number of requests per window, the window stretched to keep the rate.
    limit = max(1, round(per_minute * window / 60.0))
    rates = [Rate(limit, max(1, math.ceil(limit * 60_000_000 / per_minute)))]
    name = stores.digest(key)
    # A key of their own: the heartbeats of a fixed budget are not a learned quota's.
    heartbeats = record_in_store(url, f"{key}\nfixed budget")
    # filelock's Timeout is an OSError, one of the errors of the file.
    with stores.store_errors(heartbeats.errors, f"cannot use {heartbeats.name}"):
        if isinstance(heartbeats, RecordInSQLite):
            path = heartbeats.path
            bucket = SQLiteBucket.init_from_file(
                rates, f"rate_{name}", path, use_file_lock=True
            )
            return _Budget(bucket, bucket.lock, f"sqlite:{path}", heartbeats)
        assert isinstance(heartbeats, RecordInRedis)
        # One connection for both: the bucket's has nothing to close it.
        connection = heartbeats.connection
        name = f"service-api:rate:{name}"
        bucket = RedisBucket.init(rates, connection, name)
    lock = connection.lock(f"{name}:lock", timeout=TIMEOUT, blocking_timeout=TIMEOUT)
    return _Budget(bucket, lock, heartbeats.name, heartbeats)


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

    Each process leaves a heartbeat in the store every second. If the store fails while in
    use, the limiter logs one warning and counts in memory at its share of the rate:
    ``per_minute`` over the processes whose heartbeat it last read there within a
    minute. Every 2 s it tries the store again, and counts there once it answers.

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
        clock: Clock = time.monotonic,
    ) -> None:
        if not 0 < per_minute < math.inf:
            raise ValueError(
                "rate_limit must be a positive number of requests per minute"
            )
        self.per_minute = float(per_minute)
        self._me = uuid.uuid4().hex[:12]  # this process, in the heartbeats
        self._live = 1  # the processes that left a heartbeat, at the last one
        self._beat_at = 0.0
        self._rejoin_at = math.inf  # in an outage: when to try the store again
        self._leaked_at = 0
        # Reentrant: a request the failing store refused is asked again in memory.
        self._lock = threading.RLock()
        self._clock = clock
        self._budget = _in_memory(self.per_minute, "in-process")
        if store is not None:
            self._clock = time.time
            self._open = functools.partial(
                _in_store, store, self.per_minute, key=key, window=window
            )
            self._budget = self._opened()

    def __repr__(self) -> str:
        return (
            f"RateLimiter(per_minute={self.per_minute:g}, store={self._budget.name!r})"
        )

    def try_acquire(self) -> float:
        """Take the slot for one request if it is free now (return ``0.0``); otherwise
        return the seconds until it frees, without taking it."""
        with self._lock:
            if self._clock() >= self._rejoin_at:
                self._rejoin()
            budget = self._budget
            try:
                wait = self._take(budget)
                if self._clock() - self._beat_at >= HEARTBEAT:
                    self._beat(budget)
            except budget.heartbeats.errors as exc:
                self._fall_back(exc)
                return self.try_acquire()
            return wait

    def observe(self, response: httpx.Response) -> None:
        """A fixed rate learns nothing from answers (the retry waits out a 429)."""

    def close(self) -> None:
        """Close the store's connections."""
        with self._lock:
            self._budget.close()

    def _take(self, budget: _Budget) -> float:
        # The buckets count only entries stamped up to the new one, so one written late
        # with an earlier time would let one request too many into a window.
        with budget.lock:
            now = round(self._clock() * 1_000_000)
            decision = budget.bucket.put_decision(RateItem("service-api", now))
        assert isinstance(decision, Decision)  # a sync bucket
        if not decision.allowed:
            # At least one unit: a zero would make the caller ask again at once.
            return max(decision.retry_after_ms or 0, 1) / 1_000_000
        # pyrate-limiter's Limiter drops expired entries from a background thread; this
        # limiter does it inline, every few seconds, with no thread to manage.
        if now - self._leaked_at >= 5_000_000:
            self._leaked_at = now
            budget.bucket.leak(now)
        return 0.0

    def _beat(self, budget: _Budget) -> None:
        self._beat_at = self._clock()
        self._live = budget.beat(self._me, self._beat_at)

    def _opened(self) -> _Budget:
        """The shared budget, opened, and this process's heartbeat left there: a
        :class:`StoreError` if it cannot be used."""
        budget = self._open()
        message = f"cannot use {budget.name} as a rate store"
        with stores.store_errors(budget.heartbeats.errors, message):
            self._beat(budget)
        return budget

    def _fall_back(self, exc: BaseException) -> None:
        share = self.per_minute / self._live
        logger.warning(
            "the shared rate store %s failed (%s); this process goes on alone at its share "
            "of the budget (%g a minute, 1 of %d processes) until the store is back",
            self._budget.name,
            type(exc).__name__,
            share,
            self._live,
        )
        self._budget.close()
        self._budget = _in_memory(share, "in-process fallback")
        self._rejoin_at = next_rejoin(self._clock())

    def _rejoin(self) -> None:
        self._rejoin_at = next_rejoin(self._clock())
        try:
            budget = self._opened()
        except stores.StoreError:
            return
        logger.info("the shared rate store %s is back: shared again", budget.name)
        self._budget = budget
        self._rejoin_at = math.inf
