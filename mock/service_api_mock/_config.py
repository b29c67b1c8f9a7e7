"""Configuration of the mock: credentials, data sizes and faults."""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from pathlib import Path

import attrs

__all__ = ["DEMO_ACCOUNTS", "DEMO_CLIENT_ID", "DEMO_CLIENT_SECRET", "OTHER_ACCOUNTS"]
__all__ += ["OTHER_CLIENT_ID", "OTHER_CLIENT_SECRET", "ClientCredentials", "MockConfig"]
__all__ += ["VALIDATE_ANSWERS_VARIABLE"]

DEMO_CLIENT_ID = "demo-client"
"""Client ID of the demo integration, associated with :data:`DEMO_ACCOUNTS`.

Example::

    form = {"client_id": DEMO_CLIENT_ID, "client_secret": DEMO_CLIENT_SECRET}
"""

DEMO_CLIENT_SECRET = "demo-secret"  # noqa: S105 -- a published demo credential, not a secret
"""Client secret of the demo integration (a published demo value, not a secret)."""

DEMO_ACCOUNTS: tuple[str, ...] = ("acct-1", "acct-2")
"""Accounts the demo integration works for: one set of credentials, several accounts."""

OTHER_CLIENT_ID = "other-client"
"""A second integration with a single account of its own, for 403 tests.

Example::

    # a token of OTHER_CLIENT_ID asking for "acct-1" is answered 403
"""

OTHER_CLIENT_SECRET = "other-secret"  # noqa: S105 -- a published demo credential, not a secret
"""Client secret of :data:`OTHER_CLIENT_ID`."""

OTHER_ACCOUNTS: tuple[str, ...] = ("acct-3",)
"""Accounts :data:`OTHER_CLIENT_ID` works for."""


def _to_tuple(value: Iterable[str]) -> tuple[str, ...]:
    return tuple(value)


@attrs.frozen
class ClientCredentials:
    """One integration known to the mock: its secret and the accounts it works for.

    The secret is left out of ``repr`` so that logging a config never shows it.

    Example::

        ClientCredentials(secret="s3cret", accounts=("acct-9",))
    """

    secret: str = attrs.field(repr=False)
    accounts: tuple[str, ...] = attrs.field(converter=_to_tuple)


def _default_clients() -> dict[str, ClientCredentials]:
    return {
        DEMO_CLIENT_ID: ClientCredentials(DEMO_CLIENT_SECRET, DEMO_ACCOUNTS),
        OTHER_CLIENT_ID: ClientCredentials(OTHER_CLIENT_SECRET, OTHER_ACCOUNTS),
    }


def _to_clients(
    value: Mapping[str, ClientCredentials | tuple[str, tuple[str, ...]]],
) -> Mapping[str, ClientCredentials]:
    # Accept plain ``{id: (secret, accounts)}`` pairs as well, the shape people type by hand.
    return {
        client_id: c if isinstance(c, ClientCredentials) else ClientCredentials(*c)
        for client_id, c in value.items()
    }


def _whole_seconds(
    _inst: object, attribute: attrs.Attribute[float], value: float
) -> None:
    # expires_in is sent as whole seconds (rounded down): a TTL under 1 s would announce
    # "0", a lifetime no client can use.
    if not value >= 1:
        raise ValueError(
            f"{attribute.name} must be at least 1 second (expires_in is whole seconds, "
            f"rounded down), got {value!r}"
        )


VALIDATE_ANSWERS_VARIABLE = "SERVICE_API_MOCK_VALIDATE_ANSWERS"
"""The environment variable that turns :attr:`MockConfig.validate_answers` on by default
(``1``): test suites set it once, and every mock they start, in process or not, checks
its answers."""


def _validate_answers_default() -> bool:
    return os.environ.get(VALIDATE_ANSWERS_VARIABLE, "").strip().lower() in (
        "1",
        "true",
    )


_non_negative = attrs.validators.ge(0.0)
_fraction = attrs.validators.and_(attrs.validators.ge(0.0), attrs.validators.le(1.0))


@attrs.frozen(kw_only=True)
class MockConfig:
    """Everything that shapes the mock's answers; every field has a default.

    All faults are off by default. Faults and jitter draw from a random generator seeded
    with ``seed``, so a given sequence of requests meets the same faults on every run.

    Attributes:
        spec: The OpenAPI document to serve; ``None``: the project's ``openapi.yaml`` (in
            an installed wheel, the copy packaged with the mock).
        token_ttl: Seconds a token lives; sent as ``expires_in`` (a string holding an
            integer).
        records: Records of each resource per account; the default needs three pages of 50.
        seed: Seed of the data and of the fault decisions.
        latency_ms: Fixed latency added to every request of the public API.
        latency_jitter_ms: Extra latency drawn uniformly from ``0..latency_jitter_ms``.
        fault_rate: Fraction of requests answered 503 or 429 with ``Retry-After``.
        drop_rate: Fraction of requests whose connection is dropped without an answer.
        retry_after: Seconds announced in the ``Retry-After`` of injected faults.
        rate_limit: The quota: requests per minute per client ID (all its accounts and
            connections together); beyond it 429 with an HTML body and ``Retry-After``.
        rate_window: Seconds of the sliding window the quota is counted over: at most
            ``rate_limit * rate_window / 60`` requests (at least one) in any such window.
            A short window scales a per-minute quota down in time, so a benchmark meets
            it in seconds.
        clients: Known integrations: client ID to :class:`ClientCredentials`.
        validate_answers: Check every answer against its schema before sending it; one
            that does not fit is sent as a 500 whose problem says why, logged as an error
            and kept (:meth:`MockService.invalid_answers`), so that a test sees it. Off
            unless asked for, or the environment variable
            ``SERVICE_API_MOCK_VALIDATE_ANSWERS`` is ``1``.

    Example::

        MockConfig(records=37, token_ttl=2.0, fault_rate=0.2, seed=7)
        MockConfig(spec="my-copy-of/openapi.yaml")
        MockConfig(validate_answers=True)  # in tests: a wrong answer is a 500
    """

    spec: Path | None = attrs.field(
        default=None, converter=attrs.converters.optional(Path)
    )
    token_ttl: float = attrs.field(default=3600.0, validator=_whole_seconds)
    records: int = attrs.field(default=120, validator=attrs.validators.ge(0))
    seed: int = 0
    latency_ms: float = attrs.field(default=0.0, validator=_non_negative)
    latency_jitter_ms: float = attrs.field(default=0.0, validator=_non_negative)
    fault_rate: float = attrs.field(default=0.0, validator=_fraction)
    drop_rate: float = attrs.field(default=0.0, validator=_fraction)
    retry_after: float = attrs.field(default=1.0, validator=_non_negative)
    rate_limit: int | None = attrs.field(
        default=None, validator=attrs.validators.optional(attrs.validators.ge(1))
    )
    rate_window: float = attrs.field(default=60.0, validator=attrs.validators.gt(0.0))
    clients: Mapping[str, ClientCredentials] = attrs.field(
        factory=_default_clients, converter=_to_clients, repr=False
    )
    validate_answers: bool = attrs.field(factory=_validate_answers_default)
