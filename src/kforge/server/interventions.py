"""``DELETE /runs/{id}``: stop a run and its child runs now and mark them deleted.

Unlike the agent tree's delete intervention (``Runtime.intervene``), which lets an executing
agent finish its step, this cancels a run executing here at once.
"""

from __future__ import annotations

from kforge.errors import InvalidRunStateError
from kforge.frames import Frame, Intervention, StatusChanged
from kforge.runtime.interventions import descendants as tree_descendants
from kforge.runtime.runtime import Runtime
from kforge.store.base import RunRecord, RunStatus

__all__ = ["delete_run", "descendants"]


def descendants(runtime: Runtime, run_id: str, *, limit: int = 1000) -> list[RunRecord]:
    """Every run below ``run_id`` (children, their children, ...), breadth first."""
    return tree_descendants(runtime.store, run_id, limit=limit)


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
