"""The floor: the same work done with plain httpx and JSON dicts, no generated code.

Example::

    with httpx.Client() as http:
        records = iterate_pages(http, base_url, page_size=50)
"""

from __future__ import annotations

import itertools
import math
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, TypeVar

import httpx

from ._mock_process import ACCOUNT, CLIENT_ID, CLIENT_SECRET

__all__ = [
    "afetch_token",
    "aget_page",
    "aiterate_pages",
    "fetch_token",
    "get_page",
    "in_order",
    "iterate_pages",
    "iterate_pages_ahead",
]

T = TypeVar("T")

_FORM = {
    "client_id": (None, CLIENT_ID),
    "client_secret": (None, CLIENT_SECRET),
    "grant_type": (None, "client_credentials"),
}


def _headers(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}", "x-service-account-id": ACCOUNT}


def fetch_token(http: httpx.Client, base_url: str) -> str:
    """POST /authenticate as multipart form, as the service wants it."""
    response = http.post(f"{base_url}/authenticate", files=_FORM)
    response.raise_for_status()
    token: str = response.json()["access_token"]
    return token


async def afetch_token(http: httpx.AsyncClient, base_url: str) -> str:
    """Async twin of :func:`fetch_token`."""
    response = await http.post(f"{base_url}/authenticate", files=_FORM)
    response.raise_for_status()
    token: str = response.json()["access_token"]
    return token


def get_page(
    http: httpx.Client, base_url: str, token: str, number: int, size: int
) -> Any:
    """One page of shipments as the decoded JSON envelope."""
    response = http.get(
        f"{base_url}/shipments",
        params={"pageNumber": number, "pageSize": size},
        headers=_headers(token),
    )
    response.raise_for_status()
    return response.json()


async def aget_page(
    http: httpx.AsyncClient, base_url: str, token: str, number: int, size: int
) -> Any:
    """Async twin of :func:`get_page`."""
    response = await http.get(
        f"{base_url}/shipments",
        params={"pageNumber": number, "pageSize": size},
        headers=_headers(token),
    )
    response.raise_for_status()
    return response.json()


def iterate_pages(
    http: httpx.Client, base_url: str, *, page_size: int, max_pages: int | None = None
) -> int:
    """Authenticate, then walk every page by number (or the first ``max_pages``);
    return how many records were seen."""
    token = fetch_token(http, base_url)
    seen = 0
    number = 1
    while True:
        body = get_page(http, base_url, token, number, page_size)
        for record in body["data"]:
            # Touch one field, as the typed variants do, so the loop is not empty.
            if record["shipmentId"]:
                seen += 1
        if not body.get("next") or number == max_pages:
            return seen
        number += 1


async def aiterate_pages(
    http: httpx.AsyncClient, base_url: str, *, page_size: int
) -> int:
    """Async twin of :func:`iterate_pages`."""
    token = await afetch_token(http, base_url)
    seen = 0
    number = 1
    while True:
        body = await aget_page(http, base_url, token, number, page_size)
        for record in body["data"]:
            if record["shipmentId"]:
                seen += 1
        if not body.get("next"):
            return seen
        number += 1


def in_order(
    fetch: Callable[[int], T], numbers: Iterable[int], concurrency: int
) -> Iterator[T]:
    """``fetch(n)`` for each of ``numbers`` on ``concurrency`` threads, results in order,
    at most ``2 * concurrency`` asked for ahead of the consumer (as ``paginate`` does)."""
    pending: deque[Future[T]] = deque()
    left = iter(numbers)
    with ThreadPoolExecutor(max_workers=concurrency) as pool:

        def submit() -> None:
            number = next(left, None)
            if number is not None:
                pending.append(pool.submit(fetch, number))

        for _ in range(2 * concurrency):
            submit()
        while pending:
            result = pending.popleft().result()
            submit()
            yield result


def iterate_pages_ahead(
    http: httpx.Client,
    base_url: str,
    *,
    page_size: int,
    concurrency: int,
    on_page: Callable[[], None] | None = None,
) -> int:
    """:func:`iterate_pages` with the pages after the first fetched ``concurrency`` at a
    time by :func:`in_order`; return how many records were seen. ``on_page`` is called
    after each page's records."""
    token = fetch_token(http, base_url)
    first = get_page(http, base_url, token, 1, page_size)
    pages = math.ceil(first["totalRecords"] / page_size)

    def fetch(number: int) -> Any:
        return get_page(http, base_url, token, number, page_size)

    seen = 0
    for body in itertools.chain(
        [first], in_order(fetch, range(2, pages + 1), concurrency)
    ):
        for record in body["data"]:
            if record["shipmentId"]:
                seen += 1
        if on_page is not None:
            on_page()
    return seen
