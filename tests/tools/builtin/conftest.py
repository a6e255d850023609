"""A local HTTP server for built-in tool tests: routes are plain functions, requests are recorded."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

import pytest


@dataclass
class Request:
    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]
    body: bytes


@dataclass
class Reply:
    status: int = 200
    body: bytes | str = b""
    headers: dict[str, str] = field(default_factory=dict)


Route = Callable[[Request], Reply]


class LocalServer:
    def __init__(self) -> None:
        self.routes: dict[tuple[str, str], Route] = {}
        self.requests: list[Request] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def _handle(self) -> None:
                parts = urlsplit(self.path)
                length = int(self.headers.get("Content-Length") or 0)
                request = Request(
                    self.command,
                    parts.path,
                    parse_qs(parts.query),
                    {k.lower(): v for k, v in self.headers.items()},
                    self.rfile.read(length) if length else b"",
                )
                server.requests.append(request)
                route = server.routes.get((self.command, parts.path))
                reply = route(request) if route else Reply(404, b"not found")
                body = reply.body.encode() if isinstance(reply.body, str) else reply.body
                self.send_response(reply.status)
                for key, value in reply.headers.items():
                    self.send_header(key, value)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            do_GET = do_POST = _handle

            def log_message(self, format: str, *args: object) -> None:
                return

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def route(self, method: str, path: str, reply: Route | Reply) -> None:
        self.routes[(method, path)] = reply if callable(reply) else (lambda _r: reply)


@pytest.fixture
def server() -> Iterator[LocalServer]:
    local = LocalServer()
    thread = threading.Thread(target=local.httpd.serve_forever, daemon=True)
    thread.start()
    yield local
    local.httpd.shutdown()
    local.httpd.server_close()
