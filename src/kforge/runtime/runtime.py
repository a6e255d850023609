"""The Runtime facade: start, resume, cancel, fork and subscribe to runs over a store.

Runs execute as asyncio tasks in this process (the local executor); many run concurrently. A run
waiting for a person holds no task: ``resume`` starts a new stretch, here or in another process.
With ``executor="dbos"`` (a PostgreSQL store) each stretch is queued for ``kforge worker``
processes instead (``runtime/executor.py`` says how to plug in another queue).
"""

from __future__ import annotations

import asyncio
import os
import time
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kforge.agents.builtin import default_registry
from kforge.engine.agent import StepAgent
from kforge.engine.limits import RunLimits
from kforge.engine.registry import AgentRegistry
from kforge.engine.restore import initial_delta
from kforge.engine.runner import StepRunner
from kforge.engine.services import Services
from kforge.errors import (
    InvalidRunStateError,
    RunLeasedError,
    ValidationError,
)
from kforge.frames import (
    Frame,
    InteractionRequested,
    Intervention,
    StatusChanged,
    new_id,
    utc_now,
)
from kforge.jsoncodec import convert, not_json, to_builtins
from kforge.llm.base import Model
from kforge.memory.tokens import PriceTable
from kforge.runtime.bus import EventBus
from kforge.runtime.executor import Executor, ExecutorName, open_executor
from kforge.runtime.forking import fork_tree
from kforge.runtime.inbox import InterventionInbox
from kforge.runtime.interactions import answered, normalize_answer
from kforge.runtime.observing import RunObserving
from kforge.runtime.services import ChildAgents, Documents, RunSession
from kforge.runtime.steering import QueryUserHandler, TreeSteering
from kforge.store.base import (
    TERMINAL_STATUSES,
    CommitListening,
    RunLog,
    RunRecord,
    RunStatus,
    Snapshot,
    StepRecord,
)
from kforge.store.lease import DEFAULT_LEASE_TTL_S, Lease, new_owner, owner_alive

if TYPE_CHECKING:
    from kforge.telemetry import Telemetry

__all__ = ["QueryUserHandler", "Runtime", "normalize_answer"]


class Runtime(TreeSteering, RunObserving):
    """Runs agents durably over a store; stretches execute here or go to ``executor``."""

    def __init__(
        self,
        store: RunLog | str | os.PathLike[str] | None = None,
        *,
        model: Model | str | None = None,
        registry: AgentRegistry | None = None,
        services: Services | None = None,
        limits: RunLimits | None = None,
        lease_ttl_s: float = DEFAULT_LEASE_TTL_S,
        prices: PriceTable | None = None,
        telemetry: Telemetry | None = None,
        executor: Executor | ExecutorName = "local",
    ) -> None:
        if store is None or isinstance(store, str | Path | os.PathLike):
            from kforge.store.open import open_store

            store = open_store(store)
        self.store: RunLog = store
        self._model = model
        self._models: dict[str, Model] = {}
        self.registry = registry or default_registry
        given = Services.of(services)
        if given.corpora is None:
            from kforge.rag.catalog import corpora_in

            # a store opened from one --db is also a passage store: its corpora are the runs'
            given = replace(given, corpora=corpora_in(store))
        self.services: Services = replace(given, memory=given.memory or Documents(store))
        """What every run's agent is given; each run adds its own ``agents`` and ``sessions``."""
        self.default_limits = limits or RunLimits()
        if prices is None:
            from kforge.llm.config import load_config

            prices = PriceTable.from_mapping(load_config().prices)
        self.prices: PriceTable = prices
        self._own_telemetry = False
        if telemetry is None and os.environ.get("KFORGE_TELEMETRY"):
            from kforge.telemetry import Telemetry

            telemetry = Telemetry.from_env()
            self._own_telemetry = telemetry is not None
        self.telemetry = telemetry
        """OpenTelemetry spans and metrics of the runs executed here (None: off); given, or
        from ``KFORGE_TELEMETRY``."""
        if telemetry is not None:
            telemetry.watch_queue(lambda: len(self._tasks))
        """What model calls cost; read from the config file's ``[prices]`` when not given (here,
        not when a run starts or resumes, so a bad file is reported at once)."""
        self.bus = EventBus(listen=store.listen if isinstance(store, CommitListening) else None)
        self._tasks: dict[str, asyncio.Task[RunStatus]] = {}
        self._errors: dict[str, BaseException] = {}
        """The error each run's last stretch here ended with, until it is resumed again."""
        self._opened: dict[str, asyncio.Future[None]] = {}
        self._runners: dict[str, StepRunner] = {}
        self.owner = new_owner()
        """Who this runtime is in the leases of the runs it executes."""
        self.lease_ttl_s = lease_ttl_s
        self.executor: Executor = open_executor(executor, store)
        """Where stretches started or resumed here execute (here, or queued for workers)."""
        self.interventions = InterventionInbox(store)
        """Interventions waiting for executing runs' next step boundaries (in the store)."""
        self._query_user: QueryUserHandler | None = None
        self._waking: set[asyncio.Task[None]] = set()

    @property
    def queued(self) -> bool:
        """Whether stretches started here are queued for worker processes (e.g. on DBOS)."""
        return self.executor.queued

    # -- models ---------------------------------------------------------------------------

    def _model_spec(self) -> str:
        if isinstance(self._model, str):
            return self._model
        if self._model is not None:
            return self._model.name
        return os.environ.get("KFORGE_MODEL", "local:smollm2")

    def model_for(self, spec: str) -> Model:
        if self._model is not None and not isinstance(self._model, str):
            return self._model
        if spec not in self._models:
            from kforge.llm import get_model

            self._models[spec] = get_model(spec)
        return self._models[spec]

    # -- lifecycle ------------------------------------------------------------------------

    async def start(
        self,
        agent_type: str,
        args: dict[str, Any] | None = None,
        *,
        limits: RunLimits | None = None,
        session_id: str | None = None,
        parent_id: str | None = None,
        run_id: str | None = None,
        annotations: dict[str, str] | None = None,
    ) -> str:
        """Create a run and start executing it; returns its id at once. ``annotations`` are
        kept with the run for its caller (e.g. where the CLI writes its report) and never
        read by the agent."""
        args = dict(args or {})
        _check_json_args(agent_type, args)
        agent = self.registry.create(agent_type, args)
        limits = limits or self.default_limits
        now = utc_now()
        run = RunRecord(
            id=run_id or new_id(),
            agent_type=agent_type,
            status=RunStatus.PENDING,
            created_at=now,
            updated_at=now,
            input={
                "args": args,
                "limits": to_builtins(limits),
                "model": self._model_spec(),
                **({"annotations": dict(annotations)} if annotations else {}),
            },
            session_id=session_id,
            parent_id=parent_id,
            max_iterations=limits.max_steps,
        )
        created = StatusChanged(run_id=run.id, seq=1, from_status=None, to_status="pending")
        self.store.create_run(run, [created], step=self._initial_step(agent, seq=1))
        self.bus.publish(run.id, [created])
        if self.executor.queued:
            self.executor.enqueue(run.id, 1)
        else:
            self._launch(run, agent)
        return run.id

    def _initial_step(self, agent: StepAgent[object], *, seq: int) -> StepRecord:
        initial = {"agent": agent.get_state(), "runtime": {"elapsed_s": 0.0}}
        return StepRecord(0, seq, initial_delta(initial))

    def _commit_initial_state(self, run_id: str, agent: StepAgent[object], *, seq: int) -> None:
        self.store.commit(run_id, [], step=self._initial_step(agent, seq=seq))

    async def resume(
        self,
        run_id: str,
        answer: Any = None,
        *,
        limits: RunLimits | None = None,
        durable: bool = False,
    ) -> str:
        """Continue a run at the step where it stopped: after an answer, a pause, or a crash.

        Refused at once (RunLeasedError) while another live process executes the run. With
        ``durable=True`` it returns only once the answer and the run's claim are committed,
        raising the error if another writer got there first (see also :meth:`opened`).

        With the dbos executor the answer (and the run's new status, ``pending``) commit here,
        and the stretch that continues the run is queued for a worker.
        """
        if self.executor.queued:
            return self._queue_resume(run_id, answer, limits)
        return await self._resume_here(run_id, answer, limits=limits, durable=durable)

    async def execute_stretch(self, run_id: str) -> RunStatus:
        """Execute the run's next stretch here, if it is queued or was interrupted (what a
        worker does with a queued stretch); waits out the lease of a writer that may be gone."""
        while True:
            run = self.store.get_run(run_id)
            if run.status not in (RunStatus.PENDING, RunStatus.RUNNING):
                return run.status  # cancelled, answered elsewhere, or already done
            try:
                await self._resume_here(run_id, None, durable=True)
            except RunLeasedError as exc:
                await asyncio.sleep(min(max(exc.expires_at - time.time(), 0.05), 5.0))
                continue
            task = self._tasks.get(run_id)
            if task is not None:
                await asyncio.wait([task])  # its error, if any, is the run's to record
            return self.store.get_run(run_id).status

    def _queue_resume(self, run_id: str, answer: Any, limits: RunLimits | None) -> str:
        run = self.store.get_run(run_id)
        self._check_lease(run)  # refused while a worker executes it
        self._refuse_terminal(run)
        frames: list[Frame] = []
        fields: dict[str, Any] = {"status": RunStatus.PENDING, "pause_reason": None, "error": None}
        if run.status == RunStatus.AWAITING_USER:
            frames.append(answered(run, answer)[1])
            fields["pending_interaction"] = None
        elif answer is not None:
            raise InvalidRunStateError(
                f"run '{run_id}' is {run.status.value}, not waiting for an answer"
            )
        if run.status not in (RunStatus.PENDING, RunStatus.RUNNING):
            frames.append(
                StatusChanged(
                    run_id=run_id,
                    seq=run.last_seq + 1 + len(frames),
                    from_status=run.status.value,
                    to_status="pending",
                    reason="queued for a worker",
                )
            )
        if limits is not None:
            fields.update(input={**run.input, "limits": to_builtins(limits)})
            fields.update(max_iterations=limits.max_steps)
        # a second answer to the same question conflicts here: the log moved on
        self.store.commit(run_id, frames, run_fields=fields)
        self.bus.publish(run_id, frames)
        self.executor.enqueue(run_id, run.last_seq + len(frames))
        return run_id

    def _refuse_terminal(self, run: RunRecord) -> None:
        if run.status in TERMINAL_STATUSES:
            raise InvalidRunStateError(
                f"run '{run.id}' is {run.status.value}; only awaiting_user, paused, pending or "
                "interrupted running runs can be resumed (fork it to continue from an earlier seq)"
            )

    async def _resume_here(
        self, run_id: str, answer: Any, *, limits: RunLimits | None = None, durable: bool = False
    ) -> str:
        if run_id in self._tasks:
            raise InvalidRunStateError(f"run '{run_id}' is already running in this process")
        run, snapshot = self.store.get_run_with_snapshot(run_id)
        takeover = self._check_lease(run)
        opening: list[Frame] = []
        request: InteractionRequested | None = None
        self._refuse_terminal(run)
        if run.status == RunStatus.AWAITING_USER:
            request, answer_frame = answered(run, answer)
            # committed by the runner with its "running" status, in its first commit
            opening.append(answer_frame)
        elif answer is not None:
            raise InvalidRunStateError(
                f"run '{run_id}' is {run.status.value}, not waiting for an answer"
            )
        if limits is not None:
            run.input = {**run.input, "limits": to_builtins(limits)}
            self.store.commit(
                run_id, [], run_fields={"input": run.input, "max_iterations": limits.max_steps}
            )
        agent = self.registry.create(run.agent_type, dict(run.input.get("args", {})))
        # A run waiting for an answer has its state; a pending one, or a fork taken before its
        # first step, may have none yet.
        awaiting = run.status == RunStatus.AWAITING_USER
        if not awaiting and not self.store.read_steps(run_id, after_step=-1, limit=1):
            self._commit_initial_state(run_id, agent, seq=run.last_seq)
        # an answer someone waits to see durable commits at once; else the opening may go
        # with the first step's model reply and become durable with the step (one wait for
        # the disk fewer)
        lazy = not (durable and opening)
        self._launch(
            run, agent, opening, request, takeover=takeover, snapshot=snapshot, lazy_opening=lazy
        )
        if durable:
            await self.opened(run_id)
        return run_id

    def _check_lease(self, run: RunRecord) -> str | None:
        """Refuse a run another live writer holds; returns a gone holder that may be replaced."""
        owner, expires = run.lease_owner, run.lease_expires_at
        if owner is None or owner == self.owner:
            return None
        if not owner_alive(owner):
            return owner
        if expires is not None and expires >= time.time():
            raise RunLeasedError(run.id, owner, expires)
        return None

    async def opened(self, run_id: str) -> None:
        """Wait until the opening of the run's current stretch here (its answer, its "running"
        status and its lease) is durable; raises the error that kept it from being so."""
        future = self._opened.get(run_id)
        if future is None:
            raise InvalidRunStateError(f"run '{run_id}' was not started or resumed here")
        await asyncio.shield(future)

    async def cancel(self, run_id: str, reason: str = "cancelled by user") -> str:
        """End a run for good: at once (``"now"``) when it executes here or nowhere; a run
        another live process executes gets a cancel request that it takes at its next step
        boundary, as interventions are (``"next_step"``)."""
        task = self._tasks.get(run_id)
        if task is not None:
            task.cancel()
            try:
                await task
            except asyncio.CancelledError:
                pass
            return "now"
        run = self.store.get_run(run_id)
        if run.status in TERMINAL_STATUSES:
            raise InvalidRunStateError(f"run '{run_id}' is already {run.status.value}")
        holder = run.lease_owner
        if run.is_live() and holder is not None and holder != self.owner and owner_alive(holder):
            request = Intervention(
                id=new_id(), action="cancel", content=reason, target_run_id=run_id
            )
            self.interventions.put(run_id, request)
            return "next_step"
        frame = StatusChanged(
            run_id=run_id,
            seq=run.last_seq + 1,
            from_status=run.status.value,
            to_status="cancelled",
            reason=reason,
        )
        self.store.commit(
            run_id,
            [frame],
            run_fields={"status": RunStatus.CANCELLED, "pending_interaction": None},
            lease=Lease(owner=self.owner, takeover=self._check_lease(run), release=True),
        )
        self.bus.publish(run_id, [frame])
        self.bus.idle(run_id)
        return "now"

    async def interrupt(self, reason: str = "interrupted") -> list[str]:
        """Pause every run executing here (status ``paused`` with ``reason``), each from its last
        committed step, so that it resumes here or elsewhere; returns their ids."""
        ids, tasks = list(self._tasks), list(self._tasks.values())
        for run_id, task in zip(ids, tasks, strict=True):
            self._runners[run_id].interrupted = reason
            task.cancel()
        if tasks:
            await asyncio.wait(tasks)
        return ids

    async def fork(self, run_id: str, *, at_seq: int | None = None) -> str:
        """A new run sharing ``run_id``'s frames up to ``at_seq``, ready to resume. By default all
        of them, or for a failed run all before its failure (so the failed step runs again).
        The child runs it had started come with it, each forked at the point it had reached
        then, so the fork's subagents do none of their recorded work again."""
        return fork_tree(self.store, run_id, at_seq=at_seq)

    def _launch(
        self,
        run: RunRecord,
        agent: StepAgent[object],
        opening: list[Frame] | None = None,
        question: InteractionRequested | None = None,
        *,
        takeover: str | None = None,
        snapshot: Snapshot | None = None,
        lazy_opening: bool = False,
    ) -> None:
        """``snapshot``: the run's snapshot as read with it, so the stretch need not read it
        again (None: the stretch reads whatever the store has). ``lazy_opening``: the
        opening may be committed without waiting for the disk (``StretchWriter``)."""
        limits = convert(run.input.get("limits") or {}, RunLimits)
        runner = StepRunner(
            self.store,
            run,
            agent,
            self.model_for(str(run.input.get("model") or self._model_spec())),
            limits=limits,
            services=replace(
                self.services,
                agents=self.services.agents
                or ChildAgents(self, run.id, plan=getattr(agent, "child_run", None)),
                sessions=self.services.sessions or RunSession(self.store, run.id, run.session_id),
            ),
            on_commit=self.bus.publish,
            opening=opening,
            question=question,
            on_delta=self.bus.publish_delta,
            lease=Lease(owner=self.owner, ttl_s=self.lease_ttl_s, takeover=takeover),
            prices=self.prices,
            telemetry=self.telemetry,
            interventions=self.interventions,
            answerer=self._answer_inline if self._query_user is not None else None,
            snapshot=snapshot,
        )
        runner.lazy_opening = lazy_opening
        loop = asyncio.get_running_loop()
        runner.opened = self._opened[run.id] = loop.create_future()
        self._errors.pop(run.id, None)
        task = loop.create_task(runner.run_stretch(), name=f"run-{run.id}")
        self._tasks[run.id] = task
        self._runners[run.id] = runner

        def _done(_: asyncio.Task[RunStatus]) -> None:
            self._tasks.pop(run.id, None)
            self._runners.pop(run.id, None)
            if not task.cancelled() and task.exception() is not None:
                self._errors[run.id] = task.exception()  # type: ignore[assignment]
            self.bus.idle(run.id)
            parent = run.parent_id
            ended = not task.cancelled() and task.exception() is None
            if ended and parent is not None and parent not in self._tasks:
                self.child_ended(run.id)
            if ended and task.result() == RunStatus.PAUSED:
                self._wake_if_children_ended(run.id)

        task.add_done_callback(_done)

    # -- observing ------------------------------------------------------------------------

    async def run(
        self, agent_type: str, args: dict[str, Any] | None = None, **kwargs: Any
    ) -> RunRecord:
        """Start a run and wait for its first stretch to end."""
        return await self.wait(await self.start(agent_type, args, **kwargs))

    async def aclose(self) -> None:
        """Pause runs still executing in this process (each resumes from its last committed
        step, here or elsewhere) and close the store."""
        if self._tasks:
            await self.interrupt("the process that ran it closed its runtime")
        if self._own_telemetry and self.telemetry is not None:
            self.telemetry.shutdown()  # flush what the exporters still hold
        self.bus.close()
        self.executor.close()
        self.store.close()


def _check_json_args(agent_type: str, args: dict[str, Any]) -> None:
    """Arguments are recorded with the run and read back on resume, so they must be JSON."""
    for name, value in args.items():
        if not isinstance(name, str):
            raise ValidationError(
                f"agent '{agent_type}': argument names must be strings (got {name!r})"
            )
        found = not_json({name: value})
        if found is None:
            continue
        path, what = found
        where = f" at {path}" if path not in ("", name) else ""
        raise ValidationError(
            f"agent '{agent_type}': argument '{name}'{where} is {what}, which JSON cannot "
            "record; pass strings, finite numbers, booleans, null, lists and objects with "
            "string keys (e.g. a date as an ISO 8601 string)"
        )
