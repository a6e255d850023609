"""Deleting runs and recording people's interventions on them, over the runtime.

The runtime has no delete or intervention call yet; these are the thinnest versions: a run that
is executing in this process is cancelled first, then its record is changed in one commit.
"""

from __future__ import annotations

from kforge.errors import InvalidRunStateError
from kforge.frames import Frame, Intervention, StatusChanged
from kforge.runtime.runtime import Runtime
from kforge.store.base import RunRecord, RunStatus

__all__ = ["delete_run", "descendants", "record_intervention"]


def descendants(runtime: Runtime, run_id: str, *, limit: int = 1000) -> list[RunRecord]:
    """Every run below ``run_id`` (children, their children, ...), breadth first."""
    found: list[RunRecord] = []
    frontier = [run_id]
    while frontier and len(found) < limit:
        children = runtime.store.list_runs(parent_id=frontier.pop(0), limit=limit)
        found.extend(children)
        frontier.extend(c.id for c in children)
    return found[:limit]


async def delete_run(
    runtime: Runtime, run_id: str, *, reason: str = "deleted by user"
) -> RunRecord:
    """Stop the run (and the runs below it) and mark it ``deleted``; its frames stay."""
    run = runtime.get_run(run_id)
    if run.status == RunStatus.DELETED:
        raise InvalidRunStateError(f"run '{run_id}' is already deleted")
    for child in reversed(descendants(runtime, run_id)):
        if child.status != RunStatus.DELETED:
            await _delete_one(runtime, child.id, f"parent {run_id} deleted")
    await _delete_one(runtime, run_id, reason)
    return runtime.get_run(run_id)


async def _delete_one(runtime: Runtime, run_id: str, reason: str) -> None:
    if runtime.is_active(run_id):
        await runtime.cancel(run_id, reason=reason)
    run = runtime.get_run(run_id)
    frames: list[Frame] = [
        Intervention(run_id=run_id, seq=run.last_seq + 1, action="delete", content=reason),
        StatusChanged(
            run_id=run_id,
            seq=run.last_seq + 2,
            from_status=run.status.value,
            to_status=RunStatus.DELETED.value,
            reason=reason,
        ),
    ]
    runtime.store.commit(
        run_id, frames, run_fields={"status": RunStatus.DELETED, "pending_interaction": None}
    )
    runtime.bus.publish(run_id, frames)
    runtime.bus.idle(run_id)


def record_intervention(runtime: Runtime, run_id: str, action: str, content: str) -> Frame:
    """A ``modify`` or ``comment`` recorded on a run that is not executing right now."""
    if runtime.is_active(run_id):
        raise InvalidRunStateError(
            f"run '{run_id}' is executing; a {action} can be recorded once it pauses, waits for "
            "an answer or ends (or delete it to stop it now)"
        )
    run = runtime.get_run(run_id)
    frame = Intervention(run_id=run_id, seq=run.last_seq + 1, action=action, content=content)
    runtime.store.commit(run_id, [frame])
    runtime.bus.publish(run_id, [frame])
    return frame
