"""When to retry and how long to wait: pure decisions, no I/O (the table in
docs/guides/errors.md, "Retries").

The client's retry loop sits above authentication and does the sleeping itself, so
the sync and async paths share every decision and differ only in the sleep.
"""

from __future__ import annotations

import contextlib
import datetime
import email.utils
import math
import random
from typing import Any

import attrs
import httpx

#: Statuses that say "try again later" without implying the request did anything.
RETRY_STATUSES = frozenset({429, 502, 503, 504})
#: Methods that can be sent twice without a second effect (idempotent, RFC 9110 9.2.2).
IDEMPOTENT_METHODS = frozenset({"GET", "HEAD", "OPTIONS", "PUT", "DELETE"})
#: Failures that prove nothing was sent: no connection was made.
UNSENT_ERRORS = (httpx.ConnectError, httpx.ConnectTimeout)


#: The validator of every count and delay of a policy (ints and floats alike).
_NOT_NEGATIVE: Any = attrs.validators.ge(0)


@attrs.frozen(kw_only=True)
class RetryPolicy:
    """How many times, and after how long, a failed idempotent request is sent again.

    Retried: connection errors and timeouts (not TLS failures) and ``retry_statuses``,
    for GET/HEAD/OPTIONS/PUT/DELETE and the token request; a POST or PATCH only where it
    cannot have taken effect (:func:`may_send_again`). The wait is exponential with full
    jitter, or the server's ``Retry-After`` when it is at most ``max_retry_after``
    (a longer one is not waited for: the error is raised at once).

    The defaults ride out a bad half-minute: 8 retries, waits capped at 0.25 s, 0.5 s, 1 s,
    2 s, 4 s, then 8 s (at most ~32 s in all), so that a page survives one answer in
    four failing (the chaos test in ``tests/reliability`` exports through that with
    these defaults). A page request has no other retry layer. A connection refused before
    the service ever answered the client has a shorter budget
    (:func:`first_contact_policy`): nothing may listen at the base URL.

    Example::

        policy = service_api.RetryPolicy(max_retries=4, max_delay=2.0)
        client = service_api.Client(url, client_id, secret, retry=policy)
    """

    max_retries: int = attrs.field(default=8, validator=_NOT_NEGATIVE)
    initial_delay: float = attrs.field(default=0.25, validator=_NOT_NEGATIVE)
    max_delay: float = attrs.field(default=8.0, validator=_NOT_NEGATIVE)
    jitter: bool = True
    max_retry_after: float = attrs.field(default=60.0, validator=_NOT_NEGATIVE)
    retry_statuses: frozenset[int] = attrs.field(
        default=RETRY_STATUSES, converter=frozenset
    )


def parse_retry_after(
    value: str | None, *, now: datetime.datetime | None = None
) -> float | None:
    """Seconds to wait from a ``Retry-After`` value (delta-seconds or an HTTP date).

    ``None`` for a missing or unreadable value; a date in the past gives 0.

    Example::

        parse_retry_after("2")   # 2.0
    """
    text = (value or "").strip()
    with contextlib.suppress(ValueError):
        seconds = float(text)
        return seconds if math.isfinite(seconds) and seconds >= 0 else None
    try:
        when = email.utils.parsedate_to_datetime(text)
    except (ValueError, OverflowError):  # not a date either (or empty, or out of range)
        return None
    # "-0000" gives a naive time.
    when = when.replace(tzinfo=when.tzinfo or datetime.UTC)
    now = now or datetime.datetime.now(datetime.UTC)
    return max(0.0, (when - now).total_seconds())


def may_send_again(method: str, outcome: httpx.Response | BaseException) -> bool:
    """Whether a request of ``method`` that ended in ``outcome`` (an answer or an
    exception) can be sent again without risking a second effect: an idempotent method
    always; a POST or PATCH only after a 429 or a connection that was never made (a
    dropped connection or a 503 may come after the service acted on it).

    Example::

        may_send_again("PUT", httpx.ReadTimeout("slow"))     # True
        may_send_again("POST", httpx.ReadTimeout("slow"))    # False: it may have been read
        may_send_again("POST", httpx.ConnectError("refused"))  # True: nothing was sent
    """
    if isinstance(outcome, httpx.Response):
        return method.upper() in IDEMPOTENT_METHODS or outcome.status_code == 429
    return method.upper() in IDEMPOTENT_METHODS or isinstance(outcome, UNSENT_ERRORS)


def retry_delay(
    policy: RetryPolicy,
    attempt: int,
    *,
    status: int | None = None,
    retry_after: float | None = None,
    rng: random.Random | None = None,
) -> float | None:
    """Seconds before retrying attempt ``attempt`` (0 for the first), or ``None`` to give up.

    Pass the answer's ``status`` and ``retry_after``, or no status for a connection
    error worth retrying. The caller decides beforehand whether the request may be
    sent twice and whether the failure can heal.

    Example::

        retry_delay(RetryPolicy(), 0, status=503, retry_after=3.0)   # 3.0
        retry_delay(RetryPolicy(), 0, status=404)                     # None
        retry_delay(RetryPolicy(jitter=False), 2)                     # 1.0 (0.25 * 2 ** 2)
    """
    if attempt >= policy.max_retries or status not in {None, *policy.retry_statuses}:
        return None
    if retry_after is not None:
        return retry_after if retry_after <= policy.max_retry_after else None
    # Exponential backoff, capped, with full jitter if enabled.
    try:
        ceiling = min(policy.max_delay, math.ldexp(policy.initial_delay, attempt))
    except OverflowError:  # initial_delay * 2 ** attempt is past any float: the cap
        ceiling = policy.max_delay
    return (rng or random).uniform(0.0, ceiling) if policy.jitter else ceiling


def first_contact_policy(policy: RetryPolicy) -> RetryPolicy:
    """``policy`` for a connection refused before the service ever answered the client:
    nothing may listen at the base URL (a wrong port), so at most 3 retries, waiting at
    most 0.5 s each (1.5 s in all, 1.25 s with the default policy), which gives a
    service that is still starting a moment to come up.

    Example::

        first_contact_policy(RetryPolicy())   # max_retries=3, max_delay=0.5
    """
    return attrs.evolve(
        policy,
        max_retries=min(policy.max_retries, 3),
        max_delay=min(policy.max_delay, 0.5),
    )


#: The delays asked for while retry sleeping is off (see :mod:`service_api.testing`);
#: ``None`` while retries really sleep.
recorded_delays: list[float] | None = None


def sleep_for(delay: float) -> float:
    """Seconds the caller should really sleep for a retry delay of ``delay``."""
    if recorded_delays is None:
        return delay
    recorded_delays.append(delay)
    return 0.0
