"""MCP client: the tools of any MCP server (stdio or streamable HTTP) as kforge tools.

    async with MCPToolset(MCPStdioServer("my-server", ("--flag",))) as toolset:
        registry = ToolRegistry(toolset.tools)

Uses the official ``mcp`` SDK (2.x), imported only when a connection opens.
"""

from __future__ import annotations

import base64
from collections.abc import Mapping
from dataclasses import dataclass
from types import TracebackType
from typing import TYPE_CHECKING, Any

from kforge.errors import ToolError
from kforge.extras import require_extra
from kforge.tools.annotations import ToolAnnotations
from kforge.tools.base import Tool
from kforge.tools.content import ContentBlock
from kforge.tools.result import ToolResult
from kforge.tools.tool_context import ToolContext

if TYPE_CHECKING:
    import mcp

__all__ = ["MCPStdioServer", "MCPTool", "MCPToolset", "mcp_annotations", "mcp_result"]


@dataclass(frozen=True, slots=True)
class MCPStdioServer:
    """An MCP server started as a subprocess that speaks MCP over its stdin/stdout."""

    command: str
    args: tuple[str, ...] = ()
    env: Mapping[str, str] | None = None
    """Extra environment variables (the SDK passes only a safe default set otherwise)."""
    cwd: str | None = None


MCPServerTarget = MCPStdioServer | str
"""A stdio server, or the URL of a streamable-HTTP server (``http://host:port/mcp``)."""


class MCPToolset:
    """One connection to an MCP server and the tools it offers.

    Open it with ``async with`` (or ``await open()`` / ``await aclose()`` from the same task).
    """

    def __init__(
        self,
        server: MCPServerTarget,
        *,
        prefix: str = "",
        timeout_s: float = 60.0,
        read_timeout_s: float | None = None,
    ) -> None:
        self.server = server
        self.prefix = prefix
        """Prepended to remote tool names, to keep names unique across servers."""
        self.timeout_s = timeout_s
        self.read_timeout_s = read_timeout_s
        self.tools: list[MCPTool] = []
        self._client: mcp.Client | None = None

    async def open(self) -> MCPToolset:
        require_extra("mcp", "MCP tools")
        import mcp

        target: Any
        if isinstance(self.server, MCPStdioServer):
            target = mcp.StdioServerParameters(
                command=self.server.command,
                args=list(self.server.args),
                env=dict(self.server.env) if self.server.env is not None else None,
                cwd=self.server.cwd,
            )
        else:
            target = self.server
        client = mcp.Client(target, read_timeout_seconds=self.read_timeout_s)
        try:
            await client.__aenter__()
        except Exception as exc:
            raise ToolError(f"could not connect to MCP server {self._describe()}: {exc}") from exc
        self._client = client
        self.tools = await self.list_tools()
        return self

    async def aclose(self) -> None:
        client, self._client = self._client, None
        if client is not None:
            await client.__aexit__(None, None, None)

    async def __aenter__(self) -> MCPToolset:
        return await self.open()

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    @property
    def client(self) -> mcp.Client:
        if self._client is None:
            raise ToolError(
                f"MCP server {self._describe()} is not connected; use 'async with MCPToolset(...)'"
            )
        return self._client

    async def list_tools(self) -> list[MCPTool]:
        tools: list[MCPTool] = []
        cursor: str | None = None
        while True:
            page = await self.client.list_tools(cursor=cursor)
            tools.extend(MCPTool(self, remote) for remote in page.tools)
            cursor = page.next_cursor
            if not cursor:
                return tools

    async def call(self, name: str, arguments: dict[str, Any]) -> ToolResult:
        import mcp

        try:
            result = await self.client.call_tool(
                name, arguments, read_timeout_seconds=self.read_timeout_s
            )
        except mcp.MCPError as exc:
            return ToolResult.error(
                f"MCP server {self._describe()} refused '{name}': {exc}", kind="mcp_error"
            )
        return mcp_result(result)

    def _describe(self) -> str:
        if isinstance(self.server, MCPStdioServer):
            return f"'{' '.join((self.server.command, *self.server.args))}'"
        return f"at {self.server}"


class MCPTool(Tool):
    """A tool offered by an MCP server, called through its toolset's connection."""

    def __init__(self, toolset: MCPToolset, remote: Any) -> None:
        self._toolset = toolset
        self.remote_name = str(remote.name)
        self._name = toolset.prefix + self.remote_name
        self._description = str(remote.description or remote.title or remote.name)
        self._input_schema: dict[str, Any] = dict(remote.input_schema or {"type": "object"})
        self._output_schema: dict[str, Any] | None = remote.output_schema
        self._annotations = mcp_annotations(remote.annotations, title=remote.title)
        self.timeout_s = toolset.timeout_s

    @property
    def name(self) -> str:
        return self._name

    @property
    def description(self) -> str:
        return self._description

    @property
    def input_schema(self) -> dict[str, Any]:
        return self._input_schema

    @property
    def output_schema(self) -> dict[str, Any] | None:
        return self._output_schema

    @property
    def annotations(self) -> ToolAnnotations:
        return self._annotations

    async def execute(
        self, arguments: dict[str, Any], context: ToolContext | None = None
    ) -> ToolResult:
        return await self._toolset.call(self.remote_name, arguments)


def mcp_annotations(remote: Any, *, title: str | None = None) -> ToolAnnotations:
    """Our annotations from MCP's; unset hints take MCP's defaults (destructive, open world)."""
    if remote is None:
        return ToolAnnotations(title=title, open_world_hint=True)

    def hint(value: bool | None, default: bool) -> bool:
        return default if value is None else bool(value)

    return ToolAnnotations(
        title=remote.title or title,
        read_only_hint=hint(remote.read_only_hint, False),
        destructive_hint=hint(remote.destructive_hint, True),
        idempotent_hint=hint(remote.idempotent_hint, False),
        open_world_hint=hint(remote.open_world_hint, True),
    )


def mcp_result(result: Any) -> ToolResult:
    """Our ToolResult from an MCP ``CallToolResult``."""
    blocks = tuple(_block(item) for item in result.content)
    structured = result.structured_content
    if structured is not None and not isinstance(structured, dict):
        structured = {"result": structured}
    if result.is_error and structured is None:
        text = " ".join(b.as_text() for b in blocks).strip()
        structured = {"error": {"kind": "tool_error", "message": text}}
    return ToolResult(content=blocks, is_error=bool(result.is_error), structured_content=structured)


def _block(item: Any) -> ContentBlock:
    kind = getattr(item, "type", "text")
    if kind == "text":
        return ContentBlock.of_text(item.text)
    if kind == "image":
        return ContentBlock.image(base64.b64decode(item.data), item.mime_type)
    if kind == "audio":
        return ContentBlock.audio(base64.b64decode(item.data), item.mime_type)
    if kind == "resource":
        res = item.resource
        blob = getattr(res, "blob", None)
        return ContentBlock.resource(
            str(res.uri),
            text=getattr(res, "text", None),
            data=base64.b64decode(blob) if blob is not None else None,
            mime_type=res.mime_type,
        )
    if kind == "resource_link":
        label = item.description or item.name
        return ContentBlock.resource(str(item.uri), text=label, mime_type=item.mime_type)
    return ContentBlock.of_text(str(item))
