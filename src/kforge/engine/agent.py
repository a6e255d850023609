"""ForgeAgent: a phase-graph agent, executed one durable step at a time.

Each call to ``step`` does one unit of work — one pass of a phase's work, or one checkpoint —
so the runner can commit after it and a resumed run continues at the exact step.
"""

from __future__ import annotations

import dataclasses
import enum
from abc import ABC, abstractmethod
from collections.abc import Mapping
from typing import Any, ClassVar, Generic, Protocol, TypeVar, runtime_checkable

from kforge import jsoncodec
from kforge.engine.phases import (
    Checkpoint,
    PhaseContext,
    PhaseGraph,
    PhaseTransition,
    TransitionRecord,
    evaluate_transitions,
)
from kforge.engine.run_context import RunContext
from kforge.errors import LimitExceededError
from kforge.frames import AgentThinking, CheckpointKind, PhaseChanged, PhaseCheckpoint
from kforge.frames.slots import built_by_slots
from kforge.prompts import phase_prompt as library_phase_prompt
from kforge.prompts import prompt_text

__all__ = ["ForgeAgent", "SteerableAgent", "StepAgent", "StepOutcome", "record_result"]

ResultT = TypeVar("ResultT")
ResultT_co = TypeVar("ResultT_co", covariant=True)


@built_by_slots
@dataclasses.dataclass(frozen=True, slots=True)
class StepOutcome(Generic[ResultT_co]):
    """What one step did: whether the run is done, and then its result and a summary line."""

    done: bool = False
    result: ResultT_co | None = None
    """The run's result once it is done: the agent's declared result type (a frozen dataclass,
    ``kforge.agents.results``), or a dict of JSON values for an agent that declares none. The
    run's record keeps it as ``record_result`` makes it."""
    summary: str = ""


CONTINUE: StepOutcome[Any] = StepOutcome()


def record_result(result: object) -> dict[str, Any]:
    """``result`` as the run's record keeps it: a dataclass field by field through
    ``kforge.jsoncodec`` (as JSON text would read back: tuples become lists), a dict as it is,
    None as ``{}``. ``TypeError`` for anything else, or for a value JSON cannot hold."""
    if result is None:
        return {}
    if isinstance(result, Mapping):
        return dict(result)
    if dataclasses.is_dataclass(result) and not isinstance(result, type):
        stored: dict[str, Any] = jsoncodec.loads(jsoncodec.dumps(jsoncodec.to_builtins(result)))
        return stored
    raise TypeError(
        f"a run's result must be a dataclass (the agent's result_type) or a dict of JSON "
        f"values, not {type(result).__name__}"
    )


@runtime_checkable
class StepAgent(Protocol[ResultT_co]):
    """What the runner drives: any agent that works in durable steps, whose result is a
    ``ResultT_co`` (its declared result type, or a dict for one that declares none)."""

    @property
    def agent_type(self) -> str: ...

    async def step(self, ctx: RunContext) -> StepOutcome[ResultT_co]: ...

    def get_state(self) -> dict[str, Any]: ...

    def restore_state(self, state: dict[str, Any]) -> None: ...

    def partial_result(self) -> ResultT_co:
        """The best result available now (used when a limit ends the run early)."""
        ...


@runtime_checkable
class SteerableAgent(Protocol):
    """A step agent that takes what people send it between steps (the tree agent): a
    ``modify`` or a ``comment`` reaches ``intervene`` in order, before the step that uses it.
    Any agent ends on a delete or a cancel; one without ``intervene`` ignores the rest."""

    def intervene(self, ctx: RunContext, action: str, content: str) -> None: ...


class ForgeAgent(ABC, Generic[ResultT]):
    """Base class for phase-graph agents: phases, transitions, checkpoints and re-entry
    prompts; ``ResultT`` is the type of its result (its declared ``result_type``)."""

    agent_type: ClassVar[str]
    graph: ClassVar[PhaseGraph]
    context_class: ClassVar[type[PhaseContext]] = PhaseContext

    def __init__(self, args: dict[str, Any] | None = None) -> None:
        self.args: dict[str, Any] = dict(args or {})
        self.current_phase: enum.Enum = self.graph.initial
        self.phase_context: PhaseContext = self.context_class()
        self.stage = "start"
        """start → execute ⇄ checkpoint; a phase runs until ``execute_phase`` says it is done."""
        self.optional_checkpoints = bool(self.args.get("optional_checkpoints", False))

    # -- what subclasses write -------------------------------------------------------------

    @abstractmethod
    async def execute_phase(self, phase: enum.Enum, ctx: RunContext) -> bool:
        """Do one step of ``phase``'s work. Return True when the phase is done."""

    @abstractmethod
    def evaluate_condition(self, transition: PhaseTransition) -> bool:
        """Is ``transition``'s condition met now?"""

    @abstractmethod
    def initial_prompt(self, phase: enum.Enum) -> str:
        """The prompt for a first visit to ``phase``."""

    def transition_detail(self, transition: PhaseTransition) -> str:
        """Why backward ``transition`` was taken, for the re-entry prompt: the detail the phase
        recorded in ``phase_context.backward_trigger_detail``, else the condition that held."""
        recorded = self.phase_context.backward_trigger_detail
        if recorded:
            return recorded
        return (
            f"the condition '{transition.condition}' held when the "
            f"{transition.from_phase.value} phase finished its work"
        )

    def phase_work_summary(self, phase: enum.Enum) -> str:
        """What has been done in ``phase`` so far (shown in re-entry prompts)."""
        return "(nothing recorded)"

    def phase_tools(self, phase: enum.Enum) -> list[Any]:
        """The tools available in ``phase``."""
        return []

    def checkpoint_payload(self, checkpoint: Checkpoint) -> dict[str, Any]:
        """What the user reviews at ``checkpoint`` (e.g. the question tree)."""
        return {}

    def modify_keys(self, phase: enum.Enum) -> dict[str, str]:
        """The keys a 'modify' answer at the checkpoint after ``phase`` may carry, each with what
        it does; other keys are refused before the answer is recorded."""
        return {}

    def apply_modifications(self, phase: enum.Enum, modifications: dict[str, Any]) -> None:
        """Apply a user's 'modify' answer at the checkpoint after ``phase``."""

    def get_mode_data(self) -> dict[str, Any]:
        return {}

    def restore_mode_data(self, data: dict[str, Any]) -> None:
        pass

    @abstractmethod
    def result(self) -> ResultT:
        """The final result, when the run reaches the complete phase."""

    def summary(self) -> str:
        return f"{self.agent_type} complete"

    def partial_result(self) -> ResultT:
        return self.result()

    # -- prompts ---------------------------------------------------------------------------

    def phase_prompt(self, phase: enum.Enum) -> str:
        visits = self.phase_context.phase_visits.get(phase.value, 0)
        if visits <= 1:
            return self.initial_prompt(phase)
        return prompt_text(
            "PHASE_RETURN",
            phase=phase.value,
            backward_trigger=self.phase_context.backward_trigger or "(none recorded)",
            backward_trigger_detail=self.phase_context.backward_trigger_detail or "(none)",
            existing_work_summary=self.phase_work_summary(phase),
        )

    def family_prompt(self, family: str, phase: enum.Enum, **values: Any) -> str:
        """The prompt library's ``FAMILY_PHASE`` template for ``phase``: its initial variant on a
        first visit, its re-entry variant (visit count, backward trigger and its detail, the
        work done so far) on a later one, filled with ``values``."""
        visits = self.phase_context.phase_visits.get(phase.value, 0)
        return library_phase_prompt(
            family,
            phase.value,
            visit_count=visits - 1,
            backward_trigger=self.phase_context.backward_trigger or "",
            backward_trigger_detail=self.phase_context.backward_trigger_detail or "",
            existing_work_summary=self.phase_work_summary(phase),
            **values,
        )

    def is_reentry(self, phase: enum.Enum) -> bool:
        return self.phase_context.phase_visits.get(phase.value, 0) > 1

    # -- the engine ------------------------------------------------------------------------

    async def step(self, ctx: RunContext) -> StepOutcome[ResultT]:
        if self.stage == "start":
            self._enter(ctx, self.graph.initial, None, reason=None, is_backward=False)
            self.stage = "execute"
        phase = self.current_phase
        if phase == self.graph.complete:
            return StepOutcome(True, self.result(), self.summary())
        checkpoint = self.graph.checkpoints.get(phase)
        if self.stage == "checkpoint" and checkpoint is not None:
            return await self._run_checkpoint(ctx, phase, checkpoint)
        done = await self.execute_phase(phase, ctx)
        if not done:
            return CONTINUE
        if checkpoint is not None:
            if checkpoint.kind == CheckpointKind.BLOCKING or (
                checkpoint.kind == CheckpointKind.OPTIONAL and self.optional_checkpoints
            ):
                self.stage = "checkpoint"
                return CONTINUE
            ctx.emit(
                PhaseCheckpoint(
                    checkpoint_id=checkpoint.checkpoint_id,
                    phase=phase.value,
                    kind=checkpoint.kind,
                    message=checkpoint.message,
                    options=(),
                    requires_approval=False,
                    payload=self.checkpoint_payload(checkpoint),
                )
            )
        return self._transition(ctx)

    async def _run_checkpoint(
        self, ctx: RunContext, phase: enum.Enum, checkpoint: Checkpoint
    ) -> StepOutcome[ResultT]:
        payload = self.checkpoint_payload(checkpoint)
        ctx.emit(
            PhaseCheckpoint(
                checkpoint_id=checkpoint.checkpoint_id,
                phase=phase.value,
                kind=checkpoint.kind,
                message=checkpoint.message,
                payload=payload,
            )
        )
        answer = await ctx.ask(
            checkpoint.message,
            kind="checkpoint",
            options=("approve", "modify", "reject"),
            payload={
                "checkpoint_id": checkpoint.checkpoint_id,
                "phase": phase.value,
                **payload,
                **({"modify_keys": keys} if (keys := self.modify_keys(phase)) else {}),
            },
        )
        self.stage = "execute"
        action = answer.get("action", "approve")
        if action == "approve":
            return self._transition(ctx)
        if action == "modify":
            self.apply_modifications(phase, dict(answer.get("modifications") or {}))
            self.phase_context.backward_trigger = "user_modification"
            self.phase_context.backward_trigger_detail = str(answer.get("reason") or "")
            self._stay(ctx, phase, "checkpoint_modified")
            return CONTINUE
        reason = str(answer.get("reason") or "rejected at checkpoint")
        self.phase_context.backward_trigger = reason
        self.phase_context.backward_trigger_detail = f"rejected at {checkpoint.checkpoint_id}"
        backward = self.graph.backward_from(phase)
        if backward:
            self._enter(ctx, backward[0].to_phase, phase, reason=reason, is_backward=True)
        else:
            self._stay(ctx, phase, "checkpoint_rejected")
        return CONTINUE

    def _transition(self, ctx: RunContext) -> StepOutcome[ResultT]:
        phase = self.current_phase
        chosen = evaluate_transitions(self.graph.transitions, phase, self.evaluate_condition)
        if chosen is None:
            self._stay(ctx, phase, "no_transition_matched", revisit=False)
            return CONTINUE
        if chosen.is_backward:
            self.phase_context.backward_trigger = chosen.condition
            self.phase_context.backward_trigger_detail = self.transition_detail(chosen)
        else:
            self.phase_context.backward_trigger_detail = None  # what sent us back is addressed
        self._enter(
            ctx, chosen.to_phase, phase, reason=chosen.condition, is_backward=chosen.is_backward
        )
        if chosen.to_phase == self.graph.complete:
            return StepOutcome(True, self.result(), self.summary())
        return CONTINUE

    def _enter(
        self,
        ctx: RunContext,
        target: enum.Enum,
        source: enum.Enum | None,
        *,
        reason: str | None,
        is_backward: bool,
    ) -> None:
        visits = self.phase_context.phase_visits.get(target.value, 0) + 1
        if target != self.graph.complete and visits > ctx.limits.max_phase_visits:
            raise LimitExceededError("max_phase_visits", visits, ctx.limits.max_phase_visits)
        self.phase_context.phase_visits[target.value] = visits
        if source is not None:
            self.phase_context.transition_history.append(
                TransitionRecord(source.value, target.value, reason, is_backward)
            )
        self.current_phase = target
        ctx.emit(
            PhaseChanged(
                from_phase=source.value if source is not None else None,
                to_phase=target.value,
                is_backward=is_backward,
                reason=reason,
                detail=self.phase_context.backward_trigger_detail if is_backward else None,
                visit=visits,
            )
        )
        if is_backward:
            ctx.emit(AgentThinking(message=f"Returning to {target.value}: {reason}"))

    def _stay(self, ctx: RunContext, phase: enum.Enum, why: str, *, revisit: bool = True) -> None:
        """Run ``phase`` again; ``revisit`` when a person sent it back, which counts a visit."""
        visits = self.phase_context.phase_visits.get(phase.value, 0)
        if revisit:
            visits += 1
            if visits > ctx.limits.max_phase_visits:
                raise LimitExceededError("max_phase_visits", visits, ctx.limits.max_phase_visits)
            self.phase_context.phase_visits[phase.value] = visits
        ctx.emit(AgentThinking(message=f"Staying in {phase.value} ({why}); visit {visits}"))

    # -- state: everything needed to continue on another worker, as JSON -------------------

    def get_state(self) -> dict[str, Any]:
        ctx = jsoncodec.to_builtins(self.phase_context)
        history = ctx.pop("transition_history")
        return {
            "agent_type": self.agent_type,
            "current_phase": self.current_phase.value,
            "stage": self.stage,
            "args": self.args,
            "phase_context": ctx,
            "transition_history": history,
            "mode_data": self.get_mode_data(),
        }

    def restore_state(self, state: dict[str, Any]) -> None:
        self.current_phase = self.graph.phase(state["current_phase"])
        self.stage = state.get("stage", "execute")
        self.args = dict(state.get("args", self.args))
        self.optional_checkpoints = bool(self.args.get("optional_checkpoints", False))
        history = [_renamed(t) for t in state.get("transition_history", ())]
        self.phase_context = jsoncodec.convert(
            {**state["phase_context"], "transition_history": history}, self.context_class
        )
        self.restore_mode_data(state.get("mode_data", {}))

    @property
    def transition_history(self) -> list[TransitionRecord]:
        return self.phase_context.transition_history


def _renamed(record: dict[str, Any]) -> dict[str, Any]:
    """A transition saved before records used their field names (``from``, ``to``)."""
    if "from" not in record:
        return record
    old = dict(record)
    return {"from_phase": old.pop("from"), "to_phase": old.pop("to"), **old}
