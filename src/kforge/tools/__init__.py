"""kforge.tools: MCP-aligned tools, their registry, validation and the execution wrapper.

The MCP client lives in ``kforge.tools.mcp_client`` and the built-in tools in
``kforge.tools.builtin``; both load their heavier dependencies only when used.
"""

from __future__ import annotations

from kforge.tools.annotations import ToolAnnotations
from kforge.tools.approval import ApprovalPolicy
from kforge.tools.base import DefinedTool, Tool, ToolHandler
from kforge.tools.cache import ToolResultCache
from kforge.tools.client import ClientChannel, ElicitAnswer
from kforge.tools.content import ContentBlock, ContentType
from kforge.tools.decorator import FunctionTool, tool
from kforge.tools.definition import ToolDefinition, ToolExample
from kforge.tools.execution import (
    ToolRunContext,
    execute_call,
    execute_tool,
    run_tool,
)
from kforge.tools.registry import ToolRegistry
from kforge.tools.result import ToolResult
from kforge.tools.tool_context import AgentSpawner, ToolContext, ToolServices
from kforge.tools.validation import ArgumentProblem, ArgumentValidator

__all__ = [
    "AgentSpawner",
    "ApprovalPolicy",
    "ArgumentProblem",
    "ArgumentValidator",
    "ClientChannel",
    "ContentBlock",
    "ContentType",
    "DefinedTool",
    "ElicitAnswer",
    "FunctionTool",
    "Tool",
    "ToolAnnotations",
    "ToolContext",
    "ToolDefinition",
    "ToolExample",
    "ToolHandler",
    "ToolRegistry",
    "ToolResult",
    "ToolResultCache",
    "ToolRunContext",
    "ToolServices",
    "execute_call",
    "execute_tool",
    "run_tool",
    "tool",
]
