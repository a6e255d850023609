"""Trajectory log: a run's thoughts, tool calls, results, observations, reflections and errors.

Every entry has its timestamp and step number. Built from the run's frames, so any run (live or stored) can be
explained and measured: steps, efficiency against optimal steps, tokens, duration, errors.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal, get_args

from kforge import jsoncodec
from kforge.errors import ValidationError
from kforge.frames import (
    AgentResponse,
    AgentThinking,
    Complete,
    ErrorFrame,
    Frame,
    LimitReached,
    ModelCall,
    Observation,
    Plan,
    Reflection,
    StatusChanged,
    ToolCallFrame,
    ToolResultFrame,
    UsageFrame,
    utc_now,
)

__all__ = ["EntryType", "LogEntry", "TrajectoryLog", "TrajectoryMetrics"]

EntryType = Literal[
    "thought", "tool_call", "tool_result", "observation", "reflection", "error", "synthesis"
]
"""What an entry records: a part of a ReAct step, or ``synthesis`` for the final response."""

_TYPES: frozenset[str] = frozenset(get_args(EntryType))


@dataclass(frozen=True, slots=True)
class LogEntry:
    timestamp: datetime
    step_number: int
    """1-based ReAct step this entry belongs to."""
    type: EntryType
    content: str
    metadata: dict[str, Any] = field(default_factory=dict)
    frame_id: str = ""
    """The frame this entry was built from; empty for entries logged directly."""
    seq: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {
            "timestamp": self.timestamp.isoformat(),
            "step_number": self.step_number,
            "type": self.type,
            "content": self.content,
            "metadata": self.metadata,
            "frame_id": self.frame_id,
            "seq": self.seq,
        }


@dataclass(frozen=True, slots=True)
class TrajectoryMetrics:
    total_steps: int
    input_tokens: int
    output_tokens: int
    duration_s: float
    """From the first to the last frame seen (or entry logged)."""
    error_count: int
    """Error entries plus failed tool results."""
    optimal_steps: int | None = None
    efficiency: float | None = None
    """``optimal_steps / total_steps`` when both are known; above 1 means fewer than optimal."""

    @property
    def total_tokens(self) -> int:
        return self.input_tokens + self.output_tokens

    def to_dict(self) -> dict[str, Any]:
        return {
            "total_steps": self.total_steps,
            "optimal_steps": self.optimal_steps,
            "efficiency": self.efficiency,
            "total_tokens": {"input": self.input_tokens, "output": self.output_tokens},
            "duration_s": self.duration_s,
            "error_count": self.error_count,
        }


class TrajectoryLog:
    """Entries with step numbers, built frame by frame (``add_frame``) or logged directly.

    Steps are derived from the order of entries: a thought after any action, or a second tool
    call, starts a new step. Each tool call is one ``tool.call`` and one ``tool.result`` frame.
    """

    def __init__(
        self, request_id: str = "", goal: str = "", *, optimal_steps: int | None = None
    ) -> None:
        if optimal_steps is not None and optimal_steps < 1:
            raise ValidationError(
                f"trajectory: optimal_steps must be at least 1 (got {optimal_steps})"
            )
        self.request_id = request_id
        self.goal = goal
        self.optimal_steps = optimal_steps
        self.status = "running"
        """running, completed, terminated (a limit was hit), or the run's last status change."""
        self.entries: list[LogEntry] = []
        self._step = 0
        self._step_acted = False
        self._step_called = False
        self._usage = [0, 0]
        self._model_call_usage = [0, 0]
        self._usage_seen = False
        self._first: datetime | None = None
        self._last: datetime | None = None

    @classmethod
    def from_frames(
        cls,
        frames: Iterable[Frame],
        *,
        request_id: str = "",
        goal: str = "",
        optimal_steps: int | None = None,
    ) -> TrajectoryLog:
        log = cls(request_id, goal, optimal_steps=optimal_steps)
        for frame in frames:
            log.add_frame(frame)
        return log

    # -- building -----------------------------------------------------------------------------

    def log_step(
        self,
        type: EntryType,
        content: str,
        *,
        metadata: Mapping[str, Any] | None = None,
        timestamp: datetime | None = None,
        frame: Frame | None = None,
    ) -> LogEntry:
        """Append an entry; its step number follows from the entries before it."""
        if type not in _TYPES:
            raise ValidationError(
                f"trajectory: entry type must be one of {', '.join(sorted(_TYPES))} (got {type!r})"
            )
        starts_step = (type == "thought" and self._step_acted) or (
            type == "tool_call" and self._step_called
        )
        if self._step == 0 or starts_step:
            self._new_step()
        if type != "thought":
            self._step_acted = True
        if type == "tool_call":
            self._step_called = True
        stamp = timestamp or (frame.created_at if frame else utc_now())
        self._seen(stamp)
        entry = LogEntry(
            timestamp=stamp,
            step_number=self._step,
            type=type,
            content=content,
            metadata=dict(metadata or {}),
            frame_id=frame.id if frame else "",
            seq=frame.seq if frame else 0,
        )
        self.entries.append(entry)
        return entry

    def add_frame(self, frame: Frame) -> LogEntry | None:
        """Take one frame of the run into account; returns the entry it produced, if any."""
        self._seen(frame.created_at)
        if not self.request_id:
            self.request_id = frame.run_id
        described = self._describe(frame)
        if described is None:
            return None
        kind, content, metadata = described
        return self.log_step(kind, content, metadata=metadata, frame=frame)

    def _describe(self, frame: Frame) -> tuple[EntryType, str, dict[str, Any]] | None:
        """The entry for ``frame`` (None for frames that only update metrics or status)."""
        meta: dict[str, Any]
        match frame:
            case Plan():
                self.goal = self.goal or frame.goal
                meta = {"goal": frame.goal, "next_action": frame.next_action.value}
                return "thought", frame.reasoning or frame.goal, meta
            case AgentThinking():
                return "thought", frame.message, {}
            case ToolCallFrame():
                meta = {"tool_name": frame.tool_name, "arguments": frame.arguments}
                if frame.reasoning:
                    meta["reasoning"] = frame.reasoning
                return "tool_call", _call_text(frame.tool_name, frame.arguments), meta
            case ToolResultFrame():
                text = frame.summary if frame.success else frame.error or frame.summary
                meta = _result_meta(frame.tool_name, frame.success, frame.execution_time_ms)
                return "tool_result", text, meta
            case Observation():
                return "observation", frame.content, {"goal_achieved": frame.goal_achieved}
            case Reflection():
                text = f"{frame.error_type}: {frame.analysis} Fix: {frame.suggested_fix}"
                meta = {
                    "reflection_id": frame.reflection_id,
                    "error_type": frame.error_type,
                    "failed_action": frame.failed_action,
                    "repeated": frame.repeated,
                }
                return "reflection", text, meta
            case ErrorFrame():
                meta = {"error_type": frame.error_type, "recoverable": frame.recoverable}
                return "error", f"{frame.error_type}: {frame.message}", meta
            case LimitReached():
                self.status = "terminated"
                text = f"limit '{frame.limit}' reached: {frame.value:g} of {frame.maximum:g}"
                meta = {"limit": frame.limit, "value": frame.value, "maximum": frame.maximum}
                return "error", text, meta
            case AgentResponse():
                meta = {"goal_achieved": frame.goal_achieved, "tools_called": [*frame.tools_called]}
                return "synthesis", frame.response_text, meta
            case UsageFrame():
                self._usage_seen = True
                self._usage[0] += frame.input_tokens
                self._usage[1] += frame.output_tokens
            case ModelCall():
                usage = frame.response.get("usage") or {}
                self._model_call_usage[0] += int(usage.get("input_tokens", 0))
                self._model_call_usage[1] += int(usage.get("output_tokens", 0))
            case StatusChanged():
                self.status = frame.to_status
            case Complete():
                self.status = "terminated" if frame.partial else "completed"
        return None

    # -- measuring ----------------------------------------------------------------------------

    @property
    def total_steps(self) -> int:
        return self._step

    def calculate_efficiency(self, optimal_steps: int) -> float:
        """``optimal_steps / total_steps``; 0.0 when no step was taken."""
        return optimal_steps / self._step if self._step else 0.0

    @property
    def metrics(self) -> TrajectoryMetrics:
        tokens = self._usage if self._usage_seen else self._model_call_usage
        duration = (self._last - self._first).total_seconds() if self._first and self._last else 0.0
        errors = sum(
            1
            for e in self.entries
            if e.type == "error" or (e.type == "tool_result" and e.metadata.get("success") is False)
        )
        efficiency = None
        if self.optimal_steps is not None and self._step:
            efficiency = self.calculate_efficiency(self.optimal_steps)
        return TrajectoryMetrics(
            total_steps=self._step,
            input_tokens=tokens[0],
            output_tokens=tokens[1],
            duration_s=duration,
            error_count=errors,
            optimal_steps=self.optimal_steps,
            efficiency=efficiency,
        )

    # -- export -------------------------------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        return {
            "request_id": self.request_id,
            "goal": self.goal,
            "status": self.status,
            "entries": [e.to_dict() for e in self.entries],
            "metrics": self.metrics.to_dict(),
        }

    def to_json(self, *, indent: bool = True) -> str:
        """The log for debugging or export: entries, metrics and status as JSON."""
        return jsoncodec.dumps(self.to_dict(), indent=indent, default=str)

    # -- internals ----------------------------------------------------------------------------

    def _new_step(self) -> None:
        self._step += 1
        self._step_acted = False
        self._step_called = False

    def _seen(self, stamp: datetime) -> None:
        if self._first is None or stamp < self._first:
            self._first = stamp
        if self._last is None or stamp > self._last:
            self._last = stamp


def _result_meta(tool_name: str, success: bool, execution_time_ms: float) -> dict[str, Any]:
    return {"tool_name": tool_name, "success": success, "execution_time_ms": execution_time_ms}


def _call_text(name: str, arguments: Mapping[str, Any]) -> str:
    return f"{name}({jsoncodec.dumps(arguments, sort_keys=True, default=str, spaced=True)})"
