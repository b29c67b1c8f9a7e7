"""What ``--write`` says it fixes, the client then survives: a service that never sends
a field the spec requires (the pages' ``pageNumber``) breaks the client generated from
the spec; after ``spec check --write`` and a generation from the written spec, the
command line exports every record from the same service."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml
from planted import PLANTS, ROOT, dump, serving, specs
from spec_copy import generate_copy

import service_api
from service_api import testing
from service_api_mock import DEMO_CLIENT_SECRET
from service_api_speccheck import check_spec


def test_a_required_field_never_sent_is_fixed_so_that_the_client_lists_it(
    tmp_path: Path,
) -> None:
    plant = PLANTS["required pageNumber never sent"]
    true, _ = specs([plant])
    spec = Path(shutil.copy(ROOT / "openapi.yaml", tmp_path / "openapi.yaml"))
    with serving() as (served, url):
        served.serve(dump(true, tmp_path / "true.yaml"), variants=[plant.variant])
        service = served.service
        assert service is not None
        with (
            testing.no_retry_sleep(),
            service_api.Client(
                url, "demo-client", DEMO_CLIENT_SECRET, "acct-1"
            ) as client,
        ):
            # The client of the spec as it is cannot read such a page.
            with pytest.raises(service_api.InvalidResponseError, match="'pageNumber'"):
                next(iter(client.devices.list(max_items=1)))
            report = check_spec(spec, client)
        assert not report.matched
        assert any(f.kind == "required" for f in report.findings)
        report.write()
        written = yaml.safe_load(spec.read_text("utf-8"))
        copy = generate_copy(tmp_path / "copy", written)
        out = tmp_path / "devices.jsonl"
        done = copy.cli(["list", "devices", "-o", str(out)], url, tmp_path)
        assert done.returncode == 0, done.stderr
        exported = [json.loads(line) for line in out.read_text("utf-8").splitlines()]
        assert len(exported) == len(service.dataset("devices", "acct-1"))
