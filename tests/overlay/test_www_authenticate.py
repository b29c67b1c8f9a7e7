"""Parsing www-authenticate: the service's exact form and anything else."""

import datetime

import pytest

from service_api._www_authenticate import parse_expiry_time, parse_www_authenticate

EXPIRED = (
    'Bearer error="invalid_token", error_description="The token expired at \'05/31/2024 13:45:10\'"'
)


def test_the_services_expired_token_header() -> None:
    parsed = parse_www_authenticate(EXPIRED)
    assert parsed.scheme == "bearer"
    assert parsed.error == "invalid_token"
    assert parsed.expired_at == datetime.datetime(2024, 5, 31, 13, 45, 10, tzinfo=datetime.UTC)
    assert parsed.says_expired


@pytest.mark.parametrize(
    "value",
    [
        None,
        "",
        "Bearer",
        'Basic realm="x"',
        "garbage ,,, ===",
        "Bearer error=",
        'x="unterminated',
        "Bearer error_description=\"expired at '13/45/2024 99:99:99'\"",
        "é" * 10_000,
    ],
)
def test_other_forms_never_raise(value: str | None) -> None:
    parsed = parse_www_authenticate(value)
    assert parsed.expired_at is None


def test_unquoted_and_escaped_values() -> None:
    parsed = parse_www_authenticate(
        'Bearer realm=api, error=invalid_token, error_description="a \\"b\\""'
    )
    assert parsed.error == "invalid_token"
    assert parsed.error_description == 'a "b"'


def test_parameters_without_scheme() -> None:
    assert parse_www_authenticate('error="invalid_token"').error == "invalid_token"


def test_expiry_time_is_utc() -> None:
    when = parse_expiry_time("The token expired at '1/2/2025 03:04:05'")
    assert when is not None
    assert when.utcoffset() == datetime.timedelta(0)
    assert (when.month, when.day) == (1, 2)
