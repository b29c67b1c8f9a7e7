"""Time the generated page models' from_dict, in microseconds per record.

Run by hand (not a test: timings on a shared machine are not pass/fail), with the
folder that holds a generated ``service_api_client`` (default: ./generated), so that
two generations can be compared:

    .venv/bin/python -m bench.time_from_dict [GENERATED_DIR]

    git worktree add /tmp/before <commit> && (cd /tmp/before && make generated)
    .venv/bin/python -m bench.time_from_dict /tmp/before/generated

Pages of 50 records of the mock's data (seed 0), as the service sends them; the best
of 15 runs of the process's CPU time.
"""

from __future__ import annotations

import importlib
import sys
import time
import timeit
from collections.abc import Callable
from pathlib import Path
from typing import Any

from service_api_mock import MockConfig, MockService

__all__ = ["main"]

PAGE = 50
PAGES = 20
REPEAT = 15


def _pages(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``records`` as the pages of 50 the service sends."""
    return [
        {
            "totalRecords": len(records),
            "pageNumber": number + 1,
            "pageSize": PAGE,
            "data": records[number * PAGE : (number + 1) * PAGE],
        }
        for number in range(PAGES)
    ]


def _models(generated: Path) -> Any:
    """``service_api_client.models`` of the generation in ``generated``, not the one
    installed."""
    sys.path.insert(0, str(generated))
    for name in [m for m in sys.modules if m.split(".")[0] == "service_api_client"]:
        del sys.modules[name]
    models = importlib.import_module("service_api_client.models")
    assert str(generated) in str(models.__file__), models.__file__
    return models


def main() -> None:
    """Print the microseconds per record of ``ShipmentPage`` and ``DevicePage``."""
    generated = Path(sys.argv[1] if len(sys.argv) > 1 else "generated").resolve()
    models = _models(generated)
    mock = MockService(MockConfig(records=PAGE * PAGES, seed=0))
    for resource, page_model in (
        ("shipments", "ShipmentPage"),
        ("devices", "DevicePage"),
    ):
        pages = _pages(mock.dataset(resource, "acct-1"))
        from_dict: Callable[[dict[str, Any]], object] = getattr(
            models, page_model
        ).from_dict

        def parse_all(
            pages: list[dict[str, Any]] = pages,
            from_dict: Callable[[dict[str, Any]], object] = from_dict,
        ) -> None:
            for page in pages:
                from_dict(page)

        # CPU time of this process, not wall time: the machine is shared, and a run that
        # was descheduled would otherwise count the other processes' time.
        runs = timeit.repeat(
            parse_all, timer=time.process_time, number=5, repeat=REPEAT
        )
        per_record = min(runs) / (5 * PAGE * PAGES) * 1e6
        print(
            f"{page_model}.from_dict: {per_record:.2f} us per record "
            f"({resource}, best of {REPEAT})"
        )


if __name__ == "__main__":
    main()
