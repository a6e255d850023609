"""Multi-turn conversations: a chat session is a ``session_id``; each turn is a run of
the router agent, and the earlier turns of its session inform routing and answers.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from kforge.engine.run_context import RunContext
from kforge.errors import ValidationError

__all__ = ["Turn", "format_history", "load_session_turns", "turns_from_args"]

_ANSWER_CHARS = 600
_MAX_TURNS = 6


@dataclass(frozen=True, slots=True)
class Turn:
    """One finished exchange of a conversation."""

    question: str
    answer: str

    def to_dict(self) -> dict[str, str]:
        return {"question": self.question, "answer": self.answer}

    @classmethod
    def from_dict(cls, data: Any) -> Turn:
        if not isinstance(data, dict):
            raise ValidationError(
                f"a conversation turn must be an object with 'question' and 'answer' (got {data!r:.80})"
            )
        question, answer = data.get("question"), data.get("answer", "")
        if not isinstance(question, str) or not isinstance(answer, str):
            raise ValidationError("a conversation turn needs 'question' and 'answer' as text")
        return cls(question, answer)


def turns_from_args(value: Any) -> list[Turn]:
    """The ``history`` argument of a run: a list of ``{"question", "answer"}`` objects."""
    if value is None:
        return []
    if not isinstance(value, list):
        raise ValidationError("'history' must be a list of {question, answer} objects")
    return [Turn.from_dict(item) for item in value]


async def load_session_turns(ctx: RunContext, agent_type: str) -> list[Turn] | None:
    """The earlier turns of the run's session; None when the run has no session. Recorded, so
    a re-executed step sees the same turns."""
    sessions = ctx.services.sessions
    if sessions is None or not sessions.session_id:
        return None
    payload = await ctx.recorded(
        "conversation.loaded", lambda: {"turns": sessions.turns(agent_type)}
    )
    return turns_from_args(payload.get("turns"))


def format_history(turns: Sequence[Turn], *, max_turns: int = _MAX_TURNS) -> str:
    """The latest turns as prompt text (answers shortened); empty when there are none."""
    if not turns:
        return ""
    lines = ["Conversation so far:"]
    for turn in turns[-max_turns:]:
        answer = " ".join(turn.answer.split())
        if len(answer) > _ANSWER_CHARS:
            answer = answer[: _ANSWER_CHARS - 1] + "…"
        lines.append(f"User: {turn.question}")
        lines.append(f"Assistant: {answer}")
    return "\n".join(lines)
