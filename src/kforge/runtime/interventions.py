"""People's interventions on agents: delete, modify, comment (the agent tree's steering).

An intervention on a run that no process executes is committed to its log at once (a delete
also ends it). One on a run that is executing, here or in another process, waits in the
store's inbox for that run; the runner takes it at the run's next step boundary and records
it there, so it is a frame of the run either way, survives a restart and replays.
"""

from __future__ import annotations

import asyncio
import time
from typing import TYPE_CHECKING, Any

from kforge.errors import InvalidRunStateError, ValidationError, WriteConflictError
from kforge.frames import Frame, Intervention, StatusChanged, new_id, stamped
from kforge.store.base import TERMINAL_STATUSES, RunRecord, RunStatus, Store
from kforge.store.lease import Lease

if TYPE_CHECKING:
    from kforge.runtime.host import RuntimeHost

__all__ = [
    "ACTIONS",
    "ENDING",
    "check_intervention",
    "descendants",
    "intervene",
    "parse_intervention",
]

ACTIONS = ("delete", "modify", "comment")
_STATUSES = ("running", "modified", "deleted")


def check_intervention(action: str, content: str = "") -> tuple[str, str]:
    """A typed intervention as (action, content), checked: the action is one of ``ACTIONS``
    and never read from the content; a modify or a comment needs its text."""
    if action not in ACTIONS:
        raise ValidationError(
            f"intervention action must be one of {', '.join(ACTIONS)} (got {action!r})"
        )
    text = content.strip()
    if action == "modify" and not text:
        raise ValidationError("a modify intervention needs content: the agent's new instructions")
    if action == "comment" and not text:
        raise ValidationError("a comment intervention needs content: the text of the comment")
    return action, text


def parse_intervention(
    user_comment: str | None, user_content: str | None, status: str | None
) -> tuple[str, str]:
    """The tree specification's overrides as (action, content): there ``user_comment`` is
    ``delete``, ``modify`` (``user_content`` holds the new instructions) or any other text, a
    comment; ``status`` ``deleted`` or ``modified`` says the same as the comment would. Only
    this shape reads an action from a comment's words; a comment whose text is one of them
    is sent as ``check_intervention("comment", text)``."""
    comment = (user_comment or "").strip()
    content = (user_content or "").strip()
    if status is not None and status not in _STATUSES:
        raise ValidationError(
            f"intervention status must be one of {', '.join(_STATUSES)} (got {status!r}); "
            "the other states are the agent's own"
        )
    if comment == "delete" or status == "deleted":
        return "delete", content
    if comment == "modify" or status == "modified":
        if not content:
            raise ValidationError(
                "a modify intervention needs user_content: the agent's new instructions"
            )
        return "modify", content
    if comment and comment != "unchanged":
        return "comment", comment
    if content:
        return "modify", content
    raise ValidationError(
        "an intervention needs user_comment ('delete', 'modify' with user_content, or the "
        "text of a comment)"
    )


def descendants(store: Store, run_id: str, *, limit: int = 10_000) -> list[RunRecord]:
    """Every run below ``run_id`` (children, their children, ...), breadth first."""
    found: list[RunRecord] = []
    frontier = [run_id]
    while frontier and len(found) < limit:
        children = store.list_runs(parent_id=frontier.pop(0), limit=limit)
        found.extend(sorted(children, key=lambda r: r.created_at))
        frontier.extend(c.id for c in children)
    return found[:limit]


async def intervene(runtime: RuntimeHost, run_id: str, action: str, content: str) -> dict[str, Any]:
    """Apply one typed intervention to ``run_id`` (a delete to its whole subtree); returns what
    happened: ``{"agent_id", "action", "applied": "now" | "next_step", "intervention_id"}``.
    One that loses a race (the run ended, or a delete came first) is refused and left nowhere."""
    action, content = check_intervention(action, content)
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
    item = Intervention(id=new_id(), action=action, content=content, target_run_id=run.id)
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


async def _confirm(runtime: RuntimeHost, run_id: str, item: Intervention, since: int) -> None:
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
    if any(isinstance(f, Intervention) and f.id == item.id for f in recorded):
        return
    raise _lost(runtime.store.get_run(run_id), item)


def _lost(run: RunRecord, item: Intervention) -> InvalidRunStateError:
    return InvalidRunStateError(
        f"agent '{run.id}' ended ({run.status.value}) before this {item.action} reached it, "
        "so it was not applied; nothing of it was kept"
    )


def _record_now(runtime: RuntimeHost, run: RunRecord, item: Intervention) -> None:
    """Commit the intervention to a run nobody executes; a delete also ends the run."""
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
    lease = Lease(owner=runtime.owner, release=True)
    runtime.store.commit(run.id, frames, run_fields=fields or None, lease=lease)
    runtime.bus.publish(run.id, frames)
    if item.action == "delete":
        runtime.bus.idle(run.id)
        runtime.child_ended(run.id)
