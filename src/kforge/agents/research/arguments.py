"""The Research agent's arguments, checked once when the agent is built."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

from pydantic import Field

from kforge.rag.grounded import AnswerStyle

__all__ = ["ResearchArgs"]


@dataclass(frozen=True, kw_only=True, slots=True)
class ResearchArgs:
    question: str = ""
    """The research question (required)."""
    corpus: str | None = None
    """The document collection (default: ``kforge.rag.DEFAULT_CORPUS``)."""
    answer: AnswerStyle | None = None
    """``extractive`` or ``generative``; default: what the model's provider says."""
    max_backtracks: Annotated[int, Field(ge=0)] = 1
    """Times each backward transition may be taken."""
    review_answers: bool | None = None
    """Stop at the optional checkpoint after answering (``optional_checkpoints``)."""
    optional_checkpoints: bool = False
    k: Annotated[int, Field(ge=1)] = 3
    """Passages retrieved and graded per search."""
    max_rewrites: Annotated[int, Field(ge=0)] = 1
    """Query rewrites when most passages are irrelevant."""
    passages_per_answer: Annotated[int, Field(ge=1)] = 3
