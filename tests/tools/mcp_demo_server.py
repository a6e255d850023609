"""A tiny MCP server built with the official SDK, run as a separate process by the MCP tests.

Usage: python mcp_demo_server.py            (stdio)
       python mcp_demo_server.py --http PORT (streamable HTTP on 127.0.0.1:PORT/mcp)
"""

from __future__ import annotations

import sys

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations

server = MCPServer("demo")


@server.tool(
    annotations=ToolAnnotations(read_only_hint=True, idempotent_hint=True, open_world_hint=False)
)
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@server.tool(title="Erase a note", annotations=ToolAnnotations(destructive_hint=True))
def erase(note: str) -> str:
    """Erase a note by name."""
    return f"erased {note}"


@server.tool()
def explode(reason: str) -> str:
    """Always fails."""
    raise ToolError(f"exploded because {reason}")


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--http":
        server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
    else:
        server.run("stdio")
