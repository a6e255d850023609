"""The engine: phase graphs, the run context and its services, limits, state deltas, the
agent registry type and the step runner."""

from __future__ import annotations

from kforge.engine.agent import ForgeAgent, SteerableAgent, StepAgent, StepOutcome
from kforge.engine.limits import RunLimits
from kforge.engine.phases import (
    Checkpoint,
    PhaseContext,
    PhaseGraph,
    PhaseTransition,
    TransitionRecord,
    evaluate_transitions,
)
from kforge.engine.registry import AgentRegistry
from kforge.engine.run_context import RunContext, Suspended
from kforge.engine.runner import StepRunner, load_state
from kforge.engine.services import Services

__all__ = [
    "AgentRegistry",
    "Checkpoint",
    "ForgeAgent",
    "PhaseContext",
    "PhaseGraph",
    "PhaseTransition",
    "RunContext",
    "RunLimits",
    "Services",
    "SteerableAgent",
    "StepAgent",
    "StepOutcome",
    "StepRunner",
    "Suspended",
    "TransitionRecord",
    "evaluate_transitions",
    "load_state",
]
