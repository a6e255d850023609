"""ToolContext: what a running tool may know about the run that called it, and the services
it may use, typed (``context.services.agents``, ``.client``, ``.extra``)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Protocol

from kforge.llm.base import Model
from kforge.tools.client import ClientChannel

__all__ = ["AgentSpawner", "ToolContext", "ToolServices"]


class AgentSpawner(Protocol):
    """Child agents for a tool (the python tool's ``fork``/``wait``)."""

    async def fork(self, prompt: str) -> str:
        """Start a child agent on ``prompt``; return a handle."""
        ...

    async def wait(self, handle: str) -> str:
        """Wait for the child agent behind ``handle``; return its final answer."""
        ...


_FIELDS = {"agents": "agents", "mcp": "client"}
"""The former string keys that became typed fields, for the error that names the field."""

_EMPTY: Mapping[str, Any] = MappingProxyType({})


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class ToolServices:
    """The services a tool may use, by field (``context.services.agents``, ``.client``,
    ``.extra[name]``)."""

    agents: AgentSpawner | None = None
    """Child agents (``fork``/``wait``); a run's own when the Runtime runs the tool."""
    client: ClientChannel | None = None
    """The client that called the tool (an MCP client: log, progress, elicit, sample); None
    when no client called it."""
    extra: Mapping[str, Any] = field(default_factory=lambda: _EMPTY)
    """What the application put in ``kforge.Services(extra=...)``, by name."""

    def __post_init__(self) -> None:
        if not isinstance(self.extra, MappingProxyType):
            object.__setattr__(self, "extra", MappingProxyType(dict(self.extra)))

    def with_client(self, client: ClientChannel) -> ToolServices:
        """The same services for one call from ``client``."""
        return ToolServices(agents=self.agents, client=client, extra=self.extra)

    def __getitem__(self, key: str) -> Any:
        instead = _FIELDS.get(key, f"extra[{key!r}]")
        raise TypeError(
            f"ToolContext.services[{key!r}]: a tool's services are read by field; use "
            f"context.services.{instead}"
        )


_NO_SERVICES = ToolServices()


@dataclass(frozen=True, slots=True)
class ToolContext:
    run_id: str = ""
    call_id: str = ""
    services: ToolServices = _NO_SERVICES
    """What the tool may use (``agents``, ``client``, ``extra``); empty outside a run."""
    model: Model | None = None
    """The run's model, for model-backed tools that were not given one."""

    def __post_init__(self) -> None:
        services: Any = self.services
        if not isinstance(services, ToolServices):
            raise TypeError(
                f"ToolContext(services=...) takes a kforge.tools.ToolServices, not "
                f"{type(services).__name__}: pass ToolServices(agents=..., client=..., "
                "extra={...})"
            )
