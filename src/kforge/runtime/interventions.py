"""People's interventions on agents: delete, modify, comment (the agent tree's steering).

An intervention is a typed value (``Intervention``): its action is an ``InterventionAction``,
never read from its text, so a comment that says "delete" is a comment. One on a run that no
process executes is committed to its log at once (a delete also ends it). One on a run that is
executing, here or in another process, waits in the store's inbox for that run; the runner
takes it at the run's next step boundary and records it there, so it is a frame of the run
either way, survives a restart and replays.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from kforge.errors import InvalidRunStateError, ValidationError, WriteConflictError
from kforge.frames import Frame, StatusChanged, new_id, stamped
from kforge.frames import Intervention as InterventionFrame
from kforge.store.base import TERMINAL_STATUSES, RunLog, RunRecord, RunStatus
from kforge.store.lease import Lease, owner_alive

if TYPE_CHECKING:
    from kforge.runtime.host import RuntimeHost

__all__ = [
    "ENDING",
    "Intervention",
    "InterventionAction",
    "delete_run",
    "descendants",
    "intervene",
]


class InterventionAction(StrEnum):
    """What a person does to an agent of a tree."""

    DELETE = "delete"
    """Stop it and its subagents at their next step boundary; its parent learns of it."""
    MODIFY = "modify"
    """Give it new instructions: it re-plans from its current step."""
    COMMENT = "comment"
    """Give it a note to see at its next step."""


_ALLOWED = ", ".join(a.value for a in InterventionAction)


@dataclass(frozen=True, slots=True, kw_only=True)
class Intervention:
    """A person's intervention on one agent: ``Intervention(action="comment", content="...")``
    or ``Intervention.comment("...")``; recorded in the run as an ``intervention`` frame."""

    action: InterventionAction
    """Given as the enum or its value; anything else is refused, naming the allowed ones."""
    content: str = ""
    """A modify's new instructions or a comment's text (required for both); a delete's reason."""

    def __post_init__(self) -> None:
        try:
            action = InterventionAction(self.action)
        except ValueError:
            raise ValidationError(
                f"intervention action must be one of {_ALLOWED} (got {self.action!r})"
            ) from None
        text = str(self.content).strip()
        if action is InterventionAction.MODIFY and not text:
            raise ValidationError(
                "a modify intervention needs content: the agent's new instructions"
            )
        if action is InterventionAction.COMMENT and not text:
            raise ValidationError("a comment intervention needs content: the text of the comment")
        object.__setattr__(self, "action", action)
        object.__setattr__(self, "content", text)

    @classmethod
    def delete(cls, reason: str = "") -> Intervention:
        return cls(action=InterventionAction.DELETE, content=reason)

    @classmethod
    def modify(cls, instructions: str) -> Intervention:
        return cls(action=InterventionAction.MODIFY, content=instructions)

    @classmethod
    def comment(cls, text: str) -> Intervention:
        return cls(action=InterventionAction.COMMENT, content=text)


def descendants(store: RunLog, run_id: str, *, limit: int = 10_000) -> list[RunRecord]:
    """Every run below ``run_id`` (children, their children, ...), breadth first."""
    found: list[RunRecord] = []
    frontier = [run_id]
    while frontier and len(found) < limit:
        children = store.list_runs(parent_id=frontier.pop(0), limit=limit)
        found.extend(sorted(children, key=lambda r: r.created_at))
        frontier.extend(c.id for c in children)
    return found[:limit]


async def intervene(
    runtime: RuntimeHost, run_id: str, intervention: Intervention
) -> dict[str, Any]:
    """Apply one intervention to ``run_id`` (a delete to its whole subtree); returns what
    happened: ``{"agent_id", "action", "applied": "now" | "next_step", "intervention_id"}``.
    One that loses a race (the run ended, or a delete came first) is refused and left nowhere."""
    if not isinstance(intervention, Intervention):
        raise TypeError(
            "intervene() takes an Intervention, not "
            f"{type(intervention).__name__} {intervention!r:.40}: pass "
            "Intervention.comment(text), Intervention.modify(instructions) or "
            "Intervention.delete() (from kforge import Intervention)"
        )
    action, content = intervention.action.value, intervention.content
    run = runtime.store.get_run(run_id)
    if run.status in TERMINAL_STATUSES:
        raise InvalidRunStateError(
            f"agent '{run_id}' is {run.status.value}: it has finished, so it takes no "
            "intervention (interventions apply to running, waiting or queued agents)"
        )
    if action == "delete":
        for child in reversed(descendants(runtime.store, run_id)):
            if child.status not in TERMINAL_STATUSES:
                try:
                    await _deliver(runtime, child, "delete", f"parent {run_id} deleted")
                except InvalidRunStateError:
                    pass  # it ended, or another delete reached it, meanwhile
    return await _deliver(runtime, run, action, content)


ENDING = ("delete", "cancel")
"""Interventions that end the run: nothing after one of them applies."""

_CLOSING_WAIT_S = 30.0
"""How long a sender waits at most for a closing run to end or go on (one commit, normally)."""
_CLOSING_POLL_S = 0.005

_DELIVERY_ATTEMPTS = 8
"""How often a delivery re-reads a run whose log moved under it before it leaves the
intervention in the inbox for the run's next step boundary."""


async def _deliver(
    runtime: RuntimeHost, run: RunRecord, action: str, content: str
) -> dict[str, Any]:
    item = InterventionFrame(id=new_id(), action=action, content=content, target_run_id=run.id)
    result = {"agent_id": run.id, "action": action, "intervention_id": item.id}
    since = run.last_seq
    for _ in range(_DELIVERY_ATTEMPTS):
        if runtime.is_active(run.id) or run.is_live():
            break
        try:
            _record_now(runtime, run, item)
            return {**result, "applied": "now"}
        except WriteConflictError:
            # its log moved meanwhile: it started, or another intervention ended it
            run = runtime.store.get_run(run.id)
            if run.status in TERMINAL_STATUSES:
                raise _lost(run, item) from None
    runtime.interventions.put(run.id, item)
    await _confirm(runtime, run.id, item, since)
    return {**result, "applied": "next_step"}


async def _confirm(runtime: RuntimeHost, run_id: str, item: InterventionFrame, since: int) -> None:
    """Make sure the intervention just left in the inbox reaches the run: not behind a delete
    or a cancel still waiting there, nor left behind by a run that ended without recording
    it; else withdraw it and refuse it. The runner takes the inbox in the same order, reads it
    once more between its last step and its end (marked ``closing`` meanwhile) and clears it
    once the run has ended, so both sides agree on who won."""
    inbox = runtime.interventions
    waiting, closing = inbox.waiting(run_id)
    deadline = time.monotonic() + _CLOSING_WAIT_S
    while closing is not None and item.id in [i.id for i in waiting]:
        run = runtime.store.get_run(run_id)
        if not run.is_live() or run.lease_owner != closing or time.monotonic() > deadline:
            break  # the writer that was closing it is gone: a resume takes the inbox
        await asyncio.sleep(_CLOSING_POLL_S)
        waiting, closing = inbox.waiting(run_id)
    ids = [i.id for i in waiting]
    if item.id in ids:
        ender = next((i for i in waiting[: ids.index(item.id)] if i.action in ENDING), None)
        if ender is not None:
            inbox.done(run_id, [item.id])
            being = "deleted" if ender.action == "delete" else "cancelled"
            raise InvalidRunStateError(
                f"agent '{run_id}' is being {being} (that came first), so this {item.action} "
                "was not applied; nothing of it was kept"
            )
        run = runtime.store.get_run(run_id)
        if run.status not in TERMINAL_STATUSES:
            return
        inbox.done(run_id, [item.id])
    # the run took it, or cleared it when it ended: it counts only if the run recorded it
    recorded = runtime.store.read_frames(run_id, after_seq=since)
    if any(isinstance(f, InterventionFrame) and f.id == item.id for f in recorded):
        return
    raise _lost(runtime.store.get_run(run_id), item)


def _lost(run: RunRecord, item: InterventionFrame) -> InvalidRunStateError:
    return InvalidRunStateError(
        f"agent '{run.id}' ended ({run.status.value}) before this {item.action} reached it, "
        "so it was not applied; nothing of it was kept"
    )


def _record_now(
    runtime: RuntimeHost, run: RunRecord, item: InterventionFrame, *, takeover: str | None = None
) -> None:
    """Commit the intervention to a run nobody executes (``takeover``: the lease of a writer
    that is gone); a delete also ends the run."""
    frames: list[Frame] = [stamped(item, run.id, run.last_seq + 1)]
    fields: dict[str, Any] = {}
    if item.action == "delete":
        reason = item.content or "deleted by user"
        frames.append(
            StatusChanged(
                run_id=run.id,
                seq=run.last_seq + 2,
                from_status=run.status.value,
                to_status=RunStatus.DELETED.value,
                reason=reason,
            )
        )
        fields = {"status": RunStatus.DELETED, "pending_interaction": None}
    # with a lease of its own, released at once: refused (RunLeasedError) if a writer has
    # claimed the run since it was read, so an intervention never lands in a live run's log
    lease = Lease(owner=runtime.owner, takeover=takeover, release=True)
    runtime.store.commit(run.id, frames, run_fields=fields or None, lease=lease)
    runtime.bus.publish(run.id, frames)
    if item.action == "delete":
        runtime.bus.idle(run.id)
        runtime.child_ended(run.id)


async def delete_run(runtime: RuntimeHost, run_id: str, reason: str = "deleted by user") -> str:
    """Mark ``run_id`` and every run below it ``deleted`` (their frames stay), finished runs
    included: one executing here is stopped first (its unfinished step is dropped, as a cancel
    drops it), one nobody executes is marked at once, and one another live process executes
    takes the delete at its next step boundary. Returns ``"now"`` when all of them are
    deleted, else ``"next_step"``."""
    run = runtime.store.get_run(run_id)
    if run.status == RunStatus.DELETED:
        raise InvalidRunStateError(f"run '{run_id}' is already deleted")
    outcomes = [
        await _delete_one(runtime, child.id, f"parent {run_id} deleted")
        for child in reversed(descendants(runtime.store, run_id))
        if child.status != RunStatus.DELETED
    ]
    outcomes.append(await _delete_one(runtime, run_id, reason))
    return "now" if all(o == "now" for o in outcomes) else "next_step"


async def _delete_one(runtime: RuntimeHost, run_id: str, reason: str) -> str:
    if runtime.is_active(run_id):
        await runtime.cancel(run_id, reason=reason)
    item = InterventionFrame(id=new_id(), action="delete", content=reason, target_run_id=run_id)
    for _ in range(_DELIVERY_ATTEMPTS):
        run = runtime.store.get_run(run_id)
        if run.status == RunStatus.DELETED:
            return "now"
        holder = run.lease_owner
        if run.is_live() and holder not in (None, runtime.owner) and owner_alive(str(holder)):
            runtime.interventions.put(run_id, item)
            return "next_step"
        try:
            _record_now(runtime, run, item, takeover=holder if run.is_live() else None)
            return "now"
        except WriteConflictError:
            continue  # its log moved meanwhile: read it again
    runtime.interventions.put(run_id, item)
    return "next_step"
