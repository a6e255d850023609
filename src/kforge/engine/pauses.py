"""How a step stops early: waiting for a person, for other runs, or for the model.

Each is a ``BaseException`` raised inside a step, so agent code catching ``Exception`` cannot
swallow it; the runner turns it into the run's pause.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from kforge.errors import ModelUnavailableError
from kforge.frames import InteractionRequested

__all__ = ["SUBAGENTS_REASON", "Answerer", "ModelOutage", "Parked", "Suspended"]

SUBAGENTS_REASON = "subagents"
"""The pause reason of a run parked until its child runs (waiting for a person) end."""


class Suspended(BaseException):
    """Raised inside a step when the run must wait for a person.

    A BaseException so that agent code catching ``Exception`` cannot swallow it.
    """

    def __init__(self, request: InteractionRequested) -> None:
        super().__init__(request.prompt)
        self.request = request


class Parked(BaseException):
    """Raised inside a step when the run must wait for other runs (its subagents): the run is
    paused with ``reason`` and holds no worker; whoever finishes those runs resumes it."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class ModelOutage(BaseException):
    """Raised inside a step when the model cannot be reached (``ModelUnavailableError`` once its
    retries are spent): the run pauses before anything from that call is recorded.

    A BaseException so that no agent code catching ``Exception`` or ``ModelError`` (grading,
    rewriting, a guardrail, a fallback) can record the outage as a verdict on the documents.
    """

    def __init__(self, error: ModelUnavailableError) -> None:
        super().__init__(str(error))
        self.error = error


Answerer = Callable[[str, InteractionRequested], Awaitable[dict[str, Any] | None]]
"""Answers a question inline: ``(run_id, request) -> answer``; None leaves the run to park."""
