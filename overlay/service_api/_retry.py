"""When to retry a request and how long to wait: pure decisions, no I/O.

The transports call these functions and do the sleeping themselves, so the sync
and async paths share every decision and differ only in ``time.sleep`` versus
``asyncio.sleep``.
"""

from __future__ import annotations

import datetime
import email.utils
import math
import random

import attrs
import httpx

#: Statuses that say "try again later" without implying the request did anything.
RETRY_STATUSES: frozenset[int] = frozenset({429, 502, 503, 504})
#: Methods that can be sent twice without a second effect.
IDEMPOTENT_METHODS: frozenset[str] = frozenset({"GET", "HEAD", "OPTIONS"})


@attrs.frozen(kw_only=True)
class RetryPolicy:
    """How many times, and after how long, a failed idempotent request is sent again.

    Retried: connection errors, timeouts and the statuses in ``retry_statuses``
    (429, 502, 503, 504), for GET/HEAD requests and ``POST /authenticate`` only.
    The wait is exponential with full jitter (a uniform draw between 0 and
    ``min(max_delay, initial_delay * 2 ** attempt)``), or exactly what the
    server's ``Retry-After`` asks for when it is at most ``max_retry_after``;
    a longer ``Retry-After`` is not waited for: the error is raised at once.

    Attributes:
        max_retries: retries after the first attempt (so ``max_retries + 1`` attempts).
        initial_delay: base of the exponential backoff, in seconds.
        max_delay: cap of one backoff delay, in seconds.
        jitter: draw the delay uniformly in ``[0, backoff]`` (full jitter).
        max_retry_after: longest ``Retry-After`` honoured, in seconds.
        retry_statuses: statuses that are retried.

    Example::

        policy = service_api.RetryPolicy(max_retries=4, max_delay=2.0)
        client = service_api.Client(url, client_id, secret, retry=policy)
    """

    max_retries: int = attrs.field(default=2, validator=attrs.validators.ge(0))
    initial_delay: float = attrs.field(default=0.5, validator=attrs.validators.ge(0))
    max_delay: float = attrs.field(default=8.0, validator=attrs.validators.ge(0))
    jitter: bool = True
    max_retry_after: float = attrs.field(default=60.0, validator=attrs.validators.ge(0))
    retry_statuses: frozenset[int] = attrs.field(default=RETRY_STATUSES, converter=frozenset)


def is_retryable_request(request: httpx.Request, *, token_request: bool = False) -> bool:
    """True when sending ``request`` twice is harmless (GET, HEAD, or the token request).

    Example::

        is_retryable_request(httpx.Request("GET", "https://h/x"))   # True
    """
    return token_request or request.method.upper() in IDEMPOTENT_METHODS


def should_retry(
    policy: RetryPolicy,
    *,
    attempt: int,
    retryable_request: bool,
    status_code: int | None = None,
    error: Exception | None = None,
) -> bool:
    """Whether attempt number ``attempt`` (0 for the first) may be followed by another.

    Pass the response's ``status_code`` or the transport ``error`` it raised.

    Example::

        should_retry(RetryPolicy(), attempt=0, retryable_request=True, status_code=503)  # True
    """
    if not retryable_request or attempt >= policy.max_retries:
        return False
    if error is not None:
        return isinstance(error, httpx.TransportError)
    return status_code is not None and status_code in policy.retry_statuses


def parse_retry_after(value: str | None, *, now: datetime.datetime | None = None) -> float | None:
    """Seconds to wait from a ``Retry-After`` value: delta-seconds or an HTTP date.

    Returns ``None`` for a missing or unreadable value; a date in the past gives 0.

    Example::

        parse_retry_after("2")                                # 2.0
        parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT")    # 0.0 (in the past)
    """
    if value is None:
        return None
    text = value.strip()
    if not text:
        return None
    try:
        seconds = float(text)
    except ValueError:
        pass
    else:
        return seconds if math.isfinite(seconds) and seconds >= 0 else None
    try:
        when = email.utils.parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=datetime.UTC)
    now = now or datetime.datetime.now(datetime.UTC)
    return max(0.0, (when - now).total_seconds())


def backoff_delay(policy: RetryPolicy, attempt: int, rng: random.Random | None = None) -> float:
    """The exponential backoff before retry number ``attempt + 1``, with full jitter if enabled.

    Example::

        backoff_delay(RetryPolicy(jitter=False), 2)   # 2.0 (0.5 * 2 ** 2)
    """
    ceiling = min(policy.max_delay, policy.initial_delay * 2.0 ** min(attempt, 62))
    if not policy.jitter:
        return ceiling
    return (rng or random).uniform(0.0, ceiling)


def compute_delay(
    policy: RetryPolicy,
    attempt: int,
    retry_after: float | None = None,
    rng: random.Random | None = None,
) -> float | None:
    """Seconds to wait before the next attempt, or ``None`` if the server asks for too long.

    ``Retry-After`` wins over the backoff when present; beyond
    ``policy.max_retry_after`` the request is not retried.

    Example::

        compute_delay(RetryPolicy(), 0, retry_after=3.0)     # 3.0
        compute_delay(RetryPolicy(), 0, retry_after=3600.0)  # None
    """
    if retry_after is not None:
        return retry_after if retry_after <= policy.max_retry_after else None
    return backoff_delay(policy, attempt, rng)


@attrs.define
class _RetrySleepSwitch:
    """Process-wide switch read by the transports before every retry sleep.

    Tests of code built on the client turn sleeping off through
    :mod:`service_api.testing`; the delays are then recorded instead of waited.
    """

    sleep: bool = True
    recorded: list[float] = attrs.field(factory=list)

    def wait_for(self, delay: float) -> float:
        """Seconds the caller should really sleep for a retry delay of ``delay``."""
        if self.sleep:
            return delay
        self.recorded.append(delay)
        return 0.0


RETRY_SLEEP = _RetrySleepSwitch()
