"""The agent registry, kept importable here: it lives in ``kforge.engine.registry`` and
``kforge.agents.builtin``."""

from __future__ import annotations

from kforge.agents.builtin import default_registry, register_agent
from kforge.engine.registry import AgentFactory, AgentRegistry

__all__ = ["AgentFactory", "AgentRegistry", "default_registry", "register_agent"]
