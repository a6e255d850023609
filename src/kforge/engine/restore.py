"""Rebuilding a run's state from its records: the latest snapshot plus the step deltas after
it, or the deltas alone when the snapshot is unreadable."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kforge.engine.state import rebuild_state
from kforge.errors import StateCorruptionError
from kforge.frames import UsageFrame
from kforge.store.base import RunLog, Snapshot

__all__ = ["RestorePoint", "load_state", "restore_point", "session_usage"]


@dataclass(frozen=True, slots=True)
class RestorePoint:
    """A run's state as of its last committed step."""

    state: dict[str, Any]
    step: int
    seq: int
    """The last frame seq committed with that step."""
    text: str | None = None
    """The state's JSON as stored, when the state is exactly a stored snapshot."""


def restore_point(
    store: RunLog,
    run_id: str,
    *,
    last_step: int | None = None,
    use_snapshot: bool = True,
    snapshot: Snapshot | None = None,
) -> RestorePoint:
    """Rebuild a run's state from its latest snapshot and the step deltas after it.

    ``last_step`` is the run record's iteration: when the snapshot is that step, no delta can
    follow it and they are not read. Falls back from an unreadable snapshot (or with
    ``use_snapshot=False``) to replaying every step delta. ``snapshot``: the latest snapshot,
    if already read (with the run record that ``last_step`` comes from).
    """
    base: dict[str, Any] = {}
    step_no, seq = -1, 0
    if not use_snapshot:
        snapshot = None
    elif snapshot is None:
        try:
            snapshot = store.latest_snapshot(run_id)
        except StateCorruptionError:
            snapshot = None
    if snapshot is None:
        steps = store.read_steps(run_id, after_step=-1)
    else:
        base, step_no, seq = snapshot.state, snapshot.step, snapshot.seq
        is_last = last_step is not None and snapshot.step == last_step
        steps = [] if is_last else store.read_steps(run_id, after_step=snapshot.step)
    state = rebuild_state(base, (s.delta for s in steps), copy_base=False)
    if steps:
        step_no, seq = steps[-1].step, steps[-1].seq
    if step_no < 0:
        raise StateCorruptionError(f"run '{run_id}' has no recorded state to resume from")
    text = snapshot.text if snapshot is not None and not steps else None
    return RestorePoint(state, step_no, seq, text)


def load_state(store: RunLog, run_id: str) -> tuple[dict[str, Any], int, int]:
    """Rebuild a run's state: returns (state, last committed step, that step's seq)."""
    point = restore_point(store, run_id)
    return point.state, point.step, point.seq


def session_usage(store: RunLog, session_id: str, *, but: str = "") -> int:
    """Tokens the runs of ``session_id`` (except ``but``) used, from their last usage frames."""
    total = 0
    for run in store.list_runs(session_id=session_id, limit=1_000_000):
        if run.id == but:
            continue
        usage = [f for f in store.read_frames(run.id) if isinstance(f, UsageFrame)]
        if usage:
            total += usage[-1].run_input_tokens + usage[-1].run_output_tokens
    return total
