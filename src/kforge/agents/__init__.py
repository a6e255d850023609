"""Built-in agents; importing this package registers them in the default agent registry."""

from __future__ import annotations

from kforge.agents.research import ResearchAgent
from kforge.runtime.registry import default_registry

__all__ = ["ResearchAgent"]

default_registry.register(ResearchAgent.agent_type, ResearchAgent, replace=True)
