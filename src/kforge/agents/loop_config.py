"""Bounds and settings of the ReAct loop: steps, retries, time, context window, decision mode.

Seed 001 §1 (AgentConfig): 5 steps and 3 retries by default.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Literal, cast

from kforge.errors import ValidationError

__all__ = ["DEFAULT_CONTEXT_TOKENS", "DecisionMode", "LoopConfig"]

DecisionMode = Literal["structured", "native"]
"""``structured``: the model answers with one JSON decision; ``native``: it calls tools natively."""

DEFAULT_CONTEXT_TOKENS = 8192
"""The context window assumed when neither the configuration nor the model says otherwise."""


@dataclass(frozen=True, slots=True)
class LoopConfig:
    max_steps: int = 5
    """Decisions the loop may make (each is one decide → act → observe iteration)."""
    max_retries: int = 3
    """Failures one action (a tool, or the final answer's check) may have before it is dropped."""
    max_time_s: float = 300.0
    """Seconds of work (waiting for a person does not count) before the loop wraps up."""
    context_tokens: int | None = None
    """The model's context window; compaction starts past 80 % of it."""
    decision_mode: DecisionMode = "structured"
    allow_ask: bool = True
    """Whether the model may ask the user a clarifying question."""
    optimal_steps: int | None = None
    """Steps a perfect run would take, when known: the trajectory's efficiency is measured by it."""
    max_tokens: int = 400
    """Output tokens per decision and per answer."""
    temperature: float = 0.1

    def __post_init__(self) -> None:
        for name in ("max_steps", "max_retries", "max_tokens"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ValidationError(
                    f"react loop: '{name}' must be a positive integer (got {value!r})"
                )
        if not isinstance(self.max_time_s, int | float) or self.max_time_s <= 0:
            raise ValidationError(
                f"react loop: 'max_time_s' must be a positive number of seconds (got {self.max_time_s!r})"
            )
        for name in ("context_tokens", "optimal_steps"):
            value = getattr(self, name)
            if value is not None and (
                not isinstance(value, int) or isinstance(value, bool) or value < 1
            ):
                raise ValidationError(
                    f"react loop: '{name}' must be a positive integer or null (got {value!r})"
                )
        if self.decision_mode not in ("structured", "native"):
            raise ValidationError(
                "react loop: 'decision_mode' must be 'structured' or 'native' "
                f"(got {self.decision_mode!r})"
            )
        if not 0.0 <= float(self.temperature) <= 2.0:
            raise ValidationError(
                f"react loop: 'temperature' must be between 0 and 2 (got {self.temperature!r})"
            )

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any] | None) -> LoopConfig:
        """Read the known keys of ``data`` (agent args or saved state); others are ignored."""
        data = data or {}
        known = {k: data[k] for k in cls.__dataclass_fields__ if k in data and data[k] is not None}
        if "decision_mode" in known:
            known["decision_mode"] = cast(DecisionMode, str(known["decision_mode"]))
        if "allow_ask" in known:
            known["allow_ask"] = bool(known["allow_ask"])
        if "max_time_s" in known and isinstance(known["max_time_s"], int):
            known["max_time_s"] = float(known["max_time_s"])
        return cls(**known)
