"""``service_api.Client()`` reads its settings from the environment, as the CLI does."""

import pytest

import service_api
from service_api_client.api.shipments import list_shipments
from service_api_client.models.shipment_page import ShipmentPage
from service_api_mock import DEMO_CLIENT_ID, DEMO_CLIENT_SECRET, RunningMock

VARIABLES = (
    "SERVICE_API_BASE_URL",
    "SERVICE_API_CLIENT_ID",
    "SERVICE_API_CLIENT_SECRET",
    "SERVICE_API_ACCOUNT_ID",
)


@pytest.fixture
def environ(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    for name in VARIABLES:
        monkeypatch.delenv(name, raising=False)
    return monkeypatch


def set_all(
    environ: pytest.MonkeyPatch, mock: RunningMock, account: str = "acct-2"
) -> None:
    environ.setenv("SERVICE_API_BASE_URL", mock.base_url)
    environ.setenv("SERVICE_API_CLIENT_ID", DEMO_CLIENT_ID)
    environ.setenv("SERVICE_API_CLIENT_SECRET", DEMO_CLIENT_SECRET)
    environ.setenv("SERVICE_API_ACCOUNT_ID", account)


def test_sync_a_client_with_no_arguments_reads_all_four(
    environ: pytest.MonkeyPatch, mock: RunningMock
) -> None:
    set_all(environ, mock)
    with service_api.Client() as client:
        assert client.account_id == "acct-2"
        page = list_shipments.sync(client=client)
    assert isinstance(page, ShipmentPage)
    wanted = [s["shipmentId"] for s in mock.service.dataset("shipments", "acct-2")[:50]]
    assert [s.shipment_id for s in page.data] == wanted


@pytest.mark.anyio
async def test_async_a_client_with_no_arguments_reads_all_four(
    environ: pytest.MonkeyPatch, mock: RunningMock
) -> None:
    set_all(environ, mock, account=" acct-1 ")
    async with service_api.Client() as client:
        assert client.account_id == "acct-1"
        page = await list_shipments.asyncio(client=client)
    assert isinstance(page, ShipmentPage)
    assert mock.service.count("authenticate") == 1


def test_an_explicit_argument_wins(
    environ: pytest.MonkeyPatch, mock: RunningMock
) -> None:
    set_all(environ, mock)
    environ.setenv("SERVICE_API_CLIENT_SECRET", "not-the-secret-42")
    with service_api.Client(
        client_secret=DEMO_CLIENT_SECRET, account_id="acct-1"
    ) as client:
        assert client.account_id == "acct-1"
        assert isinstance(list_shipments.sync(client=client), ShipmentPage)
    assert mock.service.count("authenticate", 200) == 1


@pytest.mark.parametrize(
    ("missing", "name"),
    [
        ("SERVICE_API_BASE_URL", "base_url"),
        ("SERVICE_API_CLIENT_ID", "client_id"),
        ("SERVICE_API_CLIENT_SECRET", "client_secret"),
    ],
)
def test_a_missing_setting_is_an_error_naming_its_variable(
    environ: pytest.MonkeyPatch, mock: RunningMock, missing: str, name: str
) -> None:
    set_all(environ, mock)
    environ.setenv(missing, "  ")  # blank counts as unset, as in the CLI
    with pytest.raises(service_api.ConfigurationError) as info:
        service_api.Client()
    assert info.value.variable == missing
    assert str(info.value) == f"no {name}: pass {name}= or set {missing}"
    assert isinstance(info.value, ValueError)
    assert DEMO_CLIENT_SECRET not in str(info.value)


def test_no_account_variable_means_no_account_header(
    environ: pytest.MonkeyPatch, mock: RunningMock
) -> None:
    set_all(environ, mock)
    environ.delenv("SERVICE_API_ACCOUNT_ID")
    with service_api.Client() as client:
        assert client.account_id is None
        with pytest.raises(service_api.BadRequestError):
            list_shipments.sync(client=client)


def test_several_accounts_in_the_variable_are_refused_by_the_library(
    environ: pytest.MonkeyPatch, mock: RunningMock
) -> None:
    set_all(environ, mock, account="acct-1,acct-2")
    with pytest.raises(
        service_api.ConfigurationError, match="several accounts"
    ) as info:
        service_api.Client()
    assert info.value.variable == "SERVICE_API_ACCOUNT_ID"


def test_a_bad_base_url_from_the_environment_names_the_variable(
    environ: pytest.MonkeyPatch, mock: RunningMock
) -> None:
    set_all(environ, mock)
    environ.setenv("SERVICE_API_BASE_URL", "ftp://h/public/v3")
    with pytest.raises(
        service_api.ConfigurationError, match=r"^SERVICE_API_BASE_URL: base_url"
    ):
        service_api.Client()


def test_the_cli_names_the_same_variables() -> None:
    # The command line leaves the settings to Client(); it names their variables beside
    # its flags, and reads the account variable itself (its list form).
    from service_api import _client
    from service_api_cli import _connection

    assert list(_connection.FLAGS) == [
        _client.ENV_BASE_URL,
        _client.ENV_CLIENT_ID,
        _client.ENV_CLIENT_SECRET,
    ]
    assert _connection.ENV_ACCOUNT_ID == _client.ENV_ACCOUNT_ID


def test_an_explicit_none_account_reads_no_variable(
    environ: pytest.MonkeyPatch, mock: RunningMock
) -> None:
    set_all(
        environ, mock, account="acct-1,acct-2"
    )  # the CLI's list form: not read here
    with service_api.Client(
        mock.base_url, DEMO_CLIENT_ID, DEMO_CLIENT_SECRET, None
    ) as client:
        assert client.account_id is None
    with pytest.raises(service_api.ConfigurationError, match="several accounts"):
        service_api.Client(
            mock.base_url, DEMO_CLIENT_ID, DEMO_CLIENT_SECRET
        )  # omitted: read


@pytest.mark.parametrize(
    "url",
    [
        "ftp://h/public/v3",
        "https://h/public/v3?x=1",
        "http://[::1",
        "/v3",
        "https://u:pw@h/public/v3",
    ],
)
def test_a_bad_base_url_argument_is_a_configuration_error_naming_the_argument(
    url: str,
) -> None:
    with pytest.raises(
        service_api.ConfigurationError, match=r"^base_url must be an absolute"
    ) as info:
        service_api.Client(url, "cid", "s3cret")
    assert "pw" not in str(info.value)
