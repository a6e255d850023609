"""The step runner: drives one stretch of a run (start or resume, until it pauses or ends).

After every step, that step's frames, its state delta and the run's new fields commit in one
transaction. A stretch begins by rebuilding the state from the latest snapshot plus later deltas
(or, if the snapshot is unreadable, from the deltas alone) and re-executes an unfinished step
against the frames it already recorded.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, cast

from kforge import jsoncodec
from kforge.engine.agent import SteerableAgent, StepAgent, StepOutcome, record_result
from kforge.engine.boundaries import BoundaryInterventions
from kforge.engine.endings import StretchEndings, printable
from kforge.engine.inbox import InterventionSource
from kforge.engine.limits import RunLimits
from kforge.engine.restore import (
    APPEND_ONLY,
    RestorePoint,
    append_only_entries,
    load_state,
    restore_point,
    restored_baseline,
    restored_lists,
    session_usage,
)
from kforge.engine.run_context import Answerer, ModelOutage, Parked, RunContext, Suspended
from kforge.engine.services import Services
from kforge.engine.state import Baseline, Grown, diff_state
from kforge.errors import (
    InvalidRunStateError,
    LimitExceededError,
    ModelUnavailableError,
    StateCorruptionError,
    WriteConflictError,
)
from kforge.frames import (
    Complete,
    ErrorFrame,
    Frame,
    InteractionRequested,
    Intervention,
    StatusChanged,
    TokenDelta,
    frame_to_dict,
)
from kforge.llm.base import Model
from kforge.llm.types import Usage
from kforge.memory.tokens import PriceTable, RunBudget
from kforge.store.base import (
    TERMINAL_STATUSES,
    RunLog,
    RunRecord,
    RunStatus,
    Snapshot,
    StepRecord,
)
from kforge.store.lease import Lease

if TYPE_CHECKING:
    from kforge.telemetry import Telemetry

__all__ = [
    "JOURNAL_EXCLUDED",
    "SNAPSHOT_EVERY",
    "RestorePoint",
    "StepRunner",
    "load_state",
    "restore_point",
    "session_usage",
]

SNAPSHOT_EVERY = 64
"""Steps between periodic snapshots (one more is written at every pause and at the end)."""

JOURNAL_EXCLUDED = frozenset({"status.changed", "limit.reached", "complete", "intervention"})
"""Frame types the runner writes itself; never replayed into agent code."""

_DAMAGE = (StateCorruptionError, KeyError, TypeError, ValueError, AttributeError, IndexError)
"""What restoring from damaged records raises (agents' restore_state included)."""


class StepRunner(BoundaryInterventions, StretchEndings):
    """Runs ``agent`` for ``run`` until it completes, fails, pauses or waits for a person."""

    def __init__(
        self,
        store: RunLog,
        run: RunRecord,
        agent: StepAgent[object],
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
        super().__init__(
            store,
            run,
            on_commit=on_commit,
            opening=opening,
            lease=lease,
            telemetry=telemetry,
            interventions=interventions,
            snapshot=snapshot,
        )
        self.agent = agent
        # what isinstance(agent, SteerableAgent) decides (the protocol's one method is there),
        # without the protocol check's cost (about 90 k instructions, a run's start and resume)
        steerable = getattr(agent, "intervene", None) is not None
        self.steered = cast(SteerableAgent, agent) if steerable else None
        """The agent, when it takes interventions (``SteerableAgent``)."""
        self.model = model
        self.limits = limits
        self.services = services or Services()
        self.prices = prices or PriceTable()
        """What model calls cost (the config file's ``[prices]``)."""
        self.answerer = answerer
        """Answers questions inline (the query-user handler), else they park the run."""
        self.question = question
        """The question the run waits on, decoded from its record (when it waits on one)."""
        self.on_delta = on_delta
        """Where streamed model text goes as it is generated (live subscribers)."""
        self._delivered: list[str] = []
        self._tail_interventions: list[Intervention] = []
        self._append_only: list[Any] = []
        """Where the committed state holds append-only lists (the runtime state's record)."""
        self.interrupted: str | None = None
        """Set before cancelling the stretch to pause the run with this reason instead."""

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
                    f"run '{self.run.id}': the stretch ended before its opening was durable"
                )
            )

    async def _stretch(self) -> RunStatus:
        run_id = self.run.id
        try:
            try:
                known, self._snapshot = self._snapshot, None
                point = restore_point(
                    self.store, run_id, last_step=self.run.iteration, snapshot=known, messages=True
                )
                baseline = restored_baseline(point)
                self.agent.restore_state(point.state["agent"])
            except _DAMAGE:
                # whatever is wrong with the snapshot, the step deltas may still rebuild it
                point = restore_point(self.store, run_id, use_snapshot=False)
                baseline = restored_baseline(point)
                self.agent.restore_state(point.state["agent"])
            full_state, step_no, step_seq = point.state, point.step, point.seq
            tail = self._tail(step_seq)
        except _DAMAGE as exc:
            return self._fail_corrupt(exc)
        journal = [f for f in [*tail, *self.opening] if f.type not in JOURNAL_EXCLUDED]
        self._tail_interventions = [f for f in tail if isinstance(f, Intervention)]
        runtime_state = dict(full_state.get("runtime", {}))
        self._delivered = list(runtime_state.get("interventions", []))
        self._append_only = runtime_state.get(APPEND_ONLY) or []
        usage = jsoncodec.convert(runtime_state.get("usage", {"requests": 0}), Usage)
        cost = runtime_state.get("cost_usd")
        ctx = RunContext(
            run_id=run_id,
            agent_type=self.run.agent_type,
            model=self.model,
            limits=self.limits,
            next_seq=self.run.last_seq + 1 + len(self.opening),
            flush=lambda frames: self._commit(frames),
            flush_repeatable=lambda frames: self._commit(frames, repeatable=True),
            usage=usage,
            cost_usd=float(cost) if cost is not None else None,
            budget=self._budget(),
            services=self.services,
            on_delta=self.on_delta,
            answerer=self.answerer,
            steering=self._steering if self.interventions is not None else None,
        )
        ctx.restored_history(step_no, restored_lists(full_state, self._append_only))
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
            if late and outcome.done and (ending or self.steered is not None):
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

    def _commit_step(
        self,
        ctx: RunContext,
        step_no: int,
        elapsed: float,
        baseline: Baseline,
        outcome: StepOutcome[object] | None = None,
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
                **({APPEND_ONLY: self._append_only} if self._append_only else {}),
            },
        }
        # The delta holds copies; applying it keeps the baseline free of references into the
        # agent, without copying the whole state every step.
        grown: list[Grown] = []
        delta = diff_state(baseline.trusted(), live_state, grown=grown, synced=baseline.synced)
        found = append_only_entries(grown)
        if found != self._append_only:
            # a resume hands these lists to the agent frozen, with nothing to compare
            delta.append(
                ["s", ["runtime", APPEND_ONLY], found] if found else ["d", ["runtime", APPEND_ONLY]]
            )
            self._append_only = found
        frames = ctx.take_pending()
        result = record_result(outcome.result) if outcome is not None and outcome.done else {}
        if outcome is not None and outcome.done:
            ctx.end_replay()
            frames.append(ctx.emit(Complete(summary=outcome.summary, result=result)))
            frames.append(ctx.emit(StatusChanged(from_status="running", to_status="completed")))
            ctx.take_pending()
        step_seq = ctx.last_seq
        snapshot = None
        if done or step_no % SNAPSHOT_EVERY == 0:
            snapshot = Snapshot(step_no, step_seq, baseline.advance(delta, grown))
        elif not baseline.shared:
            baseline.advance(delta, grown)
        fields: dict[str, Any] = {"iteration": step_no}
        if outcome is not None and outcome.done:
            fields.update(status=RunStatus.COMPLETED, result=result)
        self._commit(
            frames,
            final=done,
            step=StepRecord(step_no, step_seq, delta),
            snapshot=snapshot,
            run_fields=fields,
        )
        if snapshot is None and baseline.shared:
            baseline.advance(delta, grown)  # the private copy, once this step is durable
        return step_seq

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
