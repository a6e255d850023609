"""The Build agent's phases and phase context: concepts, constraints, plan, files and checks."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any

from kforge.engine.phases import PhaseContext

__all__ = ["BuildPhase", "BuildPhaseContext"]


class BuildPhase(enum.Enum):
    GROUNDING = "grounding"
    MAKING = "making"
    COMPLETE = "complete"


@dataclass
class BuildPhaseContext(PhaseContext):
    """Records are JSON objects:

    concept: {name, explanation, source_ids, origin}; step: {id, title, files, accept,
    status (pending, done, failed), attempts, origin, checks: [{attempt, ok, origin, output}]};
    file: {path, sha256, bytes, step, origin}; source: as the Research agent's.
    """

    shape: str = ""
    fit: int = 0
    """How many of the goal's words the shape speaks of (0: the program is written for the
    goal, no shape does what it asks)."""
    program: dict[str, Any] = field(default_factory=dict)
    """The model's program for a goal no shape fits (a ``GoalProgram``), else empty."""
    summary: str = ""
    summary_origin: str = ""
    """``model`` when the model's one-sentence description passed the checks, else ``template``."""
    concepts: list[dict[str, Any]] = field(default_factory=list)
    constraints: list[str] = field(default_factory=list)
    sources: list[dict[str, Any]] = field(default_factory=list)
    plan: list[dict[str, Any]] = field(default_factory=list)
    files: dict[str, dict[str, Any]] = field(default_factory=dict)
    gap: str = ""
    """A conceptual gap MAKING found and GROUNDING has not addressed yet."""
    gap_step: str = ""
    failure: dict[str, Any] = field(default_factory=dict)
    """The last failed check of the step being made, for the next attempt: {step, output}."""
    log_written: bool = False
    backtracks: dict[str, int] = field(default_factory=dict)

    def step(self, step_id: str) -> dict[str, Any] | None:
        return next((s for s in self.plan if s["id"] == step_id), None)

    def pending(self) -> list[dict[str, Any]]:
        return [s for s in self.plan if s["status"] == "pending"]
