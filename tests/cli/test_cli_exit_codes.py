"""Errors map to the documented exit codes; a failed page keeps its error's code."""

from __future__ import annotations

import httpx
import pytest

import service_api
from service_api_cli._exit_codes import (
    EXIT_CODES_HELP,
    ExitCode,
    UsageError,
    exit_code_for,
)


def _paged(error: service_api.ServiceApiError) -> service_api.ServiceApiError:
    error.at_page(3, items_yielded=100)
    return error


@pytest.mark.parametrize(
    ("error", "code"),
    [
        (UsageError("bad"), ExitCode.USAGE),
        (
            service_api.InvalidCredentialsError("no", status_code=400),
            ExitCode.AUTHENTICATION,
        ),
        (service_api.AuthenticationError("no"), ExitCode.AUTHENTICATION),
        (service_api.TokenExpiredError("no"), ExitCode.AUTHENTICATION),
        (service_api.PermissionDeniedError("no", status_code=403), ExitCode.PERMISSION),
        (service_api.BadRequestError("no", status_code=400), ExitCode.API),
        (service_api.RateLimitError("slow"), ExitCode.API),
        (service_api.ServerError("down", status_code=503), ExitCode.API),
        (service_api.ApiConnectionError("gone"), ExitCode.API),
        (service_api.ApiTimeoutError("slow"), ExitCode.API),
        (service_api.InvalidResponseError("odd"), ExitCode.API),
        (httpx.ConnectError("refused"), ExitCode.API),
        (KeyboardInterrupt(), ExitCode.INTERRUPTED),
        (RuntimeError("bug"), ExitCode.FAILURE),
    ],
)
def test_each_error_has_its_exit_code(error: BaseException, code: ExitCode) -> None:
    assert exit_code_for(error) is code


def test_a_failed_page_keeps_the_exit_code_of_its_error() -> None:
    denied = service_api.PermissionDeniedError("no", status_code=403)
    assert exit_code_for(_paged(denied)) is ExitCode.PERMISSION
    assert (
        exit_code_for(_paged(service_api.ServerError("x", status_code=502)))
        is ExitCode.API
    )


def test_every_exit_code_is_documented() -> None:
    documented = {int(line.split()[0]) for line in EXIT_CODES_HELP.splitlines()[1:]}
    assert documented == {int(code) for code in ExitCode}
