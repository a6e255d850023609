"""Request bodies (validated by pydantic at the edge) and the JSON shapes of runs and frames."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from kforge.agents.results import read_result, sources_lines
from kforge.engine.registry import AgentRegistry
from kforge.errors import StateCorruptionError
from kforge.frames import Frame, TokenDelta, frame_to_dict
from kforge.runtime.interventions import Intervention, InterventionAction
from kforge.server.jsonshape import SHOWN_DEPTH, check_shape, clipped, json_depth
from kforge.store.base import RunRecord

__all__ = [
    "AnswerBody",
    "CancelBody",
    "ForkBody",
    "IngestBody",
    "InterveneBody",
    "LimitsBody",
    "SearchBody",
    "StartRunBody",
    "delta_json",
    "frame_json",
    "run_json",
]


class _Body(BaseModel):
    model_config = ConfigDict(extra="forbid", str_max_length=100_000)


class LimitsBody(_Body):
    max_steps: int | None = Field(default=None, ge=1, le=100_000)
    max_phase_visits: int | None = Field(default=None, ge=1, le=1000)
    max_wall_time_s: float | None = Field(default=None, gt=0, le=7 * 24 * 3600)
    max_tokens: int | None = Field(default=None, ge=1)


class StartRunBody(_Body):
    agent: str = Field(min_length=1, max_length=100, description="A registered agent type.")
    args: dict[str, Any] = Field(
        default_factory=dict,
        description="The agent's arguments, e.g. {'question': ..., 'corpus': 'samples'}.",
    )
    limits: LimitsBody | None = None
    session_id: str | None = Field(default=None, max_length=200)

    @field_validator("args")
    @classmethod
    def _bounded(cls, args: dict[str, Any]) -> dict[str, Any]:
        return dict(check_shape(args, "the arguments"))


class AnswerBody(_Body):
    """Approve, modify or reject a checkpoint, or answer a question with free text."""

    action: Literal["approve", "modify", "reject"] | None = None
    modifications: dict[str, Any] | None = Field(
        default=None,
        description="With action 'modify': e.g. {'categories': [{'name', 'questions': [...]}]}.",
    )
    reason: str | None = Field(default=None, max_length=4000, description="With 'reject'.")
    text: str | None = Field(default=None, max_length=20_000, description="A free-text answer.")
    interaction_id: str | None = Field(
        default=None, description="The interaction answered; refused if it is no longer pending."
    )

    @field_validator("modifications")
    @classmethod
    def _bounded(cls, changes: dict[str, Any] | None) -> dict[str, Any] | None:
        return None if changes is None else dict(check_shape(changes, "the modifications"))

    @model_validator(mode="after")
    def _one_kind(self) -> AnswerBody:
        if (self.action is None) == (self.text is None):
            raise ValueError(
                "give either 'action' (approve, modify or reject) or 'text' (a free answer)"
            )
        if self.action == "modify" and not self.modifications:
            raise ValueError("action 'modify' needs 'modifications', the changes to apply")
        if self.action != "modify" and self.modifications is not None:
            raise ValueError("'modifications' goes only with action 'modify'")
        if self.text is not None and not self.text.strip():
            raise ValueError("'text' is empty; write the answer")
        return self

    def to_answer(self) -> Any:
        if self.text is not None:
            return self.text
        answer: dict[str, Any] = {"action": self.action}
        if self.modifications is not None:
            answer["modifications"] = self.modifications
        if self.reason:
            answer["reason"] = self.reason
        return answer


class ForkBody(_Body):
    at_seq: int | None = Field(default=None, ge=1, description="Last frame seq to keep.")


class CancelBody(_Body):
    reason: str = Field(default="cancelled through the API", max_length=1000)


class InterveneBody(_Body):
    """A person's intervention on one agent of a tree."""

    action: Literal["delete", "modify", "comment"] = Field(
        description="delete, modify or comment: the action is this field, never the content's words"
    )
    content: str = Field(default="", max_length=20_000)

    @model_validator(mode="before")
    @classmethod
    def _action_given(cls, data: Any) -> Any:
        if isinstance(data, dict) and "action" not in data:
            allowed = ", ".join(a.value for a in InterventionAction)
            raise ValueError(
                f"an intervention needs 'action', one of {allowed}, and for a modify or a "
                'comment its \'content\' (e.g. {"action": "comment", "content": "..."}); '
                "the action is never read from the content"
            )
        return data

    def intervention(self) -> Intervention:
        return Intervention(action=InterventionAction(self.action), content=self.content)


class SearchBody(_Body):
    query: str = Field(min_length=1, max_length=2000)
    k: int = Field(default=5, ge=1, le=50)


class IngestBody(_Body):
    path: str = Field(min_length=1, max_length=4096, description="A folder on the server.")


def run_json(run: RunRecord, registry: AgentRegistry | None = None) -> dict[str, Any]:
    """The run as the API shows it; a stored value too deep to send is cut, and the run's
    ``unreadable`` names the fields that were (so one such run never breaks a listing).

    Beside the stored ``result``, ``text`` is what a person reads of it and ``sources`` the
    labels of the passages it cites, both read from the agent's declared result type (the
    Sources ``kforge ask`` prints); a result that cannot be read is named in ``unreadable``."""
    text, sources, unreadable = "", [], []
    if run.result is not None:
        try:
            result = read_result(run, registry)
            text, sources = result.text, sources_lines(result.citations)
        except StateCorruptionError:
            unreadable.append("text")
    shown: dict[str, Any] = {
        "id": run.id,
        "agent": run.agent_type,
        "status": run.status.value,
        "created_at": run.created_at.isoformat(),
        "updated_at": run.updated_at.isoformat(),
        "args": run.input.get("args", {}),
        "limits": run.input.get("limits", {}),
        "model": run.input.get("model"),
        "session_id": run.session_id,
        "parent_id": run.parent_id,
        "steps": run.iteration,
        "max_steps": run.max_iterations,
        "last_seq": run.last_seq,
        "pause_reason": run.pause_reason,
        "pending_interaction": run.pending_interaction,
        "result": run.result,
        "text": text,
        "sources": sources,
        "error": run.error,
        "forked_from": run.forked_from,
        "forked_at_seq": run.forked_at_seq,
    }
    cut = unreadable + [
        name for name, value in shown.items() if json_depth(value, stop=SHOWN_DEPTH) > SHOWN_DEPTH
    ]
    for name in cut:
        shown[name] = clipped(shown[name])[0]
    if cut:
        shown["unreadable"] = cut
    return shown


def frame_json(frame: Frame) -> dict[str, Any]:
    data = frame_to_dict(frame)
    if json_depth(data, stop=SHOWN_DEPTH) <= SHOWN_DEPTH:
        return data
    return {**clipped(data)[0], "unreadable": True}


def delta_json(delta: TokenDelta) -> dict[str, Any]:
    return {
        "type": delta.type,
        "run_id": delta.run_id,
        "text": delta.text,
        "purpose": delta.purpose,
    }
