"""The handle on one mock: its ASGI app and the operations of the control API."""

from __future__ import annotations

import copy
import logging
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import attrs
from starlette.types import ASGIApp

from ._app import build_app
from ._config import MockConfig
from ._spec import load_spec
from ._state import Collection, MockState

__all__ = ["MockService"]

logger = logging.getLogger("service_api_mock")

_UNSET: Any = object()


class MockService:
    """One mock of the public API: all its state, its ASGI app, and control operations.

    Use ``service.app`` in process with ``httpx.ASGITransport``, or serve it with
    :func:`running_mock`. The same operations are reachable over HTTP under ``/__mock__/``.
    It serves the operations of ``spec`` (default: ``config.spec``, else the project's
    ``openapi.yaml``), logging what it cannot serve as declared; a file that is no OpenAPI
    document raises :class:`SpecError` here.

    Example::

        service = MockService(MockConfig(records=7))
        other = MockService(spec="copy/openapi.yaml")
        transport = httpx.ASGITransport(app=service.app)
        async with httpx.AsyncClient(transport=transport, base_url="http://mock") as client:
            ...
        assert service.count("authenticate", 200) == 1
    """

    def __init__(
        self, config: MockConfig | None = None, *, spec: str | Path | None = None
    ) -> None:
        config = config if config is not None else MockConfig()
        if spec is not None:
            config = attrs.evolve(config, spec=spec)
        served = load_spec(config.spec)
        # What the mock serves otherwise than the spec says was said where it counts:
        # by make as it generated, and by --check-spec. A server's own stderr is for
        # its requests, so here each is a line of the INFO log.
        for warning in served.warnings:
            logger.info("%s", warning)
        for problem in served.problems:
            logger.error("%s", problem)
        for op in served.operations:
            if op.unapplied:
                logger.info(
                    "%s: not applied (tied to no field): %s",
                    op.operation_id,
                    ", ".join(op.unapplied),
                )
        self._state = MockState(config, served)
        self._app = build_app(self._state)

    def __repr__(self) -> str:
        return f"MockService({self._state.config!r})"

    @property
    def app(self) -> ASGIApp:
        """The ASGI application (public API under ``/public/v3``, control API under ``/__mock__``).

        Example::

            httpx.AsyncClient(transport=httpx.ASGITransport(app=service.app))
        """
        return self._app

    @property
    def config(self) -> MockConfig:
        """The configuration in force now (faults set since the last reset included).

        Example::

            service.config.token_ttl
        """
        return self._state.config

    def count(self, operation: str | None = None, status: int | None = None) -> int:
        """Requests answered so far, filtered by operationId and status.

        A dropped connection counts with status 0.

        Example::

            assert service.count("authenticate") == 1
            assert service.count(status=401) == 0
        """
        return self._state.count(operation, status)

    def counts(self) -> dict[str, dict[int, int]]:
        """Requests answered so far: operationId to status to count.

        Example::

            service.counts()  # {"authenticate": {200: 1}, "listShipments": {200: 3}}
        """
        return self._state.counts()

    def revoke_tokens(self) -> None:
        """Forget every token issued so far: their next use is answered 401.

        Example::

            service.revoke_tokens()
        """
        self._state.revoke_tokens()

    def set_faults(
        self,
        *,
        fault_rate: float = _UNSET,
        drop_rate: float = _UNSET,
        latency_ms: float = _UNSET,
        latency_jitter_ms: float = _UNSET,
        retry_after: float = _UNSET,
        rate_limit: int | None = _UNSET,
        rate_window: float = _UNSET,
    ) -> None:
        """Change the given fault settings; the others stay as they are.

        Example::

            service.set_faults(fault_rate=0.3, retry_after=0.01)
            service.set_faults(rate_limit=None)  # no rate limit
            service.set_faults(rate_limit=600, rate_window=6.0)  # 60 requests per 6 s
        """
        settings = {
            "fault_rate": fault_rate,
            "drop_rate": drop_rate,
            "latency_ms": latency_ms,
            "latency_jitter_ms": latency_jitter_ms,
            "retry_after": retry_after,
            "rate_limit": rate_limit,
            "rate_window": rate_window,
        }
        # Only the settings given change: the others keep their value in force.
        given = {name: value for name, value in settings.items() if value is not _UNSET}
        self._state.set_faults(**given)

    def advance_clock(self, seconds: float) -> None:
        """Move the mock's clock forward (or back): tokens expire accordingly.

        Example::

            service.advance_clock(3600)  # every token issued so far has now expired
        """
        self._state.advance_clock(seconds)

    def reset(self, **config_overrides: Any) -> None:
        """Forget tokens, counters, faults and clock offset; apply ``config_overrides``.

        Overrides apply to the configuration the service was created with.

        Example::

            service.reset(records=37, token_ttl=2)
        """
        self._state.reset(**config_overrides)

    def issued_tokens(self) -> list[str]:
        """Every token issued since the last reset, revoked or not (to scan logs for them).

        Example::

            assert not any(t in caplog.text for t in service.issued_tokens())
        """
        return self._state.issued_tokens()

    def invalid_answers(self) -> list[str]:
        """Why each answer built since the last reset did not fit its schema (with
        ``validate_answers`` on; each was sent as a 500): empty when all fit.

        Example::

            assert service.invalid_answers() == []
        """
        return self._state.invalid_answers()

    def dataset(
        self, resource: str, account: str, *, parents: tuple[Any, ...] = ()
    ) -> list[dict[str, Any]]:
        """The full ordered records that the list of ``resource`` pages through for
        ``account`` (under the parent ids ``parents``, for a sub-resource), created ones
        included, deleted ones left out.

        Example::

            assert len(service.dataset("shipments", "acct-1")) == service.config.records
            service.dataset("shipment-events", "acct-1", parents=(shipment_id,))
        """
        # A deep copy: a test that edits what it got must not change what the mock serves.
        place = self._state.collection(resource, account, tuple(parents))
        return copy.deepcopy(self._state.records(place)[0])

    def update_record(
        self, resource: str, account: str, index: int, changes: Mapping[str, Any]
    ) -> dict[str, Any]:
        """Change one record the mock serves, as the real service's data changes between
        two nightly loads: ``changes`` replace top-level fields (a nested list is replaced
        whole), the record keeps its place in the listing. Returns the record as now served.

        A :meth:`reset` brings the generated records back.

        Example::

            service.update_record("shipments", "acct-1", 0, {"status": "Delivered"})
        """
        place = Collection(resource, account)
        return self._state.update_record(place, index, changes)
