"""kforge's MCP server over streamable HTTP at ``/mcp``, behind the same token as the API.

Streams are resumable: each POST's SSE stream starts with a priming event (an id, empty data,
and a ``retry`` hint), every message it carries is kept for its session, and a client that lost
the connection (or whose stream a long tool released) reconnects with ``Last-Event-ID`` and gets
the rest of that stream.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence
from contextlib import AbstractAsyncContextManager
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mcp.server.streamable_http import EventCallback

    from kforge.mcp.catalog import MCPCatalog
    from kforge.runtime.runtime import Runtime

__all__ = ["MCPEndpoint", "SessionEvents"]

_AGENTS = ("router", "research", "react")
RETRY_MS = 1000
"""How long a client waits before it reconnects to a stream the server closed."""
EVENTS_PER_SESSION = 1000
"""Messages one MCP session keeps for replay; a client further behind cannot resume."""


class SessionEvents:
    """The messages of one MCP session's streams, kept so a client can resume a stream.

    One per session: the SDK names a stream by the id of the request it answers, and every
    session numbers its requests from the start, so one store for all sessions would replay
    another session's messages.
    """

    def __init__(self, limit: int = EVENTS_PER_SESSION) -> None:
        self._events: deque[tuple[int, str, Any]] = deque(maxlen=limit)
        self._next = 0

    async def store_event(self, stream_id: str, message: Any) -> str:
        self._next += 1
        self._events.append((self._next, stream_id, message))
        return str(self._next)

    async def replay_events_after(
        self, last_event_id: str, send_callback: EventCallback
    ) -> str | None:
        from mcp.server.streamable_http import EventMessage

        after = int(last_event_id) if last_event_id.isdigit() else -1
        stream = next((sid for seq, sid, _ in self._events if seq == after), None)
        if stream is None:
            return None
        for seq, sid, message in list(self._events):
            if seq > after and sid == stream and message is not None:
                await send_callback(EventMessage(message, str(seq)))
        return stream


class MCPEndpoint:
    """An ASGI app: MCP sessions whose ``run_agent`` tool runs agents on this server's runtime,
    beside what ``catalog`` adds (tools, resources, prompts). ``loopback``: the server listens
    only on this machine (requests that DNS rebinding could forge are refused)."""

    def __init__(
        self,
        runtime: Runtime,
        *,
        loopback: bool,
        cors_origins: Sequence[str] = (),
        max_body_bytes: int,
        corpus: str = "samples",
        catalog: MCPCatalog | None = None,
    ):
        from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
        from mcp.server.transport_security import TransportSecuritySettings

        from kforge.mcp.server import build_mcp_server, run_agent_tool
        from kforge.runtime.answers import run_to_answer

        agents = [a for a in _AGENTS if a in runtime.registry] or runtime.registry.names()

        async def runner(agent_type: str, prompt: str) -> str:
            return await run_to_answer(runtime, agent_type, prompt, corpus=corpus)

        server = build_mcp_server([], run_agent=run_agent_tool(runner, agents), catalog=catalog)
        local = loopback
        # On loopback, refuse requests a web page could make through DNS rebinding; elsewhere
        # the token guards every request.
        security = TransportSecuritySettings(
            enable_dns_rebinding_protection=local,
            allowed_hosts=["127.0.0.1:*", "localhost:*", "[::1]:*"],
            allowed_origins=[
                "http://127.0.0.1:*",
                "http://localhost:*",
                "http://[::1]:*",
                *cors_origins,
            ],
        )

        class PerSessionEvents(StreamableHTTPSessionManager):
            """Hands each new session's transport a store of its own."""

            @property
            def event_store(self) -> Any:
                return SessionEvents()

            @event_store.setter
            def event_store(self, value: Any) -> None:
                pass

        self.manager = PerSessionEvents(
            server,
            security_settings=security,
            max_request_body_size=max_body_bytes,
            retry_interval=RETRY_MS,
        )

    def lifespan(self) -> AbstractAsyncContextManager[None]:
        return self.manager.run()

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        await self.manager.handle_request(scope, receive, send)
