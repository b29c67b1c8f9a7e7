"""Client-side fuzzing: generated token responses and page envelopes, valid and not.

``make fuzz`` fuzzes the mock with schemathesis; here hypothesis fuzzes the client. An
``httpx.MockTransport`` (passed through ``httpx_args``, so the client's guard, auth and
retries all run) answers ``/authenticate`` and ``/shipments`` with generated bodies. The
contract: a valid answer gives exactly the right data; anything else raises one of the
documented errors (a ``ServiceApiError``), never another exception, a hang or a loop.
"""

from __future__ import annotations

import json
import math
import warnings
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import service_api
from service_api_client.api.shipments import list_shipments
from service_api_client.models.shipment import Shipment
from service_api_mock import MockConfig, MockService

BASE_URL = "http://fuzz.invalid/public/v3"
GOOD_TOKEN = "fuzz-token-Hq7Wc2Lp"
EXAMPLES = 100
FUZZ_SETTINGS = settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
RECORDS = MockService(MockConfig(records=120, seed=3)).dataset("shipments", "acct-1")
NO_RETRY = service_api.RetryPolicy(max_retries=0)

FUZZ_SECRET = "fuzz-secret-Rb2Kx9"


@pytest.fixture(autouse=True, scope="module")
def _guard_fuzz_credentials(request: pytest.FixtureRequest) -> None:
    guard = request.config.pluginmanager.get_plugin("leak_guard")
    if guard is not None:
        guard.register_secret(FUZZ_SECRET, "client secret")
        guard.register_secret(GOOD_TOKEN, "issued token")


# What JSON can carry: no NaN or infinity (``httpx.Response(json=...)`` refuses them).
json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=20),
    lambda children: (
        st.lists(children, max_size=4)
        | st.dictionaries(st.text(max_size=10), children, max_size=4)
    ),
    max_leaves=10,
)
token_chars = st.characters(min_codepoint=0x21, max_codepoint=0x7E)


# ---- token responses ----------------------------------------------------------------------


@st.composite
def valid_tokens(draw: st.DrawFn) -> tuple[int, bytes, str]:
    token = draw(st.text(token_chars, min_size=1, max_size=200))
    lifetime = draw(st.integers(min_value=1, max_value=7 * 24 * 3600))
    expires_in = draw(st.sampled_from([str(lifetime), lifetime]))
    token_type = draw(st.sampled_from(["Bearer", "bearer", "BEARER"]))
    body = {"access_token": token, "token_type": token_type, "expires_in": expires_in}
    extra = draw(st.dictionaries(st.text(max_size=8), json_values, max_size=2))
    return 200, json.dumps({**extra, **body}).encode(), token


@st.composite
def invalid_tokens(draw: st.DrawFn) -> tuple[int, bytes, str]:
    good: dict[str, Any] = {
        "access_token": GOOD_TOKEN,
        "token_type": "Bearer",
        "expires_in": "60",
    }
    kind = draw(st.sampled_from(["drop", "wrong", "not_json", "not_object", "status"]))
    status = 200
    if kind == "drop":
        del good[draw(st.sampled_from(sorted(good)))]
        body = json.dumps(good).encode()
    elif kind == "wrong":
        name = draw(st.sampled_from(sorted(good)))
        bad: Any = draw(json_values)
        if name == "access_token":
            bad = draw(
                st.one_of(
                    st.just(""),
                    st.text(min_size=1).filter(
                        lambda t: not set(t) <= set(map(chr, range(33, 127)))
                    ),
                    json_values.filter(lambda v: not isinstance(v, str)),
                )
            )
        elif name == "token_type":
            bad = draw(
                json_values.filter(
                    lambda v: not (isinstance(v, str) and v.lower() == "bearer")
                )
            )
        else:
            bad = draw(
                st.one_of(
                    st.integers(max_value=0),
                    st.integers(min_value=7 * 24 * 3600 + 1),
                    st.floats(allow_nan=True),
                    st.booleans(),
                    st.none(),
                    st.text().filter(lambda t: not t.strip().isdigit()),
                    st.integers(max_value=0).map(str),
                    st.integers(min_value=7 * 24 * 3600 + 1).map(str),
                )
            )
        good[name] = bad
        body = json.dumps(good).encode()
    elif kind == "not_json":
        body = draw(st.binary(max_size=200).filter(lambda b: not _is_json(b)))
    elif kind == "not_object":
        body = json.dumps(
            draw(json_values.filter(lambda v: not isinstance(v, dict)))
        ).encode()
    else:
        status = draw(st.sampled_from([400, 401, 403, 404, 429, 500, 502, 503]))
        body = draw(st.binary(max_size=100))
    return status, body, ""


def _is_json(raw: bytes) -> bool:
    try:
        json.loads(raw)
    except ValueError:
        return False
    return True


def _good_page(request: httpx.Request) -> httpx.Response:
    data = RECORDS[:3]
    return httpx.Response(
        200, json={"totalRecords": 3, "pageNumber": 1, "pageSize": 50, "data": data}
    )


def _client(handler: Any) -> service_api.Client:
    return service_api.Client(
        BASE_URL,
        "fuzz-client",
        FUZZ_SECRET,
        "acct-1",
        retry=NO_RETRY,
        httpx_args={"transport": httpx.MockTransport(handler)},
    )


@FUZZ_SETTINGS
@given(answer=st.one_of(valid_tokens(), invalid_tokens()))
def test_token_responses_give_the_page_or_a_documented_error(
    answer: tuple[int, bytes, str],
) -> None:
    status, body, token = answer
    sent_tokens: list[str | None] = []

    def handler(request: httpx.Request) -> httpx.Response:
        if request.url.path.endswith("/authenticate"):
            return httpx.Response(
                status, content=body, headers={"content-type": "application/json"}
            )
        sent_tokens.append(request.headers.get("authorization"))
        return _good_page(request)

    with _client(handler) as client:
        if token:
            page = list_shipments.sync(client=client)
            assert page is not None
            assert sent_tokens == [f"Bearer {token}"]
            return
        try:
            list_shipments.sync(client=client)
        except service_api.TokenResponseError:
            assert status == 200
        except service_api.ServiceApiError:
            assert status != 200
        else:
            raise AssertionError("an unusable token response was accepted")
        assert sent_tokens == []  # nothing was sent with a doubtful token


# ---- page envelopes -----------------------------------------------------------------------

MUTATIONS = [
    "none",
    "not_json",
    "not_object",
    "drop_field",
    "wrong_type",
    "bad_item",
    "page_number",
    "page_size",
    "total_drift",
    "extra_items",
    "drop_next",
    "next_offsite",
]


@st.composite
def listings(draw: st.DrawFn) -> tuple[int, int, str, int, Any]:
    """(records, page_size, mutation, page to mutate, mutation detail)."""
    records = draw(st.integers(min_value=0, max_value=len(RECORDS)))
    page_size = draw(st.integers(min_value=1, max_value=50))
    pages = max(1, math.ceil(records / page_size))
    mutation = draw(st.sampled_from(MUTATIONS))
    target = draw(st.integers(min_value=1, max_value=pages))
    detail: Any = None
    if mutation == "not_json":
        detail = draw(st.binary(max_size=100).filter(lambda b: not _is_json(b)))
    elif mutation == "not_object":
        detail = draw(json_values.filter(lambda v: not isinstance(v, dict)))
    elif mutation in ("drop_field", "wrong_type"):
        field = draw(
            st.sampled_from(["totalRecords", "pageNumber", "pageSize", "data"])
        )
        wrong = draw(
            st.one_of(
                st.text(max_size=5),
                st.none(),
                st.dictionaries(st.text(max_size=3), st.none()),
            )
        )
        detail = (field, wrong)
    elif mutation == "bad_item":
        detail = draw(
            st.one_of(
                st.integers(), st.text(max_size=5), st.none(), st.lists(st.none())
            )
        )
    elif mutation in ("page_number", "page_size", "total_drift"):
        detail = draw(st.integers(min_value=-3, max_value=200))
    return records, page_size, mutation, target, detail


def _envelope(records: int, page_size: int, number: int) -> dict[str, Any]:
    start = (number - 1) * page_size
    envelope: dict[str, Any] = {
        "totalRecords": records,
        "pageNumber": number,
        "pageSize": page_size,
        "data": RECORDS[start : min(start + page_size, records)],
    }
    # ``next`` / ``previous`` only when such a page exists, as the service does.
    if number * page_size < records:
        envelope["next"] = (
            f"{BASE_URL}/shipments?pageSize={page_size}&pageNumber={number + 1}"
        )
    if number > 1:
        envelope["previous"] = (
            f"{BASE_URL}/shipments?pageSize={page_size}&pageNumber={number - 1}"
        )
    return envelope


def _serve_listing(
    listing: tuple[int, int, str, int, Any], request: httpx.Request
) -> httpx.Response:
    records, page_size, mutation, target, detail = listing
    number = int(request.url.params.get("pageNumber", "1"))
    envelope = _envelope(records, page_size, number)
    if number != target or mutation == "none":
        return httpx.Response(200, json=envelope)
    if mutation == "not_json":
        return httpx.Response(
            200, content=detail, headers={"content-type": "application/json"}
        )
    if mutation == "not_object":
        return httpx.Response(200, json=detail)
    if mutation == "drop_field":
        del envelope[detail[0]]
    elif mutation == "wrong_type":
        envelope[detail[0]] = detail[1]
    elif mutation == "bad_item":
        envelope["data"] = [*envelope["data"], detail]
    elif mutation == "page_number":
        envelope["pageNumber"] = detail
    elif mutation == "page_size":
        envelope["pageSize"] = detail
    elif mutation == "total_drift":
        envelope["totalRecords"] = detail
    elif mutation == "extra_items" and len(envelope["data"]) == page_size:
        # A full page and two more: longer than pageSize, which the client must notice.
        envelope["data"] = [*envelope["data"], *RECORDS[-2:]]
    elif mutation == "drop_next":
        envelope.pop("next", None)
    elif mutation == "next_offsite" and "next" in envelope:
        envelope["next"] = envelope["next"].replace(
            "http://fuzz.invalid", "https://evil.invalid"
        )
    return httpx.Response(200, json=envelope)


def _token(request: httpx.Request) -> httpx.Response:
    return httpx.Response(
        200,
        json={"access_token": GOOD_TOKEN, "token_type": "Bearer", "expires_in": "3600"},
    )


@FUZZ_SETTINGS
@given(listing=listings())
def test_page_envelopes_give_the_right_items_or_a_documented_error(
    listing: tuple[int, int, str, int, Any],
) -> None:
    records, page_size, mutation, _, _ = listing
    asked: list[int] = []

    def handler(request: httpx.Request) -> httpx.Response:
        if request.url.path.endswith("/authenticate"):
            return _token(request)
        asked.append(int(request.url.params.get("pageNumber", "1")))
        return _serve_listing(listing, request)

    expected = [Shipment.from_dict(r).to_dict() for r in RECORDS[:records]]
    pages_needed = max(1, math.ceil(records / page_size))
    with _client(handler) as client, warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            got = [
                s.to_dict()
                for s in service_api.paginate(
                    list_shipments, client, page_size=page_size
                )
            ]
        except service_api.ServiceApiError as exc:
            assert mutation != "none", "an honest listing failed"
            failure: service_api.ServiceApiError | None = exc
        else:
            failure = None
            warned = any(
                issubclass(w.category, service_api.PaginationWarning) for w in caught
            )
            if mutation in ("drop_next", "next_offsite"):
                # Pages go by number: a next link missing or elsewhere changes nothing.
                assert got == expected, f"{mutation}: a next link changed the items"
                assert not warned, f"{mutation}: a next link drew a warning"
            if got != expected:
                # The documented absorbed cases: a totalRecords that shrinks, or items
                # beyond it, stop the iteration with a PaginationWarning. Never silent,
                # never a wrong, repeated or reordered item: what came is a prefix. The
                # first page's totalRecords is the bound itself: when it says fewer
                # records, nothing else tells (next links are not read), so no warning.
                first_says_fewer = mutation == "total_drift" and listing[3] == 1
                assert warned or first_says_fewer, (
                    f"{mutation}: wrong items, no warning"
                )
                assert got == expected[: len(got)], f"{mutation}: items not a prefix"
    if failure is not None and mutation == "bad_item":
        # A record that is not an object: the documented policy, nothing lost.
        assert isinstance(failure, service_api.InvalidRecordError)
        assert failure.raw_item == listing[4]
        assert failure.raw_items[failure.index] == listing[4]
        assert not failure.resumable
    # Bounded whatever the envelopes say: never more pages than the honest listing has,
    # plus the one a lying totalRecords can add.
    assert len(asked) <= pages_needed + 1
    assert len(asked) == len(set(asked))


def test_a_last_page_holding_more_items_than_total_records_is_not_accepted_silently() -> (
    None
):
    """Found by the fuzzing above: three items under ``totalRecords: 1`` are all yielded,
    with neither an error nor a warning; the caller gets records the count denies."""

    def handler(request: httpx.Request) -> httpx.Response:
        if request.url.path.endswith("/authenticate"):
            return _token(request)
        body = {"totalRecords": 1, "pageNumber": 1, "pageSize": 50, "data": RECORDS[:3]}
        return httpx.Response(200, json=body)

    with _client(handler) as client, warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            items = list(service_api.paginate(list_shipments, client))
        except service_api.ServiceApiError:
            return
    assert len(items) == 1 or any(
        issubclass(w.category, service_api.PaginationWarning) for w in caught
    ), f"{len(items)} items yielded under totalRecords 1, silently"
