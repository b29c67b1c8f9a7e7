"""Load every list endpoint into a database with dlt (``pip install 'service-api[dlt]'``).

:func:`source` is a dlt source with one resource per list endpoint of the generated
client (an endpoint added to ``openapi.yaml`` becomes a resource after ``make``), driven
by this package's :class:`~service_api.Client` and :class:`~service_api.Pager`: token
refresh, account header, retries and rate limit are the client's. :func:`load` runs it
through a pipeline and is what ``service-api load`` uses.

* Rows: each record exactly as the server sent it (``Page.raw_items``), plus an
  ``account`` column; nested objects become columns, nested lists child tables
  (``shipments__shipment_legs``), as dlt does. Resources yield whole pages.
* Keys: primary key = the record's identifier (``shipmentId``, ``deviceId``) plus
  ``account``, ``write_disposition="merge"``: a nightly re-run updates rows in place.
* Resume: each resource keeps in dlt's resource state, per account, the next page to
  fetch. When a run stops on an API error or Ctrl-C, :func:`load` commits the pages
  fetched so far together with that state, then raises the error; the next run fetches
  the rest of that pass only (accounts already finished are skipped), and the run after
  a finished pass starts again at page 1. Rows fetched twice (a page re-read, records
  shifted between runs) are merged, not duplicated.

Example::

    import dlt
    import service_api
    from service_api.dlt import load

    pipeline = dlt.pipeline("service_api", destination="duckdb", dataset_name="raw")
    with service_api.Client(url, client_id, secret) as client:
        load(pipeline, client, ["acct-1", "acct-2"], endpoints=["shipments"])
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

try:
    import dlt
except ImportError:  # pragma: no cover - exercised in a subprocess without dlt
    raise ImportError("service_api.dlt needs dlt: pip install 'service-api[dlt]'") from None

from dlt.common.pipeline import LoadInfo
from dlt.extract import DltResource, DltSource

# Only the package's public API drives the load, as any user's code would.
from service_api import Client, ServiceApiError, paginate
from service_api_client.api import LIST_ENDPOINTS, ListEndpoint

__all__ = ["ACCOUNT_COLUMN", "SOURCE_NAME", "list_endpoints", "load", "source"]

ACCOUNT_COLUMN = "account"
"""The column every row gets, holding the account it was listed for."""

# The service's largest page (pageSize in openapi.yaml): the fewest requests.
_MAX_PAGE_SIZE = 50

SOURCE_NAME = "service_api"
"""Name of the dlt source, hence of its schema and of its state in the pipeline."""


def list_endpoints() -> dict[str, str | None]:
    """The list endpoints a :func:`source` can load, with each one's identifier field.

    Example::

        >>> list_endpoints()
        {'devices': 'deviceId', 'shipments': 'shipmentId'}
    """
    return {name: e.id_field for name, e in LIST_ENDPOINTS.items()}


@dataclass
class _Stop:
    """What ends a run early, shared by the resources of one source: once one resource
    meets an error (or Ctrl-C), the others stop at their next page boundary."""

    errors: list[BaseException] | None
    _stopping: bool = field(default=False)

    def stop(self, error: BaseException) -> None:
        assert self.errors is not None
        self.errors.append(error)
        self._stopping = True

    def requested(self) -> bool:
        return self._stopping


def _select(
    endpoints: Sequence[str] | None, known: Mapping[str, ListEndpoint]
) -> list[ListEndpoint]:
    if endpoints is None:
        return list(known.values())
    chosen: list[ListEndpoint] = []
    for name in dict.fromkeys(endpoints):
        endpoint = known.get(name)
        if endpoint is None:
            raise ValueError(f"unknown endpoint {name!r} (known: {', '.join(known) or 'none'})")
        chosen.append(endpoint)
    return chosen


def _check_accounts(accounts: Sequence[str]) -> list[str]:
    if isinstance(accounts, str):
        raise TypeError("accounts is a sequence of account IDs, not one string")
    unique = list(dict.fromkeys(accounts))
    if not unique:
        raise ValueError("at least one account is needed")
    for account in unique:
        if not isinstance(account, str) or not account or not account.isprintable():
            raise ValueError(f"account {account!r} is not a non-empty printable string")
    return unique


def _start_pages(state: dict[str, Any], accounts: Sequence[str], page_size: int) -> dict[str, int]:
    """Where each account starts in this run (accounts left out are done for this pass),
    from the resource state the last committed run left.

    Pure: unit-tested without dlt running.
    """
    pending: dict[str, int] = state.get("pending") or {}
    if not pending:
        # The last pass ended (or this is the first run): a new pass from page 1.
        return dict.fromkeys(accounts, 1)
    done = set(state.get("done") or ())
    previous_size = int(state.get("page_size") or page_size)
    starts: dict[str, int] = {}
    for account in accounts:
        if account in pending:
            # Same records from the same place whatever the page size: the first record
            # not yet loaded is (next - 1) * previous_size; re-reading a few is harmless.
            first = (int(pending[account]) - 1) * previous_size
            starts[account] = first // page_size + 1
        elif account not in done:
            starts[account] = 1
    # Only accounts no longer asked for were unfinished: their pass is over.
    return starts or dict.fromkeys(accounts, 1)


def _rows(raw_items: Sequence[Any], account: str) -> list[dict[str, Any]]:
    # The record as sent, plus its account: last, so it wins over a field of that name.
    return [
        {**raw, ACCOUNT_COLUMN: account}
        if isinstance(raw, dict)
        else {"value": raw, ACCOUNT_COLUMN: account}
        for raw in raw_items
    ]


def _pages(
    endpoint: ListEndpoint,
    client: Client,
    accounts: Sequence[str],
    *,
    page_size: int,
    concurrency: int,
    stop: _Stop,
    resource_state: Callable[[], dict[str, Any]],
) -> Iterator[list[dict[str, Any]]]:
    state = resource_state()
    starts = _start_pages(state, accounts, page_size)
    state["page_size"] = page_size
    # Accounts no longer asked for are forgotten: they cannot hold a pass open.
    pending: dict[str, int] = dict(starts)
    state["pending"] = pending
    done: list[str] = [a for a in state.get("done") or () if a in accounts and a not in starts]
    state["done"] = done
    for account, start_page in starts.items():
        if stop.requested():
            return
        with client.with_account(account) as child:
            pages = iter(
                paginate(
                    endpoint.module,
                    child,
                    page_size=page_size,
                    start_page=start_page,
                    concurrency=concurrency,
                ).pages()
            )
            try:
                while True:
                    try:
                        page = next(pages)
                    except StopIteration:
                        break
                    except (ServiceApiError, KeyboardInterrupt) as exc:
                        if stop.errors is None:
                            raise
                        # Ends this resource cleanly, so that dlt commits the pages
                        # yielded so far and ``pending`` says where to go on.
                        stop.stop(exc)
                        return
                    yield _rows(page.raw_items, account)
                    # Only once dlt has taken the page: a page is never marked loaded
                    # before it is in the load package.
                    pending[account] = page.number + 1
                    if stop.requested():
                        return
            finally:
                pages.close()
        del pending[account]
        done.append(account)
    if not pending:
        # The pass is complete: the next run starts a new one from page 1.
        state["done"] = []


def _resource(
    endpoint: ListEndpoint,
    client: Client,
    accounts: Sequence[str],
    *,
    id_field: str,
    page_size: int,
    concurrency: int,
    stop: _Stop,
) -> DltResource:
    def pages() -> Iterator[list[dict[str, Any]]]:
        yield from _pages(
            endpoint,
            client,
            accounts,
            page_size=page_size,
            concurrency=concurrency,
            stop=stop,
            resource_state=dlt.current.resource_state,
        )

    resource: DltResource = dlt.resource(
        pages,
        name=endpoint.name,
        table_name=endpoint.name,
        primary_key=[id_field, ACCOUNT_COLUMN],
        write_disposition="merge",
    )
    return resource


def source(
    client: Client,
    accounts: Sequence[str],
    *,
    endpoints: Sequence[str] | None = None,
    page_size: int = _MAX_PAGE_SIZE,
    concurrency: int = 1,
    primary_keys: Mapping[str, str] | None = None,
    errors: list[BaseException] | None = None,
) -> DltSource:
    """A dlt source with one resource per list endpoint (or per name in ``endpoints``),
    each loading every record of every account in ``accounts``, page by page.

    Args:
        client: the client to use; one child per account shares its token and pool.
        accounts: the accounts to load, in order.
        endpoints: endpoint names (``"shipments"``); all list endpoints when ``None``.
        page_size: records per request (the service's maximum, 50, by default).
        concurrency: pages fetched ahead per account (see :class:`service_api.Pager`).
        primary_keys: the identifier field of an endpoint whose model has no single
            ``...Id`` field (``{"parcels": "parcelRef"}``); it wins over the one found.
        errors: how a failure ends the run. ``None``: the error propagates and dlt
            abandons the extract (nothing of this run is committed). A list: the error
            (a :class:`~service_api.ServiceApiError` or ``KeyboardInterrupt``) is
            appended to it and every resource stops at its next page, so the pipeline
            commits what was fetched and where to resume; raise it after
            ``pipeline.run`` (:func:`load` does).

    Example::

        errors: list[BaseException] = []
        pipeline.run(source(client, ["acct-1"], endpoints=["devices"], errors=errors))
        if errors:
            raise errors[0]
    """
    chosen = _select(endpoints, LIST_ENDPOINTS)
    accounts = _check_accounts(accounts)
    if not 1 <= page_size <= _MAX_PAGE_SIZE:
        raise ValueError(f"page_size must be within 1..{_MAX_PAGE_SIZE}, got {page_size}")
    if concurrency < 1:
        raise ValueError(f"concurrency must be at least 1, got {concurrency}")
    stop = _Stop(errors)
    resources: list[DltResource] = []
    for endpoint in chosen:
        id_field = (primary_keys or {}).get(endpoint.name, endpoint.id_field)
        if id_field is None:
            raise ValueError(
                f"endpoint {endpoint.name!r} has no single identifier field: "
                f"pass primary_keys={{{endpoint.name!r}: 'fieldName'}}"
            )
        resources.append(
            _resource(
                endpoint,
                client,
                accounts,
                id_field=id_field,
                page_size=page_size,
                concurrency=concurrency,
                stop=stop,
            )
        )

    @dlt.source(name=SOURCE_NAME)
    def service_api() -> list[DltResource]:
        return resources

    built: DltSource = service_api()
    return built


def load(
    pipeline: dlt.Pipeline,
    client: Client,
    accounts: Sequence[str],
    *,
    endpoints: Sequence[str] | None = None,
    page_size: int = _MAX_PAGE_SIZE,
    concurrency: int = 1,
    primary_keys: Mapping[str, str] | None = None,
) -> LoadInfo:
    """Run :func:`source` through ``pipeline``; returns dlt's ``LoadInfo``.

    A failure while fetching (any :class:`~service_api.ServiceApiError`, with its
    ``page_number`` and ``resumable``, or ``KeyboardInterrupt``) is raised as itself,
    after the pages fetched before it are loaded with the state to resume from: run
    ``load`` again to fetch the rest. A failure of dlt itself (a destination down) is
    dlt's ``PipelineStepFailed``; dlt finishes its pending packages on the next run.

    Example::

        pipeline = dlt.pipeline("service_api", destination="duckdb", dataset_name="raw")
        info = load(pipeline, client, ["acct-1", "acct-2"])
        print(info)
    """
    errors: list[BaseException] = []
    built = source(
        client,
        accounts,
        endpoints=endpoints,
        page_size=page_size,
        concurrency=concurrency,
        primary_keys=primary_keys,
        errors=errors,
    )
    try:
        info: LoadInfo = pipeline.run(built)
    except Exception as exc:
        if errors:
            # dlt failed after fetching had already stopped: say both.
            exc.add_note(f"fetching had stopped first on: {type(errors[0]).__name__}")
        raise
    if errors:
        raise errors[0]
    return info
