"""Multi-turn conversations (seed 003): a chat session is a ``session_id``; each turn is a run of
the router agent, and the earlier turns of its session inform routing and answers.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from kforge.engine.context import RunContext
from kforge.errors import ValidationError
from kforge.frames import DataEvent
from kforge.store.base import RunStatus, Store

__all__ = ["Turn", "format_history", "load_session_turns", "session_turns", "turns_from_args"]

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


def session_turns(
    store: Store, session_id: str, *, agent_type: str = "router", exclude: Iterable[str] = ()
) -> list[Turn]:
    """The completed turns of ``session_id`` in the order they were asked."""
    skip = set(exclude)
    runs = store.list_runs(session_id=session_id, status=RunStatus.COMPLETED, limit=1000)
    turns = []
    for run in sorted(runs, key=lambda r: r.created_at):
        if run.agent_type != agent_type or run.id in skip:
            continue
        question = (run.input.get("args") or {}).get("question")
        answer = (run.result or {}).get("answer")
        if isinstance(question, str) and isinstance(answer, str):
            turns.append(Turn(question, answer))
    return turns


def load_session_turns(ctx: RunContext, agent_type: str) -> list[Turn] | None:
    """The earlier turns of the run's session, read through the runtime; None when the run has
    no session (or no runtime). Recorded as a frame, so a resumed step sees the same turns."""
    runtime = ctx.services.get("runtime")
    if runtime is None:
        return None
    session = runtime.get_run(ctx.run_id).session_id
    if not session:
        return None
    turns = session_turns(runtime.store, session, agent_type=agent_type, exclude=[ctx.run_id])
    frame = ctx.emit(
        DataEvent(name="conversation.loaded", payload={"turns": [t.to_dict() for t in turns]})
    )
    return turns_from_args(frame.payload.get("turns"))


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
