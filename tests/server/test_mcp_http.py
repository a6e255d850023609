"""kforge's MCP server at /mcp over streamable HTTP, through the official MCP client."""

from __future__ import annotations

import asyncio

import httpx
import mcp

from tests.server.helpers import LiveServer


def test_an_mcp_client_lists_and_calls_run_agent_over_http(server: LiveServer) -> None:
    async def session() -> tuple[list[str], str, bool]:
        async with mcp.Client(f"{server.url}/mcp") as client:
            tools = await client.list_tools()
            result = await client.call_tool(
                "run_agent",
                {"agent": "router", "prompt": "What is retrieval-augmented generation?"},
            )
            text = " ".join(getattr(block, "text", "") for block in result.content)
            return [t.name for t in tools.tools], text, bool(result.is_error)

    names, text, failed = asyncio.run(session())
    assert names == ["run_agent"]
    assert not failed and "retriev" in text.lower() and "Sources:" in text
    with server.client() as client:  # the run it made is an ordinary run
        runs = client.get("/runs", params={"agent": "router"}).json()["runs"]
        assert runs and runs[0]["status"] == "completed"


def test_mcp_refuses_a_page_on_another_origin(server: LiveServer) -> None:
    response = httpx.post(
        f"{server.url}/mcp",
        json={"jsonrpc": "2.0", "id": 1, "method": "ping"},
        headers={"Origin": "https://evil.example", "Accept": "application/json, text/event-stream"},
    )
    assert response.status_code in (400, 403)
