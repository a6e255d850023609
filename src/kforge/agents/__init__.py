"""Built-in agents; importing this package registers them in the default agent registry:
``research`` (phase graph), ``react`` (bounded ReAct loop) and ``router`` (seed 003's tool router)."""

from __future__ import annotations

from kforge.agents import react, router
from kforge.agents.react import ReactAgent
from kforge.agents.research import ResearchAgent
from kforge.agents.router import RouterAgent
from kforge.runtime.registry import default_registry

__all__ = ["ReactAgent", "ResearchAgent", "RouterAgent"]

default_registry.register(ResearchAgent.agent_type, ResearchAgent, replace=True)
react.register()
router.register()
