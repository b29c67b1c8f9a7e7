"""Every public name shows as ``service_api.X`` in tracebacks and reprs, not as the private
module that defines it."""

import pickle
import traceback
import types

import httpx
import pytest

import service_api


def test_all_names_every_public_attribute_and_nothing_private() -> None:
    # Modules aside: importing service_api.quota (another test may have) adds an attribute.
    # Names that are no identifiers aside: installed from a wheel, the package belongs to
    # the distribution of a pytest11 plugin, whose modules pytest's assertion rewriting
    # gives '@py_builtins' and '@pytest_ar'.
    public = {
        n
        for n, v in vars(service_api).items()
        if n.isidentifier() and not isinstance(v, types.ModuleType)
    }
    assert set(service_api.__all__) - {"testing"} == {n for n in public if n[0] != "_"}
    assert "Client" in service_api.__all__
    assert "NotFoundError" in service_api.__all__


@pytest.mark.parametrize(
    "name",
    [
        n
        for n in service_api.__all__
        if not isinstance(getattr(service_api, n), types.ModuleType)
    ],
)
def test_each_public_name_lives_in_service_api(name: str) -> None:
    public = getattr(service_api, name)
    assert public.__module__ == "service_api"
    if isinstance(public, type):
        assert repr(public) == f"<class 'service_api.{public.__qualname__}'>"


def test_a_traceback_names_the_public_class() -> None:
    try:
        raise service_api.InvalidCredentialsError("refused", status_code=401)
    except service_api.InvalidCredentialsError as exc:
        last = traceback.format_exception(exc)[-1]
    assert last == "service_api.InvalidCredentialsError: refused\n"


def test_a_public_error_still_pickles_by_its_public_name() -> None:
    error = service_api.NotFoundError("gone", status_code=404)
    copied = pickle.loads(pickle.dumps(error))  # noqa: S301 - our own bytes
    assert type(copied) is service_api.NotFoundError
    assert copied.status_code == 404


def test_what_a_user_meets_is_public_and_reads_plainly() -> None:
    def serve(request: httpx.Request) -> httpx.Response:
        if request.url.path.endswith("/authenticate"):
            token = {"access_token": "tk", "token_type": "Bearer", "expires_in": "60"}
            return httpx.Response(200, json=token)
        page = {"totalRecords": 1, "pageNumber": 1, "pageSize": 50}
        return httpx.Response(200, json=page | {"data": [{"shipmentId": "s-1"}]})

    transport = httpx.MockTransport(serve)
    with service_api.Client(
        "https://api.test/public/v3",
        "cid",
        "s3cret",
        httpx_args={"transport": transport},
    ) as client:
        pager = client.shipments.list()
        pages = pager.pages()
        page = next(iter(pages))
        met = [
            (
                client,
                "Client(base_url='https://api.test/public/v3', client_id='cid', "
                "account_id=None)",
            ),
            (client.with_options(max_retries=1), "Client(base_url="),
            (pager, "Pager(list_shipments, page_size=50)"),
            (pages, "Pages(pager=Pager(list_shipments, page_size=50))"),
            (page, "Page(number=1, items=1, model=ShipmentPage)"),
            (client.retry_policy, "RetryPolicy(max_retries=8, initial_delay=0.25, "),
        ]
        for thing, shown in met:
            assert type(thing).__module__ == "service_api", type(thing)
            assert type(thing).__name__ in service_api.__all__
            assert repr(thing).startswith(shown)
            assert " at 0x" not in repr(thing)
