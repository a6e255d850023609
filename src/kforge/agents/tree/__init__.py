"""The agent tree: the six-step ``tree`` agent whose subquestions are subagents."""

from __future__ import annotations

from kforge.agents.builtin import default_registry
from kforge.agents.tree.agent import STEPS, TreeAgent
from kforge.agents.tree.arguments import TreeArgs
from kforge.agents.tree.state import TreeState
from kforge.engine.registry import AgentRegistry

__all__ = ["STEPS", "TreeAgent", "TreeArgs", "TreeState", "register"]


def register(registry: AgentRegistry = default_registry) -> None:
    """Register the ``tree`` agent type (does nothing when it is already registered)."""
    if TreeAgent.agent_type not in registry:
        registry.register(TreeAgent.agent_type, TreeAgent)
