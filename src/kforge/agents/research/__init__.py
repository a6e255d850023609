"""The Research agent: a phase graph that decomposes a question, answers it from documents
with citations, synthesises insights and maps the frontier."""

from __future__ import annotations

from kforge.agents.research.agent import ResearchAgent
from kforge.agents.research.question_tree import ResearchPhase, ResearchPhaseContext

__all__ = ["ResearchAgent", "ResearchPhase", "ResearchPhaseContext"]
