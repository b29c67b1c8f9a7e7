"""``python -m service_api_mock``: serve the mock from a shell.

Example::

    python -m service_api_mock --port 8080 --records 200 --fault-rate 0.1
    python -m service_api_mock --check-spec openapi.yaml   # can the mock serve it?
"""

from __future__ import annotations

import argparse
import logging
import socket
import sys
from collections.abc import Sequence
from pathlib import Path

import attrs
import uvicorn

from ._app import API_PREFIX, CONTROL_PREFIX
from ._config import DEMO_ACCOUNTS, DEMO_CLIENT_ID, DEMO_CLIENT_SECRET, MockConfig
from ._server import MOCK_OPTIONS
from ._service import MockService
from ._spec import DEFAULT_SPEC, MockSpec, SpecError, load_spec

__all__ = ["main", "parser"]


# One flag per MockConfig setting: (name, type, metavar, help); the default is MockConfig's.
_SETTINGS: tuple[tuple[str, type, str, str], ...] = (
    ("spec", Path, "PATH", "the OpenAPI document whose operations the mock serves"),
    ("token_ttl", float, "SECONDS", "lifetime of issued tokens, sent as expires_in"),
    ("records", int, "N", "records of each resource per account"),
    ("seed", int, "S", "seed of data and faults"),
    ("latency_ms", float, "MS", "latency added to every request"),
    (
        "latency_jitter_ms",
        float,
        "MS",
        "extra random latency, uniform between 0 and MS",
    ),
    (
        "fault_rate",
        float,
        "F",
        "fraction (0..1) of requests answered 503 or 429 with Retry-After",
    ),
    (
        "drop_rate",
        float,
        "F",
        "fraction (0..1) of requests whose connection is dropped",
    ),
    (
        "retry_after",
        float,
        "SECONDS",
        "Retry-After announced by injected 503/429 answers",
    ),
    ("rate_limit", int, "N_PER_MINUTE", "requests per minute per client ID before 429"),
    ("rate_window", float, "SECONDS", "sliding window the rate limit is counted over"),
)


class _DefaultsHelp(argparse.ArgumentDefaultsHelpFormatter):
    """Each option's default after its help, but for options that have none."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        if action.default is None:
            return action.help
        return super()._get_help_string(action)


def parser(prog: str | None = None) -> argparse.ArgumentParser:
    """The command-line parser, one flag per :class:`MockConfig` setting; ``prog`` is the
    program name its usage line shows.

    Example::

        parser("service-api-mock").parse_args(["--port", "9000"])
    """
    p = argparse.ArgumentParser(
        prog=prog or "python -m service_api_mock",
        description=(
            "Serve a local mock of the service's public HTTP API under /public/v3: every "
            "operation of the OpenAPI spec, read at start-up, with a control API under "
            f"{CONTROL_PREFIX}/ (counts, tokens, revoke, faults, clock, reset). Faults are "
            "off unless asked for, and reproducible for a given --seed."
        ),
        epilog=(
            f"Demo credentials: {DEMO_CLIENT_ID} / {DEMO_CLIENT_SECRET} for accounts "
            f"{', '.join(DEMO_ACCOUNTS)}."
        ),
        formatter_class=_DefaultsHelp,
    )
    p.add_argument("--host", default="127.0.0.1", help="interface to listen on")
    p.add_argument("--port", type=int, default=8080, help="TCP port (0: any free port)")
    defaults = attrs.evolve(MockConfig(), spec=DEFAULT_SPEC)
    for name, kind, metavar, text in _SETTINGS:
        flag = f"--{name.replace('_', '-')}"
        p.add_argument(
            flag, type=kind, default=getattr(defaults, name), metavar=metavar, help=text
        )
    p.add_argument(
        "--check-spec",
        type=Path,
        nargs="?",
        const=DEFAULT_SPEC,
        metavar="PATH",
        help="only check that the mock can serve this spec (exit status 1 if not, saying why)",
    )
    p.add_argument(
        "--validate-answers",
        action="store_true",
        default=defaults.validate_answers,
        help=(
            "check every answer against its schema before sending it: one that does not "
            "fit is a 500 saying why (for tests; also SERVICE_API_MOCK_VALIDATE_ANSWERS=1)"
        ),
    )
    levels = ["debug", "info", "warning", "error"]
    p.add_argument("--log-level", default="info", choices=levels, help="logging level")
    return p


def main(argv: Sequence[str] | None = None, prog: str | None = None) -> int:
    """Parse ``argv``, print where the mock listens and the demo credentials, serve until Ctrl-C.

    ``prog`` is the program name the usage line shows. ``--check-spec PATH`` only checks
    that the mock can serve that spec. Ctrl-C stops it with one line,
    ``service-api mock stopped``, and returns 0.

    Example::

        main(["--port", "8080"], prog="service-api-mock")
    """
    args = parser(prog).parse_args(argv)
    try:
        if args.check_spec is not None:
            return _check(load_spec(args.check_spec))
        settings = {s[0]: getattr(args, s[0]) for s in _SETTINGS}
        service = MockService(
            MockConfig(**settings, validate_answers=args.validate_answers)
        )
    except SpecError as exc:
        print(f"{prog or 'python -m service_api_mock'}: error: {exc}", file=sys.stderr)
        return 1
    except ValueError as exc:
        parser(prog).error(str(exc))
    logging.basicConfig(
        level=args.log_level.upper(),
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    try:
        return _serve(service, host=args.host, port=args.port, log_level=args.log_level)
    except KeyboardInterrupt:
        # Ctrl-C: uvicorn has shut down gracefully, then raised it again. A server stopped
        # on request ends normally: exit 0, so that `make mock` adds no error line either.
        print("service-api mock stopped", flush=True)
        return 0


def _check(spec: MockSpec) -> int:
    """Say what the mock serves of ``spec``, and what it cannot: 1 if anything."""
    for warning in spec.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    for problem in spec.problems:
        print(f"error: {problem}", file=sys.stderr)
    if spec.problems:
        print(
            f"{spec.path}: the mock cannot serve {len(spec.problems)} answer(s) as "
            "declared (above)",
            file=sys.stderr,
        )
        return 1
    print(f"{spec.path}: the mock serves every operation:")
    for op in spec.operations:
        # A query parameter tied to no field is accepted and not applied: most of a real
        # API's are (sort orders, expansions, versions), so it is said here, not warned.
        unapplied = f" (not applied: {', '.join(op.unapplied)})" if op.unapplied else ""
        print(f"  {op.operation_id}: {op.kind} {op.method} {op.path}{unapplied}")
    return 0


def _serve(service: MockService, *, host: str, port: int, log_level: str) -> int:
    """Serve ``service`` on ``host:port`` until Ctrl-C (a ``KeyboardInterrupt``)."""
    level = logging.getLevelNamesMapping()[log_level.upper()]
    # uvicorn's start and stop lines repeat what the mock says itself: shown in debug only.
    server_level = level if level == logging.DEBUG else max(level, logging.WARNING)
    # Bind first so that the real port is known (with --port 0) before announcing it.
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # IPPROTO_TCP so that asyncio turns Nagle off on accepted sockets (see _server.py).
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    with sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host, port))
        except OSError as exc:
            print(f"cannot listen on {host}:{port}: {exc}", file=sys.stderr)
            return 1
        _announce(host, sock.getsockname()[1], service.config)
        config = uvicorn.Config(
            service.app, host=host, port=port, log_level=server_level, **MOCK_OPTIONS
        )
        uvicorn.Server(config).run(sockets=[sock])
    return 0


def _announce(host: str, port: int, config: MockConfig) -> None:
    shown_host = f"[{host}]" if ":" in host else host
    lines = [f"service-api mock listening on http://{shown_host}:{port}{API_PREFIX}"]
    for client_id, creds in config.clients.items():
        # These are the mock's published demo credentials, printed so a user can log in.
        lines.append(
            f"  credentials: client_id={client_id} client_secret={creds.secret} "
            f"accounts={', '.join(creds.accounts)}"
        )
    lines.append(
        f"  control API: http://{shown_host}:{port}{CONTROL_PREFIX}/  (Ctrl-C stops)"
    )
    print("\n".join(lines), flush=True)


if __name__ == "__main__":
    sys.exit(main())
