"""Bounds and settings of the ReAct loop: steps, retries, time, context window, decision mode.

5 steps and 3 retries by default: enough for a lookup and a correction, few enough that a
confused model stops early.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Literal

from pydantic import Field

__all__ = ["DEFAULT_CONTEXT_TOKENS", "DecisionMode", "LoopConfig"]

DecisionMode = Literal["structured", "native"]
"""``structured``: the model answers with one JSON decision; ``native``: it calls tools natively."""

DEFAULT_CONTEXT_TOKENS = 8192
"""The context window assumed when neither the configuration nor the model says otherwise."""


Positive = Annotated[int, Field(ge=1)]


@dataclass(frozen=True, slots=True)
class LoopConfig:
    max_steps: Positive = 5
    """Decisions the loop may make (each is one decide → act → observe iteration)."""
    max_retries: Positive = 3
    """Failures one action (a tool, or the final answer's check) may have before it is dropped."""
    max_time_s: Annotated[float, Field(gt=0)] = 300.0
    """Seconds of work (waiting for a person does not count) before the loop wraps up."""
    context_tokens: Positive | None = None
    """The model's context window; compaction starts past 80 % of it."""
    decision_mode: DecisionMode = "structured"
    allow_ask: bool = True
    """Whether the model may ask the user a clarifying question."""
    optimal_steps: Positive | None = None
    """Steps a perfect run would take, when known: the trajectory's efficiency is measured by it."""
    max_tokens: Positive = 400
    """Output tokens per decision and per answer."""
    temperature: Annotated[float, Field(ge=0.0, le=2.0)] = 0.1
