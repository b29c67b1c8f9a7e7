"""``SERVICE_API_LOG`` under the CLI: each line of the client's log is printed once."""

import os
import subprocess
import sys

from service_api_mock import DEMO_CLIENT_ID, DEMO_CLIENT_SECRET, RunningMock


def test_the_cli_prints_each_line_once_with_the_switch_on(mock: RunningMock) -> None:
    # The CLI has its own handler on the root logger: the switch leaves the printing to it.
    env = {k: v for k, v in os.environ.items() if not k.startswith("SERVICE_API_")}
    env |= {
        "SERVICE_API_BASE_URL": mock.base_url,
        "SERVICE_API_CLIENT_ID": DEMO_CLIENT_ID,
        "SERVICE_API_CLIENT_SECRET": DEMO_CLIENT_SECRET,
        "SERVICE_API_LOG": "info",
    }
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "service_api_cli",
            "list",
            "shipments",
            "--account",
            "acct-1",
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr.count("bearer token for demo-client") == 1
    output = done.stdout + done.stderr
    issued = mock.service.issued_tokens()
    assert len(issued) == 1
    for secret in [DEMO_CLIENT_SECRET, *issued]:
        assert secret not in output
