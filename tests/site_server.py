"""A publisher's site for verification tests, and a webhook receiver: a real HTTP server on 127.0.0.1, in a thread,
answering each path with the page a test put there (404 otherwise) and noting every request and POST. adnet
reaches it in test mode, which allows plain http and loopback addresses, with ``ADNET_SITE_CHECK_PORT`` set to
its port (webhooks reach any port outside production).

Also recording stand-ins for httpcore's network, for the guard's tests: ``ScriptedNetwork`` answers every
connection with canned HTTP responses and notes the address and TLS name of each; ``FileNetwork`` answers each
request with the file at its path (a banner CDN).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpcore

from adnet.accounts.models import Site
from adnet.accounts.proofs import META_NAME

# The domain the test site answers for: adnet reaches it on loopback in test mode.
DOMAIN = "127.0.0.1"


@dataclass
class Answer:
    status: int = 200
    body: str = ""
    headers: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Posted:
    """A POST the server received (a webhook delivery): its path, headers and body, and when it was received
    (``time.monotonic``)."""

    path: str
    headers: dict[str, str]
    body: bytes
    at: float = field(default_factory=time.monotonic)


@dataclass
class SiteServer:
    """The pages of the running server (path → Answer), the paths it was asked for, and the POSTs it received
    (answered with the path's Answer, 404 without one)."""

    port: int
    pages: dict[str, Answer] = field(default_factory=dict)
    requested: list[str] = field(default_factory=list)
    posted: list[Posted] = field(default_factory=list)

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def home_page_with(self, *sites: Site) -> None:
        """A home page whose head carries each site's meta tag."""
        tags = "".join(f'<meta name="{META_NAME}" content="{site.verification_token}">' for site in sites)
        self.pages["/"] = Answer(body=f"<!doctype html><html><head><title>News</title>{tags}</head>"
                                      "<body><h1>News</h1></body></html>")


@contextmanager
def serve_site() -> Iterator[SiteServer]:
    """A site on 127.0.0.1 for the duration of the block."""
    site = SiteServer(port=0)

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            site.requested.append(self.path)
            self._answer()

        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            site.posted.append(Posted(self.path, {name: value for name, value in self.headers.items()}, body))
            self._answer()

        def _answer(self) -> None:
            answer = site.pages.get(self.path, Answer(404, "not found"))
            body = answer.body.encode()
            self.send_response(answer.status)
            for name, value in {"Content-Type": "text/html; charset=utf-8", **answer.headers}.items():
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            return

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    site.port = server.server_address[1]
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, name="site-server",
                              daemon=True)
    thread.start()
    try:
        yield site
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


def http_response(status: int = 200, body: bytes = b"", headers: dict[str, str] | None = None) -> bytes:
    """The bytes of one HTTP/1.1 response."""
    lines = [f"HTTP/1.1 {status} X"] + [f"{name}: {value}" for name, value in (headers or {}).items()]
    lines.append(f"Content-Length: {len(body)}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + body


class ScriptedStream(httpcore.AsyncNetworkStream):
    """One connection: writes are ignored, reads give the response, TLS notes the server name it was started
    with."""

    def __init__(self, network: ScriptedNetwork, response: bytes) -> None:
        self.network = network
        self.response = response

    async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:  # noqa: ASYNC109
        chunk, self.response = self.response[:max_bytes], self.response[max_bytes:]
        return chunk

    async def write(self, buffer: bytes, timeout: float | None = None) -> None:  # noqa: ASYNC109
        return None

    async def aclose(self) -> None:
        return None

    async def start_tls(self, ssl_context: Any, server_hostname: str | None = None,
                        timeout: float | None = None) -> httpcore.AsyncNetworkStream:  # noqa: ASYNC109
        self.network.tls_names.append(server_hostname)
        return self

    def get_extra_info(self, info: str) -> Any:
        return None


class ScriptedNetwork(httpcore.AsyncNetworkBackend):
    """The network behind the guard: each connection gets the next scripted response; ``connected`` lists the
    (address, port) of each connection, ``tls_names`` the name each TLS handshake carried."""

    def __init__(self, *responses: bytes) -> None:
        self.responses = list(responses)
        self.connected: list[tuple[str, int]] = []
        self.tls_names: list[str | None] = []

    async def connect_tcp(self, host: str, port: int, timeout: float | None = None,  # noqa: ASYNC109
                          local_address: str | None = None, socket_options: Any = None) -> httpcore.AsyncNetworkStream:
        self.connected.append((host, port))
        return ScriptedStream(self, self.responses.pop(0) if self.responses else http_response(404))

    async def connect_unix_socket(self, path: str, timeout: float | None = None,  # noqa: ASYNC109
                                  socket_options: Any = None) -> httpcore.AsyncNetworkStream:
        raise NotImplementedError

    async def sleep(self, seconds: float) -> None:
        return None


class FileStream(ScriptedStream):
    """One connection to ``FileNetwork``: the request line it is written names the file its read answers."""

    def __init__(self, network: FileNetwork) -> None:
        super().__init__(network, b"")
        self.files = network

    async def write(self, buffer: bytes, timeout: float | None = None) -> None:  # noqa: ASYNC109
        if not self.response and buffer.startswith(b"GET "):
            path = buffer.split(b" ", 2)[1].decode()
            self.files.requested.append(path)
            self.response = self.files.files.get(path, http_response(404))


class FileNetwork(ScriptedNetwork):
    """A network where every host serves ``files`` (path → response bytes, over http or https alike), noting each
    path asked for."""

    def __init__(self, files: dict[str, bytes] | None = None) -> None:
        super().__init__()
        self.files = dict(files or {})
        self.requested: list[str] = []

    def serve(self, path: str, body: bytes, status: int = 200) -> None:
        self.files[path] = http_response(status, body)

    async def connect_tcp(self, host: str, port: int, timeout: float | None = None,  # noqa: ASYNC109
                          local_address: str | None = None, socket_options: Any = None) -> httpcore.AsyncNetworkStream:
        self.connected.append((host, port))
        return FileStream(self)


def resolver(table: dict[str, list[str]]):
    """A resolver that answers from ``table`` (a name missing from it does not resolve)."""
    async def resolve(host: str, port: int) -> list[str]:
        return list(table.get(host, []))

    return resolve
