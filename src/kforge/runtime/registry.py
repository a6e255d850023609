"""The agent registry, kept importable here: it lives in ``kforge.engine.registry``."""

from __future__ import annotations

from kforge.engine.registry import AgentFactory, AgentRegistry, default_registry, register_agent

__all__ = ["AgentFactory", "AgentRegistry", "default_registry", "register_agent"]
