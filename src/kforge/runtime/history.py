"""A run's past, read from its deltas: where each step ends in the frame log, the state after
any step and what that step changed, and the prompt any model call was sent."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kforge.engine.state import copy_value, diff_state, rebuild_state
from kforge.errors import InvalidRunStateError
from kforge.frames import Frame, ModelCall
from kforge.llm.prompt_delta import apply_prompt_delta, delta_fresh
from kforge.llm.types import Message
from kforge.store.base import RunLog

__all__ = ["CallPrompt", "StateChange", "StepState", "call_prompt", "step_seqs", "step_state"]


@dataclass(frozen=True, slots=True, kw_only=True)
class StateChange:
    """One change a step made to the run's state."""

    op: str
    """set, delete or append."""
    path: list[str | int]
    before: Any = None
    """The value the step replaced or deleted (None for a new key or an append)."""
    after: Any = None
    """The value set, or the items appended (None for a delete)."""

    def to_dict(self) -> dict[str, Any]:
        return {"op": self.op, "path": self.path, "before": self.before, "after": self.after}


@dataclass(frozen=True, slots=True, kw_only=True)
class StepState:
    """The run's state after the step that committed a frame, and that step's changes."""

    step: int
    first_seq: int
    """The first frame of the step (the one after the previous step's last)."""
    seq: int
    """The last frame committed with the step."""
    state: dict[str, Any]
    changes: tuple[StateChange, ...]


def step_seqs(store: RunLog, run_id: str) -> list[tuple[int, int]]:
    """Each committed step of ``run_id`` with the seq of its last frame, oldest first."""
    return [(s.step, s.seq) for s in store.read_steps(run_id, after_step=-1)]


def step_state(store: RunLog, run_id: str, seq: int) -> StepState:
    """The state after the step that committed frame ``seq`` (frames after the last step show
    the last step's state), with what that step changed from the step before."""
    steps = store.read_steps(run_id, after_step=-1)
    if not steps:
        raise InvalidRunStateError(
            f"run '{run_id}' has no committed step yet; ask again once it has taken one"
        )
    index = next((i for i, s in enumerate(steps) if s.seq >= seq), len(steps) - 1)
    before = rebuild_state({}, (s.delta for s in steps[:index]))
    after = rebuild_state(before, [steps[index].delta])
    changes = tuple(_change(before, op) for op in diff_state(before, after))
    first = steps[index - 1].seq + 1 if index else 1
    return StepState(
        step=steps[index].step, first_seq=first, seq=steps[index].seq, state=after, changes=changes
    )


def _change(before: dict[str, Any], op: list[Any]) -> StateChange:
    kind, path = op[0], list(op[1])
    old = _at(before, path)
    if kind == "a":
        return StateChange(op="append", path=path, after=op[2])
    if kind == "d":
        return StateChange(op="delete", path=path, before=old)
    return StateChange(op="set", path=path, before=old, after=op[2])


def _at(value: Any, path: list[str | int]) -> Any:
    for key in path:
        try:
            value = value[key]
        except (KeyError, IndexError, TypeError):
            return None
    return copy_value(value)


@dataclass(frozen=True, slots=True, kw_only=True)
class CallPrompt:
    """The messages a model call was sent, rebuilt from the deltas its frames recorded."""

    call: ModelCall
    recorded: bool
    """False when the frame holds no prompt (written before prompts were recorded) or its chain
    of bases cannot be read; ``messages`` is then empty."""
    messages: tuple[Message, ...] = ()
    fresh: tuple[bool, ...] = ()
    """Per message: True when this call's frame holds it (new or changed since its base)."""


def call_prompt(store: RunLog, run_id: str, seq: int) -> CallPrompt:
    """The prompt of the model call recorded by frame ``seq``: its frame's delta applied to its
    base's prompt, and so on back to a call recorded whole. ``InvalidRunStateError`` when frame
    ``seq`` is not a model call."""
    call = _frame(store, run_id, seq)
    if not isinstance(call, ModelCall):
        kind = "no frame" if call is None else f"a '{call.type}' frame"
        raise InvalidRunStateError(
            f"frame {seq} of run '{run_id}' is {kind}, not a model call; choose the seq of a "
            "'model.call' frame from GET /runs/{id}/frames"
        )
    chain = [call]
    while chain[-1].prompt_delta is not None and chain[-1].prompt_base:
        base = _frame(store, run_id, chain[-1].prompt_base)
        if not isinstance(base, ModelCall) or base.seq >= chain[-1].seq:
            return CallPrompt(call=call, recorded=False)
        chain.append(base)
    messages: list[Message] = []
    for link in reversed(chain):
        if link.prompt_delta is None:
            return CallPrompt(call=call, recorded=False)
        try:
            if link.prompt_state is not None:  # the records a resumed stretch restored
                messages = _restored_messages(store, run_id, link.prompt_state)
            messages = apply_prompt_delta(messages, link.prompt_delta)
        except (ValueError, KeyError, TypeError, IndexError):
            return CallPrompt(call=call, recorded=False)
    fresh = delta_fresh(call.prompt_delta or ())
    return CallPrompt(call=call, recorded=True, messages=tuple(messages), fresh=tuple(fresh))


def _restored_messages(store: RunLog, run_id: str, where: dict[str, Any]) -> list[Message]:
    """The messages of the list at ``where["path"]`` in the state after step
    ``where["step"]``, rebuilt from the step deltas; ``ValueError`` when there is none."""
    step = where["step"]
    steps = [s for s in store.read_steps(run_id, after_step=-1) if s.step <= step]
    if not steps or steps[-1].step != step:
        raise ValueError(f"run '{run_id}' has no step {step} to read a restored history from")
    value: Any = rebuild_state({}, (s.delta for s in steps))
    for key in where["path"]:
        value = value[key]
    if not isinstance(value, list):
        raise ValueError(f"the state of step {step} holds no list at {where['path']!r}")
    return Message.from_dicts(value)


def _frame(store: RunLog, run_id: str, seq: int) -> Frame | None:
    found = store.read_frames(run_id, after_seq=seq - 1, limit=1) if seq >= 1 else []
    return found[0] if found and found[0].seq == seq else None
