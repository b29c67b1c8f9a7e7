"""The bounded sample: a few read-only requests through :class:`service_api.Client`.

In order, while the budget lasts: the first page of every list (the client makes the
token call first), the probes the seed leaves open on each list (no account header, an
account of nobody, an invalid token), the other pages of each list (``pageSize`` above
50, a later page, the last page, a page past the end, with ``pageSize`` 50), the gets of
identifiers taken from those pages and of one of nobody; with ``allow_writes``, last, a
create of a copy of a listed record, its update or replace and its delete (only where
the spec can delete it). Nothing but GET and the token POST is sent otherwise.

Every answer (retries, the token call and refused probes included) goes through the
client's response hook into an :class:`Observation`, with the pages' envelope facts.
The client paces the requests by its quota (``rate_limit``, ``rate_store``), and its
retries wait out 429 and ``Retry-After``, as far as the budget allows.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from typing import Any
from urllib.parse import quote

import httpx

import service_api
from service_api_spec import Operation, Spec

from ._shapes import Matcher, Observation, SpecCheckError

#: The account, and the identifier, of nobody: what the probes send.
NOBODY = "service-api-spec-check-nobody"
ABOVE_MAX = 100  # a page size above the 50 the seed gives as the maximum
SIZE = 50
_PARAMETER = re.compile(r"{([^}]+)}")


class _BudgetSpent(Exception):
    """No request is left to send."""


class _Sampler:
    def __init__(
        self, client: service_api.Client, spec: Spec, budget: int, words: bool
    ) -> None:
        self.client, self.spec, self.budget, self.words = client, spec, budget, words
        self.seen = Observation()
        self.match = Matcher(spec, client.get_httpx_client().base_url)
        self.ids: dict[
            str, Any
        ] = {}  # a listed identifier by the path parameter taking it
        self.records: dict[str, dict[str, Any]] = {}  # a listed record by resource

    def hook(self, response: httpx.Response) -> None:
        response.read()
        self.seen.data["requests"] += 1
        if found := self.match(response):
            self.seen.record(found, response, self.words)

    def send(self, method: str, path: str | None, view: Any = None, **kw: Any) -> Any:
        """The JSON body of the answer (None if not JSON), or its error's status."""
        left = self.budget - self.seen.data["requests"]
        if left < 2:  # one for the request, one for a token it may need first
            raise _BudgetSpent
        view = view or self.client
        retries = min(view.retry_policy.max_retries, 3, left - 2)
        http = view.with_options(max_retries=retries).get_httpx_client()
        http.event_hooks = {"response": [self.hook]}
        try:
            return http.request(method, path, **kw).json() if path else None
        except service_api.ApiStatusError as exc:
            if isinstance(exc, service_api.InvalidCredentialsError):
                raise
            return exc.status_code
        except ValueError:  # a body that is not JSON
            return None

    def fill(self, template: str, **given: Any) -> str | None:
        """``template`` with each path parameter given or taken from a listed record."""
        known = {name: ids[0] for name, ids in self.ids.items()} | given
        if not set(_PARAMETER.findall(template)) <= set(known):
            return None
        return _PARAMETER.sub(lambda m: quote(str(known[m[1]]), safe=""), template)

    def page(self, op: Operation, number: int | None = None, size: int = SIZE) -> None:
        asked = {"pageNumber": number, "pageSize": size} if number else {}
        body = self.send("GET", self.fill(op.path), params=asked)
        data = body.get("data") if isinstance(body, dict) else None
        fact = {
            "asked": number,
            "size": size,
            "status": body if isinstance(body, int) else 200,
        }
        if isinstance(data, list):
            numbers = {k: body.get(k) for k in ("pageSize", "totalRecords")}
            fact |= {k: v if isinstance(v, int) else None for k, v in numbers.items()}
            fact |= {k: body.get(k) is not None for k in ("next", "previous")}
            fact["records"] = len(data)
            resource = self.spec.resources[str(op.resource)]
            key, field = resource.item_parameter or resource.id_field, resource.id_field
            for record in [r for r in data[:1] + data[-1:] if isinstance(r, dict)]:
                self.records.setdefault(resource.name, record)
                if key and field in record:
                    self.ids.setdefault(key, []).append(record[field])
        self.seen.data["facts"].setdefault(op.operation_id, []).append(fact)

    def pages(self, op: Operation) -> None:
        total = (
            self.seen.data["facts"].get(op.operation_id, [{}])[0].get("totalRecords")
        )
        if isinstance(total, int):
            last = max(1, math.ceil(total / SIZE))
            self.page(op, 1, ABOVE_MAX)
            for number in sorted({min(2, last), last, last + 1} - {1}):
                self.page(op, number)

    def probes(self, op: Operation) -> None:
        path = self.fill(op.path)
        if op.account_header:
            self.send("GET", path, self.client.with_account(None))
            self.send("GET", path, self.client.with_account(NOBODY))
        if op.bearer:
            invalid = {"authorization": "Bearer service-api-spec-check-invalid-token"}
            self.send("GET", path, headers=invalid, auth=None)

    def gets(self, op: Operation) -> None:
        name = str(self.spec.resources[str(op.resource)].item_parameter)
        for value in (*self.ids.get(name, [])[:2], NOBODY):
            self.send("GET", self.fill(op.path, **{name: value}))

    def writes(self, create: Operation) -> None:
        """A copy of a listed record created, updated or replaced, deleted: only where
        the spec can delete it and the budget holds the whole sequence."""
        resource = self.spec.resources[str(create.resource)]
        doors = {
            op.kind: op for op in self.spec.operations if op.resource == resource.name
        }
        left = self.budget - self.seen.data["requests"]
        if resource.name not in self.records or "delete" not in doors or left < 8:
            return
        drop = {resource.id_field, *resource.parent_parameters}
        body = {k: v for k, v in self.records[resource.name].items() if k not in drop}
        made = self.send("POST", self.fill(create.path), json=body)
        item = made.get(str(resource.id_field)) if isinstance(made, dict) else None
        for kind, method in (
            ("update", "PATCH"),
            ("replace", "PUT"),
            ("delete", "DELETE"),
        ):
            if kind in doors and item is not None:
                path = self.fill(
                    doors[kind].path, **{str(resource.item_parameter): item}
                )
                self.send(method, path, **({} if kind == "delete" else {"json": body}))


def sample(
    client: service_api.Client,
    spec: Spec,
    *,
    budget: int = 100,
    allow_writes: bool = False,
    enums: bool = False,
) -> Observation:
    """The shapes of the answers to a sample of at most ``budget`` requests (see the
    module docstring), sent by ``client`` for its account. ``enums``: keep the few short
    words string fields take. Raises :class:`SpecCheckError` when no list answered a page
    (the budget too small, or every list refused), the client's typed errors when the
    credentials are refused or the service cannot be reached.

    Example::

        with service_api.Client() as client:
            observation = sample(client, load_spec("openapi.yaml"), budget=50)
    """
    sampler = _Sampler(client, spec, budget, enums)
    lists = sorted(spec.lists, key=lambda op: op.path.count("{"))  # parents first
    steps: list[tuple[Callable[[Operation], None], Operation]] = [
        (act, op)
        for act in (sampler.page, sampler.probes, sampler.pages)
        for op in lists
    ]
    for kind, action in (("get", sampler.gets), ("create", sampler.writes)):
        steps += [(action, op) for op in spec.operations if op.kind == kind]
    try:
        for act, op in steps:
            if act != sampler.writes or allow_writes:
                act(op)
    except _BudgetSpent:
        sampler.seen.data["stopped"] = True
    if not any(
        "records" in p for ps in sampler.seen.data["facts"].values() for p in ps
    ):
        raise SpecCheckError(f"no list answered a page within {budget} requests")
    return sampler.seen
