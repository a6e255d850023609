"""Answers to a run's pending interaction, checked before anything is recorded."""

from __future__ import annotations

from typing import Any

from kforge.errors import ValidationError
from kforge.frames import InteractionRequested

__all__ = ["normalize_answer"]


def normalize_answer(request: InteractionRequested, answer: Any) -> dict[str, Any]:
    """Turn a user's answer into the dict agent code receives, checking it against the options."""
    if answer is None:
        raise ValidationError(
            f"run is waiting for an answer to: {request.prompt!r}"
            + (f" (options: {', '.join(request.options)})" if request.options else "")
        )
    if isinstance(answer, str):
        answer = {"action": answer} if answer in request.options else {"text": answer}
        if request.options and "action" not in answer:
            raise ValidationError(
                f"answer must be one of {', '.join(request.options)} (got {answer['text']!r})"
            )
    if not isinstance(answer, dict):
        raise ValidationError(
            f"an answer must be a string or an object (got {type(answer).__name__})"
        )
    action = answer.get("action")
    if request.options and action not in request.options:
        raise ValidationError(
            f"answer 'action' must be one of {', '.join(request.options)} (got {action!r})"
        )
    return dict(answer)
