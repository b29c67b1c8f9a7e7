"""Helpers for testing code that uses :class:`service_api.Client`.

Retries wait (exponential backoff, ``Retry-After``); in tests that is wasted time.
:func:`no_retry_sleep` turns the waiting off process-wide and records the delays
the client would have slept, so a test can assert them::

    from service_api import testing

    def test_backs_off_on_429(...):
        with testing.no_retry_sleep() as delays:
            ...  # code that makes the client retry
        assert delays == [1.0]

The client-side rate limit (``Client(rate_limit=...)``) is not affected: it is a
feature, not a retry.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from service_api import _retry


def set_retry_sleep(enabled: bool) -> None:
    """Turn retry sleeping on or off for the whole process.

    Example::

        service_api.testing.set_retry_sleep(False)   # e.g. in a conftest.py
    """
    _retry.recorded_delays = None if enabled else []


def is_retry_sleep_enabled() -> bool:
    """Whether retries really sleep.

    Example::

        assert service_api.testing.is_retry_sleep_enabled()
    """
    return _retry.recorded_delays is None


@contextlib.contextmanager
def no_retry_sleep() -> Iterator[list[float]]:
    """Within the block retries do not sleep; yields the list of delays they asked for.

    Example::

        with service_api.testing.no_retry_sleep() as delays:
            client_call()
        print(delays)   # e.g. [0.31, 0.77]
    """
    previous = _retry.recorded_delays
    _retry.recorded_delays = []
    try:
        yield _retry.recorded_delays
    finally:
        _retry.recorded_delays = previous
