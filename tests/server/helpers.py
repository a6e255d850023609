"""A real kforge server on 127.0.0.1 in a thread of the test process, and SSE parsing."""

from __future__ import annotations

import asyncio
import json
import socket
import threading
from collections.abc import Coroutine, Iterator
from dataclasses import dataclass, field
from typing import Any, TypeVar

import httpx
import uvicorn

from kforge.runtime import Runtime
from kforge.server import ServerSettings, create_app

T = TypeVar("T")


class LiveServer:
    """Serves ``runtime`` with uvicorn on a socket bound before the thread starts, so requests
    queue in the socket's backlog until the server takes them (no waiting for it to start)."""

    def __init__(
        self, runtime: Runtime, settings: ServerSettings | None = None, **app_kwargs: Any
    ) -> None:
        self.settings = settings or ServerSettings()
        self.app = create_app(runtime, self.settings, close_runtime=True, **app_kwargs)
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(512)
        self.port = self.sock.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        config = uvicorn.Config(
            self.app, log_level="warning", timeout_graceful_shutdown=1, lifespan="on"
        )
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self._run, name="kforge-test-server", daemon=True)
        self.loop: asyncio.AbstractEventLoop | None = None
        self._loop_ready = threading.Event()

    def _run(self) -> None:
        async def main() -> None:
            self.loop = asyncio.get_running_loop()
            self._loop_ready.set()
            await self.server.serve(sockets=[self.sock])

        asyncio.run(main())

    def __enter__(self) -> LiveServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=30)
        self.sock.close()

    def call(self, coro: Coroutine[Any, Any, T]) -> T:
        """Run ``coro`` on the server's event loop (where its runtime's runs execute)."""
        self._loop_ready.wait()
        assert self.loop is not None
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result()

    def client(self, **kwargs: Any) -> httpx.Client:
        return httpx.Client(base_url=self.url, **{"timeout": 60, **kwargs})


@dataclass
class Event:
    event: str = "message"
    id: str | None = None
    data: str = ""

    def json(self) -> Any:
        return json.loads(self.data)


@dataclass
class SSEParser:
    """Turns an SSE byte stream's lines into events (comments and retry lines skipped)."""

    current: Event = field(default_factory=Event)
    lines: list[str] = field(default_factory=list)

    def feed(self, line: str) -> Event | None:
        if line == "":
            event = self.current
            self.current = Event()
            if self.lines:
                event.data = "\n".join(self.lines)
                self.lines = []
                return event
            return None
        if line.startswith(":"):
            return None
        name, _, value = line.partition(":")
        value = value.removeprefix(" ")
        if name == "event":
            self.current.event = value
        elif name == "id":
            self.current.id = value
        elif name == "data":
            self.lines.append(value)
        return None


def iter_events(response: httpx.Response) -> Iterator[Event]:
    parser = SSEParser()
    for line in response.iter_lines():
        event = parser.feed(line)
        if event is not None:
            yield event
