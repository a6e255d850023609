"""kforge's MCP server over streamable HTTP at ``/mcp``, behind the same token as the API."""

from __future__ import annotations

from contextlib import AbstractAsyncContextManager
from typing import Any

from kforge.mcp_catalog import MCPCatalog
from kforge.runtime.runtime import Runtime
from kforge.server.settings import ServerSettings, is_loopback

__all__ = ["MCPEndpoint"]

_AGENTS = ("router", "research", "react")


class MCPEndpoint:
    """An ASGI app: MCP sessions whose ``run_agent`` tool runs agents on this server's runtime,
    beside what ``catalog`` adds (tools, resources, prompts)."""

    def __init__(
        self,
        runtime: Runtime,
        settings: ServerSettings,
        *,
        corpus: str = "samples",
        catalog: MCPCatalog | None = None,
    ):
        from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
        from mcp.server.transport_security import TransportSecuritySettings

        from kforge.mcp_server import build_mcp_server, run_agent_tool
        from kforge.runtime.answers import run_to_answer

        agents = [a for a in _AGENTS if a in runtime.registry] or runtime.registry.names()

        async def runner(agent_type: str, prompt: str) -> str:
            return await run_to_answer(runtime, agent_type, prompt, corpus=corpus)

        server = build_mcp_server([], run_agent=run_agent_tool(runner, agents), catalog=catalog)
        local = is_loopback(settings.host)
        # On loopback, refuse requests a web page could make through DNS rebinding; elsewhere
        # the token guards every request.
        security = TransportSecuritySettings(
            enable_dns_rebinding_protection=local,
            allowed_hosts=["127.0.0.1:*", "localhost:*", "[::1]:*"],
            allowed_origins=[
                "http://127.0.0.1:*",
                "http://localhost:*",
                "http://[::1]:*",
                *settings.cors_origins,
            ],
        )
        self.manager = StreamableHTTPSessionManager(
            server, security_settings=security, max_request_body_size=settings.max_body_bytes
        )

    def lifespan(self) -> AbstractAsyncContextManager[None]:
        return self.manager.run()

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        await self.manager.handle_request(scope, receive, send)
