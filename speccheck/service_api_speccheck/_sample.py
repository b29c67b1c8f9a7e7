"""The bounded sample: a few read-only requests through :class:`service_api.Client`.

In order, while the budget lasts: the first page of every list (the client makes the
token call first), the probes the seed leaves open on each list (no account header, an
account of nobody, an invalid token), the other pages of each list (``pageSize`` twice
the spec's largest, a later page, the last page, a page past the end, with ``pageSize``
the spec's largest), the gets of identifiers taken from those pages and of one of
nobody; with ``allow_writes``, last, a create of a copy of a listed record and its
delete (only where the spec can delete it).
Nothing but GET and the token POST is sent otherwise.

Every request (retries and the token call included) passes the client's request hook,
which counts it and stops the sample when the budget is spent; every answer, refused
probes included, its response hook, into the observation (see :mod:`._observation`),
beside the facts of each page (its records, ``pageSize``, ``totalRecords``, which links
it has). The client paces the requests by its quota (``rate_limit``, ``rate_store``),
and its retries wait out 429 and ``Retry-After``, as far as the budget allows.
"""

from __future__ import annotations

import math
import re
from collections import defaultdict
from typing import Any
from urllib.parse import quote

import httpx

import service_api
from service_api_spec import Operation, Spec

from ._observation import Observer, Shape, SpecCheckError

#: The account, and the identifier, of nobody: what the probes send.
NOBODY = "service-api-spec-check-nobody"


class _BudgetSpent(Exception):
    """No request is left to send."""


class _Sampler:
    """Sends the sample's requests and records what they answer (``seen``), with the
    facts of each page of a list."""

    def __init__(
        self, client: service_api.Client, spec: Spec, budget: int, words: bool
    ) -> None:
        self.client = client.with_options()  # a view: its hooks are the sample's only
        self.spec = spec
        self.budget = budget
        self.seen = Observer(None, client.get_httpx_client().base_url, spec, words)
        self.totals: dict[str, int] = {}  # totalRecords, by list
        self.ids: dict[str, list[Any]] = defaultdict(list)  # listed, by path parameter
        self.records: dict[str, Any] = {}  # one listed record, by resource

    def spend(self, request: httpx.Request) -> None:
        """Count ``request`` (a retry, a token request too) against the budget."""
        if self.seen.data["requests"] >= self.budget:
            raise _BudgetSpent
        self.seen.data["requests"] += 1

    def keep(self, response: httpx.Response) -> None:
        response.read()
        self.seen(response)

    def send(
        self, method: str, path: str | None, view: Any = None, **options: Any
    ) -> Any:
        """The JSON body of the answer (None if none), or its error's status."""
        if path is None:
            return None
        http = (view or self.client).get_httpx_client()
        http.event_hooks = {"request": [self.spend], "response": [self.keep]}
        try:
            return http.request(method, path, **options).json()
        except service_api.InvalidCredentialsError:
            raise
        except service_api.ApiStatusError as exc:
            return exc.status_code
        except ValueError:  # a body that is not JSON
            return None

    def fill(self, template: str, **given: Any) -> str | None:
        """``template`` with each path parameter given or taken from a listed record."""
        known = {name: ids[0] for name, ids in self.ids.items() if ids} | given
        try:
            return re.sub(
                r"\{(.*?)\}", lambda m: quote(str(known[m[1]]), safe=""), template
            )
        except KeyError:
            return None

    def page(self, op: Operation, number: int = 1, size: int | None = None) -> None:
        """Ask for a page of the list ``op``; say in its facts what it answered."""
        asked = {"pageNumber": number, "pageSize": size} if size else {}
        body = self.send("GET", self.fill(op.path), params=asked)
        data = body.get("data") if isinstance(body, dict) else None
        answer = f"answered {body}"  # its status, or None: a body of no page
        if isinstance(data, list):
            # Numbers, and which links are there: never a value.
            numbers = [
                k for k in ("pageSize", "totalRecords") if type(body.get(k)) is int
            ]
            links = [k for k in ("next", "previous") if body.get(k) is not None]
            facts = [f"{len(data)} records", *(f"{k} {body[k]}" for k in numbers)]
            answer = ", ".join(facts + links)
            total = body["totalRecords"] if "totalRecords" in numbers else 0
            self.totals.setdefault(op.operation_id, total)
            resource = self.spec.resources[str(op.resource)]
            key = str(resource.item_parameter or resource.id_field)
            for record in data[:2]:
                if isinstance(record, dict) and resource.id_field in record:
                    self.records.setdefault(resource.name, record)
                    self.ids[key].append(record[resource.id_field])
        facts = self.seen.data["facts"].setdefault(op.operation_id, [])
        facts.append(f"{number}/{size or '-'}: {answer}")

    def pages(self, op: Operation) -> None:
        """The other pages of the list ``op``: a page above the maximum size, a later
        page, the last one, one past the end."""
        # The spec's largest page (its maximum, else its default).
        size = op.page_size.largest if op.page_size else None
        if op.operation_id in self.totals and size is not None:
            last = max(1, math.ceil(self.totals[op.operation_id] / size))
            self.page(op, 1, 2 * size)
            for number in sorted({min(2, last), last, last + 1} - {1}):
                self.page(op, number, size)

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
        for value in (*self.ids[name][:2], NOBODY):
            self.send("GET", self.fill(op.path, **{name: value}))

    def writes(self, create: Operation) -> None:
        """A copy of a listed record created, then deleted: only where the spec can
        delete it and the budget holds both (and a retry)."""
        resource = self.spec.resources[str(create.resource)]
        delete = [
            op
            for op in self.spec.operations
            if op.kind == "delete" and op.resource == resource.name
        ]
        record = self.records.get(resource.name, {})
        leave = (resource.id_field, *resource.parent_parameters)
        body = {k: v for k, v in record.items() if k not in leave}
        if not body or not delete or self.seen.data["requests"] + 4 > self.budget:
            return
        made = self.send("POST", self.fill(create.path), json=body)
        if isinstance(made, dict) and resource.id_field in made:
            item = {str(resource.item_parameter): made[resource.id_field]}
            self.send("DELETE", self.fill(delete[0].path, **item))

    def run(self, allow_writes: bool) -> None:
        """Send the sample, in the order of the module docstring."""
        # Parents first: a sub-resource's path takes an identifier its parent listed.
        lists = sorted(self.spec.lists, key=lambda op: op.path.count("{"))
        for act in (self.page, self.probes, self.pages):
            for op in lists:
                act(op)
        for op in self.spec.operations:
            if op.kind == "get":
                self.gets(op)
        for op in self.spec.operations:
            if op.kind == "create" and allow_writes:
                self.writes(op)


def sample(
    client: service_api.Client,
    spec: Spec,
    *,
    budget: int = 100,
    allow_writes: bool = False,
    enums: bool = False,
) -> Shape:
    """The observation (see :mod:`._observation`) of a sample of at most ``budget``
    requests (see the module docstring), sent by ``client`` for its account. ``enums``:
    keep the few short words string fields take. Raises :class:`SpecCheckError` when no
    list answered a page (the budget too small, or every list refused), the client's
    typed errors when the credentials are refused or the service cannot be reached.

    Example::

        with service_api.Client() as client:
            observation = sample(client, load_spec("openapi.yaml"), budget=50)
    """
    sampler = _Sampler(client, spec, budget, enums)
    try:
        sampler.run(allow_writes)
    except _BudgetSpent:
        sampler.seen.data["stopped"] = True
    if not sampler.totals:
        raise SpecCheckError(f"no list answered a page within {budget} requests")
    return sampler.seen.data
