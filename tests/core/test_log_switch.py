"""``SERVICE_API_LOG``: set in a child process, the client's log reaches stderr, secret-free."""

import logging
import os
import subprocess
import sys

import httpx
import pytest

from service_api import RetryPolicy
from service_api._logs import log_response
from service_api_mock import DEMO_CLIENT_ID, DEMO_CLIENT_SECRET, RunningMock

# Runs in the child: a call, an expired token (401, refresh, replay), then retried
# faults. The environment gives it the settings, as the variables would a user's app.
SCRIPT = """
import sys

import httpx

import service_api
from service_api_client.api.shipments import list_shipments

control = sys.argv[1]

with service_api.Client() as client:
    list_shipments.sync(client=client)
    httpx.post(control + "/__mock__/clock", json={"advance": 10}).raise_for_status()
    list_shipments.sync(client=client)
    faults = {"fault_rate": 1.0, "retry_after": 0.01}
    httpx.post(control + "/__mock__/faults", json=faults).raise_for_status()
    try:
        list_shipments.sync(client=client)
    except service_api.ApiStatusError as exc:
        print("failed:", type(exc).__name__, file=sys.stderr)
"""


def run_child(mock: RunningMock, level: str | None) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SERVICE_API_")}
    env |= {
        "SERVICE_API_BASE_URL": mock.base_url,
        "SERVICE_API_CLIENT_ID": DEMO_CLIENT_ID,
        "SERVICE_API_CLIENT_SECRET": DEMO_CLIENT_SECRET,
        "SERVICE_API_ACCOUNT_ID": "acct-1",
    }
    if level is not None:
        env["SERVICE_API_LOG"] = level
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, mock.origin],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert (
        "failed: ServerError" in done.stderr or "failed: RateLimitError" in done.stderr
    )
    return done.stdout + done.stderr


def assert_no_secret(output: str, mock: RunningMock, tokens: int = 2) -> None:
    issued = mock.service.issued_tokens()
    assert len(issued) == tokens
    for secret in [DEMO_CLIENT_SECRET, *issued]:
        assert secret not in output


def test_debug_logs_one_line_per_answer_retries_and_refreshes(
    mock: RunningMock,
) -> None:
    mock.service.reset(token_ttl=2)
    output = run_child(mock, "debug")
    lines = output.splitlines()
    answers = [line for line in lines if " DEBUG service_api] GET " in line]
    # The 401 and its replay happen inside authentication: the send sees one answer.
    ok = [line for line in answers if f"GET {mock.base_url}/shipments?" in line]
    assert sum("-> 200 in" in line for line in ok) == 2
    # The first attempt and every retry of the default policy.
    retries = RetryPolicy().max_retries
    assert (
        sum("-> 503 in" in line or "-> 429 in" in line for line in answers)
        == 1 + retries
    )
    assert any(" WARNING service_api] retrying GET" in line for line in lines)
    assert sum(" INFO service_api] bearer token for " in line for line in lines) == 2
    assert_no_secret(output, mock)


def test_info_logs_retries_and_refreshes_but_not_each_answer(mock: RunningMock) -> None:
    mock.service.reset(token_ttl=2)
    output = run_child(mock, "INFO")
    assert " WARNING service_api] retrying GET" in output
    assert " INFO service_api] bearer token for " in output
    assert " DEBUG " not in output
    assert_no_secret(output, mock)


@pytest.mark.parametrize("level", [None, "", "verbose"])
def test_unset_or_unknown_prints_only_the_retries_as_plain_lines(
    mock: RunningMock, level: str | None
) -> None:
    output = run_child(mock, level)
    assert "service_api]" not in output
    assert "bearer token" not in output
    # A WARNING with no logging set up: Python's last resort prints the message alone.
    retries = [line for line in output.splitlines() if "retrying" in line]
    assert len(retries) == RetryPolicy().max_retries
    assert all(
        line.startswith("retrying GET /public/v3/shipments after ") for line in retries
    )


# Runs in the child: a script that sets no logging up, against a closed port.
NOTHING_LISTENS = """
import socket
import sys

import service_api
from service_api_client.api.shipments import list_shipments

with socket.socket() as sock:
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
with service_api.Client(f"http://127.0.0.1:{port}/public/v3", "cid", "s3cret") as client:
    try:
        list_shipments.sync(client=client)
    except service_api.ApiConnectionError as exc:
        print(f"failed: {exc}", file=sys.stderr)
"""


def test_a_script_with_no_logging_says_it_retries_and_why_it_gave_up() -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SERVICE_API_")}
    done = subprocess.run(
        [sys.executable, "-c", NOTHING_LISTENS],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    lines = done.stderr.splitlines()
    assert [line.partition(" in ")[0] for line in lines[:3]] == [
        "retrying POST /public/v3/authenticate after ApiConnectionError"
    ] * 3
    assert [line.partition(" s ")[2] for line in lines[:3]] == [
        f"(retry {n} of 3)" for n in (1, 2, 3)
    ]
    assert lines[3].startswith(
        "failed: nothing listens at the base URL http://127.0.0.1:"
    )
    assert len(lines) == 4
    assert "s3cret" not in done.stderr


def test_a_debug_line_gives_method_url_status_and_milliseconds(
    caplog: pytest.LogCaptureFixture,
) -> None:
    url = "https://api.test/public/v3/shipments?pageSize=5"
    with caplog.at_level(logging.DEBUG, logger="service_api"):
        log_response(httpx.Response(200, request=httpx.Request("GET", url)), 1.5)
    assert caplog.messages == [f"GET {url} -> 200 in 1500 ms"]
