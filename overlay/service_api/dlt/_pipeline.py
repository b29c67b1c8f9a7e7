"""Running the sources through a pipeline, in the fastest file format the destination takes."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any, ClassVar

import dlt
from dlt.common.configuration.container import Container
from dlt.common.configuration.providers import DictionaryProvider
from dlt.common.configuration.specs.pluggable_run_context import PluggableRunContext
from dlt.common.pipeline import LoadInfo

from service_api import Client
from service_api.dlt._source import file_source, source

# dlt's writers stream rows to JSONL files that the destination bulk-loads. DuckDB's
# default, INSERT statements, took 126 s and 4.2 GB for 2 x 10,000 shipments where jsonl
# takes 53 s and 294 MB (bench case "load"). Parquet would need pyarrow, and on some
# destinations a driver besides.
_FASTEST = "jsonl"


def fastest_file_format(pipeline: dlt.Pipeline) -> str | None:
    """The loader file format :func:`load` gives ``pipeline``: the user's choice where they
    made one (``[normalize] loader_file_format`` in dlt's config, or ``None`` to keep the
    ``preferred_loader_file_format`` they gave the destination), else ``jsonl`` where the
    destination supports it, else ``None``: dlt's preferred format.

    Example::

        >>> fastest_file_format(dlt.pipeline("p", destination="duckdb"))
        'jsonl'
    """
    configured: str | None = dlt.config.get("normalize.loader_file_format")
    destination: Any = pipeline.destination
    if (
        configured
        or destination is None
        or "preferred_loader_file_format" in destination.caps_params
    ):
        return configured
    supported = destination.capabilities().supported_loader_file_formats or ()
    return _FASTEST if _FASTEST in supported else None


# Memory flat in the number of records (bench case "load", 2 x 50,000 shipments): DuckDB
# loading each file on its own connection in 20 threads with a buffer of 80 % of RAM peaked
# at 464 MB, +166 MB over 2 x 10,000. One job at a time and one DuckDB thread: 290 MB,
# +65 MB; with a 64 MB buffer besides (DuckDB spills to disk beyond it), loading the same
# file of 2 x 50,000 peaked at 236 MB where 2 x 10,000 took 218 MB; no slower.
# Files written uncompressed: gzip took a third of the normalize step's CPU. A loaded
# package's files are deleted (its state and schema are kept): 2 loads of 2 x 120
# shipments and devices left 1.4 MB of them beside the database, 224 KB without.
DEFAULTS: dict[str, Any] = {
    "data_writer": {"disable_compression": True},
    "load": {"workers": 1, "delete_completed_jobs": True},
    "destination": {
        "duckdb": {
            "credentials": {"global_config": {"threads": 1, "memory_limit": "64MB"}}
        }
    },
}


class _Defaults(DictionaryProvider):
    NAME: ClassVar[str] = "service_api defaults"


@contextmanager
def defaults() -> Iterator[None]:
    """dlt settings :func:`load` and :func:`load_files` run with, as :data:`DEFAULTS`
    says, each only where the user's own dlt configuration (environment, ``config.toml``,
    ``secrets.toml``, a destination's arguments) sets nothing: looked up after all of it.

    Example::

        with defaults():
            pipeline.run(data)
    """
    providers = Container()[PluggableRunContext].providers
    provider = _Defaults()
    with provider.values(DEFAULTS):
        providers.providers.append(provider)
        try:
            yield
        finally:
            providers.providers.remove(provider)


def _run(pipeline: dlt.Pipeline, data: Any, loader_file_format: str | None) -> LoadInfo:
    chosen: Any = loader_file_format or fastest_file_format(pipeline)
    with defaults():
        return pipeline.run(data, loader_file_format=chosen)


def load(
    pipeline: dlt.Pipeline,
    client: Client,
    accounts: Sequence[str],
    *,
    endpoints: Sequence[str] | None = None,
    loader_file_format: str | None = None,
    **options: Any,
) -> LoadInfo:
    """Run :func:`source` through ``pipeline`` (``options`` go to :func:`source`) in
    ``loader_file_format`` or else :func:`fastest_file_format`; returns dlt's ``LoadInfo``.

    A failure while fetching (any :class:`~service_api.ServiceApiError`, with its
    ``page_number`` and ``resumable``, or ``KeyboardInterrupt``) is raised as itself,
    after the pages fetched before it are loaded with the state to resume from: run
    ``load`` again to fetch the rest. A failure of dlt itself (a destination down) is
    dlt's ``PipelineStepFailed``; dlt finishes its pending packages on the next run.

    Example::

        pipeline = dlt.pipeline("service_api", destination="duckdb", dataset_name="raw")
        info = load(pipeline, client, ["acct-1", "acct-2"])
    """
    errors: list[BaseException] = []
    built = source(client, accounts, endpoints=endpoints, errors=errors, **options)
    try:
        info = _run(pipeline, built, loader_file_format)
    except Exception as exc:
        if errors:
            # dlt failed after fetching had already stopped: say both.
            exc.add_note(f"fetching had stopped first on: {type(errors[0]).__name__}")
        raise
    if errors:
        raise errors[0]
    return info


def load_files(
    pipeline: dlt.Pipeline,
    endpoint: str,
    paths: Sequence[str],
    *,
    account: str | None = None,
    primary_keys: Mapping[str, str] | None = None,
    loader_file_format: str | None = None,
) -> LoadInfo:
    """Load JSONL files of ``service-api list ENDPOINT`` through ``pipeline`` into the
    tables :func:`load` fills, merged on the same keys: no request, no credentials, and
    loading a file twice adds nothing. A record's ``account`` field (``service-api list``
    writes it for several accounts or with ``--tag-account``) says its account;
    ``account`` is for records without one. ``primary_keys`` as for :func:`source`.

    Example::

        load_files(pipeline, "shipments", ["shipments.jsonl"], account="acct-1")
    """
    files = file_source(endpoint, paths, account, primary_keys=primary_keys)
    return _run(pipeline, files, loader_file_format)
