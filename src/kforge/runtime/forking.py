"""Forks: a new run sharing a run's frames up to a seq, and with it its subtree, each child run
forked at the point the parent had reached, so the fork resumes with its subagents' recorded
work (their model replies and tool results) and does none of it again."""

from __future__ import annotations

from typing import Any

from kforge.engine.runner import load_state
from kforge.errors import InvalidRunStateError, RunNotFoundError
from kforge.frames import (
    ErrorFrame,
    Frame,
    InteractionAnswered,
    InteractionRequested,
    StatusChanged,
    ToolCallFrame,
    ToolResultFrame,
    frame_body_json,
    frame_to_dict,
    new_id,
    utc_now,
)
from kforge.store.base import TERMINAL_STATUSES, RunLog, RunRecord, RunStatus

__all__ = ["fork_child", "fork_point", "fork_tree", "lineage"]

_MAX_CHILDREN = 10_000


def fork_tree(store: RunLog, run_id: str, *, at_seq: int | None = None) -> str:
    """Fork ``run_id`` at ``at_seq`` (default: :func:`fork_point`) with its subtree; returns the
    new run's id. Nothing is left behind when any part of it fails."""
    source = store.get_run(run_id)
    upto = fork_point(store, source) if at_seq is None else at_seq
    if upto < 1:
        raise InvalidRunStateError(
            f"cannot fork run '{run_id}' at seq {upto}: a fork keeps at least the first "
            f"frame (seqs 1..{source.last_seq}); fork at 1 to start the run over"
        )
    return _forking(store, source, upto, source.parent_id, child=False)


def fork_child(store: RunLog, child_id: str, parent_id: str) -> str:
    """A child of ``parent_id`` that starts ``child_id`` over (a fork at its first frame): for
    a forked parent whose code starts a child its source started after the fork point."""
    return _forking(store, store.get_run(child_id), 1, parent_id, child=True)


def fork_point(store: RunLog, run: RunRecord) -> int:
    """All of a run's frames, or for a failed run the frames before the failure (its error
    and status change would otherwise be replayed into the step that failed)."""
    if run.status != RunStatus.FAILED:
        return run.last_seq
    tail = store.read_frames(run.id, after_seq=max(0, run.last_seq - 2))
    failure = [f for f in tail if isinstance(f, ErrorFrame | StatusChanged)]
    return failure[0].seq - 1 if failure else run.last_seq


def lineage(store: RunLog, run: RunRecord) -> list[str]:
    """``run``'s id, then the id of the run it was forked from, and so on (as far as they are
    kept)."""
    ids = [run.id]
    while run.forked_from is not None and run.forked_from not in ids:
        ids.append(run.forked_from)
        try:
            run = store.get_run(run.forked_from)
        except RunNotFoundError:
            break
    return ids


def _forking(
    store: RunLog, source: RunRecord, upto: int, parent_id: str | None, *, child: bool
) -> str:
    made: list[str] = []
    try:
        return _fork(store, source, upto, parent_id, made, child=child)
    except BaseException:
        if made:
            store.delete_runs(made)  # no half-made fork is left behind
        raise


def _fork(
    store: RunLog,
    source: RunRecord,
    upto: int,
    parent_id: str | None,
    made: list[str],
    *,
    child: bool,
) -> str:
    now = utc_now()
    new = RunRecord(
        id=new_id(),
        agent_type=source.agent_type,
        status=RunStatus.PAUSED,
        created_at=now,
        updated_at=now,
        input=source.input,
        session_id=source.session_id,
        parent_id=parent_id,
        max_iterations=source.max_iterations,
        pause_reason=f"forked from {source.id} at seq {upto}",
        forked_from=source.id,
        forked_at_seq=upto,
    )
    store.fork_run(source.id, new, upto_seq=upto)
    made.append(new.id)
    if child and upto == source.last_seq and source.status in TERMINAL_STATUSES:
        _end_as(store, new, source)
    else:
        _settle(store, new, upto)
    for below, point in _children_at(store, source, upto):
        _fork(store, below, point, new.id, made, child=True)
    return new.id


def _end_as(store: RunLog, new: RunRecord, source: RunRecord) -> None:
    """A fork of all of an ended run (a subagent that had ended by the fork point) ends as it
    did: its parent has, or will record, that result."""
    _, step_no, _ = load_state(store, new.id)
    fields: dict[str, Any] = {
        "iteration": step_no,
        "status": source.status,
        "pause_reason": None,
        "result": source.result,
        "error": source.error,
    }
    store.commit(new.id, [], run_fields=fields)


def _settle(store: RunLog, new: RunRecord, upto: int) -> None:
    """The fork waits to be resumed: ``paused``, or ``awaiting_user`` on the question it holds
    unanswered."""
    _, step_no, step_seq = load_state(store, new.id)
    tail = store.read_frames(new.id, after_seq=step_seq)
    pending = [f for f in tail if isinstance(f, InteractionRequested)]
    answered = {f.interaction_id for f in tail if isinstance(f, InteractionAnswered)}
    fields: dict[str, Any] = {"iteration": step_no}
    if pending and pending[-1].interaction_id not in answered:
        fields.update(
            status=RunStatus.AWAITING_USER, pending_interaction=frame_to_dict(pending[-1])
        )
    frame = StatusChanged(
        run_id=new.id,
        seq=upto + 1,
        from_status=None,
        to_status=(fields.get("status") or RunStatus.PAUSED).value,
        reason=new.pause_reason or "",
    )
    store.commit(new.id, [frame], run_fields=fields)


def _children_at(store: RunLog, source: RunRecord, upto: int) -> list[tuple[RunRecord, int]]:
    """The children ``source`` had started by its frame ``upto`` (or that its frames up to there
    name, started right after), each with the seq it had reached by then."""
    frames = store.read_frames(source.id, limit=upto)
    if not frames:
        return []
    at = frames[-1].created_at
    named = "\n".join(frame_body_json(f) for f in frames)
    children = sorted(
        store.list_runs(parent_id=source.id, limit=_MAX_CHILDREN), key=lambda r: r.created_at
    )
    return [
        (child, _reached(store.read_frames(child.id), at))
        for child in children
        if child.created_at <= at or any(i in named for i in lineage(store, child))
    ]


def _reached(frames: list[Frame], at: Any) -> int:
    """The last seq recorded by ``at``; a tool call then under way is taken with its result, so
    the fork neither runs it again nor records its outcome as unknown."""
    point = max([f.seq for f in frames if f.created_at <= at], default=1)
    calls = {f.call_id for f in frames[:point] if isinstance(f, ToolCallFrame)}
    open_calls = calls - {f.call_id for f in frames[:point] if isinstance(f, ToolResultFrame)}
    results = [
        f.seq for f in frames[point:] if isinstance(f, ToolResultFrame) and f.call_id in open_calls
    ]
    return max([point, *results])
