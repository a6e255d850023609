"""kforge over MCP: ``server`` (kforge tools and agents as an MCP server), ``catalog`` (an
application's own tools, resources and prompts) and ``http`` (MCP over streamable HTTP at the
server's ``/mcp``). The MCP client, which makes any MCP server's tools kforge tools, is
``kforge.tools.mcp_client``."""

from __future__ import annotations

__all__: list[str] = []
