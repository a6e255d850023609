"""How a stretch stops short of completing: paused (at a limit, by a person, for an
unreachable model), ended by a person's delete or cancel, or failed with a frame that says why."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kforge.engine.agent import StepAgent, record_result
from kforge.engine.run_context import RunContext
from kforge.engine.state import Baseline
from kforge.engine.writer import StretchWriter
from kforge.errors import LimitExceededError, ModelUnavailableError
from kforge.frames import ErrorFrame, Frame, Intervention, LimitReached, StatusChanged
from kforge.store.base import RunStatus, Snapshot

__all__ = ["MODEL_UNAVAILABLE", "StretchEndings", "printable"]

MODEL_UNAVAILABLE = "model_unavailable"
"""The pause reason of a run whose model stayed unreachable through its retries."""


def printable(text: str) -> str:
    """``text`` with lone surrogates escaped, so that an error quoting bad input can be stored."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


class StretchEndings(StretchWriter):
    """The ways a ``StepRunner`` stretch ends other than completing (each one final commit)."""

    if TYPE_CHECKING:
        agent: StepAgent[object]

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
                "result": {**record_result(self.agent.partial_result()), status.value: True},
                "pending_interaction": None,
            },
        )
        return status

    def _pause_on_limit(
        self,
        ctx: RunContext,
        exc: LimitExceededError,
        step_no: int,
        step_seq: int,
        prev_state: dict[str, Any],
    ) -> RunStatus:
        partial = record_result(self.agent.partial_result())
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
            f"the agent's state, its result or a frame is not JSON ({exc}); get_state() must "
            "return JSON values (dicts, lists, strings, numbers, booleans, None), a result "
            "its declared result type (a dataclass of them) or a dict of them"
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
