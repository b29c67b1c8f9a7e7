"""Retry decisions: pure functions, no I/O."""

import datetime
import email.utils
import random
from typing import Any

import httpx
import pytest

from service_api import RetryPolicy, testing
from service_api._retry import (
    IDEMPOTENT_METHODS,
    first_contact_policy,
    may_send_again,
    parse_retry_after,
    retry_delay,
    sleep_for,
)


def test_defaults_match_the_documented_policy() -> None:
    policy = RetryPolicy()
    assert (policy.max_retries, policy.initial_delay, policy.max_delay) == (
        8,
        0.25,
        8.0,
    )
    assert policy.jitter
    assert policy.max_retry_after == 60.0
    assert policy.retry_statuses == {429, 502, 503, 504}


def test_policy_is_frozen_and_takes_keywords_only() -> None:
    with pytest.raises(AttributeError):
        RetryPolicy().max_retries = 5  # type: ignore[misc]
    with pytest.raises(TypeError):
        RetryPolicy(4)  # type: ignore[call-arg]


@pytest.mark.parametrize(
    ("status", "expected"),
    [(429, True), (502, True), (503, True), (504, True), (500, False), (404, False)],
)
def test_retry_statuses(status: int, expected: bool) -> None:
    assert (retry_delay(RetryPolicy(), 0, status=status) is not None) is expected


def test_attempts_are_bounded() -> None:
    policy = RetryPolicy(max_retries=2)
    assert retry_delay(policy, 1, status=503) is not None
    assert retry_delay(policy, 2, status=503) is None
    assert retry_delay(policy, 1) is not None  # a connection error
    assert retry_delay(policy, 2) is None


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("2", 2.0),
        ("0", 0.0),
        ("0.5", 0.5),
        (" 7 ", 7.0),
        ("-1", None),
        ("nan", None),
        ("soon", None),
        ("", None),
        (None, None),
    ],
)
def test_parse_retry_after_seconds(value: str | None, expected: float | None) -> None:
    assert parse_retry_after(value) == expected


def test_parse_retry_after_http_date() -> None:
    now = datetime.datetime(2015, 10, 21, 7, 27, 30, tzinfo=datetime.UTC)
    assert parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT", now=now) == 30.0
    assert parse_retry_after("Wed, 21 Oct 2015 07:00:00 GMT", now=now) == 0.0
    assert parse_retry_after("Wed, 21 Oct 2015 09:28:00 +0200", now=now) == 30.0
    assert parse_retry_after("Wed, 21 Oct 2015 07:28:00 -0000", now=now) == 30.0


def test_parse_retry_after_http_date_against_the_clock() -> None:
    soon = datetime.datetime.now(datetime.UTC) + datetime.timedelta(seconds=100)
    wait = parse_retry_after(email.utils.format_datetime(soon, usegmt=True))
    assert wait is not None
    assert 90.0 < wait <= 100.0
    assert parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT") == 0.0  # long past


@pytest.mark.parametrize(
    "value",
    [
        "Wed, 21 Oct 99999999999999999999 07:28:00 GMT",  # a year past any datetime
        "Wed, 21 Oct 2015 99999999999999999999:00 GMT",
        "Wed, 21 Oct 2015 07:28:00 +99999999999999999999",
        "Wed, 21 Oct 2015 07:28:00 +9999",  # an offset of more than a day
        "Wed, 32 Oct 2015 07:28:00 GMT",
    ],
)
def test_an_http_date_out_of_range_is_unreadable(value: str) -> None:
    assert parse_retry_after(value) is None


def test_backoff_is_exponential_and_capped() -> None:
    policy = RetryPolicy(jitter=False, max_retries=20_000)
    expected = [0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 8.0, 8.0]
    assert [retry_delay(policy, n) for n in range(8)] == expected
    assert retry_delay(policy, 10_000) == 8.0


def test_backoff_from_a_tiny_first_delay_still_grows_to_the_cap() -> None:
    policy = RetryPolicy(
        jitter=False, initial_delay=1e-30, max_delay=1.0, max_retries=1000
    )
    assert retry_delay(policy, 100) == 1.0  # 1e-30 * 2 ** 100 is past the cap
    no_wait = RetryPolicy(jitter=False, initial_delay=0.0, max_retries=20_000)
    assert retry_delay(no_wait, 10_000) == 0.0


def test_the_default_waits_ride_out_about_half_a_minute_at_most() -> None:
    # The budget the defaults promise (the RetryPolicy docstring): ~32 s of waits in all.
    policy = RetryPolicy(jitter=False)
    waits = [retry_delay(policy, n) for n in range(policy.max_retries + 1)]
    assert waits[-1] is None  # the last attempt's failure is raised
    assert sum(w for w in waits if w is not None) == 31.75


def test_full_jitter_stays_between_zero_and_the_backoff() -> None:
    policy = RetryPolicy()
    rng = random.Random(1)
    delays = [retry_delay(policy, 3, rng=rng) for _ in range(200)]
    assert all(d is not None and 0.0 <= d <= 2.0 for d in delays)
    assert (
        max(d or 0.0 for d in delays) - min(d or 0.0 for d in delays) > 1.0
    )  # jittered
    same = random.Random(1)
    assert delays == [same.uniform(0.0, 2.0) for _ in range(200)]  # drawn from rng only


def test_retry_after_wins_up_to_its_cap() -> None:
    policy = RetryPolicy(max_retry_after=10.0)
    assert retry_delay(policy, 0, status=429, retry_after=3.0) == 3.0
    assert retry_delay(policy, 0, status=429, retry_after=10.5) is None
    assert (
        retry_delay(policy, 0, status=429, retry_after=10.0) == 10.0
    )  # "at most": waited
    assert retry_delay(RetryPolicy(jitter=False), 1, status=503) == 0.5


def test_no_retry_sleep_records_and_restores() -> None:
    assert testing.is_retry_sleep_enabled()
    with testing.no_retry_sleep() as delays:
        assert not testing.is_retry_sleep_enabled()
        assert sleep_for(2.5) == 0.0
    assert delays == [2.5]
    assert testing.is_retry_sleep_enabled()
    assert sleep_for(0.25) == 0.25


def test_set_retry_sleep_turns_the_waiting_off_and_on() -> None:
    try:
        testing.set_retry_sleep(False)
        assert not testing.is_retry_sleep_enabled()
        assert sleep_for(2.5) == 0.0
    finally:
        testing.set_retry_sleep(True)
    assert testing.is_retry_sleep_enabled()
    assert sleep_for(0.01) == 0.01


@pytest.mark.parametrize(
    "field", ["max_retries", "initial_delay", "max_delay", "max_retry_after"]
)
def test_a_negative_count_or_delay_is_refused_and_zero_is_not(field: str) -> None:
    negative: dict[str, Any] = {field: -1}
    with pytest.raises(ValueError, match=field):
        RetryPolicy(**negative)
    assert getattr(RetryPolicy(**{**negative, field: 0}), field) == 0


def test_an_attempt_past_the_last_is_never_retried() -> None:
    policy = RetryPolicy(max_retries=2)
    assert [retry_delay(policy, n, status=503) for n in (3, 10)] == [None, None]
    assert retry_delay(policy, 5) is None  # a connection error


def test_all_but_the_value_and_the_attempt_are_passed_by_keyword() -> None:
    now = datetime.datetime(2015, 10, 21, 7, 27, 30, tzinfo=datetime.UTC)
    with pytest.raises(TypeError):
        parse_retry_after("2", now)  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        retry_delay(RetryPolicy(), 0, 503)  # type: ignore[call-arg]


# ---- which requests may be sent again --------------------------------------------------------

#: Every outcome worth a retry, and whether the request may have taken effect before it.
OUTCOMES: dict[str, tuple[httpx.Response | Exception, bool]] = {
    "429": (httpx.Response(429), False),
    "503": (httpx.Response(503), True),
    "502": (httpx.Response(502), True),
    "connection refused": (httpx.ConnectError("refused"), False),
    "connect timeout": (httpx.ConnectTimeout("slow to connect"), False),
    "read timeout": (httpx.ReadTimeout("slow to answer"), True),
    "dropped after sending": (httpx.RemoteProtocolError("Server disconnected"), True),
    "read error": (httpx.ReadError("reset"), True),
    "write error": (httpx.WriteError("broken pipe"), True),
}


@pytest.mark.parametrize(
    "method", ["GET", "HEAD", "OPTIONS", "PUT", "DELETE", "put", "delete"]
)
@pytest.mark.parametrize("outcome", sorted(OUTCOMES))
def test_idempotent_methods_may_always_be_sent_again(method: str, outcome: str) -> None:
    assert may_send_again(method, OUTCOMES[outcome][0])


@pytest.mark.parametrize("method", ["POST", "PATCH", "post", "patch"])
@pytest.mark.parametrize("outcome", sorted(OUTCOMES))
def test_a_write_is_sent_again_only_where_it_cannot_have_taken_effect(
    method: str, outcome: str
) -> None:
    failure, may_have_taken_effect = OUTCOMES[outcome]
    assert may_send_again(method, failure) is not may_have_taken_effect


@pytest.mark.parametrize("status", [400, 404, 409, 428, 430, 500])
def test_a_write_is_not_sent_again_after_another_status_a_policy_may_retry(
    status: int,
) -> None:
    # Only a 429 says the service did nothing; a policy may list 409 or 500 among its
    # retry statuses, and a POST is still not sent twice after one.
    assert not may_send_again("POST", httpx.Response(status))
    assert may_send_again("PUT", httpx.Response(status))


def test_the_idempotent_methods_are_those_of_rfc_9110() -> None:
    assert {"GET", "HEAD", "OPTIONS", "PUT", "DELETE"} == IDEMPOTENT_METHODS


@pytest.mark.parametrize(
    ("policy", "expected"),
    [
        # At most 3 retries, at most 0.5 s each: the rest of the policy stays.
        (RetryPolicy(), RetryPolicy(max_retries=3, max_delay=0.5)),
        (
            RetryPolicy(max_retries=20, initial_delay=5.0, jitter=False),
            RetryPolicy(max_retries=3, initial_delay=5.0, max_delay=0.5, jitter=False),
        ),
        # Lower limits of the policy's own are kept.
        (
            RetryPolicy(max_retries=1, max_delay=0.1),
            RetryPolicy(max_retries=1, max_delay=0.1),
        ),
        (
            RetryPolicy(max_retries=0, max_delay=0.0),
            RetryPolicy(max_retries=0, max_delay=0.0),
        ),
    ],
)
def test_a_first_contact_has_at_most_3_retries_of_at_most_half_a_second(
    policy: RetryPolicy, expected: RetryPolicy
) -> None:
    assert first_contact_policy(policy) == expected
    delays = [retry_delay(expected, attempt) for attempt in range(5)]
    waited = [delay for delay in delays if delay is not None]
    assert len(waited) == expected.max_retries
    assert sum(waited) <= 1.5
