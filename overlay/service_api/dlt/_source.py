"""The dlt sources: one resource per list endpoint, fed by the API or by files: merged
on its identifier, or replaced whole by each run where it has none."""

from __future__ import annotations

import json
from collections.abc import Callable, Generator, Mapping, Sequence
from contextlib import closing
from typing import Any

import dlt
from dlt.extract import DltResource, DltSource

from service_api import Client, ServiceApiError, paginate
from service_api_client.api import LIST_ENDPOINTS  # generated: name -> ListEndpoint

ACCOUNT_COLUMN = "account"
"""The column every row gets, holding the account it was listed for."""

SOURCE_NAME = "service_api"
"""Name of the dlt source, hence of its schema and of its state in the pipeline."""

_FILE_CHUNK = 1000  # rows of a file handed to dlt at once

Rows = Generator[list[dict[str, Any]], None, None]


def list_endpoints() -> dict[str, str | None]:
    """The list endpoints a :func:`source` can load, with each one's identifier field.

    Example::

        >>> list_endpoints()
        {'devices': 'deviceId', 'shipments': 'shipmentId'}
    """
    return {name: e.id_field for name, e in LIST_ENDPOINTS.items()}


def _keyed(
    endpoints: Sequence[str] | None, primary_keys: Mapping[str, str] | None
) -> list[Any]:
    """``(endpoint, identifier field or None)`` of each endpoint asked for, all when
    ``None``."""
    chosen = []
    for name in LIST_ENDPOINTS if endpoints is None else dict.fromkeys(endpoints):
        if name not in LIST_ENDPOINTS:
            raise ValueError(
                f"unknown endpoint {name!r} (known: {', '.join(LIST_ENDPOINTS)})"
            )
        id_field = (primary_keys or {}).get(name, LIST_ENDPOINTS[name].id_field)
        chosen.append((LIST_ENDPOINTS[name], id_field))
    return chosen


def _merged(
    endpoint: Any, id_field: str | None, rows: Callable[[], Rows]
) -> DltResource:
    if id_field is None:
        # Nothing to merge rows on: each run's rows replace the table (dlt would
        # append them again at each run).
        return dlt.resource(rows, name=endpoint.name, write_disposition="replace")
    # A record is one of its account and, in a sub-resource list, of its parents.
    key = [id_field, *_path(endpoint), ACCOUNT_COLUMN]
    return dlt.resource(
        rows, name=endpoint.name, primary_key=key, write_disposition="merge"
    )


def _path(endpoint: Any) -> dict[str, str]:
    """The endpoint's path parameters, its parents' ids: spec name -> Python name."""
    return {p.name: p.python_name for p in endpoint.parameters if p.location == "path"}


def _as_source(resources: list[DltResource]) -> DltSource:
    return dlt.source(lambda: resources, name=SOURCE_NAME)()


def _check_accounts(accounts: Sequence[str]) -> list[str]:
    unique = [] if isinstance(accounts, str) else list(dict.fromkeys(accounts))
    if not unique or not all(
        isinstance(a, str) and a and a.isprintable() for a in unique
    ):
        raise ValueError(
            f"accounts must be a list of printable account IDs, not {accounts!r}"
        )
    return unique


def _start_pages(
    state: dict[str, Any], accounts: Sequence[str], page_size: int
) -> dict[str, int]:
    """Where each account starts in this run (accounts left out are done for this pass),
    from the resource state the last committed run left. Pure: unit-tested without dlt.
    """
    pending: dict[str, int] = state.get("pending") or {}
    # No pending account: the last pass ended (or this is the first run), a new one starts.
    done = set(state.get("done") or ()) if pending else set()
    previous_size = int(state.get("page_size") or page_size)
    # Same records from the same place whatever the page size: the first record not yet
    # loaded is (next - 1) * previous_size; re-reading a few is harmless.
    starts = {
        a: (int(pending[a]) - 1) * previous_size // page_size + 1 if a in pending else 1
        for a in accounts
        if a not in done
    }
    # Only accounts no longer asked for were unfinished: their pass is over.
    return starts or dict.fromkeys(accounts, 1)


def _pages(
    endpoint: Any,
    client: Client,
    accounts: Sequence[str],
    *,
    errors: list[BaseException] | None,
    resource_state: Callable[[], dict[str, Any]],
    **options: Any,
) -> Rows:
    """The rows of each page in turn, one page in memory at a time; ``resource_state``
    keeps where each account goes on. With ``errors`` a failure is appended to it and
    ends the resource cleanly, and every resource sharing the list stops at its next page.
    """
    state = resource_state()
    starts = _start_pages(state, accounts, options["page_size"])
    # Accounts no longer asked for are forgotten: they cannot hold a pass open.
    pending = dict(starts)
    # Those asked for again that the pass left out: done before.
    done = [a for a in accounts if a not in starts]
    state.update(page_size=options["page_size"], pending=pending, done=done)
    ids = {name: options.get(key) for name, key in _path(endpoint).items()}
    for account, start_page in starts.items():
        if errors:
            return
        try:
            with client.with_account(account) as child:
                pages = iter(
                    paginate(
                        endpoint.module, child, start_page=start_page, **options
                    ).pages()
                )
                with closing(pages):
                    for page in pages:
                        yield [
                            {**raw, **ids, ACCOUNT_COLUMN: account}
                            for raw in page.raw_items
                        ]
                        # Only once dlt has taken the page: never marked loaded before it is.
                        pending[account] = page.number + 1
                        if errors:
                            return
        except (ServiceApiError, KeyboardInterrupt) as exc:
            if errors is None:
                raise
            errors.append(exc)  # ends this resource cleanly: dlt commits what it took
            return
        del pending[account]
        done.append(account)
    if not pending:
        # The pass is complete: the next run starts a new one from page 1.
        state["done"] = []


def source(
    client: Client,
    accounts: Sequence[str],
    *,
    endpoints: Sequence[str] | None = None,
    page_size: int | None = None,
    primary_keys: Mapping[str, str] | None = None,
    params: Mapping[str, dict[str, Any]] | None = None,
    errors: list[BaseException] | None = None,
    **options: Any,
) -> DltSource:
    """A dlt source with one resource per list endpoint (or per name in ``endpoints``),
    each loading every record of every account in ``accounts``, page by page.

    Args:
        client: the client to use; one child per account shares its token and pool.
        accounts: the accounts to load, in order.
        endpoints: endpoint names (``"shipments"``); all list endpoints when ``None``.
        page_size: records per request, at most each endpoint's maximum; by default
            each endpoint's largest page, as the spec states it (its ``pageSize``
            maximum, else its default): the fewest requests.
        primary_keys: the identifier field of an endpoint (``{"parcels":
            "parcelRef"}``); it wins over the one found in the spec. An endpoint with
            neither is loaded whole by each run into a table it replaces
            (``write_disposition="replace"``, no key, no resume), so that it never
            stops the others.
        params: each endpoint's own parameters, as keywords of its generated function
            (``{"routes": {"min_rating": 4}}``). A sub-resource list's rows get its
            parents' ids as columns, part of the primary key (``shipmentId``, which dlt
            names ``shipment_id``): of the parent given
            (``{"shipment-events": {"shipment_id": "S1"}}``), else of every parent:
            each page of the parent list, then the records of each parent on it, a
            request (or more) per parent.
        errors: how a failure ends the run. ``None``: the error propagates and dlt
            abandons the extract (nothing of this run is committed). A list: the error
            (a :class:`~service_api.ServiceApiError` or ``KeyboardInterrupt``) is
            appended to it and every resource stops at its next page, so the pipeline
            commits what was fetched and where to resume; raise it after
            ``pipeline.run`` (:func:`load` does).
        options: any other option of :func:`service_api.paginate` (``concurrency``: pages
            fetched ahead per account), checked here, before any request.

    Example::

        errors: list[BaseException] = []
        pipeline.run(source(client, ["acct-1"], endpoints=["devices"], errors=errors))
        if errors:
            raise errors[0]
    """
    chosen = _keyed(endpoints, primary_keys)
    accounts = _check_accounts(accounts)
    if page_size is not None and (type(page_size) is not int or page_size < 1):
        raise ValueError(
            f"page_size must be a whole number of at least 1, not {page_size!r}"
        )
    params = params or {}

    def given(endpoint: Any) -> dict[str, Any]:
        # Its largest page unless one is named.
        size = page_size or endpoint.largest_page
        return options | {"page_size": size} | params.get(endpoint.name, {})

    for endpoint, _ in chosen:
        largest = endpoint.max_page_size
        if page_size is not None and largest is not None and page_size > largest:
            raise ValueError(
                f"page_size must be within 1..{largest}, got {page_size} "
                f"(the largest page of {endpoint.name!r})"
            )
        # Its checks, no request (a parent's id left out stands in as None).
        ids = dict.fromkeys(_path(endpoint).values())
        paginate(endpoint.module, client, **ids | given(endpoint))

    def rows(endpoint: Any, state: Any) -> Rows:
        # With a parent's id left out, the records of every parent: each page of the
        # list whose records' identifier it is, then the records of each parent on it.
        # Only the first list's place is kept in the resource state: the records
        # under a parent start again.
        asked = given(endpoint)
        missing = [key for key in _path(endpoint).values() if key not in asked]
        parent = LIST_ENDPOINTS.get(endpoint.parent or "") if missing else None
        if parent is None:
            yield from _pages(
                endpoint,
                client,
                accounts,
                errors=errors,
                resource_state=state,
                **asked,
            )
            return
        fields = endpoint.parent_fields
        for page in rows(parent, state):
            for row in page:
                ids = {
                    key: row.get(fields.get(name, name))
                    for name, key in _path(endpoint).items()
                    if key not in asked
                }
                yield from _pages(
                    endpoint,
                    client,
                    [row[ACCOUNT_COLUMN]],
                    errors=errors,
                    resource_state=dict,
                    **asked | ids,
                )
                if errors:
                    return

    def resource(endpoint: Any, id_field: str | None) -> DltResource:
        # A table replaced by each run is fetched whole: no place is kept.
        state = dlt.current.resource_state if id_field else dict
        return _merged(endpoint, id_field, lambda: rows(endpoint, state))

    return _as_source([resource(endpoint, id_field) for endpoint, id_field in chosen])


def _file_rows(paths: Sequence[str], account: str | None) -> Rows:
    for path in paths:
        with open(path, encoding="utf-8") as lines:
            rows: list[dict[str, Any]] = []
            for number, line in enumerate(lines, 1):
                if not line.strip():
                    continue
                try:
                    record = json.loads(line)
                    tag = record.get(ACCOUNT_COLUMN) or account
                except (ValueError, AttributeError):
                    raise ValueError(f"{path}:{number}: not a JSON object") from None
                if not tag:
                    raise ValueError(
                        f"{path}:{number}: a record without an account: pass account="
                    )
                rows.append({**record, ACCOUNT_COLUMN: tag})
                if len(rows) == _FILE_CHUNK:
                    yield rows
                    rows = []
            if rows:
                yield rows


def file_source(
    endpoint: str,
    paths: Sequence[str],
    account: str | None,
    *,
    primary_keys: Mapping[str, str] | None = None,
) -> DltSource:
    """A dlt source of JSONL files written by ``service-api list ENDPOINT``, into the
    tables of :func:`source`, merged on the same keys (see :func:`load_files`)."""
    ((found, id_field),) = _keyed([endpoint], primary_keys)
    files = list(paths)
    return _as_source([_merged(found, id_field, lambda: _file_rows(files, account))])
