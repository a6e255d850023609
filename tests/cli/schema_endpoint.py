"""A real OpenAI-compatible endpoint on 127.0.0.1 that answers any request with a value valid for
its requested JSON Schema (or plain text), for driving the CLI end to end in a subprocess. It can
hold a chosen request until released, and be switched down (HTTP 503) and back up."""

from __future__ import annotations

import json
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from kforge.llm.local.schema_values import valid_value

__all__ = ["SchemaEndpoint", "stream_chunks"]


class SchemaEndpoint:
    def __init__(self, *, hold_at: int | None = None) -> None:
        self.hold_at = hold_at
        """The number (from 1) of the request to hold until ``release`` is set."""
        self.holding = threading.Event()
        self.release = threading.Event()
        self.down = False
        """While True every request gets HTTP 503."""
        self.refused = 0
        """Requests answered 503."""
        self.went_down = threading.Event()
        """Set at the first request refused while down."""
        self.answered = 0
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_port}/v1"

    def __enter__(self) -> SchemaEndpoint:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release.set()
        self._server.shutdown()
        self._server.server_close()

    def _reply(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        with self._lock:
            if self.down:
                self.refused += 1
                self.went_down.set()
                return 503, {"error": {"message": "endpoint down"}}
            self.answered += 1
            number = self.answered
        if number == self.hold_at:
            self.holding.set()
            self.release.wait(60)
        schema = ((body.get("response_format") or {}).get("json_schema") or {}).get("schema")
        text = json.dumps(valid_value(schema, seed=number)) if schema else "All done."
        message = {"role": "assistant", "content": text}
        return 200, {
            "id": f"chatcmpl-{number}",
            "object": "chat.completion",
            "created": 1700000000,
            "model": body.get("model", "fake"),
            "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
        }

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        endpoint = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                self._send(200, {"object": "list", "data": []})

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                status, reply = endpoint._reply(body)
                try:
                    if status == 200 and body.get("stream"):
                        self._send_stream(reply)
                    else:
                        self._send(status, reply)
                except (BrokenPipeError, ConnectionResetError):
                    pass

            def _send_stream(self, reply: dict[str, Any]) -> None:
                """The reply as an OpenAI stream: its text a word per chunk, then the end."""
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.end_headers()
                for chunk in stream_chunks(reply):
                    self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
                    self.wfile.flush()
                self.wfile.write(b"data: [DONE]\n\n")

            def _send(self, status: int, reply: dict[str, Any]) -> None:
                data = json.dumps(reply).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        return Handler


def stream_chunks(reply: dict[str, Any]) -> list[dict[str, Any]]:
    """A chat completion as the chunks of its stream (usage in the last one)."""
    choice = reply["choices"][0]
    message = choice["message"]
    base = {k: reply[k] for k in ("id", "created", "model")} | {"object": "chat.completion.chunk"}
    deltas: list[dict[str, Any]] = [{"role": "assistant"}]
    deltas += [{"content": word} for word in re.findall(r"\S+\s*|\s+", message["content"] or "")]
    for index, call in enumerate(message.get("tool_calls") or []):
        deltas.append({"tool_calls": [{"index": index, **call}]})
    chunks = [
        {**base, "choices": [{"index": 0, "delta": d, "finish_reason": None}]} for d in deltas
    ]
    end = {"index": 0, "delta": {}, "finish_reason": choice["finish_reason"]}
    chunks.append({**base, "choices": [end], "usage": reply.get("usage")})
    return chunks
