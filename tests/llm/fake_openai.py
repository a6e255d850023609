"""A real HTTP server on 127.0.0.1 that speaks the OpenAI chat-completions API with canned replies."""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = ["FakeOpenAI", "Reply", "chunk", "completion", "tool_call"]


@dataclass
class Reply:
    """One canned answer to one POST /v1/chat/completions."""

    status: int = 200
    body: Any = None
    """A JSON value to send (ignored when ``raw`` or ``sse`` is set)."""
    raw: bytes | None = None
    """Bytes sent as they are, with content type application/json (for malformed bodies)."""
    sse: list[Any] | None = None
    """Server-sent events: dicts are JSON-encoded, strings are sent as the data line as is."""
    headers: dict[str, str] = field(default_factory=dict)
    delay_s: float = 0.0
    """Seconds to wait before answering."""
    event_delay_s: float = 0.0
    """Seconds to wait after each server-sent event."""
    hold: bool = False
    """Wait until the test sets ``FakeOpenAI.release`` (or 10 s) before answering."""


def completion(
    text: str | None = "",
    *,
    tool_calls: list[dict[str, Any]] | None = None,
    usage: tuple[int, int] | None = (11, 7),
    finish_reason: str = "stop",
    model: str = "fake-model",
) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": text}
    if tool_calls:
        message["tool_calls"] = tool_calls
        finish_reason = "tool_calls"
    body: dict[str, Any] = {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 1700000000,
        "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": finish_reason}],
    }
    if usage is not None:
        body["usage"] = {
            "prompt_tokens": usage[0],
            "completion_tokens": usage[1],
            "total_tokens": sum(usage),
        }
    return body


def tool_call(name: str, arguments: Any, call_id: str = "call_1") -> dict[str, Any]:
    args = arguments if isinstance(arguments, str) else json.dumps(arguments)
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": args}}


def chunk(
    content: str | None = None,
    *,
    tool_calls: list[dict[str, Any]] | None = None,
    finish_reason: str | None = None,
    usage: tuple[int, int] | None = None,
) -> dict[str, Any]:
    delta: dict[str, Any] = {}
    if content is not None:
        delta["content"] = content
    if tool_calls is not None:
        delta["tool_calls"] = tool_calls
    body: dict[str, Any] = {
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "created": 1700000000,
        "model": "fake-model",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}],
    }
    if usage is not None:
        body["choices"] = []
        body["usage"] = {
            "prompt_tokens": usage[0],
            "completion_tokens": usage[1],
            "total_tokens": sum(usage),
        }
    return body


class FakeOpenAI:
    """Serves queued ``Reply`` objects in order and records every request it receives."""

    def __init__(self) -> None:
        self.replies: deque[Reply] = deque()
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.received = threading.Event()
        self.release = threading.Event()
        self.disconnected = threading.Event()
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_port}/v1"

    def push(self, *replies: Reply | dict[str, Any]) -> None:
        for reply in replies:
            self.replies.append(reply if isinstance(reply, Reply) else Reply(body=reply))

    def start(self) -> FakeOpenAI:
        self._thread.start()
        return self

    def stop(self) -> None:
        self.release.set()
        self._server.shutdown()
        self._server.server_close()

    def _next(self, body: dict[str, Any], headers: dict[str, str]) -> Reply:
        with self._lock:
            self.requests.append(body)
            self.headers.append(headers)
            self.received.set()
            if not self.replies:
                return Reply(
                    status=500, body={"error": {"message": "fake server: no canned reply left"}}
                )
            return self.replies.popleft()

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                if self.path.rstrip("/").endswith("/models"):
                    self._send(200, json.dumps({"object": "list", "data": []}).encode())
                else:
                    self._send(404, b'{"error": {"message": "not found"}}')

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                if not self.path.endswith("/chat/completions"):
                    self._send(404, b'{"error": {"message": "unknown path"}}')
                    return
                reply = fake._next(body, {k.lower(): v for k, v in self.headers.items()})
                if reply.hold:
                    fake.release.wait(10)
                if reply.delay_s:
                    time.sleep(reply.delay_s)
                try:
                    if reply.sse is not None:
                        self._send_sse(reply)
                    elif reply.raw is not None:
                        self._send(reply.status, reply.raw, reply.headers)
                    else:
                        self._send(reply.status, json.dumps(reply.body).encode(), reply.headers)
                except (BrokenPipeError, ConnectionResetError):
                    fake.disconnected.set()

            def _send(
                self, status: int, data: bytes, headers: dict[str, str] | None = None
            ) -> None:
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                for key, value in (headers or {}).items():
                    self.send_header(key, value)
                self.end_headers()
                self.wfile.write(data)
                self.wfile.flush()

            def _send_sse(self, reply: Reply) -> None:
                self.send_response(reply.status)
                self.send_header("content-type", "text/event-stream")
                self.send_header("cache-control", "no-cache")
                self.end_headers()
                for event in [*(reply.sse or []), "[DONE]"]:
                    data = event if isinstance(event, str) else json.dumps(event)
                    self.wfile.write(f"data: {data}\n\n".encode())
                    self.wfile.flush()
                    if reply.event_delay_s:
                        time.sleep(reply.event_delay_s)

        return Handler
