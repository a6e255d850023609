"""``from kforge.mcp_catalog import MCPCatalog, MCPResource``, as documented, keeps working: the
catalog lives in ``kforge.mcp.catalog``."""

from __future__ import annotations

from kforge.mcp.catalog import (
    LOG_LEVELS,
    ElicitAnswer,
    MCPCatalog,
    MCPClientChannel,
    MCPPrompt,
    MCPPromptArgument,
    MCPPromptMessage,
    MCPResource,
    catalog_from_extensions,
    load_mcp_extension,
)

__all__ = [
    "LOG_LEVELS",
    "ElicitAnswer",
    "MCPCatalog",
    "MCPClientChannel",
    "MCPPrompt",
    "MCPPromptArgument",
    "MCPPromptMessage",
    "MCPResource",
    "catalog_from_extensions",
    "load_mcp_extension",
]
