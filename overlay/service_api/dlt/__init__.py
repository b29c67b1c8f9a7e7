"""Load list endpoints into a database with dlt (``pip install 'service-api[dlt]'``).

:func:`source` is a dlt source with one resource per list endpoint of the generated
client (an endpoint added to ``openapi.yaml`` becomes a resource after ``make``), driven
by :class:`~service_api.Client` and :func:`~service_api.paginate`: token refresh, account
header, retries and rate limit are the client's. :func:`load` runs it through a pipeline
and is what ``service-api load`` uses; :func:`load_files` loads the JSONL files that
``service-api list`` wrote, into the same tables, without calling the API.

* Rows: each record exactly as the server sent it, plus an ``account`` column; nested
  objects become columns, nested lists child tables (``shipments__shipment_legs``), as
  dlt does. Resources yield whole pages, one at a time: memory stays flat.
* Keys: primary key = the record's identifier (``shipmentId``, ``deviceId``) plus
  ``account``, ``write_disposition="merge"``: a nightly re-run updates rows in place.
  A list whose records have none (and none named in ``primary_keys``) is loaded whole
  by each run into a table it replaces: it never stops the others.
* Speed: :func:`load` and :func:`load_files` hand dlt the fastest loader file format the
  destination supports (:func:`fastest_file_format`; ``jsonl`` for DuckDB, not its
  default of INSERT statements), unless the user chose one.
* Resume: each resource keeps in dlt's resource state, per account, the next page to
  fetch. When a run stops on an API error or Ctrl-C, :func:`load` commits the pages
  fetched so far together with that state, then raises the error; the next run fetches
  the rest of that pass only, and the run after a finished pass starts again at page 1.

Example::

    import dlt
    import service_api
    from service_api.dlt import load

    pipeline = dlt.pipeline("service_api", destination="duckdb", dataset_name="raw")
    with service_api.Client(url, client_id, secret) as client:
        load(pipeline, client, ["acct-1", "acct-2"], endpoints=["shipments"])
"""

try:
    import dlt as _dlt  # noqa: F401 -- only to name the extra when it is missing
except ImportError:  # pragma: no cover - exercised in a subprocess without dlt
    raise ImportError(
        "service_api.dlt needs dlt: pip install 'service-api[dlt]'"
    ) from None

from service_api.dlt._pipeline import fastest_file_format, load, load_files
from service_api.dlt._source import ACCOUNT_COLUMN, SOURCE_NAME, list_endpoints, source

__all__ = [
    "ACCOUNT_COLUMN",
    "SOURCE_NAME",
    "fastest_file_format",
    "list_endpoints",
    "load",
    "load_files",
    "source",
]
