"""Built-in agents: ``research`` (phase graph), ``react`` (bounded ReAct loop) and ``router``
(guardrail, routing, retrieval, grading and a cited answer). The agent registry imports each
the first time a run of its type starts, so importing this package registers nothing."""

from __future__ import annotations

from kforge.agents.react import ReactAgent
from kforge.agents.research import ResearchAgent
from kforge.agents.router import RouterAgent

__all__ = ["ReactAgent", "ResearchAgent", "RouterAgent"]
