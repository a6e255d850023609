"""The Understand agent's phases and phase context: the learner's answers and knowledge state,
the learning objectives, and what was taught and checked."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any

from kforge.engine.phases import PhaseContext

__all__ = ["UnderstandPhase", "UnderstandPhaseContext"]


class UnderstandPhase(enum.Enum):
    CALIBRATE = "calibrate"
    DIAGNOSE = "diagnose"
    TEACH = "teach"
    COMPLETE = "complete"


@dataclass
class UnderstandPhaseContext(PhaseContext):
    """Records are JSON objects:

    question: {id, text, purpose (background, goal, concept, follow_up), concept, answer};
    knowledge: {known, partial, unknown, misconceptions (lists of names), goal};
    objective: {id, concept, text, prerequisites, misconception, status (pending, explained,
    passed, failed, gap, open), attempts, explanation: [{text, source_id}], source_ids,
    check_question, answer, feedback, remedial_for}; source: as the Research agent's.
    """

    questions: list[dict[str, Any]] = field(default_factory=list)
    prepared_visit: int = 0
    """The CALIBRATE visit whose questions have been prepared."""
    knowledge: dict[str, Any] = field(default_factory=dict)
    calibrated: bool = False
    objectives: list[dict[str, Any]] = field(default_factory=list)
    sources: list[dict[str, Any]] = field(default_factory=list)
    current: str = ""
    """The objective being taught."""
    last_graded: str = ""
    gaps: list[str] = field(default_factory=list)
    """Prerequisites teaching found missing: CALIBRATE asks about them, DIAGNOSE adds them."""
    recalibrate: str = ""
    """Why DIAGNOSE found the knowledge state wrong; CALIBRATE asks again."""
    failed: list[str] = field(default_factory=list)
    """Objectives whose check failed, waiting for DIAGNOSE to add a remedial objective."""
    diagnosed: bool = False
    backtracks: dict[str, int] = field(default_factory=dict)

    def objective(self, objective_id: str) -> dict[str, Any] | None:
        return next((o for o in self.objectives if o["id"] == objective_id), None)

    def to_teach(self) -> list[dict[str, Any]]:
        return [o for o in self.objectives if o["status"] in ("pending", "explained")]

    def unanswered(self) -> list[dict[str, Any]]:
        return [q for q in self.questions if q.get("answer") is None]
