"""The tree agent's structured decisions (read through ``output_type``) and their prompts."""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel

from kforge.llm.structured import decoder_bounds
from kforge.prompts import prompt_text

__all__ = [
    "CLARIFY_PROMPT",
    "EXECUTE_PROMPT",
    "MISSING_PROMPT",
    "RESOLVE_PROMPT",
    "Clarity",
    "MissingInfo",
    "Resolution",
    "Subquestions",
    "subquestions_prompt",
]

ShortText = Annotated[str, decoder_bounds(max_length=160)]

CLARIFY_PROMPT = prompt_text("TREE_CLARIFY")
MISSING_PROMPT = prompt_text("TREE_MISSING")
EXECUTE_PROMPT = prompt_text("TREE_EXECUTE")
RESOLVE_PROMPT = prompt_text("TREE_RESOLVE")


def subquestions_prompt(limit: int) -> str:
    """The system prompt asking for at most ``limit`` subquestions."""
    return prompt_text("TREE_SUBQUESTIONS", limit=limit)


class Clarity(BaseModel):
    """Is the request ambiguous, and what would resolve it."""

    ambiguous: bool
    question: ShortText = ""


class MissingInfo(BaseModel):
    """Is critical information missing, and the question that asks for it."""

    missing: bool
    question: ShortText = ""


class Subquestions(BaseModel):
    """Independent subquestions to explore in parallel."""

    subquestions: Annotated[list[ShortText], decoder_bounds(max_items=4)]


class Resolution(BaseModel):
    """Does the user need to answer one more question before the answer is final."""

    ask: bool
    question: ShortText = ""
