"""What the worker processes of the multi-process tests run (importable by ``spawn``)."""

import time
from threading import Barrier

from service_api._rate_limit import shared_limiter


def take_slots(
    url: str, per_minute: float, window: float, seconds: float, start: Barrier
) -> list[tuple[float, float]]:
    """Take every slot the shared limiter grants for ``seconds``: for each, wall times
    just before and just after the call that granted it."""
    limiter = shared_limiter(url, per_minute=per_minute, key="demo-client", window=window)
    granted: list[tuple[float, float]] = []
    try:
        start.wait(timeout=30)
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            before = time.time()
            wait = limiter.try_acquire()
            if wait == 0.0:
                granted.append((before, time.time()))
            else:
                time.sleep(min(wait, max(0.0, end - time.monotonic())))
    finally:
        limiter.close()
    return granted
