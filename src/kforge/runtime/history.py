"""A run's past, read from its step deltas: where each step ends in the frame log, the state
after any step, and what that step changed."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kforge.engine.state import copy_value, diff_state, rebuild_state
from kforge.errors import InvalidRunStateError
from kforge.store.base import Store

__all__ = ["StateChange", "StepState", "step_seqs", "step_state"]


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


def step_seqs(store: Store, run_id: str) -> list[tuple[int, int]]:
    """Each committed step of ``run_id`` with the seq of its last frame, oldest first."""
    return [(s.step, s.seq) for s in store.read_steps(run_id, after_step=-1)]


def step_state(store: Store, run_id: str, seq: int) -> StepState:
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
