"""The tree agent's arguments, checked once when the agent is built."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

from pydantic import Field

from kforge.rag.grounded import AnswerStyle

__all__ = ["MAX_SUBQUESTIONS", "TreeArgs"]

MAX_SUBQUESTIONS = 4
"""Subquestions one agent may spawn as subagents."""


@dataclass(frozen=True, kw_only=True, slots=True)
class TreeArgs:
    prompt: str = ""
    """The user's request (required)."""
    corpus: str | None = None
    """A document collection to answer from; none means no retrieval."""
    tools: list[str] | None = None
    """Tools for the main execution, by name (e.g. ``["python"]``); none means no tools."""
    depth: Annotated[int, Field(ge=0)] = 0
    """How far below the root this agent is (0 for the root)."""
    max_depth: Annotated[int, Field(ge=0)] = 1
    """Agents at this depth spawn no subagents."""
    max_subquestions: Annotated[int, Field(ge=0, le=MAX_SUBQUESTIONS)] = MAX_SUBQUESTIONS
    max_question_rounds: Annotated[int, Field(ge=0, le=3)] = 3
    """Rounds of blocking questions before the main work (at most 3)."""
    max_tool_rounds: Annotated[int, Field(ge=1)] = 3
    """Model calls with tools in the main execution before it must answer."""
    clarify: bool = True
    """Check whether the request is ambiguous before anything else."""
    answer: AnswerStyle | None = None
    """``extractive`` or ``generative``; default: what the model's provider says."""
    k: Annotated[int, Field(ge=1)] = 3
    """Passages retrieved per search."""
