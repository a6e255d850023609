"""The Build agent's arguments, checked once when the agent is built."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Annotated

from pydantic import Field

from kforge.rag.grounded import AnswerStyle

__all__ = ["BuildArgs"]


@dataclass(frozen=True, kw_only=True, slots=True)
class BuildArgs:
    goal: str = ""
    """What to build, in the user's words (required)."""
    workspace: str = ""
    """The folder the artifact is written in (required); nothing is written outside it."""
    corpus: str | None = None
    """The documents the concepts are grounded in (default: ``kforge.rag.DEFAULT_CORPUS``)."""
    answer: AnswerStyle | None = None
    """``generative``: the model writes the code; ``extractive``: the known-good shapes are
    used as they are. Default: what the model's provider says."""
    constraints: list[str] = field(default_factory=list)
    """Constraints from the user, added to the plan's."""
    max_retries: Annotated[int, Field(ge=0)] = 2
    """Rewrites of a step whose check failed before its known-good shape is used."""
    max_backtracks: Annotated[int, Field(ge=0)] = 1
    """Times MAKING may send the run back to GROUNDING."""
    k: Annotated[int, Field(ge=1)] = 3
    max_rewrites: Annotated[int, Field(ge=0)] = 1
    passages_per_answer: Annotated[int, Field(ge=1)] = 2
