"""What the worker processes of the multi-process tests run (importable by ``spawn``)."""

import contextlib
import logging
import multiprocessing
import time
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from threading import Barrier

from service_api.quota import AdaptiveRateLimiter, RateLimiter


def take_slots(
    url: str, per_minute: float, window: float, seconds: float, start: Barrier
) -> list[tuple[float, float]]:
    """Take every slot the shared limiter grants for ``seconds``: for each, wall times
    just before and just after the call that granted it."""
    limiter = RateLimiter(per_minute, store=url, key="demo-client", window=window)
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


def refresh_once(store_url: str, fetches_url: str, start: Barrier) -> str:
    """What a client does before fetching a token, with a counted stand-in for the fetch:
    take the store's lock, look again, fetch and store only if still needed."""
    import redis

    from service_api import StoredToken
    from service_api.quota import token_store

    store = token_store(store_url, key="demo-client")
    start.wait(timeout=30)
    with store.lock():
        token = store.load()
        if token is None or token.expires_at < time.time() + 60:
            with redis.Redis.from_url(fetches_url) as counter:
                number = counter.incr("fetches")
            token = StoredToken(f"token-{number}", time.time() + 3600)
            store.save(token)
    return token.access_token


def learned_elsewhere(url: str) -> tuple[float, float | None]:
    """In another process: the first wait a limiter on the shared store asks, and the
    rate it read there."""
    limiter = AdaptiveRateLimiter(url, key="demo-client")
    try:
        return limiter.try_acquire(), limiter.per_minute
    finally:
        limiter.close()


class KeptWarnings(logging.Handler):
    """Keeps the messages of the warnings logged, for a worker process to return."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


def export_sharing(
    base_url: str,
    account: str,
    store: str,
    start: Barrier,
    *,
    rate_limit: float | str = "adaptive",
) -> dict[str, list[str]]:
    """Export ``account`` on the budget ``rate_limit`` (learned by default) shared in
    ``store``: the shipment IDs, and the warnings about the store this process logged."""
    import service_api
    from service_api_client.api.shipments import list_shipments
    from service_api_mock import DEMO_CLIENT_ID, DEMO_CLIENT_SECRET

    warnings = KeptWarnings()
    logging.getLogger("service_api").addHandler(warnings)
    policy = service_api.RetryPolicy(max_retries=10)
    with service_api.Client(
        base_url,
        DEMO_CLIENT_ID,
        DEMO_CLIENT_SECRET,
        account,
        rate_limit=rate_limit,
        rate_store=store,
        retry=policy,
    ) as client:
        start.wait(timeout=30)
        pages = service_api.paginate(list_shipments, client, page_size=10)
        ids = [str(shipment.shipment_id) for shipment in pages]
    kept = [message for message in warnings.messages if "rate store" in message]
    return {"ids": ids, "warnings": kept}


@contextlib.contextmanager
def process_pool(workers: int) -> Iterator[ProcessPoolExecutor]:
    """A pool of ``workers`` spawned processes that a failed test never waits on: on an
    error (a timeout's included) its processes are killed before the pool is shut down,
    where waiting on a stuck worker would outlast every timeout of the suite."""
    pool = ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn"))
    try:
        yield pool
    except BaseException:
        for process in list(pool._processes.values()):  # no public way before 3.14
            process.kill()
        pool.shutdown(wait=False, cancel_futures=True)
        raise
    pool.shutdown(wait=True)
