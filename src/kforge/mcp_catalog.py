"""Deprecated: the catalog lives in ``kforge.mcp.catalog`` (the same names). Importing this
module still works for one release, with a ``DeprecationWarning``."""

from __future__ import annotations

import warnings

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

warnings.warn(
    "kforge.mcp_catalog is deprecated; import the same names from kforge.mcp.catalog",
    DeprecationWarning,
    stacklevel=2,
)
