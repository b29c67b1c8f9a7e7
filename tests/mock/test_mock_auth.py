"""POST /authenticate and the bearer checks of the list endpoints, in process."""

import re
from datetime import UTC, datetime

import httpx
import pytest

from service_api_mock import (
    DEMO_CLIENT_ID,
    DEMO_CLIENT_SECRET,
    OTHER_CLIENT_ID,
    OTHER_CLIENT_SECRET,
    MockService,
)

FORM = {
    "client_id": (None, DEMO_CLIENT_ID),
    "client_secret": (None, DEMO_CLIENT_SECRET),
    "grant_type": (None, "client_credentials"),
}

pytestmark = pytest.mark.anyio

EXPIRED = re.compile(
    r'Bearer error="invalid_token", error_description="The token expired at '
    r"'(\d\d/\d\d/\d{4} \d\d:\d\d:\d\d)'\"\Z"
)


async def test_token_response_is_opaque_bearer_with_string_ttl(
    client: httpx.AsyncClient, service: MockService
) -> None:
    response = await client.post(
        "/authenticate", files=FORM, headers={"accept": "text/plain"}
    )
    assert response.status_code == 200
    assert response.headers["content-type"] == "application/json"
    body = response.json()
    assert body["token_type"] == "Bearer"
    assert body["expires_in"] == "3600"
    # token_urlsafe(32): 43 characters of base64url, 256 bits.
    assert re.fullmatch(r"[A-Za-z0-9_-]{43}", body["access_token"])
    assert service.issued_tokens() == [body["access_token"]]
    assert service.count("authenticate", 200) == 1


async def test_two_tokens_differ(client: httpx.AsyncClient) -> None:
    first = (await client.post("/authenticate", files=FORM)).json()["access_token"]
    second = (await client.post("/authenticate", files=FORM)).json()["access_token"]
    assert first != second


@pytest.mark.parametrize(
    ("form", "status", "error"),
    [
        ({**FORM, "client_secret": (None, "wrong")}, 401, "invalid_client"),
        ({**FORM, "client_id": (None, "nobody")}, 401, "invalid_client"),
        ({**FORM, "client_secret": (None, "")}, 401, "invalid_client"),
        (
            {k: v for k, v in FORM.items() if k != "client_secret"},
            400,
            "invalid_request",
        ),
        ({k: v for k, v in FORM.items() if k != "grant_type"}, 400, "invalid_request"),
        ({**FORM, "grant_type": (None, "password")}, 400, "unsupported_grant_type"),
    ],
)
async def test_bad_requests_get_rfc6749_errors(
    client: httpx.AsyncClient,
    form: dict[str, tuple[None, str]],
    status: int,
    error: str,
) -> None:
    response = await client.post("/authenticate", files=form)
    assert response.status_code == status
    assert response.headers["content-type"] == "application/json"
    assert response.json()["error"] == error


async def test_urlencoded_and_json_bodies_are_refused(
    client: httpx.AsyncClient,
) -> None:
    fields = {k: v[1] for k, v in FORM.items()}
    for response in (
        await client.post("/authenticate", data=fields),
        await client.post("/authenticate", json=fields),
        await client.post("/authenticate"),
    ):
        assert response.status_code == 400
        assert response.json()["error"] == "invalid_request"


async def test_broken_multipart_is_a_400_not_a_500(client: httpx.AsyncClient) -> None:
    response = await client.post(
        "/authenticate",
        content=b"--x\r\nContent-Disposition: form-data\r\n\r\n\xff\xfe",
        headers={"content-type": "multipart/form-data; boundary=x"},
    )
    assert response.status_code == 400


@pytest.mark.parametrize(
    ("authorization", "challenge"),
    [
        (None, "Bearer"),
        ("Basic ZGVtbzpzZWNyZXQ=", "Bearer"),
        ("Bearer", "Bearer"),
        ("Bearer not-a-token", 'Bearer error="invalid_token"'),
    ],
)
async def test_missing_malformed_or_unknown_token_is_401(
    client: httpx.AsyncClient, authorization: str | None, challenge: str
) -> None:
    headers = {"x-service-account-id": "acct-1"}
    if authorization is not None:
        headers["authorization"] = authorization
    response = await client.get("/shipments", headers=headers)
    assert response.status_code == 401
    assert response.headers["www-authenticate"] == challenge
    assert response.content == b""
    assert response.headers["content-length"] == "0"


async def test_expired_token_is_401_with_the_exact_header(
    client: httpx.AsyncClient, service: MockService
) -> None:
    service.reset(token_ttl=2)
    before = datetime.now(UTC).timestamp()
    token = (await client.post("/authenticate", files=FORM)).json()["access_token"]
    after = datetime.now(UTC).timestamp()
    headers = {"authorization": f"Bearer {token}", "x-service-account-id": "acct-1"}
    assert (await client.get("/devices", headers=headers)).status_code == 200
    service.advance_clock(2)
    response = await client.get("/devices", headers=headers)
    assert response.status_code == 401
    assert response.content == b""
    assert response.headers["content-length"] == "0"
    match = EXPIRED.fullmatch(response.headers["www-authenticate"])
    assert match, response.headers["www-authenticate"]
    # The moment it expired (issue time + ttl), in UTC, not the moment of the request.
    moment = (
        datetime.strptime(match[1], "%m/%d/%Y %H:%M:%S").replace(tzinfo=UTC).timestamp()
    )
    assert int(before + 2) - 1 <= moment <= after + 2


async def test_revoked_token_is_unknown(
    client: httpx.AsyncClient, service: MockService, token: str
) -> None:
    service.revoke_tokens()
    response = await client.get(
        "/shipments",
        headers={"authorization": f"Bearer {token}", "x-service-account-id": "acct-1"},
    )
    assert response.status_code == 401
    assert response.headers["www-authenticate"] == 'Bearer error="invalid_token"'


async def test_account_header_omitted_is_400_and_foreign_is_403(
    client: httpx.AsyncClient, token: str
) -> None:
    auth = {"authorization": f"Bearer {token}"}
    omitted = await client.get("/shipments", headers=auth)
    assert omitted.status_code == 400
    assert omitted.headers["content-type"] == "application/problem+json"
    assert omitted.json()["status"] == 400
    for account in ("acct-3", "no-such-account", ""):
        foreign = await client.get(
            "/shipments", headers={**auth, "x-service-account-id": account}
        )
        assert foreign.status_code == 403
        assert foreign.headers["content-type"] == "application/problem+json"
        assert foreign.json()["status"] == 403


async def test_one_set_of_credentials_serves_several_accounts(
    client: httpx.AsyncClient, token: str
) -> None:
    auth = {"authorization": f"Bearer {token}"}
    ids = []
    for account in ("acct-1", "acct-2"):
        response = await client.get(
            "/devices", headers={**auth, "x-service-account-id": account}
        )
        assert response.status_code == 200
        ids.append({d["deviceId"] for d in response.json()["data"]})
    assert not ids[0] & ids[1]


async def test_second_client_reaches_only_its_account(
    client: httpx.AsyncClient,
) -> None:
    form = {
        **FORM,
        "client_id": (None, OTHER_CLIENT_ID),
        "client_secret": (None, OTHER_CLIENT_SECRET),
    }
    token = (await client.post("/authenticate", files=form)).json()["access_token"]
    auth = {"authorization": f"Bearer {token}"}
    own = await client.get(
        "/devices", headers={**auth, "x-service-account-id": "acct-3"}
    )
    other = await client.get(
        "/devices", headers={**auth, "x-service-account-id": "acct-1"}
    )
    assert (own.status_code, other.status_code) == (200, 403)
