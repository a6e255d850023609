"""Agent registry: how a run's agent is rebuilt from its type name in any process.

A registry may be given a table of ``"module:Class"`` targets, imported the first time one is
asked for; the built-in agents' table and the process-wide registry are in
``kforge.agents.builtin``, beside the agents.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any

from kforge.engine.agent import StepAgent
from kforge.errors import ConfigurationError

__all__ = ["AgentFactory", "AgentRegistry"]

AgentFactory = Callable[[dict[str, Any]], StepAgent[object]]


class AgentRegistry:
    """Agent factories by type name; ``builtins`` are imported only when first asked for."""

    def __init__(self, builtins: Mapping[str, str] | None = None) -> None:
        self._factories: dict[str, AgentFactory] = {}
        self._builtins = dict(builtins or {})

    def register(self, agent_type: str, factory: AgentFactory, *, replace: bool = False) -> None:
        if agent_type in self and not replace:
            raise ConfigurationError(f"agent type '{agent_type}' is already registered")
        self._factories[agent_type] = factory

    def create(self, agent_type: str, args: dict[str, Any]) -> StepAgent[object]:
        factory = self.factory(agent_type)
        if factory is None:
            known = ", ".join(self.names()) or "none"
            raise ConfigurationError(
                f"unknown agent type '{agent_type}' (registered: {known}); register it with "
                "kforge.register_agent before starting or resuming its runs"
            )
        return factory(args)

    def factory(self, agent_type: str) -> AgentFactory | None:
        """What builds agents of ``agent_type`` (its class, for most), or None if unknown."""
        return self._factories.get(agent_type) or self._load(agent_type)

    def _load(self, agent_type: str) -> AgentFactory | None:
        target = self._builtins.get(agent_type)
        if target is None:
            return None
        module, _, name = target.partition(":")
        factory: AgentFactory = getattr(importlib.import_module(module), name)
        self._factories[agent_type] = factory
        return factory

    def names(self) -> list[str]:
        return sorted({*self._factories, *self._builtins})

    def __contains__(self, agent_type: object) -> bool:
        return agent_type in self._factories or agent_type in self._builtins
