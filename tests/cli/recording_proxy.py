"""A forward HTTP proxy on loopback that records every request passing through it."""

from __future__ import annotations

import contextlib
import http.client
import threading
import urllib.parse
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import attrs

# Headers of one hop only (RFC 9110 7.6.1): never forwarded.
HOP_BY_HOP = frozenset(
    {
        "connection",
        "keep-alive",
        "proxy-connection",
        "transfer-encoding",
        "te",
        "upgrade",
    }
)


@attrs.define
class RecordingProxy:
    """Where the proxy listens and what went through it: ``(method, absolute URL)``."""

    url: str
    seen: list[tuple[str, str]] = attrs.field(factory=list)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _ProxyServer

    def _forward(self) -> None:
        target = urllib.parse.urlsplit(
            self.path
        )  # absolute-form: http://host:port/path
        if target.scheme != "http" or not target.hostname:
            self.send_error(400, "absolute http:// URL expected")
            return
        self.server.record.seen.append((self.command, self.path))
        length = int(self.headers.get("content-length") or 0)
        body = self.rfile.read(length) if length else None
        headers = {k: v for k, v in self.headers.items() if k.lower() not in HOP_BY_HOP}
        upstream = http.client.HTTPConnection(
            target.hostname, target.port or 80, timeout=30
        )
        try:
            path = target.path + (f"?{target.query}" if target.query else "")
            upstream.request(self.command, path or "/", body=body, headers=headers)
            answer = upstream.getresponse()
            content = answer.read()
        finally:
            upstream.close()
        self.send_response(answer.status, answer.reason)
        for key, value in answer.getheaders():
            if key.lower() not in HOP_BY_HOP | {"content-length"}:
                self.send_header(key, value)
        self.send_header("content-length", str(len(content)))
        self.end_headers()
        self.wfile.write(content)

    do_GET = _forward
    do_POST = _forward

    def log_message(self, format: str, *args: object) -> None:
        pass


class _ProxyServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, record: RecordingProxy) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.record = record


@contextlib.contextmanager
def recording_proxy() -> Iterator[RecordingProxy]:
    """Serve a recording forward proxy on a free loopback port for the block.

    Example::

        with recording_proxy() as proxy:
            httpx.get("http://127.0.0.1:8080/x", proxy=proxy.url)
            assert proxy.seen == [("GET", "http://127.0.0.1:8080/x")]
    """
    record = RecordingProxy(url="")
    server = _ProxyServer(record)
    record.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield record
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=30)
