"""What an application adds to kforge's MCP server, and how its tools talk to the MCP client.

An :class:`MCPCatalog` holds extra tools, resources (fixed URIs or ``{name}`` templates) and
prompts; :func:`kforge.mcp.server.build_mcp_server` serves them beside kforge's own tools, over
stdio or at ``kforge serve``'s ``/mcp``. While a tool runs for an MCP client, its
``ToolContext.services.client`` is an :class:`MCPClientChannel`: log messages, progress,
questions to the person (elicitation) and completions from the client's model (sampling).
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from kforge.errors import ConfigurationError, ToolError
from kforge.tools.base import Tool
from kforge.tools.client import ElicitAnswer
from kforge.tools.content import ContentBlock

if TYPE_CHECKING:
    from mcp.server.context import ServerRequestContext
    from mcp.server.session import ServerSession

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

LOG_LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")
"""MCP log levels (RFC 5424), least severe first."""

ResourceReader = Callable[[str, Mapping[str, str]], Awaitable[str | bytes]]
"""``(uri, template values) -> text or bytes``: the content of a resource."""
PromptRenderer = Callable[[Mapping[str, str]], Awaitable[Sequence["MCPPromptMessage"]]]
"""``(arguments) -> messages``: a prompt filled in with its arguments."""

MAX_SUBSCRIBERS = 10_000
"""Clients one resource keeps subscribed; past that the longest-subscribed one is dropped."""

_TEMPLATE_PART = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")


@dataclass(frozen=True, slots=True)
class MCPResource:
    """A resource clients list and read. A ``uri`` with ``{name}`` parts is a template: any URI
    that matches it is read, with the parts' values (each one path segment) given to ``read``."""

    uri: str
    name: str
    read: ResourceReader
    title: str | None = None
    description: str | None = None
    mime_type: str | None = None
    _pattern: re.Pattern[str] | None = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        pattern = None
        if self.is_template:
            pieces = _TEMPLATE_PART.split(self.uri)
            regex = "".join(
                f"(?P<{piece}>[^/]+)" if i % 2 else re.escape(piece)
                for i, piece in enumerate(pieces)
            )
            pattern = re.compile(regex)
        object.__setattr__(self, "_pattern", pattern)

    @property
    def is_template(self) -> bool:
        return _TEMPLATE_PART.search(self.uri) is not None

    def match(self, uri: str) -> dict[str, str] | None:
        """The template's values for ``uri`` (empty for a fixed URI), or None if it is not this."""
        if self._pattern is None:
            return {} if uri == self.uri else None
        found = self._pattern.fullmatch(uri)
        return found.groupdict() if found else None


@dataclass(frozen=True, slots=True)
class MCPPromptArgument:
    name: str
    description: str | None = None
    required: bool = True
    complete: Callable[[str], Sequence[str]] | None = None
    """Values to suggest for what the person has typed so far (``completion/complete``)."""


@dataclass(frozen=True, slots=True)
class MCPPromptMessage:
    role: Literal["user", "assistant"]
    content: ContentBlock


@dataclass(frozen=True, slots=True)
class MCPPrompt:
    """A prompt template clients list and fill in (``prompts/get``)."""

    name: str
    render: PromptRenderer
    title: str | None = None
    description: str | None = None
    arguments: tuple[MCPPromptArgument, ...] = ()

    def check(self, arguments: Mapping[str, str]) -> None:
        """Refuse missing required arguments and unknown ones, naming what the prompt takes."""
        known = {a.name for a in self.arguments}
        missing = [a.name for a in self.arguments if a.required and a.name not in arguments]
        unknown = sorted(set(arguments) - known)
        if missing or unknown:
            wanted = ", ".join(
                f"{a.name}{'' if a.required else ' (optional)'}" for a in self.arguments
            )
            problems = [f"missing {', '.join(missing)}"] if missing else []
            problems += [f"unknown {', '.join(unknown)}"] if unknown else []
            raise ValueError(
                f"prompt '{self.name}': {'; '.join(problems)}; it takes: {wanted or 'no arguments'}"
            )


class MCPCatalog:
    """Tools, resources and prompts an application adds to kforge's MCP server.

    Names (and resource URIs) must be unique. :meth:`resource_updated` tells the clients that
    subscribed to a resource that it changed.
    """

    def __init__(self) -> None:
        self.tools: list[Tool] = []
        self.resources: list[MCPResource] = []
        self.prompts: list[MCPPrompt] = []
        self._subscribers: dict[str, dict[str, ServerSession]] = {}

    def add_tool(self, tool: Tool) -> Tool:
        if any(t.name == tool.name for t in self.tools):
            raise ValueError(f"the MCP catalog already has a tool named '{tool.name}'")
        self.tools.append(tool)
        return tool

    def add_resource(self, resource: MCPResource) -> MCPResource:
        if any(r.uri == resource.uri for r in self.resources):
            raise ValueError(f"the MCP catalog already has a resource at '{resource.uri}'")
        self.resources.append(resource)
        return resource

    def add_prompt(self, prompt: MCPPrompt) -> MCPPrompt:
        if any(p.name == prompt.name for p in self.prompts):
            raise ValueError(f"the MCP catalog already has a prompt named '{prompt.name}'")
        self.prompts.append(prompt)
        return prompt

    def find_resource(self, uri: str) -> tuple[MCPResource, dict[str, str]] | None:
        """The resource ``uri`` names (fixed URIs before templates) and its template values."""
        for resource in sorted(self.resources, key=lambda r: r.is_template):
            values = resource.match(uri)
            if values is not None:
                return resource, values
        return None

    def find_prompt(self, name: str) -> MCPPrompt | None:
        return next((p for p in self.prompts if p.name == name), None)

    def subscribe(self, uri: str, client: str, session: ServerSession) -> None:
        """Tell ``client`` (a connection's key) through ``session`` when ``uri`` changes."""
        clients = self._subscribers.setdefault(uri, {})
        clients[client] = session
        if len(clients) > MAX_SUBSCRIBERS:  # the longest-subscribed client gives way
            clients.pop(next(iter(clients)))

    def unsubscribe(self, uri: str, client: str) -> None:
        self._subscribers.get(uri, {}).pop(client, None)

    async def resource_updated(self, uri: str) -> int:
        """Send ``notifications/resources/updated`` to every client subscribed to ``uri``;
        returns how many were told (a client that has gone away is dropped)."""
        told = 0
        for client, session in list(self._subscribers.get(uri, {}).items()):
            try:
                await session.send_resource_updated(uri)
            except Exception:  # a vanished client must not stop the others being told
                self.unsubscribe(uri, client)
                continue
            told += 1
        return told


class MCPClientChannel:
    """How a tool running for an MCP client talks to that client while it works (a
    ``kforge.tools.client.ClientChannel``).

    Messages ride the stream of the request that called the tool. Log messages below the level
    the client set (``logging/setLevel``) are not sent.
    """

    def __init__(self, ctx: ServerRequestContext[Any, Any], *, min_level: str = "debug") -> None:
        self._ctx = ctx
        self._min_level = LOG_LEVELS.index(min_level)

    async def log(self, level: str, data: Any, *, logger: str | None = None) -> None:
        import mcp.types as types

        if level not in LOG_LEVELS:
            raise ValueError(f"unknown log level '{level}'; one of {', '.join(LOG_LEVELS)}")
        if LOG_LEVELS.index(level) < self._min_level:
            return
        params = types.LoggingMessageNotificationParams(level=level, data=data, logger=logger)  # type: ignore[arg-type]
        await self._ctx.session.send_notification(
            types.LoggingMessageNotification(params=params), related_request_id=self._ctx.request_id
        )

    async def progress(
        self, progress: float, total: float | None = None, message: str | None = None
    ) -> None:
        """Report progress; nothing is sent when the client did not ask for progress."""
        await self._ctx.session.report_progress(progress, total, message)

    async def release_stream(self) -> bool:
        """Close the HTTP stream this call's messages ride, so a long call holds no connection
        open; the client reconnects with ``Last-Event-ID`` and gets everything sent after.
        False (nothing closed) when the client cannot resume: stdio, or a protocol revision
        before 2025-11-25."""
        close = self._ctx.close_sse_stream
        if close is None:
            return False
        await close()
        return True

    async def elicit(self, message: str, schema: Mapping[str, Any]) -> ElicitAnswer:
        """Ask the person a question through the client, with a form described by ``schema``
        (a flat JSON Schema object of strings, numbers, booleans and enums)."""
        import mcp.types as types

        self._require(
            types.ClientCapabilities(elicitation=types.ElicitationCapability()), "elicitation"
        )
        result = await self._ctx.session.elicit_form(
            message, dict(schema), related_request_id=self._ctx.request_id
        )
        return ElicitAnswer(result.action, dict(result.content or {}))

    async def sample(self, prompt: str, *, max_tokens: int, system: str | None = None) -> str:
        """The text the client's model writes for ``prompt`` (``sampling/createMessage``)."""
        import mcp.types as types
        from mcp.shared.message import ServerMessageMetadata

        self._require(types.ClientCapabilities(sampling=types.SamplingCapability()), "sampling")
        request = types.CreateMessageRequest(
            params=types.CreateMessageRequestParams(
                messages=[
                    types.SamplingMessage(role="user", content=types.TextContent(text=prompt))
                ],
                max_tokens=max_tokens,
                system_prompt=system,
            )
        )
        result = await self._ctx.session.send_request(
            request,
            types.CreateMessageResult,
            metadata=ServerMessageMetadata(related_request_id=self._ctx.request_id),
        )
        blocks = result.content if isinstance(result.content, list) else [result.content]
        return "".join(getattr(block, "text", "") for block in blocks)

    def _require(self, capability: Any, name: str) -> None:
        session = self._ctx.session
        if not session.can_send_request:
            raise ToolError(
                f"this MCP connection (protocol {session.protocol_version}) carries no requests "
                f"from the server to the client, so this tool cannot use {name}"
            )
        if not session.check_client_capability(capability):
            raise ToolError(f"the MCP client does not support {name}, which this tool needs")


def load_mcp_extension(spec: str) -> Callable[[MCPCatalog], Any]:
    """The function ``module:function`` names (``module`` alone means ``module:register_mcp``);
    it is called with the server's :class:`MCPCatalog` to add tools, resources and prompts."""
    module_name, _, attribute = spec.partition(":")
    attribute = attribute or "register_mcp"
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise ConfigurationError(
            f"MCP extension '{spec}': cannot import {module_name} ({exc}); it must be importable "
            "from the server's Python path (set PYTHONPATH)"
        ) from exc
    function = getattr(module, attribute, None)
    if not callable(function):
        raise ConfigurationError(
            f"MCP extension '{spec}': {module_name} has no function {attribute}(catalog)"
        )
    return function  # type: ignore[no-any-return]


def catalog_from_extensions(specs: Sequence[str]) -> MCPCatalog:
    """A catalog filled by each extension ``specs`` names (see :func:`load_mcp_extension`)."""
    catalog = MCPCatalog()
    for spec in specs:
        load_mcp_extension(spec)(catalog)
    return catalog
