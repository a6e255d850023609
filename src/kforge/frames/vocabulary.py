"""The frame vocabulary: one frozen dataclass per kind of thing a run records.

Every frame has a dotted ``type`` name (the SSE event name); ``frame_class`` finds the class of
a stored type. How frames become JSON and back is ``kforge.frames.codec``.
"""

from __future__ import annotations

import enum
import os
import random
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, ClassVar

from kforge.frames.slots import fast_init

__all__ = [
    "AgentAction",
    "AgentControl",
    "AgentResponse",
    "AgentSpeaking",
    "AgentStatus",
    "AgentThinking",
    "CheckpointKind",
    "Compaction",
    "Complete",
    "DataEvent",
    "ErrorFrame",
    "Frame",
    "InteractionAnswered",
    "InteractionRequested",
    "Intervention",
    "LimitReached",
    "LimitWarning",
    "ModelCall",
    "Observation",
    "PhaseChanged",
    "PhaseCheckpoint",
    "Plan",
    "Reflection",
    "StatusChanged",
    "TokenDelta",
    "ToolCallFrame",
    "ToolResultFrame",
    "UsageFrame",
    "frame_class",
    "new_id",
    "utc_now",
]

_REGISTRY: dict[str, type[Frame]] = {}


_ids = random.Random(os.urandom(32))
os.register_at_fork(after_in_child=lambda: _ids.seed(os.urandom(32)))
_V4_CLEAR = ~((0xF000 << 64) | (0xC000 << 48))
_V4_SET = (0x4000 << 64) | (0x8000 << 48)


def new_id() -> str:
    """A random (version 4) UUID as 32 hex digits.

    Drawn from a generator seeded by the OS once per process (and again after a fork) instead
    of a system call per id: every frame gets one. Ids name things; they are not secrets.
    """
    return f"{_ids.getrandbits(128) & _V4_CLEAR | _V4_SET:032x}"


def utc_now() -> datetime:
    return datetime.now(UTC)


class AgentAction(enum.Enum):
    PLAN = "plan"
    TOOL_CALL = "tool_call"
    RESPOND = "respond"
    ASK_USER = "ask_user"


class CheckpointKind(enum.Enum):
    BLOCKING = "blocking"
    """The run waits for approve, modify or reject."""
    OPTIONAL = "optional"
    """The run waits only when the agent is configured to ask."""
    INFORMATIONAL = "informational"
    """Shown to the user; the run does not wait."""


@dataclass(frozen=True, kw_only=True, slots=True)
class Frame:
    """Base of every frame. ``run_id`` and ``seq`` are assigned when the frame is emitted."""

    TYPE: ClassVar[str] = "frame"

    id: str = field(default_factory=new_id)
    run_id: str = ""
    seq: int = 0
    """Per-run, gap-free, starting at 1; 0 means not yet emitted."""
    created_at: datetime = field(default_factory=utc_now)

    def __init_subclass__(cls, **kwargs: Any) -> None:
        # No zero-argument super(): slots=True rebuilds the class, which breaks its __class__ cell.
        type_name = cls.__dict__.get("TYPE")
        if type_name and type_name != "frame":
            _REGISTRY[type_name] = cls
        # the class @dataclass made (with its slots): frames are built on every emit
        init = fast_init(cls)
        if init is not None:
            cls.__init__ = init  # type: ignore[method-assign]

    @property
    def type(self) -> str:
        return self.TYPE


# -- phases --------------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True, slots=True)
class PhaseChanged(Frame):
    TYPE: ClassVar[str] = "phase.changed"
    from_phase: str | None
    to_phase: str
    is_backward: bool = False
    reason: str | None = None
    """The transition condition, or the backward trigger that caused it."""
    detail: str | None = None
    visit: int = 1
    """Which visit to ``to_phase`` this starts (1 = first)."""


@dataclass(frozen=True, kw_only=True, slots=True)
class PhaseCheckpoint(Frame):
    TYPE: ClassVar[str] = "phase.checkpoint"
    checkpoint_id: str
    phase: str
    kind: CheckpointKind
    message: str
    options: tuple[str, ...] = ("approve", "modify", "reject")
    requires_approval: bool = True
    payload: dict[str, Any] = field(default_factory=dict)
    """What the user is asked to approve (for example the question tree)."""


# -- agent ----------------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True, slots=True)
class AgentThinking(Frame):
    TYPE: ClassVar[str] = "agent.thinking"
    message: str


@dataclass(frozen=True, kw_only=True, slots=True)
class AgentSpeaking(Frame):
    TYPE: ClassVar[str] = "agent.speaking"
    text: str


@dataclass(frozen=True, slots=True)
class TokenDelta:
    """A piece of model text as it is generated, for live subscribers only.

    Not a frame: it has no seq and is never stored. The finished text is recorded once, in
    the ``model.call`` frame, and a re-executed step replays that without any deltas.
    """

    TYPE: ClassVar[str] = "agent.token"

    run_id: str
    text: str
    purpose: str = ""

    @property
    def type(self) -> str:
        return self.TYPE


@dataclass(frozen=True, kw_only=True, slots=True)
class AgentStatus(Frame):
    """Status of the loop inside a phase: thinking, executing, analyzing, reflecting, synthesizing."""

    TYPE: ClassVar[str] = "agent.status"
    phase: str
    step_number: int = 0
    max_steps: int = 0
    current_tool: str | None = None
    input_tokens: int = 0
    output_tokens: int = 0


@dataclass(frozen=True, kw_only=True, slots=True)
class Plan(Frame):
    TYPE: ClassVar[str] = "agent.plan"
    goal: str
    reasoning: str
    observations: tuple[str, ...] = ()
    next_action: AgentAction = AgentAction.PLAN
    iteration: int = 0
    max_iterations: int = 5


@dataclass(frozen=True, kw_only=True, slots=True)
class Observation(Frame):
    """The agent's judgement of a tool result against the goal."""

    TYPE: ClassVar[str] = "agent.observation"
    content: str
    goal_achieved: bool = False
    iteration: int = 0
    call_id: str = ""
    """The tool call judged (``ToolCallFrame.call_id``); empty when no tool ran."""


@dataclass(frozen=True, kw_only=True, slots=True)
class AgentResponse(Frame):
    TYPE: ClassVar[str] = "agent.response"
    response_text: str
    goal_achieved: bool = True
    iterations_used: int = 0
    tools_called: tuple[str, ...] = ()
    reasoning_trace: str = ""


@dataclass(frozen=True, kw_only=True, slots=True)
class AgentControl(Frame):
    TYPE: ClassVar[str] = "agent.control"
    action: AgentAction
    should_continue: bool = True
    iteration: int = 0
    max_iterations_reached: bool = False
    timeout_reached: bool = False


@dataclass(frozen=True, kw_only=True, slots=True)
class Reflection(Frame):
    TYPE: ClassVar[str] = "agent.reflection"
    reflection_id: str
    error_type: str
    failed_action: dict[str, Any]
    analysis: str
    suggested_fix: str
    repeated: bool = False


@dataclass(frozen=True, kw_only=True, slots=True)
class Compaction(Frame):
    TYPE: ClassVar[str] = "context.compaction"
    tokens_before: int
    tokens_after: int
    entries_compacted: int = 0
    summary: str = ""


# -- data -------------------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True, slots=True)
class DataEvent(Frame):
    """A state update with a domain name, e.g. ``data.question.added`` or ``data.source.found``."""

    TYPE: ClassVar[str] = "data"
    name: str
    """The dotted name after ``data.``, e.g. ``question.added``."""
    payload: dict[str, Any] = field(default_factory=dict)

    @property
    def type(self) -> str:
        return f"data.{self.name}"


# -- tools ------------------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True, slots=True)
class ToolCallFrame(Frame):
    """An agent calls a tool. Committed before a tool that is not read-only runs, so a call
    without a result means the outcome is unknown."""

    TYPE: ClassVar[str] = "tool.call"
    tool_name: str
    call_id: str
    """Pairs the call with its ``ToolResultFrame``."""
    arguments: dict[str, Any] = field(default_factory=dict)
    reasoning: str = ""
    """Why the agent made the call."""
    read_only: bool = False
    """True when the tool declared itself read-only and idempotent: safe to run again on resume."""
    iteration: int = 0
    plan_frame_id: str | None = None


@dataclass(frozen=True, kw_only=True, slots=True)
class ToolResultFrame(Frame):
    """What a tool call returned, or why it failed."""

    TYPE: ClassVar[str] = "tool.result"
    tool_name: str
    call_id: str
    success: bool
    summary: str
    """The result (or the error) as short text."""
    error: str = ""
    result: dict[str, Any] = field(default_factory=dict)
    """The full result (ToolResult as JSON) so a resumed step never runs the tool again."""
    execution_time_ms: float = 0.0
    cached: bool = False


# -- model ------------------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True, slots=True)
class ModelCall(Frame):
    """A finished model call, recorded so that a resumed run never requests it again."""

    TYPE: ClassVar[str] = "model.call"
    model: str
    response: dict[str, Any]
    """The ModelResponse as JSON."""
    purpose: str = ""
    duration_ms: float = 0.0
    prompt_base: int = 0
    """The seq of the earlier ``model.call`` frame whose prompt ``prompt_delta`` is written
    against (the last call of the same purpose); 0: none, the delta holds the whole prompt."""
    prompt_delta: tuple[Any, ...] | None = None
    """The prompt as changes to the base's (``kforge.llm.prompt_delta``); None where the prompt
    was not recorded (frames written before prompts were)."""
    prompt_state: dict[str, Any] | None = None
    """The first call of a resumed stretch: its delta copies the message records of the run's
    state instead of an earlier call's prompt, the list at ``path`` in the state after
    ``step`` (``{"step": 100, "path": ["agent", "messages"]}``); the history the run restored
    is not written again."""


@dataclass(frozen=True, kw_only=True, slots=True)
class UsageFrame(Frame):
    TYPE: ClassVar[str] = "usage"
    model: str
    input_tokens: int
    output_tokens: int
    run_input_tokens: int = 0
    run_output_tokens: int = 0
    cost_usd: float | None = None
    """The call's cost from the configured prices; None when the model has no price."""
    run_cost_usd: float | None = None
    """The run's cost so far; None while none of its calls had a price."""


# -- people -----------------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True, slots=True)
class InteractionRequested(Frame):
    TYPE: ClassVar[str] = "interaction.requested"
    interaction_id: str
    kind: str
    """question, checkpoint or approval."""
    prompt: str
    options: tuple[str, ...] = ()
    payload: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, kw_only=True, slots=True)
class InteractionAnswered(Frame):
    TYPE: ClassVar[str] = "interaction.answered"
    interaction_id: str
    answer: dict[str, Any]


@dataclass(frozen=True, kw_only=True, slots=True)
class Intervention(Frame):
    TYPE: ClassVar[str] = "intervention"
    action: str
    """delete, modify or comment."""
    content: str = ""
    target_run_id: str = ""


# -- lifecycle --------------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True, slots=True)
class StatusChanged(Frame):
    TYPE: ClassVar[str] = "status.changed"
    from_status: str | None
    to_status: str
    reason: str = ""


@dataclass(frozen=True, kw_only=True, slots=True)
class LimitWarning(Frame):
    """A run crossed the warning threshold of a token or cost limit."""

    TYPE: ClassVar[str] = "limit.warning"
    limit: str
    """max_tokens, max_session_tokens or max_cost_usd."""
    value: float
    maximum: float


@dataclass(frozen=True, kw_only=True, slots=True)
class LimitReached(Frame):
    TYPE: ClassVar[str] = "limit.reached"
    limit: str
    """max_steps, max_phase_visits, max_wall_time_s, max_tokens, max_cost_usd, ..."""
    value: float
    maximum: float
    partial_result: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, kw_only=True, slots=True)
class ErrorFrame(Frame):
    TYPE: ClassVar[str] = "error"
    error_type: str
    message: str
    recoverable: bool = False


@dataclass(frozen=True, kw_only=True, slots=True)
class Complete(Frame):
    TYPE: ClassVar[str] = "complete"
    summary: str
    result: dict[str, Any] = field(default_factory=dict)
    partial: bool = False


def frame_class(type_name: str) -> type[Frame] | None:
    """The class of frames of ``type_name`` (``DataEvent`` for any ``data.*``), or None."""
    cls = _REGISTRY.get(type_name)
    if cls is None and type_name.startswith("data."):
        return DataEvent
    return cls
