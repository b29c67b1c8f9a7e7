"""The ``SERVICE_API_LOG`` switch: readable logs of what the client does, without code.

``SERVICE_API_LOG=info`` shows retries, token refreshes and warnings; ``debug`` adds one
line per request (method, URL, status, elapsed time). The lines go to stderr through a
handler on the ``service_api`` logger only, so an application's own logging set-up is
left alone; when the application has handlers on the root logger (the CLI does), those
print the lines and the switch only sets the level, as ``logging.basicConfig`` would not
add a second handler. With the variable unset the package logs through ``logging`` as
usual: each retry it waits out is a WARNING (the rest is INFO or DEBUG), so a script that
set no logging up still sees those lines, bare, through Python's last-resort handler on
stderr. No line ever holds a secret: URLs carry none here, and headers and bodies are
never logged.
"""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Mapping

import httpx

ENV_LOG = "SERVICE_API_LOG"
logger = logging.getLogger("service_api")

_LEVELS = {"debug": logging.DEBUG, "info": logging.INFO}


class _SwitchHandler(logging.StreamHandler):  # type: ignore[type-arg]
    """The handler the switch installs (recognised so that it is installed once).

    It writes to ``sys.stderr`` as it is at each line (a progress display may redirect
    it), and stays silent while the root logger has handlers of the application's,
    which receive the same lines: each line is printed once.
    """

    def emit(self, record: logging.LogRecord) -> None:
        if not logging.getLogger().handlers:
            self.stream = sys.stderr
            super().emit(record)


def setup_logging(environ: Mapping[str, str] = os.environ) -> None:
    """Apply ``SERVICE_API_LOG`` (``debug`` or ``info``; anything else: no change).

    Called once when ``service_api`` is imported; call it again after changing the
    variable at run time.

    Example::

        os.environ["SERVICE_API_LOG"] = "debug"
        service_api.setup_logging()
    """
    level = _LEVELS.get(environ.get(ENV_LOG, "").strip().lower())
    if level is None:
        return
    if not any(isinstance(h, _SwitchHandler) for h in logger.handlers):
        handler = _SwitchHandler()
        handler.setFormatter(
            logging.Formatter("[%(asctime)s %(levelname)s %(name)s] %(message)s")
        )
        logger.addHandler(handler)
    logger.setLevel(level)


def log_response(response: httpx.Response, elapsed: float) -> None:
    """One DEBUG line for an answer: method, URL, status and elapsed seconds."""
    request = response.request
    logger.debug(
        "%s %s -> %d in %.0f ms",
        request.method,
        request.url,
        response.status_code,
        elapsed * 1000,
    )
