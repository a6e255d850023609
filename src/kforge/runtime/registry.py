"""Agent registry: how a run's agent is rebuilt from its type name in any process."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kforge.engine.agent import StepAgent
from kforge.errors import ConfigurationError

__all__ = ["AgentFactory", "AgentRegistry", "default_registry", "register_agent"]

AgentFactory = Callable[[dict[str, Any]], StepAgent]


class AgentRegistry:
    def __init__(self) -> None:
        self._factories: dict[str, AgentFactory] = {}

    def register(self, agent_type: str, factory: AgentFactory, *, replace: bool = False) -> None:
        if agent_type in self._factories and not replace:
            raise ConfigurationError(f"agent type '{agent_type}' is already registered")
        self._factories[agent_type] = factory

    def create(self, agent_type: str, args: dict[str, Any]) -> StepAgent:
        factory = self._factories.get(agent_type)
        if factory is None:
            known = ", ".join(sorted(self._factories)) or "none"
            raise ConfigurationError(
                f"unknown agent type '{agent_type}' (registered: {known}); register it with "
                "kforge.register_agent before starting or resuming its runs"
            )
        return factory(args)

    def names(self) -> list[str]:
        return sorted(self._factories)

    def __contains__(self, agent_type: object) -> bool:
        return agent_type in self._factories


class _BuiltinRegistry(AgentRegistry):
    """The process-wide registry: the built-in agents (research, react, router) join it the
    first time it is asked for an agent, so ``Runtime().start("research", ...)`` just works."""

    def __init__(self) -> None:
        super().__init__()
        self._loaded = False

    def _load_builtins(self) -> None:
        if not self._loaded:
            self._loaded = True
            import kforge.agents  # noqa: F401  (registers the built-in agents)

    def create(self, agent_type: str, args: dict[str, Any]) -> StepAgent:
        self._load_builtins()
        return super().create(agent_type, args)

    def names(self) -> list[str]:
        self._load_builtins()
        return super().names()

    def __contains__(self, agent_type: object) -> bool:
        self._load_builtins()
        return super().__contains__(agent_type)


default_registry: AgentRegistry = _BuiltinRegistry()


def register_agent(agent_type: str, factory: AgentFactory, *, replace: bool = False) -> None:
    """Register an agent type in the process-wide registry."""
    default_registry.register(agent_type, factory, replace=replace)
