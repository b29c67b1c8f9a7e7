"""The service teaches the spec: what openapi.yaml says, checked against what is seen.

:func:`check_spec` samples the service through a :class:`service_api.Client` (a bounded
set of read-only requests, see :func:`sample`), or reads the shapes a client kept with
``Client(observe=Observer(PATH))``, and compares them with the spec
(:func:`compare`): fields the spec does not declare, or declares and never saw, types
and formats that do not fit, nulls it does not allow, statuses, content types, error
bodies and headers it does not declare, the page envelope's facts, and for each
``x-assumed`` whether it was confirmed, refuted or not observed. The :class:`Report`
reads as text or JSON, each finding once with what the client does about it, and
:meth:`Report.write` edits the spec file in place: it adds and widens, makes optional a
required field the service does not always send, lowers a page-size limit the service
refuses, gives a body that fits no shared schema its own, never removes a field, marks
what held with ``x-observed: DATE``, and a second write against the same service
changes nothing. ``service-api spec check`` is
this, on the command line. Needs the ``spec`` extra: ``pip install 'service-api[spec]'``.

Example::

    with service_api.Client() as client:
        report = check_spec("openapi.yaml", client, budget=100)
    print(report.text())
    report.write()  # then `make`: the new fields are typed attributes
"""

from __future__ import annotations

from pathlib import Path

import service_api

try:  # each dependency of the extra first, so that a missing one names the extra
    import jsonschema  # type: ignore[import-untyped]  # noqa: F401
    import yaml  # noqa: F401
except ImportError as exc:
    raise service_api.ConfigurationError(
        f"the spec check and its Observer need the [spec] extra (no module "
        f"{exc.name!r}): pip install 'service-api[spec]'",
        "SERVICE_API_OBSERVE",
    ) from None

from service_api_spec import SpecError, load_spec, packaged_spec

from ._command import main
from ._compare import MIN_SHARE, compare, learned
from ._observation import Observer, SpecCheckError, load
from ._report import Finding, Report
from ._sample import page_limit, sample
from ._write import SpecWriteError

__all__ = [
    "Finding",
    "Observer",
    "Report",
    "SpecCheckError",
    "SpecWriteError",
    "check_spec",
    "compare",
    "learned",
    "load",
    "main",
    "packaged_spec",
    "page_limit",
    "sample",
]


def check_spec(
    spec_path: str | Path = "openapi.yaml",
    client: service_api.Client | None = None,
    *,
    observed: str | Path | None = None,
    budget: int = 100,
    allow_writes: bool = False,
    enums: bool = False,
    min_share: float = MIN_SHARE,
) -> Report:
    """Check the spec at ``spec_path`` against a sample of at most ``budget`` requests
    sent by ``client`` for its account, or (``observed``) against an observation file,
    sending nothing. ``allow_writes``: also create and delete a record of its own;
    ``enums``: report the few words string fields take; ``min_share``: the share of the
    objects seen an undeclared field must be in to be written (below, a note).

    Raises :class:`SpecCheckError` for a spec file that cannot be read or a sample that
    saw no page, ``service_api_spec.SpecError`` for a file that is no OpenAPI document,
    and the client's typed errors (refused credentials, no answer).

    Example::

        report = check_spec("openapi.yaml", observed="observed.json")
    """
    path = Path(spec_path)
    try:
        original = path.read_bytes()
        spec = load_spec(path)
    except (OSError, SpecError) as exc:
        raise SpecCheckError(f"{path}: cannot be checked ({exc})") from None
    if observed:
        try:
            return compare(spec, load(observed), original=original, min_share=min_share)
        except (KeyError, TypeError, AttributeError) as exc:  # a file of another shape
            problem = f"not an observation file of service-api ({exc!r:.60})"
            raise SpecCheckError(f"{observed}: {problem}") from None
    if client is None:
        raise TypeError("pass client= to sample the service, or observed= a file")
    observation = sample(
        client, spec, budget=budget, allow_writes=allow_writes, enums=enums
    )
    return compare(spec, observation, original=original, min_share=min_share)
