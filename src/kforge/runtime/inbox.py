"""The intervention inbox: interventions for executing runs, kept in the store so that any
process can leave one and the run's writer takes it at its next step boundary."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Collection

from kforge.frames import Intervention, utc_now
from kforge.store.base import RunLog

__all__ = ["POLL_S", "InterventionInbox"]

_NAMESPACE = "interventions/"
_CLOSING = "~closing"
"""The inbox entry that says a run is about to end (see ``InterventionInbox.closing``)."""

POLL_S = 0.25
"""How often an executing run looks for interventions other processes left: a person's
intervention waits at most this long beyond the run's next step boundary."""


class InterventionInbox:
    """Interventions for executing runs, kept in the store so any process can leave one."""

    def __init__(self, store: RunLog, *, poll_s: float = POLL_S) -> None:
        self._store = store
        self._poll_s = poll_s
        self._read_at: dict[str, float] = {}
        self._left_here: set[str] = set()
        self._waiting: dict[str, set[asyncio.Event]] = {}

    def put(self, run_id: str, item: Intervention) -> None:
        value = {"action": item.action, "content": item.content, "at": utc_now().isoformat()}
        self._store.put_docs(_NAMESPACE + run_id, {item.id: value})
        self._left_here.add(run_id)
        for event in self._waiting.get(run_id, ()):
            event.set()

    async def arrival(self, run_id: str, *, known: Collection[str] = ()) -> None:
        """Return once an intervention other than ``known`` waits for ``run_id``: at once for
        one left through this inbox, within ``poll_s`` for one another process left. The next
        ``take`` then reads it, so a run waiting inside a step (a parent on its subagents) can
        end the step and take it at the boundary."""
        event = asyncio.Event()
        self._waiting.setdefault(run_id, set()).add(event)
        try:
            while run_id not in self._left_here:
                if any(item.id not in known for item in self.pending(run_id)):
                    self._left_here.add(run_id)
                    return
                try:
                    async with asyncio.timeout(self._poll_s):
                        await event.wait()
                except TimeoutError:
                    pass
        finally:
            waiting = self._waiting.get(run_id, set())
            waiting.discard(event)
            if not waiting:
                self._waiting.pop(run_id, None)

    def take(self, run_id: str, *, fresh: bool = False) -> list[Intervention]:
        """What waits for ``run_id``, for the run itself at a step boundary: as :meth:`pending`,
        except that the store (where other processes leave theirs) is read at most every
        ``poll_s`` per run, not at every step of every run, unless ``fresh``; one left through
        this inbox is seen at once."""
        now = time.monotonic()
        throttled = now - self._read_at.get(run_id, -1e9) < self._poll_s
        if not fresh and run_id not in self._left_here and throttled:
            return []
        self._read_at[run_id] = now
        self._left_here.discard(run_id)
        return self.pending(run_id)

    def pending(self, run_id: str) -> list[Intervention]:
        """What waits for ``run_id``, oldest first, as frames to record (left in the inbox
        until ``done``)."""
        return self.waiting(run_id)[0]

    def waiting(self, run_id: str) -> tuple[list[Intervention], str | None]:
        """What waits for ``run_id``, and who is ``closing`` the run, if anyone."""
        docs = self._store.get_docs(_NAMESPACE + run_id)
        marker = docs.pop(_CLOSING, None)
        closing = None if marker is None else str(marker.get("by", ""))
        ordered = sorted(docs.items(), key=lambda kv: (str(kv[1].get("at", "")), kv[0]))
        items = [
            Intervention(
                id=key,
                action=str(v.get("action", "")),
                content=str(v.get("content", "")),
                target_run_id=run_id,
            )
            for key, v in ordered
        ]
        return items, closing

    def closing(self, run_id: str, owner: str) -> None:
        """Mark the run as about to end: its last step is done and its writer (``owner``, of
        its lease) reads the inbox once more before it commits the end. Until the end (or
        ``reopened``) a sender waits to learn whether that read took its intervention."""
        marker = {"by": owner, "at": utc_now().isoformat()}
        self._store.put_docs(_NAMESPACE + run_id, {_CLOSING: marker})

    def reopened(self, run_id: str) -> None:
        """The closing run took interventions and goes on."""
        self._store.delete_docs(_NAMESPACE + run_id, [_CLOSING])

    def done(self, run_id: str, ids: list[str]) -> None:
        if ids:
            self._store.delete_docs(_NAMESPACE + run_id, ids)

    def forget(self, run_id: str) -> None:
        """Drop whatever still waits for ``run_id`` once it has ended: nothing will take it."""
        self._store.delete_docs(_NAMESPACE + run_id)
        self._left_here.discard(run_id)
        self._read_at.pop(run_id, None)
