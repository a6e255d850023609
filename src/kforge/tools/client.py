"""How a running tool talks to the client that called it (an MCP client): log messages,
progress, questions to the person and completions from the client's model."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

__all__ = ["ClientChannel", "ElicitAnswer"]


@dataclass(frozen=True, slots=True)
class ElicitAnswer:
    """What the person did with a question: ``accept`` (with ``content``), ``decline`` or
    ``cancel``."""

    action: Literal["accept", "decline", "cancel"]
    content: Mapping[str, Any] = field(default_factory=dict)


class ClientChannel(Protocol):
    """The client that called a tool, while the tool works (``ToolContext.services.client``;
    ``kforge.mcp.catalog.MCPClientChannel`` is the MCP server's)."""

    async def log(self, level: str, data: Any, *, logger: str | None = None) -> None:
        """Send a log message (``debug`` ... ``emergency``); below the client's level, none."""
        ...

    async def progress(
        self, progress: float, total: float | None = None, message: str | None = None
    ) -> None:
        """Report progress; nothing is sent when the client did not ask for progress."""
        ...

    async def release_stream(self) -> bool:
        """Let go of the client's connection while the tool works; False if it cannot."""
        ...

    async def elicit(self, message: str, schema: Mapping[str, Any]) -> ElicitAnswer:
        """Ask the person a question through the client, with a form described by ``schema``."""
        ...

    async def sample(self, prompt: str, *, max_tokens: int, system: str | None = None) -> str:
        """The text the client's model writes for ``prompt``."""
        ...
