"""Recovery at start, as DBOS recovers workflows: the runs a process left unfinished when it
died (or closed its runtime mid-run) continue in the process that starts next.

A run is taken only when nobody may still be writing it: its lease expired, or it names a
process of this host that no longer exists. A run whose lease is live elsewhere is never taken.
Each recovered run gets a ``status.changed`` frame that says what happened, then resumes at its
last committed step like any resume (recorded model replies and tool results are not asked for
again).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from kforge.engine.run_context import SUBAGENTS_REASON
from kforge.errors import ForgeError
from kforge.frames import StatusChanged
from kforge.store.base import TERMINAL_STATUSES, RunRecord, RunStatus
from kforge.store.lease import Lease, owner_alive

if TYPE_CHECKING:
    from kforge.runtime.host import RuntimeHost

__all__ = ["RECOVERED", "SHUT_DOWN_REASON", "Recovery", "recover_runs", "why_recover"]

log = logging.getLogger("kforge.recovery")

RECOVERED = "recovered at start"
"""How the reason of a recovery's ``status.changed`` frame begins."""
SHUT_DOWN_REASON = "the process that ran it closed its runtime"
"""The pause reason ``Runtime.aclose`` gives the runs it interrupts."""
_SCAN = 10_000


@dataclass(frozen=True, slots=True, kw_only=True)
class Recovery:
    """What recovery did at start."""

    resumed: tuple[str, ...] = ()
    """Runs taken up again here (or, with the dbos executor, queued for a worker)."""
    skipped: tuple[tuple[str, str], ...] = ()
    """Runs that needed recovery but were left as they are, each with why."""


def why_recover(run: RunRecord, *, now: float, lease_ttl_s: float) -> str | None:
    """Why ``run`` needs recovery (the reason its frame gives), or None when it does not: it
    ended, waits for a person, or a live writer may still hold it."""
    if run.status == RunStatus.RUNNING:
        if run.is_live():
            return None
        owner = run.lease_owner
        if owner is None:
            return "nothing held it"
        if not owner_alive(owner):
            return f"the process that ran it ({owner}) is gone"
        return f"the lease of the process that ran it ({owner}) expired"
    if run.status == RunStatus.PENDING:
        # created, then its process died before it began: nothing has claimed it for a while
        if run.is_live() or run.lease_owner is not None:
            return None
        if now - run.updated_at.timestamp() < lease_ttl_s:
            return None
        return "the process that created it stopped before it began"
    if run.status == RunStatus.PAUSED and run.pause_reason == SHUT_DOWN_REASON:
        return "the process that ran it stopped mid-run"
    return None


async def recover_runs(
    runtime: RuntimeHost, *, leave: Callable[[RunRecord], bool] | None = None
) -> Recovery:
    """Resume every run a gone process left unfinished (see the module's docstring); a run
    paused for its subagents whose subagents have all ended continues too. Runs ``leave``
    picks are someone else's to recover (a worker leaves the stretches DBOS recovers)."""
    now = time.time()
    resumed: list[str] = []
    skipped: list[tuple[str, str]] = []
    candidates: list[RunRecord] = []
    for status in (RunStatus.RUNNING, RunStatus.PENDING, RunStatus.PAUSED):
        try:
            candidates += runtime.store.list_runs(status=status, limit=_SCAN)
        except ForgeError as exc:  # a damaged record must not keep a server from starting
            log.warning("could not look for %s runs to recover: %s", status.value, exc)
    for run in candidates:
        if runtime.is_active(run.id) or (leave is not None and leave(run)):
            continue
        if _children_ended(runtime, run):
            why = "its subagents ended while nothing ran it"
        else:
            why = why_recover(run, now=now, lease_ttl_s=runtime.lease_ttl_s) or ""
        if not why:
            continue
        if run.agent_type not in runtime.registry:
            skipped.append((run.id, f"agent '{run.agent_type}' is not registered here"))
            continue
        try:
            _mark(runtime, run, why)
            await runtime.resume(run.id)
        except ForgeError as exc:  # another process took it first, or it cannot continue
            skipped.append((run.id, str(exc)))
            continue
        resumed.append(run.id)
    for run_id, why in skipped:
        log.warning("run %s was not recovered: %s", run_id, why)
    if resumed:
        log.info("recovered %d run(s): %s", len(resumed), ", ".join(resumed))
    return Recovery(resumed=tuple(resumed), skipped=tuple(skipped))


def _children_ended(runtime: RuntimeHost, run: RunRecord) -> bool:
    if run.status != RunStatus.PAUSED or run.pause_reason != SUBAGENTS_REASON:
        return False
    try:
        children = runtime.store.list_runs(parent_id=run.id, limit=_SCAN)
    except ForgeError:
        return False  # a child it cannot read: a person looks at it (kforge runs show)
    return bool(children) and all(c.status in TERMINAL_STATUSES for c in children)


def _mark(runtime: RuntimeHost, run: RunRecord, why: str) -> None:
    """Record the recovery in the run: it is paused, with why, and taken from its gone
    holder in the same commit (a second process recovering it conflicts here)."""
    frame = StatusChanged(
        run_id=run.id,
        seq=run.last_seq + 1,
        from_status=run.status.value,
        to_status=RunStatus.PAUSED.value,
        reason=f"{RECOVERED} by {runtime.owner}: {why}",
    )
    holder = run.lease_owner
    # only a holder known to be gone is replaced outright; an expired lease is checked again by
    # the store in the commit, so a holder that renewed meanwhile keeps its run
    gone = holder is not None and holder != runtime.owner and not owner_alive(holder)
    takeover = holder if gone else None
    runtime.store.commit(
        run.id,
        [frame],
        run_fields={"status": RunStatus.PAUSED, "pause_reason": frame.reason},
        lease=Lease(owner=runtime.owner, takeover=takeover, release=True),
    )
    runtime.bus.publish(run.id, [frame])
