"""The token answer as text: what ``openapi.yaml`` declares for ``accept: text/plain`` (the
header the service's own client sends, and so do this client and its command line) is a
JSON token response that a generator can produce from the spec alone.

The declaration is a string holding JSON (``contentMediaType``, ``contentSchema``) with a
``pattern`` and an example: every text the pattern allows is a token response the schema
allows and the client accepts. Then Prism, a mock driven by the spec, serves the token
call to ``service-api token`` and to the library, when Prism is installed.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import jsonschema_rs
import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from spec_copy import PRISM

import service_api
from service_api._auth import parse_token_response
from service_api_client import Client as GeneratedClient
from service_api_client.api.authentication import authenticate
from service_api_client.models import TokenRequest, TokenResponse

ROOT = Path(__file__).resolve().parents[2]
SPEC: dict[str, Any] = yaml.safe_load((ROOT / "openapi.yaml").read_text("utf-8"))
ANSWER = SPEC["paths"]["/authenticate"]["post"]["responses"]["200"]
TEXT = ANSWER["content"]["text/plain"]["schema"]
TOKEN_RESPONSE = jsonschema_rs.validator_for(
    {**SPEC, "$ref": "#/components/schemas/TokenResponse"}
)
BASE = "https://api.test/public/v3"
START_TIMEOUT = 60.0


def test_the_text_answer_is_a_string_holding_a_token_response() -> None:
    assert TEXT["type"] == "string"
    assert TEXT["contentMediaType"] == "application/json"
    assert TEXT["contentSchema"] == {"$ref": "#/components/schemas/TokenResponse"}
    assert TEXT["x-assumed"]  # the pattern and the example are guesses, said so
    # The JSON form stays first: the generator parses the answer by the first one.
    assert list(ANSWER["content"]) == ["application/json", "text/plain"]
    for example in TEXT["examples"]:
        assert jsonschema_rs.validator_for({**SPEC, **TEXT}).is_valid(example)
        TOKEN_RESPONSE.validate(json.loads(example))


def _token_answer(text: str, request: httpx.Request) -> httpx.Response:
    headers = {"content-type": "text/plain"}
    return httpx.Response(200, text=text, headers=headers, request=request)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=st.from_regex(TEXT["pattern"], fullmatch=True))
def test_every_text_the_pattern_allows_is_a_token_the_client_accepts(text: str) -> None:
    body = json.loads(text)
    TOKEN_RESPONSE.validate(body)
    request = httpx.Request("POST", f"{BASE}/authenticate")
    expected = (body["access_token"], int(body["expires_in"]))
    assert parse_token_response(_token_answer(text, request)) == expected
    # The generated client (the command line's token call) reads it too.
    transport = httpx.MockTransport(lambda sent: _token_answer(text, sent))
    api = GeneratedClient(BASE, httpx_args={"transport": transport})
    form = TokenRequest(
        client_id="cid", client_secret="s3cret", grant_type="client_credentials"
    )
    with api:
        parsed = authenticate.sync_detailed(client=api, body=form).parsed
    assert isinstance(parsed, TokenResponse)
    assert (parsed.access_token, parsed.expires_in) == (
        body["access_token"],
        body["expires_in"],
    )


# -- Prism ------------------------------------------------------------------------------


def _prism() -> str:
    if PRISM is None:
        pytest.skip(
            "Prism (@stoplight/prism-cli, an optional tool) is not installed: make "
            "installs it where npm is, or set PRISM=/path/to/prism (docs/extras/mock.md)"
        )
    return str(PRISM)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port


@pytest.fixture(scope="module")
def prism(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    """``prism mock -d openapi.yaml`` on a free loopback port: its base URL and its log."""
    program, port = _prism(), _free_port()
    log = tmp_path_factory.mktemp("prism") / "prism.log"
    argv = [program, "mock", "-d", "-h", "127.0.0.1", "-p", str(port), "openapi.yaml"]
    with log.open("w") as out:
        server = subprocess.Popen(
            argv, cwd=ROOT, stdin=subprocess.DEVNULL, stdout=out, stderr=out
        )
    try:
        deadline = time.monotonic() + START_TIMEOUT
        while "Prism is listening" not in log.read_text("utf-8"):
            assert server.poll() is None, f"prism ended: {log.read_text('utf-8')}"
            assert time.monotonic() < deadline, "prism did not start in time"
            time.sleep(0.1)
        # Prism serves the spec's paths at its root.
        yield f"http://127.0.0.1:{port}", log
    finally:
        server.terminate()
        server.wait(timeout=30)


def _text_answers(log: Path) -> int:
    return log.read_text("utf-8").count("Found a compatible content for text/plain")


def test_prism_serves_the_token_call_of_the_command_line(
    prism: tuple[str, Path],
) -> None:
    base_url, log = prism
    before = _text_answers(log)
    env = {k: v for k, v in os.environ.items() if not k.startswith("SERVICE_API_")}
    env |= {
        "SERVICE_API_BASE_URL": base_url,
        "SERVICE_API_CLIENT_ID": "demo-client",
        "SERVICE_API_CLIENT_SECRET": "demo-secret",
    }
    done = subprocess.run(
        [str(Path(sys.executable).parent / "service-api"), "token", "--show-token"],
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "token_type: Bearer"
    assert lines[1].startswith("expires_in: ")
    assert lines[2].startswith("access_token: ")
    assert _text_answers(log) == before + 1  # asked for text, answered text


def test_prism_serves_the_token_call_of_the_library(prism: tuple[str, Path]) -> None:
    base_url, log = prism
    before = _text_answers(log)
    with service_api.Client(base_url, "demo-client", "demo-secret", "acct-1") as client:
        # Prism answers 401 to a get without a bearer token: this one carried the token
        # the library read from Prism's text answer.
        shipment = client.shipments.get(shipment_id="shp-1")
    assert shipment.shipment_id
    assert _text_answers(log) == before + 1
