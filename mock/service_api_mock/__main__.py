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

import uvicorn

from ._app import API_PREFIX, CONTROL_PREFIX
from ._config import DEMO_ACCOUNTS, DEMO_CLIENT_ID, DEMO_CLIENT_SECRET, MockConfig
from ._server import uvicorn_config
from ._service import MockService
from ._spec import DEFAULT_SPEC, SpecError, load_spec

__all__ = ["main", "parser"]


def parser(prog: str | None = None) -> argparse.ArgumentParser:
    """The command-line parser, one flag per :class:`MockConfig` setting.

    Example::

        parser("service-api-mock").parse_args(["--port", "9000"])
    """
    defaults = MockConfig()
    p = argparse.ArgumentParser(
        prog=prog or "python -m service_api_mock",
        description=(
            "Serve a local mock of the service's public HTTP API under /public/v3, every "
            "operation of the OpenAPI spec, with a "
            f"control API under {CONTROL_PREFIX}/ (counts, tokens, revoke, faults, clock, reset). "
            "Faults are off unless asked for, and reproducible for a given --seed."
        ),
        epilog=(
            f"Demo credentials: {DEMO_CLIENT_ID} / {DEMO_CLIENT_SECRET} for accounts "
            f"{', '.join(DEMO_ACCOUNTS)}."
        ),
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    p.add_argument(
        "--spec",
        type=Path,
        default=DEFAULT_SPEC,
        metavar="PATH",
        help="the OpenAPI document whose operations the mock serves",
    )
    p.add_argument(
        "--check-spec",
        type=Path,
        metavar="PATH",
        help="only check that the mock can serve this spec: list its operations, or say "
        "which one it cannot serve and why (exit status 1)",
    )
    p.add_argument("--host", default="127.0.0.1", help="interface to listen on")
    p.add_argument(
        "--port", type=int, default=8080, help="TCP port to listen on (0: any free port)"
    )
    p.add_argument(
        "--token-ttl",
        type=float,
        default=defaults.token_ttl,
        metavar="SECONDS",
        help="lifetime of issued tokens, sent as expires_in",
    )
    p.add_argument(
        "--records",
        type=int,
        default=defaults.records,
        metavar="N",
        help="records of each resource per account (50 per page at most)",
    )
    p.add_argument(
        "--seed", type=int, default=defaults.seed, metavar="S", help="seed of data and faults"
    )
    p.add_argument(
        "--latency-ms",
        type=float,
        default=defaults.latency_ms,
        metavar="MS",
        help="latency added to every request",
    )
    p.add_argument(
        "--latency-jitter-ms",
        type=float,
        default=defaults.latency_jitter_ms,
        metavar="MS",
        help="extra random latency, uniform between 0 and MS",
    )
    p.add_argument(
        "--fault-rate",
        type=float,
        default=defaults.fault_rate,
        metavar="F",
        help="fraction (0..1) of requests answered 503 or 429 with Retry-After",
    )
    p.add_argument(
        "--drop-rate",
        type=float,
        default=defaults.drop_rate,
        metavar="F",
        help="fraction (0..1) of requests whose connection is dropped without an answer",
    )
    p.add_argument(
        "--retry-after",
        type=float,
        default=defaults.retry_after,
        metavar="SECONDS",
        help="Retry-After announced by injected 503/429 answers",
    )
    p.add_argument(
        "--rate-limit",
        type=int,
        default=None,
        metavar="N_PER_MINUTE",
        help="requests per minute per client ID before 429 (None: no limit)",
    )
    p.add_argument(
        "--rate-window",
        type=float,
        default=defaults.rate_window,
        metavar="SECONDS",
        help="sliding window the rate limit is counted over (60: per minute)",
    )
    p.add_argument(
        "--log-level",
        default="info",
        choices=["debug", "info", "warning", "error"],
        help="logging level",
    )
    return p


def main(argv: Sequence[str] | None = None, prog: str | None = None) -> int:
    """Parse ``argv``, print where the mock listens and the demo credentials, serve until Ctrl-C.

    ``prog`` is the program name the usage line shows. ``--check-spec PATH`` only checks
    that the spec can be served.

    Example::

        main(["--port", "8080"], prog="service-api-mock")
    """
    args = parser(prog).parse_args(argv)
    shown = prog or "python -m service_api_mock"
    try:
        if args.check_spec is not None:
            spec = load_spec(args.check_spec)
            print(f"{spec.path}: the mock serves every operation:")
            for op in spec.operations:
                print(f"  {op.operation_id}: {op.kind} {op.method} {op.path}")
            return 0
        spec = load_spec(args.spec)
    except SpecError as exc:
        print(f"{shown}: error: {exc}", file=sys.stderr)
        return 1
    try:
        config = MockConfig(
            spec=spec.path,
            token_ttl=args.token_ttl,
            records=args.records,
            seed=args.seed,
            latency_ms=args.latency_ms,
            latency_jitter_ms=args.latency_jitter_ms,
            fault_rate=args.fault_rate,
            drop_rate=args.drop_rate,
            retry_after=args.retry_after,
            rate_limit=args.rate_limit,
            rate_window=args.rate_window,
        )
    except ValueError as exc:
        parser(prog).error(str(exc))
    logging.basicConfig(
        level=args.log_level.upper(), format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    service = MockService(config)
    # Bind first so that the real port is known (with --port 0) before announcing it.
    family = socket.AF_INET6 if ":" in args.host else socket.AF_INET
    # IPPROTO_TCP so that asyncio turns Nagle off on accepted sockets (see _server.py).
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    with sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((args.host, args.port))
        except OSError as exc:
            print(f"cannot listen on {args.host}:{args.port}: {exc}", file=sys.stderr)
            return 1
        _announce(args.host, sock.getsockname()[1], config)
        uvicorn.Server(uvicorn_config(service, args.host, args.port)).run(sockets=[sock])
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
    lines.append(f"  control API: http://{shown_host}:{port}{CONTROL_PREFIX}/  (Ctrl-C stops)")
    print("\n".join(lines), flush=True)


if __name__ == "__main__":
    sys.exit(main())
