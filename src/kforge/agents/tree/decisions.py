"""The tree agent's structured decisions (read through ``output_type``) and their prompts."""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel

from kforge.llm.structured import decoder_bounds

__all__ = [
    "CLARIFY_PROMPT",
    "EXECUTE_PROMPT",
    "MISSING_PROMPT",
    "RESOLVE_PROMPT",
    "SUBQUESTIONS_PROMPT",
    "Clarity",
    "MissingInfo",
    "Resolution",
    "Subquestions",
]

ShortText = Annotated[str, decoder_bounds(max_length=160)]

CLARIFY_PROMPT = (
    "You check requests before work starts. Decide whether the user's request is too "
    "ambiguous to act on (it could mean very different things). Only then write one short "
    "question that would resolve it. Reply in JSON."
)
MISSING_PROMPT = (
    "You check requests before work starts. Decide whether information that only the user "
    "has is missing and critical (the work would be wrong without it). Only then write one "
    "short question asking for it. Reply in JSON."
)
SUBQUESTIONS_PROMPT = (
    "Split the user's request into at most {limit} independent subquestions that can be "
    "explored separately and help answer it. Write none if the request is simple. Reply in "
    "JSON."
)
EXECUTE_PROMPT = (
    "You are an assistant. Do the user's request. Use a tool when it helps; when you are "
    "done, reply with the answer in a few sentences."
)
RESOLVE_PROMPT = (
    "You review an answer before it is given to the user. Given the uncertainties listed, "
    "decide whether one more question to the user would resolve them, and write that "
    "question. Reply in JSON."
)


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
