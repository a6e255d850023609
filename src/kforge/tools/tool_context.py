"""ToolContext: what a running tool may know about the run that called it, and the services
it may use, typed (``context.services.agents``, ``.client``, ``.extra``)."""

from __future__ import annotations

import warnings
from collections.abc import Iterator, Mapping
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
"""Former string keys read from a typed field: the key and the field that replaces it."""

_RUN_KEYS = frozenset(
    {"tools", "corpora", "memory_store", "sessions", "tool_approval", "tool_cache"}
)
"""Former string keys of what the run offers agents (``kforge.Services``), not tools."""

_EMPTY: Mapping[str, Any] = MappingProxyType({})


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class ToolServices(Mapping[str, Any]):
    """The services a tool may use, by field. Reading one by string key
    (``context.services["agents"]``, ``.get("mcp")``) still works with a
    ``DeprecationWarning`` naming the field to use: it is a read-only mapping only for that."""

    agents: AgentSpawner | None = None
    """Child agents (``fork``/``wait``); a run's own when the Runtime runs the tool."""
    client: ClientChannel | None = None
    """The client that called the tool (an MCP client: log, progress, elicit, sample); None
    when no client called it."""
    extra: Mapping[str, Any] = field(default_factory=lambda: _EMPTY)
    """What the application put in ``kforge.Services(extra=...)``, by name."""
    legacy: Mapping[str, Any] = field(default_factory=lambda: _EMPTY, repr=False)
    """The former string-keyed view (for the deprecated ``services[key]`` only)."""

    def __post_init__(self) -> None:
        if not isinstance(self.extra, MappingProxyType):
            object.__setattr__(self, "extra", MappingProxyType(dict(self.extra)))

    @classmethod
    def from_mapping(cls, services: Mapping[str, Any]) -> ToolServices:
        """Services from the former string-keyed mapping: ``agents`` and ``mcp`` become
        fields, the names that are not what a run offers agents go to ``extra``."""
        return cls(
            agents=services.get("agents"),
            client=services.get("mcp"),
            extra={k: v for k, v in services.items() if k not in _FIELDS and k not in _RUN_KEYS},
            legacy=MappingProxyType(dict(services)),
        )

    def with_client(self, client: ClientChannel) -> ToolServices:
        """The same services for one call from ``client``."""
        return ToolServices(
            agents=self.agents,
            client=client,
            extra=self.extra,
            legacy=MappingProxyType({**self.legacy, "mcp": client}),
        )

    def __getitem__(self, key: str) -> Any:
        return self._read(key)

    def get(self, key: str, default: Any = None) -> Any:
        try:
            return self._read(key)
        except KeyError:
            return default

    def __contains__(self, key: object) -> bool:
        return key in self.legacy

    def __iter__(self) -> Iterator[str]:
        return iter(self.legacy)

    def __len__(self) -> int:
        return len(self.legacy)

    __eq__ = object.__eq__
    __hash__ = object.__hash__

    def _read(self, key: str) -> Any:
        if key in _FIELDS:
            instead = f"use context.services.{_FIELDS[key]}"
        elif key in _RUN_KEYS:
            instead = (
                "a tool gets no typed corpora, memory, sessions, tools, approval or cache: "
                "give it what it needs when you build it, or put it in kforge.Services(extra=...)"
            )
        else:
            instead = f"use context.services.extra[{key!r}] (kforge.Services(extra=...))"
        warnings.warn(
            f"ToolContext.services[{key!r}] is deprecated; {instead}",
            DeprecationWarning,
            stacklevel=3,
        )
        return self.legacy[key]


_NO_SERVICES = ToolServices()


@dataclass(frozen=True, slots=True)
class ToolContext:
    run_id: str = ""
    call_id: str = ""
    services: ToolServices = _NO_SERVICES
    """What the tool may use (``agents``, ``client``, ``extra``); empty outside a run. A
    mapping given here is read with ``ToolServices.from_mapping`` (deprecated)."""
    model: Model | None = None
    """The run's model, for model-backed tools that were not given one."""

    def __post_init__(self) -> None:
        services: Any = self.services
        if not isinstance(services, ToolServices):
            warnings.warn(
                "ToolContext(services=<a mapping>) is deprecated; pass "
                "kforge.tools.ToolServices(agents=..., client=..., extra={...})",
                DeprecationWarning,
                stacklevel=3,
            )
            object.__setattr__(self, "services", ToolServices.from_mapping(services))
