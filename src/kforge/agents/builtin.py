"""The built-in agents' table and the process-wide registry that knows them.

The table names each agent's ``"module:Class"``; the registry imports one the first time a
run of its type starts or resumes, so importing this module imports no agent.
"""

from __future__ import annotations

from collections.abc import Mapping

from kforge.engine.registry import AgentFactory, AgentRegistry

__all__ = ["BUILTIN_AGENTS", "default_registry", "register_agent"]

BUILTIN_AGENTS: Mapping[str, str] = {
    "build": "kforge.agents.build.agent:BuildAgent",
    "react": "kforge.agents.react:ReactAgent",
    "research": "kforge.agents.research.agent:ResearchAgent",
    "router": "kforge.agents.router:RouterAgent",
    "tree": "kforge.agents.tree:TreeAgent",
    "understand": "kforge.agents.understand.agent:UnderstandAgent",
}
"""Agent type → ``"module:Class"`` of the agents every process knows without registering."""

default_registry: AgentRegistry = AgentRegistry(BUILTIN_AGENTS)
"""The process-wide registry: the built-in agents and those added with ``register_agent``."""


def register_agent(agent_type: str, factory: AgentFactory, *, replace: bool = False) -> None:
    """Register an agent type in the process-wide registry."""
    default_registry.register(agent_type, factory, replace=replace)
