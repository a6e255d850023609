"""The Understand agent: calibrates what a learner knows, diagnoses learning objectives, and
teaches them one at a time from documents, checking each with a question."""

from __future__ import annotations

from kforge.agents.understand.agent import UnderstandAgent
from kforge.agents.understand.context import UnderstandPhase, UnderstandPhaseContext

__all__ = ["UnderstandAgent", "UnderstandPhase", "UnderstandPhaseContext"]
