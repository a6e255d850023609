"""The Understand agent's structured replies, and the prompts of its smaller decisions."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel

from kforge.llm.structured import decoder_bounds
from kforge.llm.types import ModelSettings
from kforge.prompts import prompt_text

__all__ = [
    "ASSESS_PROMPT",
    "CHECK_PROMPT",
    "DECISION",
    "GRADE_PROMPT",
    "REMEDIAL_PROMPT",
    "Assessment",
    "Calibration",
    "CheckQuestion",
    "ConceptLevel",
    "Diagnosis",
    "Grade",
    "Objective",
    "Remedial",
]

Name = Annotated[str, decoder_bounds(max_length=60)]
Short = Annotated[str, decoder_bounds(max_length=200)]


class ConceptLevel(BaseModel):
    name: Name
    level: Literal["known", "partial", "unknown"]


class Calibration(BaseModel):
    """Prerequisite concepts with the learner's likely level, and questions to confirm it."""

    concepts: Annotated[list[ConceptLevel], decoder_bounds(max_items=3)]
    check_questions: Annotated[list[Short], decoder_bounds(max_items=2)]


ASSESS_PROMPT = prompt_text("UNDERSTAND_ASSESS")


class Assessment(BaseModel):
    """The learner's knowledge state as their answers show it."""

    known: Annotated[list[Name], decoder_bounds(max_items=5)]
    partial: Annotated[list[Name], decoder_bounds(max_items=5)]
    unknown: Annotated[list[Name], decoder_bounds(max_items=5)]
    misconceptions: Annotated[list[Short], decoder_bounds(max_items=3)]
    goal: Short


class Objective(BaseModel):
    concept: Name
    objective: Short
    prerequisites: Annotated[list[Name], decoder_bounds(max_items=3)]
    misconception: Short


class Diagnosis(BaseModel):
    """Learning objectives, prerequisites first; and whether the knowledge state held up."""

    objectives: Annotated[list[Objective], decoder_bounds(max_items=3)]
    calibration_accurate: bool
    calibration_issue: Short


REMEDIAL_PROMPT = prompt_text("UNDERSTAND_REMEDIAL")


class Remedial(BaseModel):
    objective: Short


CHECK_PROMPT = prompt_text("UNDERSTAND_CHECK")


class CheckQuestion(BaseModel):
    question: Short


GRADE_PROMPT = prompt_text("UNDERSTAND_GRADE")


class Grade(BaseModel):
    understood: bool
    feedback: Short
    missing_prerequisite: Name


DECISION = ModelSettings(temperature=0.1, max_tokens=400)
"""Settings of the agent's typed decisions and gradings."""
