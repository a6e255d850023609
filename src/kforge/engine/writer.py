"""What a stretch writes and who may write it: each commit of the run's frames, state and
fields, the lease that keeps other writers out, and the opening group-committed with the
stretch's first durable point."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from kforge.engine.inbox import ENDING, InterventionSource
from kforge.engine.run_context import RunContext
from kforge.errors import RunLeasedError, WriteConflictError
from kforge.frames import Frame, Intervention, stamped
from kforge.store.base import TERMINAL_STATUSES, RunLog, RunRecord, Snapshot
from kforge.store.lease import Lease

if TYPE_CHECKING:
    from kforge.telemetry import Telemetry

__all__ = ["StretchWriter"]

_RESTARTS = 16
"""How often a stretch starts over when interventions keep landing before its opening."""


class StretchWriter:
    """The writing side of a ``StepRunner``: once another writer holds the run (its lease, or
    a frame committed at the same seq), this stretch writes nothing more."""

    def __init__(
        self,
        store: RunLog,
        run: RunRecord,
        *,
        on_commit: Callable[[str, list[Frame]], None] | None,
        opening: list[Frame] | None,
        lease: Lease | None,
        telemetry: Telemetry | None,
        interventions: InterventionSource | None,
        snapshot: Snapshot | None,
    ) -> None:
        self.store = store
        self.run = run
        self._snapshot = snapshot
        """The run's snapshot read with its record (a resume's first read), taken once."""
        self.telemetry = telemetry
        """Spans and metrics of this stretch (None: off, and nothing is measured)."""
        self.interventions = interventions
        """Interventions left for this run while it executes, taken at each step boundary."""
        self._unacked: list[str] = []
        """Inbox interventions recorded in frames not committed yet (acknowledged on commit)."""
        self._restarts = 0
        self.on_commit = on_commit
        self.opening = list(opening or [])
        """Frames the stretch commits first, with its "running" status (e.g. the answer)."""
        self._opening_fields: dict[str, Any] | None = None
        """The run fields of the opening while it is not committed yet."""
        self.lazy_opening = False
        """Whether the opening may go with a repeatable commit (a model's reply), which does
        not wait for the disk: true when nobody asked to see it durable at once, or when it
        holds no answer (a worker's claim of a queued run). ``opened`` is then done by the
        next commit that waits for the disk, which makes the opening durable too."""
        self._opening_unflushed = False
        """The opening is committed, not durable yet: the next commit that waits makes it so."""
        self.lease = lease
        """Claimed with the opening, renewed by every commit and the heartbeat, released by the
        commit that ends the stretch."""
        self.opened: asyncio.Future[None] | None = None
        """Done once the opening (the answer, the "running" status, the lease) is durable, or
        with the error that kept it from being so."""
        self._lost: WriteConflictError | None = None
        """Set when another writer holds the run: from then on this stretch writes nothing."""
        self._renew_after = 0.0
        """When a step commit next carries the lease (a third of its time to live after the last)."""
        self._task: asyncio.Task[Any] | None = None

    def _commit(
        self, frames: list[Frame], *, final: bool = False, repeatable: bool = False, **kwargs: Any
    ) -> None:
        if self._lost is not None:
            raise self._lost
        opening = self._opening_fields
        # interventions about to leave the inbox are not work a re-executed step does again,
        # nor is an opening someone waits to see durable (an answer): those commits wait for
        # the disk. An opening that may go lazily is lost only with the commit that carries
        # it (the run is then as it was before the stretch), never a later commit without it.
        lazy = repeatable and not self._unacked and (opening is None or self.lazy_opening)
        if lazy:
            kwargs["repeatable"] = True
        if opening is not None:
            kwargs["run_fields"] = {**opening, **(kwargs.get("run_fields") or {})}
        lease = self.lease
        if lease is not None:
            if final:
                lease = Lease(owner=lease.owner, takeover=lease.takeover, release=True)
            elif frames and opening is None and time.monotonic() < self._renew_after:
                # the log position already refuses a second writer's frames, and the heartbeat
                # keeps the lease: renewing it with every step would rewrite it for nothing
                lease = None
        try:
            self.store.commit(self.run.id, frames, lease=lease, **kwargs)
        except WriteConflictError as exc:
            self._lost = exc
            if opening is None or isinstance(exc, RunLeasedError):
                self._set_opened(exc)  # else the stretch may start over (_start_over)
            raise
        if self._unacked and self.interventions is not None:
            committed = {f.id for f in frames}
            acked = [i for i in self._unacked if i in committed]
            if acked:
                self._unacked = [i for i in self._unacked if i not in committed]
                self.interventions.done(self.run.id, acked)
        # any other failure of the opening is retried by the step's next commit; the stretch's
        # end reports it to whoever waits for the opening if none succeeds
        if lease is not None:
            self._renew_after = time.monotonic() + lease.ttl_s / 3
        if opening is not None:
            self._opening_fields = None
            self._opening_unflushed = lazy
            if not lazy:
                self._set_opened(None)
        elif self._opening_unflushed and not lazy:
            self._opening_unflushed = False
            self._set_opened(None)
        if frames and self.on_commit is not None:
            self.on_commit(self.run.id, frames)
        if self.telemetry is not None:
            self.telemetry.committed(self.run.id, frames, step_done="step" in kwargs)

    def _start_over(self, exc: WriteConflictError) -> bool:
        """Whether a stretch whose opening lost to interventions recorded meanwhile (a person
        commented on the run while it was being resumed) starts over from the log as it is
        now: it wrote nothing yet, and what it lost to is not another writer."""
        if self._opening_fields is None or isinstance(exc, RunLeasedError):
            return False
        if self._restarts >= _RESTARTS:
            return False
        run = self.store.get_run(self.run.id)
        added = self.store.read_frames(self.run.id, after_seq=self.run.last_seq)
        steering = [f for f in added if isinstance(f, Intervention) and f.action not in ENDING]
        if run.status in TERMINAL_STATUSES or not added or len(steering) != len(added):
            return False
        if self.lease is not None:
            # claim the run before the work of starting over, so that what people send from
            # now on waits in the inbox instead of racing the opening again
            try:
                self.store.commit(run.id, [], lease=self.lease)
            except WriteConflictError:
                return False
        self._restarts += 1
        self.run, self._lost, self._snapshot, self._unacked = run, None, None, []
        first = run.last_seq + 1
        self.opening = [stamped(f, run.id, first + i) for i, f in enumerate(self.opening)]
        return True

    def _set_opened(self, error: BaseException | None) -> None:
        if self.opened is None or self.opened.done():
            return
        if error is None:
            self.opened.set_result(None)
        else:
            self.opened.set_exception(error)

    def _commit_opening(self, ctx: RunContext) -> None:
        """Commit the opening if no step commit has taken it along yet (runs as soon as the
        first step waits for anything)."""
        if self._opening_fields is None:
            return
        frames = ctx.take_pending()
        try:
            self._commit(frames)
        except WriteConflictError:
            # another writer holds the run: stop the step before it acts on anything
            if self._task is not None:
                self._task.cancel()
        except Exception:  # the step's next commit retries and reports it
            ctx.requeue(frames)

    def _give_up_lease(self) -> None:
        """A stretch that ends without recording how (an error it could not commit) no longer
        writes: the run is interrupted, not live, and may be resumed at once."""
        if self.lease is None or self._lost is not None:
            return
        try:
            self.store.renew_lease(
                self.run.id, Lease(owner=self.lease.owner, ttl_s=0, release=True)
            )
        except Exception:
            pass  # the lease lapses on its own

    async def _heartbeat(self, lease: Lease) -> None:
        """Renew the lease while a long step commits nothing; stop the step if it was lost."""
        while True:
            await asyncio.sleep(lease.ttl_s / 3)
            if self._opening_fields is None and not self.store.renew_lease(self.run.id, lease):
                self._lost = WriteConflictError(
                    f"run '{self.run.id}': the lease of {lease.owner} lapsed and another "
                    "writer took the run over; this stretch stopped without writing"
                )
                if self._task is not None:
                    self._task.cancel()
                return
