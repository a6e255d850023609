"""The engine: phase graphs, the run context, limits, state deltas and the step runner."""

from __future__ import annotations

from kforge.engine.agent import ForgeAgent, StepAgent, StepOutcome
from kforge.engine.context import RunContext, Suspended
from kforge.engine.limits import RunLimits
from kforge.engine.phases import (
    REENTRY_TEMPLATE,
    Checkpoint,
    PhaseContext,
    PhaseGraph,
    PhaseTransition,
    TransitionRecord,
    evaluate_transitions,
)
from kforge.engine.runner import StepRunner, load_state

__all__ = [
    "REENTRY_TEMPLATE",
    "Checkpoint",
    "ForgeAgent",
    "PhaseContext",
    "PhaseGraph",
    "PhaseTransition",
    "RunContext",
    "RunLimits",
    "StepAgent",
    "StepOutcome",
    "StepRunner",
    "Suspended",
    "TransitionRecord",
    "evaluate_transitions",
    "load_state",
]
