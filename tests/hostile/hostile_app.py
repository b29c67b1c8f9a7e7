"""A small hostile server: list endpoints that misbehave one way at a time.

Apart from the mock on purpose: the mock plays the service as documented, this plays
the faults a client must survive. ``/public/v3/shipments`` and ``/public/v3/devices``
serve ``records`` items in the pagination envelope, twisted by ``mode``:

========================  ==============================================================
mode                      what the server does
========================  ==============================================================
``honest``                nothing wrong
``twice``                 page 2 serves the items of page 1 again (with pageNumber 2)
``shifted``               three records are inserted at the front once page 1 is served:
                          later pages come from the grown set, so page 2 starts
                          with the last three records of page 1
``next_back``             every ``next`` link points back to page 1
``next_offsite``          every ``next`` link points to another origin
``no_next``               never sends ``next``
``total_grows``           ``totalRecords`` grows by ``records`` on every page, and
                          ``next`` is always present: a server that never ends
``wrong_number``          answers page 1 whatever page is asked for
``wrong_size``            the envelope's ``pageSize`` is one more than asked for
``long_data``             ``data`` holds two items more than ``pageSize``
``empty_middle``          page 2 is empty although ``totalRecords`` says otherwise
``missing_total``         no ``totalRecords``
``missing_data``          no ``data``
``not_json``              page 2 is a 200 with an HTML body
``not_a_page``            page 2 is a 200 with a JSON list
``fail``                  page ``fail_page`` answers ``fail_status`` (500; with
                          ``Retry-After: retry_after`` if set, and a bearer challenge for
                          401) the first ``fail_times`` times it is asked for (every time
                          if ``None``); pages after it answer after ``delay`` seconds
``odd_record``            record 3 of page 2 is ``odd`` (a number, a list, ``null``...)
``slow``                  pages after the first answer after ``delay`` seconds
========================  ==============================================================
"""

from __future__ import annotations

import asyncio
import math
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route

from service_api_client.api import LIST_ENDPOINTS
from service_api_spec import load_spec

# Every list endpoint of the generated client whose records have an identifier field.
ID_FIELDS = {
    name: e.id_field for name, e in LIST_ENDPOINTS.items() if e.id_field is not None
}
# The list endpoints by their path (below the base), as the spec names them: a path
# need not be its resource's name (``/conversations.list``, ``/a/b``).
BY_PATH = {
    op.path.lstrip("/"): str(op.resource)
    for op in load_spec(Path(__file__).resolve().parents[2] / "openapi.yaml").operations
    if op.kind == "list" and op.resource is not None
}


@dataclass
class HostileState:
    """What the server does now, and the pages it was asked for."""

    mode: str = "honest"
    records: int = 25
    fail_page: int = 2
    fail_status: int = 500
    fail_times: int | None = None
    retry_after: float | None = None
    odd: Any = None
    delay: float = 0.0
    asked: list[tuple[str, int]] = field(default_factory=list)
    # Requests being answered now, and the most there were at once since the reset.
    in_flight: int = 0
    peak_in_flight: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)

    def reset(self, mode: str = "honest", **settings: Any) -> None:
        with self.lock:
            self.mode = mode
            self.records = settings.get("records", 25)
            self.fail_page = settings.get("fail_page", 2)
            self.fail_status = settings.get("fail_status", 500)
            self.fail_times = settings.get("fail_times")
            self.retry_after = settings.get("retry_after")
            self.odd = settings.get("odd")
            self.delay = settings.get("delay", 0.0)
            self.asked = []
            self.peak_in_flight = self.in_flight

    def dataset(self, resource: str, count: int | None = None) -> list[dict[str, Any]]:
        prefix = resource[:1]
        return [
            {ID_FIELDS[resource]: f"{prefix}-{i:04d}"}
            for i in range(count or self.records)
        ]


def create_app(state: HostileState) -> Starlette:
    """The hostile ASGI app, driven by ``state``."""

    async def page(request: Request) -> Response:
        with state.lock:
            state.in_flight += 1
            state.peak_in_flight = max(state.peak_in_flight, state.in_flight)
        try:
            return await answer(request)
        finally:
            with state.lock:
                state.in_flight -= 1

    async def answer(request: Request) -> Response:
        sent = request.path_params["resource"]
        resource = BY_PATH.get(sent, sent)
        number = int(request.query_params.get("pageNumber", "1"))
        size = min(int(request.query_params.get("pageSize", "50")), 50)
        with state.lock:
            state.asked.append((resource, number))
            mode, records, fail_page, delay = (
                state.mode,
                state.records,
                state.fail_page,
                state.delay,
            )
            times = state.asked.count((resource, fail_page))
            failing = state.fail_times is None or times <= state.fail_times
        if mode == "fail" and number == fail_page and failing:
            headers = {}
            if state.retry_after is not None:
                headers["retry-after"] = str(state.retry_after)
            if state.fail_status == 401:
                headers["www-authenticate"] = 'Bearer error="invalid_token"'
            return PlainTextResponse(
                "boom", status_code=state.fail_status, headers=headers
            )
        if delay and (
            (mode == "fail" and number > fail_page) or (mode == "slow" and number > 1)
        ):
            # A slow page, so that a failure can be seen to cancel the pages in flight.
            await asyncio.sleep(delay)
        total = records * number if mode == "total_grows" else records
        rows = state.dataset(resource, total)
        if mode == "shifted" and number > 1:
            total += 3
            rows = [{ID_FIELDS[resource]: f"new-{i}"} for i in range(3)] + rows
        served = 1 if mode == "wrong_number" else number
        if mode == "twice" and number == 2:
            served = 1
        start = (served - 1) * size
        extra = 2 if mode == "long_data" else 0
        data = rows[start : start + size + extra]
        if mode == "empty_middle" and number == 2:
            data = []
        if mode == "odd_record" and number == 2:
            data = [*data[:3], state.odd, *data[4:]]
        if mode == "not_json" and number == 2:
            return PlainTextResponse("<html>maintenance</html>")
        if mode == "not_a_page" and number == 2:
            return JSONResponse([1, 2, 3])
        body: dict[str, Any] = {
            "totalRecords": total,
            "pageNumber": 1 if mode == "wrong_number" else number,
            "pageSize": size + 1 if mode == "wrong_size" else size,
            "data": data,
        }
        if mode == "missing_total":
            del body["totalRecords"]
        if mode == "missing_data":
            del body["data"]
        base = str(request.url.replace(query=""))
        if mode == "total_grows" or (
            number < math.ceil(total / size) and mode != "no_next"
        ):
            next_number = 1 if mode == "next_back" else number + 1
            link = f"{base}?pageSize={size}&pageNumber={next_number}"
            if mode == "next_offsite":
                link = f"https://evil.example/steal?pageSize={size}&pageNumber={next_number}"
            body["next"] = link
        return JSONResponse(body)

    return Starlette(routes=[Route("/public/v3/{resource:path}", page)])


@dataclass
class HostileServer:
    """The running hostile server: its base URL and its state."""

    base_url: str
    state: HostileState
