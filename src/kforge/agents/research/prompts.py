"""The Research agent's phase prompts and the structured replies its decisions are read as."""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel

from kforge.llm.structured import decoder_bounds
from kforge.llm.types import ModelSettings
from kforge.prompts import prompt_text

__all__ = [
    "DECISION",
    "DISCOVERY_PROMPT",
    "ECHO_SOURCES",
    "GAPS_PROMPT",
    "INITIAL_PROMPTS",
    "WRITING",
    "AdjacentQuestion",
    "Breakdown",
    "Category",
    "CategoryQuestions",
    "Discovery",
    "Expansion",
    "Gaps",
    "ShortText",
    "new_category_request",
]

INITIAL_PROMPTS: dict[str, str] = {
    phase: prompt_text(f"RESEARCH_{phase}")
    for phase in ("decompose", "answer", "rise_above", "expand")
}
"""The first-visit prompt of each phase, by phase name."""

ShortText = Annotated[str, decoder_bounds(max_length=160)]
"""A question or reason: bounded for the local decoder, never cut when a reply is read."""


class Category(BaseModel):
    name: Annotated[str, decoder_bounds(max_length=60)]
    questions: Annotated[list[ShortText], decoder_bounds(min_items=1, max_items=2)]


class Breakdown(BaseModel):
    """The research question broken into categories of questions."""

    categories: Annotated[list[Category], decoder_bounds(min_items=1, max_items=3)]


class CategoryQuestions(BaseModel):
    """The questions of a category discovered later."""

    questions: Annotated[list[ShortText], decoder_bounds(min_items=1, max_items=3)]


DISCOVERY_PROMPT = prompt_text("RESEARCH_DISCOVERY")


class Discovery(BaseModel):
    """A topic an answer raised that no category covers; empty when there is none."""

    new_category: Annotated[str, decoder_bounds(max_length=40)]


GAPS_PROMPT = prompt_text("RESEARCH_GAPS")


def new_category_request(question: str, category: str) -> str:
    """The user turn asking for the questions of a category discovered after DECOMPOSE."""
    return prompt_text("RESEARCH_NEW_CATEGORY", question=question, category=category)


class Gaps(BaseModel):
    """What a category's synthesis still lacks."""

    needs_more_answers: bool
    follow_up_question: ShortText
    missing_category: Annotated[str, decoder_bounds(max_length=60)]


class AdjacentQuestion(BaseModel):
    question: ShortText
    why: Annotated[str, decoder_bounds(max_length=200)]


class Expansion(BaseModel):
    """Questions next to the research question, worth exploring next."""

    questions: Annotated[list[AdjacentQuestion], decoder_bounds(max_items=4)]


ECHO_SOURCES = (*INITIAL_PROMPTS.values(), DISCOVERY_PROMPT, GAPS_PROMPT)
"""The instructions a category name must not be echoed from."""
DECISION = ModelSettings(temperature=0.1, max_tokens=400)
"""Settings of the agent's typed decisions (a breakdown, a discovery, gaps)."""
WRITING = ModelSettings(temperature=0.2, max_tokens=400)
"""Settings of what the agent writes (answers, insights, questions to explore)."""
