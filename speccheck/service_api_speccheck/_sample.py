"""The bounded sample: a few read-only requests through :class:`service_api.Client`.

In order, while the budget lasts: the first page of every list (the client makes the
token call first), the probes the seed leaves open on each list (no account header, an
account of nobody, an invalid token), the gets of identifiers taken from those pages
(each of its own resource's records) and of one of nobody, then the other pages of
each list (page 1 with the largest ``pageSize`` the spec allows, see
:func:`page_limit`, and where that is refused with 400, halving to the largest the
service accepts; page 1 with twice the limit, where the limit was accepted; a later
page, the last page, a page past the end, with the largest size accepted): every
operation is asked before the depth of the lists, so that a spec of many lists has
had each where the budget runs out. With ``allow_writes``, last, a create of a copy
of a listed record and its delete (only where the spec can delete it and the create
takes JSON). Nothing but GET and the token POST is sent otherwise.

A list whose path takes an identifier no list gave (a parent the spec cannot list) is
not asked; a resource whose identifier field the spec model does not know
(:attr:`~service_api_spec.Resource.id_field` None) gets no probe of an identifier of
nobody, since no identifier can be known to be nobody's. Each is said once, in the
observation's ``unsent``.

Every request (retries and the token call included) passes the client's request hook,
which counts it and stops the sample when the budget is spent; every answer, refused
probes included, its response hook, into the observation (see :mod:`._observation`),
beside the facts of each page (its records, ``pageSize``, ``totalRecords``, which links
it has). The client paces the requests by its quota (``rate_limit``, ``rate_store``),
and its retries wait out 429 and ``Retry-After``, as far as the budget allows.

Beside the answers, the observation keeps what the comparison judges the service by:
``pages`` (by list: each page's number, the size asked, its records, ``totalRecords``,
and whether it links ``next`` and ``previous``), ``sizes`` (by list: the spec's
``maximum``, and where refused the sizes ``refused`` and ``accepted``), ``probes`` (by
operation: the status each probe was answered), ``writes`` (what ``allow_writes``
did or could not do) and ``unsent`` (what the sample did not send, and why).
"""

from __future__ import annotations

import math
import re
from collections import defaultdict
from typing import Any
from urllib.parse import quote

import httpx

import service_api
from service_api_spec import PAGE_PARAMETERS, Operation, Spec, is_json

from ._observation import Observer, Shape, SpecCheckError

#: The account, and the identifier, of nobody: what the probes send.
NOBODY = "service-api-spec-check-nobody"
#: The smallest sample that can see a page: the token request and one page.
MIN_BUDGET = 2
# A page size refused: a bad request, or one that cannot be processed (what
# validating servers, such as Prism, answer).
_REFUSED = (400, 422)


def page_limit(spec: Spec, op: Operation) -> tuple[int | None, str | None]:
    """The largest ``pageSize`` the spec lets the list ``op`` ask for (the model's
    :attr:`~service_api_spec.PageSize.largest`; None: it states none), and the pointer
    of that parameter's schema (None: the list takes no ``pageSize``).

    Example::

        page_limit(spec, spec.lists[0])  # (50, "#/components/parameters/pageSize/schema")
    """
    name = PAGE_PARAMETERS[1]
    found = [
        parameter.pointer
        for parameter in op.parameters
        if parameter.name == name and parameter.pointer
    ]
    pointer = spec.document.at(found[0])[1] if found else None
    return (op.page_size.largest if op.page_size else None), pointer


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
        # The first records listed of each resource (that carry its identifier): its
        # gets ask theirs, never those of another resource's records.
        self.records: dict[str, list[Any]] = defaultdict(list)
        # By pageSize parameter: the largest size a list that takes it was found to
        # accept, and the least refused; a list sharing it tries those first.
        self.bounds: dict[str | None, list[int]] = {}
        self.status = 0  # of the last answer
        self.error: service_api.ApiStatusError | None = None  # of the last refusal
        self.refusal: service_api.ApiStatusError | None = None  # of a first page
        data = self.seen.data
        self.kept: dict[str, dict[str, Any]] = {
            key: data.setdefault(key, {}) for key in ("pages", "sizes", "probes")
        }
        self.done: list[str] = data.setdefault("writes", [])
        self.unsent: list[str] = data.setdefault("unsent", [])  # a line each, why

    def spend(self, request: httpx.Request) -> None:
        """Count ``request`` (a retry, a token request too) against the budget."""
        if self.seen.data["requests"] >= self.budget:
            raise _BudgetSpent
        self.seen.data["requests"] += 1

    def keep(self, response: httpx.Response) -> None:
        response.read()
        self.status = response.status_code
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
            self.error = exc
            return exc.status_code
        except ValueError:  # a body that is not JSON
            return None

    def fill(self, template: str, **given: Any) -> str | None:
        """``template`` with each path parameter given or taken from a listed record."""
        listed = {name: ids[0] for name, ids in self.ids.items() if ids}
        known = listed | given
        try:
            return re.sub(
                r"\{(.*?)\}", lambda m: quote(str(known[m[1]]), safe=""), template
            )
        except KeyError:
            return None

    def page(self, op: Operation, number: int = 1, size: int | None = None) -> Any:
        """Ask for a page of the list ``op``; say in its facts what it answered. The
        answer's body, or its error's status."""
        asked = {"pageNumber": number, "pageSize": size} if size else {}
        path = self.fill(op.path)
        if path is None:
            self.unsent.append(
                f"{op.operation_id}: no page asked, as no list gave the identifiers "
                "its path takes"
            )
            return None
        body = self.send("GET", path, params=asked)
        data = body.get("data") if isinstance(body, dict) else None
        answer = f"answered {body}"  # its status, or None: a body of no page
        if body in (401, 403) and not size and self.refusal is None:
            self.refusal = self.error  # what `service-api list` would end with
        if isinstance(data, list):
            # Numbers, and which links are there: never a value.
            numbers = [
                k for k in ("pageSize", "totalRecords") if type(body.get(k)) is int
            ]
            links = [
                link for link in ("next", "previous") if body.get(link) is not None
            ]
            facts = [f"{len(data)} records", *(f"{k} {body[k]}" for k in numbers)]
            answer = ", ".join(facts + links)
            total = body["totalRecords"] if "totalRecords" in numbers else 0
            self.totals.setdefault(op.operation_id, total)
            self.kept["pages"].setdefault(op.operation_id, []).append(
                {
                    "number": number,
                    # the size the page says it has: a size above the limit is served
                    # as the limit
                    "size": body["pageSize"] if "pageSize" in numbers else size,
                    "records": len(data),
                    "total": body.get("totalRecords"),
                    "next": "next" in links,
                    "previous": "previous" in links,
                }
            )
            resource = self.spec.resources[str(op.resource)]
            key = str(resource.item_parameter or resource.id_field)
            for record in data[:2]:
                if isinstance(record, dict) and resource.id_field in record:
                    self.records[resource.name].append(record)
                    self.ids[key].append(record[resource.id_field])
        facts = self.seen.data["facts"].setdefault(op.operation_id, [])
        facts.append(f"{number}/{size or '-'}: {answer}")
        return body

    def largest(self, op: Operation, most: int) -> int:
        """The page size to ask the list ``op`` for: the spec's limit ``most``, or where
        that is refused with 400, the largest size the service accepts, found by halving.

        A list that shares its ``pageSize`` parameter with one narrowed before (lists of
        one spec mostly do) first asks the least size refused there, then the largest
        accepted: two requests where they hold, so that a sample of many lists fits its
        budget. A size above one refused is taken as refused (as the halving does)."""
        sizes = self.kept["sizes"].setdefault(op.operation_id, {"maximum": most})
        pointer = page_limit(self.spec, op)[1]
        # the largest size accepted (0: none yet), the least refused (none yet: above
        # the limit)
        low, high = 0, most + 1
        tries = [*self.bounds.get(pointer, [])[::-1], most]
        while high - low > 1:
            middle = tries.pop(0) if tries else (low + high) // 2
            if not low < middle < high:
                continue
            if self.page(op, 1, middle) in _REFUSED:
                high = sizes["refused"] = middle
            else:
                low = sizes["accepted"] = middle
        if high <= most:
            self.bounds[pointer] = [low, high]
        return max(low, 1)

    def pages(self, op: Operation) -> None:
        """The other pages of the list ``op``: the largest size accepted, a page above
        the spec's limit (where the limit was accepted), a later page, the last one,
        one past the end."""
        most = page_limit(self.spec, op)[0]
        if op.operation_id in self.totals and most is not None:
            size = self.largest(op, most)
            if size == most:
                self.page(op, 1, 2 * most)
            total = self.totals[op.operation_id]
            last = max(1, math.ceil(total / size))
            for number in sorted({min(2, last), last, last + 1} - {1}):
                self.page(op, number, size)

    def probe(self, op: Operation, name: str, path: str | None, **options: Any) -> None:
        """Send the probe ``name`` (a request the spec says is refused); keep its status."""
        answer = self.send("GET", path, **options)
        if path is not None:
            status = answer if type(answer) is int else self.status
            self.kept["probes"].setdefault(op.operation_id, {})[name] = status

    def probes(self, op: Operation) -> None:
        path = self.fill(op.path)
        if op.account_header:
            self.probe(
                op, "no account header", path, view=self.client.with_account(None)
            )
            nobody = self.client.with_account(NOBODY)
            self.probe(op, "an account of nobody", path, view=nobody)
        if op.bearer:
            invalid = {"authorization": "Bearer service-api-spec-check-invalid-token"}
            self.probe(op, "an invalid token", path, headers=invalid, auth=None)

    def gets(self, op: Operation) -> None:
        resource = self.spec.resources[str(op.resource)]
        name = str(resource.item_parameter)
        for record in self.records[resource.name][:2]:
            self.send("GET", self.fill(op.path, **{name: record[resource.id_field]}))
        if resource.id_field is None:
            # No identifier can be known to be nobody's: a service may answer any (as
            # the mock does for such a resource), and the client cannot address its
            # records by a field. Said once a resource.
            why = (
                f"{resource.name}: no probe of an identifier of nobody, as the spec "
                "names no identifier field of its records"
            )
            self.unsent += [why] if why not in self.unsent else []
            return
        nobody = self.fill(op.path, **{name: NOBODY})
        self.probe(op, "an identifier of nobody", nobody)

    def writes(self, create: Operation) -> None:
        """A copy of a listed record created, then deleted: only where the spec can
        delete it and the budget holds both (and a retry)."""
        resource = self.spec.resources[str(create.resource)]
        delete = [
            op
            for op in self.spec.operations
            if op.kind == "delete" and op.resource == resource.name
        ]
        record = (self.records[resource.name] or [{}])[0]
        leave = (resource.id_field, *resource.parent_parameters)
        body = {k: v for k, v in record.items() if k not in leave}
        why = ""
        if not delete:
            why = f"the spec declares no delete of {resource.name}"
        elif not body:
            why = f"no {resource.name} was listed to copy"
        elif create.body and not is_json(create.body.media):
            why = f"it takes {create.body.media}, not the JSON of a record"
        elif self.seen.data["requests"] + 4 > self.budget:
            why = "the budget left fewer than 4 requests"
        if why:
            self.done.append(f"{create.operation_id} not sent: {why}")
            return
        made = self.send("POST", self.fill(create.path), json=body)
        if not (isinstance(made, dict) and resource.id_field in made):
            self.done.append(
                f"{create.operation_id} answered {self.status}: nothing made"
            )
            return
        created = self.status
        item = {str(resource.item_parameter): made[resource.id_field]}
        self.send("DELETE", self.fill(delete[0].path, **item))
        left = "" if self.status < 300 else ": the copy is left, delete it by hand"
        self.done.append(
            f"{create.operation_id} answered {created} (a copy of a listed record), "
            f"{delete[0].operation_id} answered {self.status}{left}"
        )

    def run(self, allow_writes: bool) -> None:
        """Send the sample, in the order of the module docstring."""
        # Parents first: a sub-resource's path takes an identifier its parent listed.
        lists = sorted(self.spec.lists, key=lambda op: op.path.count("{"))
        for act in (self.page, self.probes):
            for op in lists:
                act(op)
        # Every operation first, then the other pages: where the budget runs out, a
        # spec of many lists has had each of its gets.
        for op in self.spec.operations:
            if op.kind == "get":
                self.gets(op)
        for op in lists:
            self.pages(op)
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
    keep the few short words string fields take. Raises :class:`SpecCheckError` for a
    budget below :data:`MIN_BUDGET` (before any request) or when no list answered a
    page, the client's typed errors when the credentials are refused, every list refused
    the account (``PermissionDeniedError``, its 403) or the service cannot be reached.

    Example::

        with service_api.Client() as client:
            observation = sample(client, load_spec("openapi.yaml"), budget=50)
    """
    if budget < MIN_BUDGET:
        raise SpecCheckError(
            f"a budget of {budget} requests sees no page: {MIN_BUDGET} at least "
            "(the token request and a page)"
        )
    sampler = _Sampler(client, spec, budget, enums)
    try:
        sampler.run(allow_writes)
    except _BudgetSpent:
        sampler.seen.data["stopped"] = True
    # A sample is one moment of the service: a place its later answers have and its
    # first lack (``previous``, from page 2 on) is no place that appeared since, so
    # the dates of the places (what ``--from`` says changed) are not kept.
    for answer in sampler.seen.data["answers"].values():
        answer.pop("seen", None)
    if allow_writes and not sampler.done:
        why = "the budget ran out first" if sampler.seen.data.get("stopped") else ""
        sampler.done.append(f"no write sent: {why or 'the spec declares no create'}")
    if not sampler.totals and sampler.refusal is not None:
        raise sampler.refusal  # every list refused the account: as `service-api list`
    if not sampler.totals:
        raise SpecCheckError(f"no list answered a page within {budget} requests")
    return sampler.seen.data
