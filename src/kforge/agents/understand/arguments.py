"""The Understand agent's arguments, checked once when the agent is built."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

from pydantic import Field

from kforge.rag.grounded import AnswerStyle

__all__ = ["UnderstandArgs"]


@dataclass(frozen=True, kw_only=True, slots=True)
class UnderstandArgs:
    topic: str = ""
    """What the learner wants to understand (required)."""
    corpus: str | None = None
    """The documents explanations are drawn from (default: ``kforge.rag.DEFAULT_CORPUS``)."""
    answer: AnswerStyle | None = None
    """``extractive`` or ``generative`` explanations; default: what the model's provider says."""
    background: str = ""
    """What the learner says about themselves up front (skips that calibration question)."""
    max_objectives: Annotated[int, Field(ge=1)] = 3
    """Learning objectives diagnosed at most (remedial ones come on top)."""
    max_backtracks: Annotated[int, Field(ge=0)] = 1
    """Times each backward transition may be taken."""
    k: Annotated[int, Field(ge=1)] = 3
    max_rewrites: Annotated[int, Field(ge=0)] = 1
    passages_per_answer: Annotated[int, Field(ge=1)] = 3
