"""The Build agent's structured replies and the checks on what a small model writes."""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel

from kforge.llm.structured import decoder_bounds
from kforge.prompts import prompt_text
from kforge.rag.textcheck import cut_loop, echoed_phrase, is_degenerate, key_terms, support

__all__ = [
    "SUMMARY_SYSTEM",
    "CodeFile",
    "CodeReply",
    "ConceptNote",
    "GapNote",
    "GoalProgram",
    "Grounding",
    "usable_summary",
]

SUMMARY_SYSTEM = prompt_text("BUILD_SUMMARY")


class ConceptNote(BaseModel):
    name: Annotated[str, decoder_bounds(max_length=60)]
    explanation: Annotated[str, decoder_bounds(max_length=300)]


class Grounding(BaseModel):
    """The program shape that fits the goal, a one-sentence summary, concepts and constraints."""

    shape: Annotated[str, decoder_bounds(max_length=40)]
    summary: Annotated[str, decoder_bounds(max_length=240)]
    concepts: Annotated[list[ConceptNote], decoder_bounds(max_items=3)]
    constraints: Annotated[
        list[Annotated[str, decoder_bounds(max_length=160)]], decoder_bounds(max_items=3)
    ]


class GapNote(BaseModel):
    """What GROUNDING adds for a conceptual gap found while making."""

    concept: ConceptNote
    constraint: Annotated[str, decoder_bounds(max_length=200)]


class GoalProgram(BaseModel):
    """A program no known shape makes, and its acceptance check derived from the goal: a
    sample input and the lines the program must print for it."""

    module: Annotated[str, decoder_bounds(max_length=40)]
    """The Python module name of the program (``toc`` for ``toc.py``)."""
    title: Annotated[str, decoder_bounds(max_length=60)]
    sample_name: Annotated[str, decoder_bounds(max_length=60)]
    """The file name of the sample input (``sample.md``)."""
    sample: Annotated[str, decoder_bounds(max_length=1500)]
    arguments: Annotated[
        list[Annotated[str, decoder_bounds(max_length=60)]], decoder_bounds(max_items=4)
    ]
    """The command-line arguments of the checked run (default: the sample's name)."""
    expected: Annotated[
        list[Annotated[str, decoder_bounds(max_length=160)]], decoder_bounds(max_items=8)
    ]
    """Lines the program must print when run with ``arguments`` on the sample."""


class CodeFile(BaseModel):
    path: str
    content: str


class CodeReply(BaseModel):
    """The files of one step, or the conceptual gap that stops the step."""

    files: list[CodeFile]
    conceptual_gap: str = ""


def usable_summary(text: str, goal: str, instructions: str, facts: str) -> str:
    """The model's one-sentence description, tidied, or "" when it loops, echoes its
    instructions, is degenerate, shares no word with the goal, or says what ``facts`` (what the
    program really does) do not: a small model invents features."""
    text = " ".join(text.split()).strip(" \"'")
    text, looped = cut_loop(text)
    if looped or not text or len(text) > 240 or len(text.split()) < 5:
        return ""
    first = text.split(". ")[0].rstrip(".") + "."
    if is_degenerate(first) or echoed_phrase(first, [instructions], words=5):
        return ""
    if not set(key_terms(first)) & set(key_terms(goal)):
        return ""
    if not support(first, [goal, facts]).supported:
        return ""
    return first[0].upper() + first[1:]
