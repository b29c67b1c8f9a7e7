"""The loop a user runs: check, ``--write``, ``make``, and the learned fields are typed
attributes (``shipment.status``). Generated in a copy of the repository's layout, so the
repository's own spec and ``generated/`` are never touched."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from planted import ROOT

import service_api
from service_api_mock import DEMO_CLIENT_SECRET, RunningMock
from service_api_speccheck import check_spec

USE = """
import datetime, sys
from service_api_client.models import Device, Shipment
shipment = Shipment.from_dict({"shipmentId": "s1", "status": "Planned",
    "referenceNumber": "PO-1", "createdAt": "2026-01-05T08:00:00Z"})
assert shipment.status == "Planned", shipment
assert shipment.reference_number == "PO-1"
assert isinstance(shipment.created_at, datetime.datetime)
assert Device.from_dict({"firmwareVersion": "1.2.3"}).firmware_version == "1.2.3"
print("typed")
"""


@pytest.mark.slow
def test_after_write_make_turns_the_learned_fields_into_typed_attributes(
    mock: RunningMock, tmp_path: Path
) -> None:
    root, generated = tmp_path / "repo", tmp_path / "generated"
    shutil.copytree(ROOT / "codegen", root / "codegen")
    spec = Path(shutil.copy(ROOT / "openapi.yaml", root / "openapi.yaml"))
    with service_api.Client(
        mock.base_url, "demo-client", DEMO_CLIENT_SECRET, "acct-1"
    ) as c:
        check_spec(spec, c).write()
    env = {k: v for k, v in os.environ.items() if not k.startswith("SERVICE_API_")}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    for command in (
        [sys.executable, str(root / "codegen" / "generate.py"), str(generated)],
        [sys.executable, "-m", "service_api_mock", "--check-spec", str(spec)],
    ):
        done = subprocess.run(
            command,
            cwd=root,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    env["PYTHONPATH"] = str(generated)
    done = subprocess.run(
        [sys.executable, "-c", USE],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.stdout.strip() == "typed", done.stderr[-3000:]
