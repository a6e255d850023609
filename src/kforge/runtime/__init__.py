"""Runtime: the facade over store and executor, the agent registry and the event bus."""

from __future__ import annotations

from kforge.agents.builtin import default_registry, register_agent
from kforge.engine.registry import AgentRegistry
from kforge.runtime.bus import EventBus
from kforge.runtime.interventions import Intervention, InterventionAction
from kforge.runtime.runtime import Runtime, normalize_answer

__all__ = [
    "AgentRegistry",
    "EventBus",
    "Intervention",
    "InterventionAction",
    "Runtime",
    "default_registry",
    "normalize_answer",
    "register_agent",
]
