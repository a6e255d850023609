"""The step runner: drives one stretch of a run (start or resume, until it pauses or ends).

After every step, that step's frames, its state delta and the run's new fields commit in one
transaction. A stretch begins by rebuilding the state from the latest snapshot plus later deltas
(or, if the snapshot is unreadable, from the deltas alone) and re-executes an unfinished step
against the frames it already recorded.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Collection
from typing import TYPE_CHECKING, Any, Protocol

from kforge.engine.agent import StepAgent, StepOutcome
from kforge.engine.limits import RunLimits
from kforge.engine.restore import RestorePoint, load_state, restore_point, session_usage
from kforge.engine.run_context import Answerer, ModelOutage, Parked, RunContext, Suspended
from kforge.engine.services import Services
from kforge.engine.state import Baseline, diff_state
from kforge.errors import (
    InvalidRunStateError,
    LimitExceededError,
    ModelUnavailableError,
    RunLeasedError,
    StateCorruptionError,
    WriteConflictError,
)
from kforge.frames import (
    Complete,
    ErrorFrame,
    Frame,
    InteractionRequested,
    Intervention,
    LimitReached,
    StatusChanged,
    TokenDelta,
    frame_to_dict,
    stamped,
)
from kforge.llm.base import Model
from kforge.llm.types import Usage
from kforge.memory.tokens import PriceTable, RunBudget
from kforge.store.base import (
    TERMINAL_STATUSES,
    RunRecord,
    RunStatus,
    Snapshot,
    StepRecord,
    Store,
)
from kforge.store.lease import Lease

if TYPE_CHECKING:
    from kforge.telemetry import Telemetry

__all__ = [
    "JOURNAL_EXCLUDED",
    "MODEL_UNAVAILABLE",
    "SNAPSHOT_EVERY",
    "InterventionSource",
    "RestorePoint",
    "StepRunner",
    "load_state",
    "restore_point",
    "session_usage",
]

MODEL_UNAVAILABLE = "model_unavailable"
"""The pause reason of a run whose model stayed unreachable through its retries."""

SNAPSHOT_EVERY = 64
"""Steps between periodic snapshots (one more is written at every pause and at the end)."""

JOURNAL_EXCLUDED = frozenset({"status.changed", "limit.reached", "complete", "intervention"})
"""Frame types the runner writes itself; never replayed into agent code."""


class InterventionSource(Protocol):
    """Where interventions on executing runs wait for the run's next step boundary."""

    def take(self, run_id: str, *, fresh: bool = False) -> list[Intervention]:
        """What waits for ``run_id``, oldest first; it stays until ``done``. ``fresh``: read
        now, whenever it was last read."""
        ...

    def closing(self, run_id: str, owner: str) -> None:
        """The run's last step is done (``owner``: its writer): senders wait for its end or
        ``reopened``."""
        ...

    def reopened(self, run_id: str) -> None:
        """The closing run took interventions and goes on."""
        ...

    def done(self, run_id: str, ids: list[str]) -> None:
        """Forget interventions now recorded in the run's log."""
        ...

    async def arrival(self, run_id: str, *, known: Collection[str] = ()) -> None:
        """Return once an intervention other than ``known`` waits for ``run_id``."""
        ...

    def forget(self, run_id: str) -> None:
        """Drop whatever still waits for a run that has ended (nothing will take it)."""
        ...


_ENDING = ("delete", "cancel")
"""Interventions that end the run: nothing after one of them is applied."""

_RESTARTS = 16
"""How often a stretch starts over when interventions keep landing before its opening."""

_DELIVERED_KEPT = 64
"""Ids of the latest inbox interventions a run's state remembers, so none applies twice."""


_DAMAGE = (StateCorruptionError, KeyError, TypeError, ValueError, AttributeError, IndexError)
"""What restoring from damaged records raises (agents' restore_state included)."""


def printable(text: str) -> str:
    """``text`` with lone surrogates escaped, so that an error quoting bad input can be stored."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


class StepRunner:
    """Runs ``agent`` for ``run`` until it completes, fails, pauses or waits for a person."""

    def __init__(
        self,
        store: Store,
        run: RunRecord,
        agent: StepAgent,
        model: Model,
        *,
        limits: RunLimits,
        services: Services | None = None,
        on_commit: Callable[[str, list[Frame]], None] | None = None,
        opening: list[Frame] | None = None,
        question: InteractionRequested | None = None,
        on_delta: Callable[[TokenDelta], None] | None = None,
        lease: Lease | None = None,
        prices: PriceTable | None = None,
        telemetry: Telemetry | None = None,
        interventions: InterventionSource | None = None,
        answerer: Answerer | None = None,
        snapshot: Snapshot | None = None,
    ) -> None:
        self.store = store
        self._snapshot = snapshot
        """The run's snapshot read with its record (a resume's first read), taken once."""
        self.telemetry = telemetry
        """Spans and metrics of this stretch (None: off, and nothing is measured)."""
        self.interventions = interventions
        """Interventions left for this run while it executes, taken at each step boundary."""
        self.answerer = answerer
        """Answers questions inline (the query-user handler), else they park the run."""
        self._delivered: list[str] = []
        self._unacked: list[str] = []
        self._tail_interventions: list[Intervention] = []
        self._restarts = 0
        self.prices = prices or PriceTable()
        """What model calls cost (the config file's ``[prices]``)."""
        self.run = run
        self.agent = agent
        self.model = model
        self.limits = limits
        self.services = services or Services()
        self.on_commit = on_commit
        self.opening = list(opening or [])
        """Frames the stretch commits first, with its "running" status (e.g. the answer)."""
        self.question = question
        """The question the run waits on, decoded from its record (when it waits on one)."""
        self.on_delta = on_delta
        """Where streamed model text goes as it is generated (live subscribers)."""
        self._opening_fields: dict[str, Any] | None = None
        """The run fields of the opening while it is not committed yet."""
        self.lease = lease
        """Claimed with the opening, renewed by every commit and the heartbeat, released by the
        commit that ends the stretch."""
        self.opened: asyncio.Future[None] | None = None
        """Done once the opening (the answer, the "running" status, the lease) is durable, or
        with the error that kept it from being so."""
        self._lost: WriteConflictError | None = None
        self._renew_after = 0.0
        """When a step commit next carries the lease (a third of its time to live after the last)."""
        """Set when another writer holds the run: from then on this stretch writes nothing."""
        self._task: asyncio.Task[Any] | None = None
        self.interrupted: str | None = None
        """Set before cancelling the stretch to pause the run with this reason instead."""

    def _commit(self, frames: list[Frame], *, final: bool = False, **kwargs: Any) -> None:
        if self._lost is not None:
            raise self._lost
        opening = self._opening_fields
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
        steering = [f for f in added if isinstance(f, Intervention) and f.action not in _ENDING]
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

    async def run_stretch(self) -> RunStatus:
        loop = asyncio.get_running_loop()
        self._task = asyncio.current_task()
        if self.opened is None:
            self.opened = loop.create_future()
        # nobody need await it: an unread failure is still reported by wait()
        self.opened.add_done_callback(lambda f: f.cancelled() or f.exception())
        heartbeat = (
            loop.create_task(self._heartbeat(self.lease)) if self.lease is not None else None
        )
        ended: BaseException | None = None
        telemetry = self.telemetry
        if telemetry is not None:
            telemetry.stretch_started(self.run.id, self.run.agent_type, self.run.parent_id)
        status: RunStatus | None = None
        try:
            while True:
                try:
                    status = await self._stretch()
                    break
                except WriteConflictError as exc:
                    if not self._start_over(exc):
                        raise
            if status in TERMINAL_STATUSES and self.interventions is not None:
                # what arrived too late (after a delete, or during the last step) is refused
                # by its sender; the inbox keeps nothing for a run that takes nothing more
                self.interventions.forget(self.run.id)
            return status
        except asyncio.CancelledError:
            if self._lost is not None:
                raise self._lost from None
            ended = InvalidRunStateError(
                f"run '{self.run.id}': the stretch was cancelled before its opening was committed"
            )
            self._give_up_lease()
            raise
        except BaseException as exc:
            ended = exc
            self._give_up_lease()
            raise
        finally:
            if heartbeat is not None:
                heartbeat.cancel()
            if telemetry is not None:
                telemetry.stretch_ended(
                    self.run.id, status.value if status is not None else "interrupted", ended
                )
            self._set_opened(
                self._lost
                or ended
                or InvalidRunStateError(
                    f"run '{self.run.id}': the stretch ended before its opening was committed"
                )
            )

    async def _stretch(self) -> RunStatus:
        run_id = self.run.id
        try:
            try:
                known, self._snapshot = self._snapshot, None
                point = restore_point(
                    self.store, run_id, last_step=self.run.iteration, snapshot=known
                )
                self.agent.restore_state(point.state["agent"])
            except _DAMAGE:
                # whatever is wrong with the snapshot, the step deltas may still rebuild it
                point = restore_point(self.store, run_id, use_snapshot=False)
                self.agent.restore_state(point.state["agent"])
            full_state, step_no, step_seq = point.state, point.step, point.seq
            # no copy for the agent: the baseline checks the objects they share at the first diff
            baseline = Baseline(full_state, shared=True, text=point.text)
            tail = self._tail(step_seq)
        except _DAMAGE as exc:
            return self._fail_corrupt(exc)
        journal = [f for f in [*tail, *self.opening] if f.type not in JOURNAL_EXCLUDED]
        self._tail_interventions = [f for f in tail if isinstance(f, Intervention)]
        runtime_state = dict(full_state.get("runtime", {}))
        self._delivered = list(runtime_state.get("interventions", []))
        usage = Usage.from_dict(runtime_state.get("usage", {"requests": 0}))
        cost = runtime_state.get("cost_usd")
        ctx = RunContext(
            run_id=run_id,
            agent_type=self.run.agent_type,
            model=self.model,
            limits=self.limits,
            next_seq=self.run.last_seq + 1 + len(self.opening),
            flush=lambda frames: self._commit(frames),
            usage=usage,
            cost_usd=float(cost) if cost is not None else None,
            budget=self._budget(),
            services=self.services,
            on_delta=self.on_delta,
            answerer=self.answerer,
            steering=self._steering if self.interventions is not None else None,
        )
        previous_status = self.run.status
        ctx.emit(StatusChanged(from_status=previous_status.value, to_status="running"))
        ctx.requeue(self.opening)
        # The opening (the answer, the "running" status) is group-committed: with the step's
        # first durable point (a model reply, a tool about to act, the step's end, a question)
        # if the step gets there without waiting, else the moment it first waits, so its
        # commit overlaps that wait. Nothing that depends on the answer is ever durable
        # without it.
        self._opening_fields = {
            "status": RunStatus.RUNNING,
            "pause_reason": None,
            "error": None,
        }
        if self.opening:
            self._opening_fields["pending_interaction"] = None
        opening = asyncio.get_running_loop().call_soon(self._commit_opening, ctx)
        try:
            return await self._steps(ctx, journal, runtime_state, step_no, step_seq, baseline)
        finally:
            opening.cancel()

    async def _steps(
        self,
        ctx: RunContext,
        journal: list[Frame],
        runtime_state: dict[str, Any],
        step_no: int,
        step_seq: int,
        baseline: Baseline,
    ) -> RunStatus:
        elapsed = float(runtime_state.get("elapsed_s", 0.0))
        # interventions recorded while the unfinished step waited come after its frames: they
        # apply once it has been re-executed, in its commit
        after_replay, self._tail_interventions = (
            (self._tail_interventions, []) if journal else ([], self._tail_interventions)
        )
        first = True
        while True:
            if not first:
                # a step whose model and tools answer at once never waits: let the loop's other
                # work (other runs, a cancellation, the heartbeat) in between steps
                await asyncio.sleep(0)
            first = False
            started = time.monotonic()
            if not journal:
                taken = self._take_interventions(ctx)
                ending = self._apply_interventions(ctx, taken)
                if ending is not None:
                    return self._end_by_person(ctx, ending, step_no, step_seq, baseline)
                if taken:
                    # durable on its own, before the step that uses it: a kill from here on
                    # resumes with the intervention applied, never replays it into that step
                    step_no += 1
                    try:
                        step_seq = self._commit_step(ctx, step_no, elapsed, baseline)
                    except (TypeError, ValueError) as exc:
                        return self._fail_unserializable(exc)
            try:
                self._check_limits(step_no, elapsed)
                ctx.begin_step(step_no + 1, journal)
                if self.telemetry is not None:
                    self.telemetry.step_started(self.run.id, step_no + 1)
                journal = []
                outcome = await self.agent.step(ctx)
            except Suspended as suspended:
                ctx.end_replay()
                ctx.emit(
                    StatusChanged(
                        from_status="running",
                        to_status="awaiting_user",
                        reason=suspended.request.prompt[:200],
                    )
                )
                self._commit(
                    ctx.take_pending(),
                    final=True,
                    snapshot=Snapshot(step_no, step_seq, baseline.trusted()),
                    run_fields={
                        "status": RunStatus.AWAITING_USER,
                        "pending_interaction": frame_to_dict(suspended.request),
                    },
                )
                return RunStatus.AWAITING_USER
            except Parked as parked:
                ctx.end_replay()
                return self._pause(
                    ctx, parked.reason, Snapshot(step_no, step_seq, baseline.trusted())
                )
            except LimitExceededError as exc:
                return self._pause_on_limit(ctx, exc, step_no, step_seq, baseline.trusted())
            except ModelOutage as outage:
                ctx.end_replay()
                return self._pause_unavailable(
                    ctx, outage.error, Snapshot(step_no, step_seq, baseline.trusted())
                )
            except asyncio.CancelledError:
                if self._lost is not None:
                    raise self._lost from None
                ctx.end_replay()
                if self.interrupted is not None:
                    return self._pause(
                        ctx, self.interrupted, Snapshot(step_no, step_seq, baseline.trusted())
                    )
                ctx.emit(
                    StatusChanged(from_status="running", to_status="cancelled", reason="cancelled")
                )
                self._commit(
                    ctx.take_pending(), final=True, run_fields={"status": RunStatus.CANCELLED}
                )
                raise
            except Exception as exc:
                if self._lost is not None:
                    raise self._lost from exc
                if isinstance(exc, WriteConflictError):
                    raise
                ctx.end_replay()
                if isinstance(exc, ModelUnavailableError):  # raised by other code than a call
                    return self._pause_unavailable(
                        ctx, exc, Snapshot(step_no, step_seq, baseline.trusted())
                    )
                text = printable(str(exc))
                ctx.emit(ErrorFrame(error_type=type(exc).__name__, message=text))
                ctx.emit(
                    StatusChanged(from_status="running", to_status="failed", reason=text[:200])
                )
                self._commit(
                    ctx.take_pending(),
                    final=True,
                    run_fields={
                        "status": RunStatus.FAILED,
                        "error": f"{type(exc).__name__}: {text}",
                    },
                )
                return RunStatus.FAILED
            late, after_replay = after_replay, []
            closing = outcome.done and self.interventions is not None
            if closing and self.interventions is not None:
                owner = self.lease.owner if self.lease is not None else ""
                # the end is a step boundary too: what was sent during the last step is taken
                # now, and a sender that comes later learns that the run has ended
                self.interventions.closing(self.run.id, owner)
                late += self._take_interventions(ctx, fresh=True)
            ending = self._apply_interventions(ctx, late)
            if late and outcome.done and (ending or hasattr(self.agent, "intervene")):
                outcome = StepOutcome()  # it goes on with what people said
            elapsed += time.monotonic() - started
            step_no += 1
            try:
                step_seq = self._commit_step(ctx, step_no, elapsed, baseline, outcome)
            except (TypeError, ValueError) as exc:
                return self._fail_unserializable(exc)
            if outcome.done:
                return RunStatus.COMPLETED
            if closing and self.interventions is not None:
                self.interventions.reopened(self.run.id)
            if ending is not None:
                return self._end_by_person(ctx, ending, step_no, step_seq, baseline)

    async def _steering(self) -> None:
        """Return once a person's intervention waits for this run beyond those it took."""
        assert self.interventions is not None
        await self.interventions.arrival(self.run.id, known=frozenset(self._delivered))

    def _commit_step(
        self,
        ctx: RunContext,
        step_no: int,
        elapsed: float,
        baseline: Baseline,
        outcome: StepOutcome | None = None,
    ) -> int:
        """Commit step ``step_no`` (an agent's step, or with no ``outcome`` the interventions
        taken at a boundary): its frames, its state delta and the run's new fields, with the
        run's end when the outcome is done. Returns the step's last seq."""
        done = outcome is not None and outcome.done
        live_state = {
            "agent": self.agent.get_state(),
            "runtime": {
                "elapsed_s": round(elapsed, 6),
                "usage": ctx.usage.to_dict(),
                **({} if ctx.cost_usd is None else {"cost_usd": ctx.cost_usd}),
                **({"interventions": self._delivered} if self._delivered else {}),
            },
        }
        # The delta holds copies; applying it keeps the baseline free of references into the
        # agent, without copying the whole state every step.
        delta = diff_state(baseline.trusted(), live_state)
        frames = ctx.take_pending()
        if outcome is not None and outcome.done:
            ctx.end_replay()
            frames.append(ctx.emit(Complete(summary=outcome.summary, result=outcome.result)))
            frames.append(ctx.emit(StatusChanged(from_status="running", to_status="completed")))
            ctx.take_pending()
        step_seq = ctx.last_seq
        snapshot = None
        if done or step_no % SNAPSHOT_EVERY == 0:
            snapshot = Snapshot(step_no, step_seq, baseline.advance(delta))
        elif not baseline.shared:
            baseline.advance(delta)
        fields: dict[str, Any] = {"iteration": step_no}
        if outcome is not None and outcome.done:
            fields.update(status=RunStatus.COMPLETED, result=outcome.result)
        self._commit(
            frames,
            final=done,
            step=StepRecord(step_no, step_seq, delta),
            snapshot=snapshot,
            run_fields=fields,
        )
        if snapshot is None and baseline.shared:
            baseline.advance(delta)  # the private copy, once this step is durable
        return step_seq

    def _take_interventions(self, ctx: RunContext, *, fresh: bool = False) -> list[Intervention]:
        """The interventions waiting for this run, in order: those recorded in its log while
        it waited, then those left in the inbox while it executed (recorded here). None after
        a delete or a cancel: they stay in the inbox, which is cleared once the run ends."""
        found = list(self._tail_interventions)
        self._tail_interventions = []
        if self.interventions is not None:
            for item in self.interventions.take(self.run.id, fresh=fresh):
                if any(i.action in _ENDING for i in found):
                    break
                if item.id in self._delivered:
                    self.interventions.done(self.run.id, [item.id])
                    continue
                found.append(ctx.emit(item))
                self._unacked.append(item.id)
                self._delivered = [*self._delivered, item.id][-_DELIVERED_KEPT:]
        return found

    def _apply_interventions(
        self, ctx: RunContext, found: list[Intervention]
    ) -> Intervention | None:
        """Apply interventions to the agent in order; returns the one that ends the run (a
        delete, or a cancel asked from another process), if any."""
        apply = getattr(self.agent, "intervene", None)
        for item in found:
            if item.action in _ENDING:
                return item
            if apply is not None:
                apply(ctx, item.action, item.content)
        return None

    def _end_by_person(
        self,
        ctx: RunContext,
        item: Intervention,
        step_no: int,
        step_seq: int,
        baseline: Baseline,
    ) -> RunStatus:
        """A person deleted or cancelled the run: it ends here, between steps, with its
        partial result."""
        status = RunStatus.DELETED if item.action == "delete" else RunStatus.CANCELLED
        reason = "deleted by user" if item.action == "delete" else item.content or "cancelled"
        ctx.end_replay()
        ctx.emit(StatusChanged(from_status="running", to_status=status.value, reason=reason))
        self._commit(
            ctx.take_pending(),
            final=True,
            snapshot=Snapshot(step_no, step_seq, baseline.trusted()),
            run_fields={
                "status": status,
                "result": {**self.agent.partial_result(), status.value: True},
                "pending_interaction": None,
            },
        )
        return status

    def _tail(self, step_seq: int) -> list[Frame]:
        """The frames after the last committed step: what the unfinished step recorded."""
        question = self.question
        if (
            question is not None
            and question.seq == step_seq + 1
            and self.run.last_seq == step_seq + 2
        ):
            # The step asked before recording anything else, so its log is that question and
            # the status change that paused the run (which the journal leaves out anyway).
            return [question]
        return self.store.read_frames(self.run.id, after_seq=step_seq)

    def _budget(self) -> RunBudget:
        limits = self.limits
        session_tokens = 0
        if limits.max_session_tokens is not None and self.run.session_id is not None:
            session_tokens = session_usage(self.store, self.run.session_id, but=self.run.id)
        return RunBudget(
            max_tokens=limits.max_tokens,
            max_session_tokens=limits.max_session_tokens,
            max_cost_usd=limits.max_cost_usd,
            warning_threshold=limits.token_warning_threshold,
            session_tokens=session_tokens,
            prices=self.prices,
        )

    def _check_limits(self, step_no: int, elapsed: float) -> None:
        if step_no >= self.limits.max_steps:
            raise LimitExceededError("max_steps", step_no, self.limits.max_steps)
        if elapsed >= self.limits.max_wall_time_s:
            raise LimitExceededError(
                "max_wall_time_s", round(elapsed, 3), self.limits.max_wall_time_s
            )

    def _pause_on_limit(
        self,
        ctx: RunContext,
        exc: LimitExceededError,
        step_no: int,
        step_seq: int,
        prev_state: dict[str, Any],
    ) -> RunStatus:
        partial = self.agent.partial_result()
        ctx.end_replay()
        ctx.emit(
            LimitReached(
                limit=exc.limit, value=exc.value, maximum=exc.maximum, partial_result=partial
            )
        )
        ctx.emit(StatusChanged(from_status="running", to_status="paused", reason=str(exc)))
        self._commit(
            ctx.take_pending(),
            final=True,
            snapshot=Snapshot(step_no, step_seq, prev_state),
            run_fields={
                "status": RunStatus.PAUSED,
                "pause_reason": f"limit:{exc.limit}",
                "result": partial,
            },
        )
        return RunStatus.PAUSED

    def _pause(self, ctx: RunContext, reason: str, snapshot: Snapshot) -> RunStatus:
        """Stop between durable points and leave the run paused, resumable from its last step."""
        ctx.emit(StatusChanged(from_status="running", to_status="paused", reason=reason))
        self._commit(
            ctx.take_pending(),
            final=True,
            snapshot=snapshot,
            run_fields={"status": RunStatus.PAUSED, "pause_reason": reason},
        )
        return RunStatus.PAUSED

    def _pause_unavailable(
        self, ctx: RunContext, exc: ModelUnavailableError, snapshot: Snapshot
    ) -> RunStatus:
        """An outage outlasting the retries: the run waits for the endpoint. The whole reason
        rides on the status change and the run's error (cleared when it runs again); the call
        that failed left nothing in the record, so a resumed step asks it again."""
        text = printable(str(exc))
        ctx.emit(
            StatusChanged(
                from_status="running", to_status="paused", reason=f"{MODEL_UNAVAILABLE}: {text}"
            )
        )
        self._commit(
            ctx.take_pending(),
            final=True,
            snapshot=snapshot,
            run_fields={
                "status": RunStatus.PAUSED,
                "pause_reason": MODEL_UNAVAILABLE,
                "error": text,
            },
        )
        return RunStatus.PAUSED

    def _fail_unserializable(self, exc: Exception) -> RunStatus:
        message = (
            f"the agent's state or a frame is not JSON ({exc}); get_state() must return JSON "
            "values (dicts, lists, strings, numbers, booleans, None)"
        )
        return self._fail_with("ValidationError", message, "state not serializable")

    def _fail_corrupt(self, exc: Exception) -> RunStatus:
        message = (
            f"state corruption: the run's state could not be rebuilt from its snapshot or its "
            f"frames ({exc}); the run is marked failed, other runs are unaffected; fork it from "
            "an earlier seq to continue"
        )
        return self._fail_with("StateCorruptionError", message, "state corruption")

    def _fail_with(self, error_type: str, message: str, reason: str) -> RunStatus:
        run = self.store.get_run(self.run.id)
        frames: list[Frame] = [
            ErrorFrame(run_id=run.id, seq=run.last_seq + 1, error_type=error_type, message=message),
            StatusChanged(
                run_id=run.id,
                seq=run.last_seq + 2,
                from_status=run.status.value,
                to_status="failed",
                reason=reason,
            ),
        ]
        self._commit(frames, final=True, run_fields={"status": RunStatus.FAILED, "error": message})
        return RunStatus.FAILED
