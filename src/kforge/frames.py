"""Frames: the typed, append-only record of everything a run does.

Every frame is a frozen dataclass with a dotted ``type`` name (the SSE event name). The same
frames are the trace, the stream, the persisted log and the audit trail. ``frame_to_dict`` and
``frame_from_dict`` round-trip exactly through JSON.
"""

from __future__ import annotations

import dataclasses
import enum
import os
import random
import types
import typing
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, ClassVar, TypeVar

import orjson

from kforge import jsoncodec

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
    "frame_body_json",
    "frame_from_dict",
    "frame_from_json",
    "frame_to_dict",
    "frame_to_json",
    "new_id",
    "stamped",
    "upgrade_legacy_frame",
    "utc_now",
]

F = TypeVar("F", bound="Frame")

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


# -- JSON -------------------------------------------------------------------------------------

_HINTS: dict[type[Frame], dict[str, Any]] = {}


def _hints(cls: type[Frame]) -> dict[str, Any]:
    hints = _HINTS.get(cls)
    if hints is None:
        # Field annotations are strings naming this module's types; evaluating them directly is
        # several times cheaper than typing.get_type_hints, which a resumed run pays per class.
        namespace = globals()
        hints = {
            f.name: eval(f.type, namespace) if isinstance(f.type, str) else f.type
            for f in dataclasses.fields(cls)
        }
        _HINTS[cls] = hints
    return hints


_NAMES: dict[type[Frame], tuple[str, ...]] = {}
_PLAIN = frozenset({str, int, float, bool, type(None)})


def _names(cls: type[Frame]) -> tuple[str, ...]:
    names = _NAMES.get(cls)
    if names is None:
        names = _NAMES[cls] = tuple(f.name for f in dataclasses.fields(cls))
    return names


def _encode(value: Any) -> Any:
    if type(value) in _PLAIN:
        return value
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, tuple | list):
        return [_encode(v) for v in value]
    if isinstance(value, dict):
        return {k: _encode(v) for k, v in value.items()}
    return value


_DECODERS: dict[type[Frame], tuple[tuple[str, Callable[[Any], Any] | None], ...]] = {}


def _decoders(cls: type[Frame]) -> tuple[tuple[str, Callable[[Any], Any] | None], ...]:
    """Per field: None when the JSON value is already the field's value, else its converter."""
    found = _DECODERS.get(cls)
    if found is None:
        hints = _hints(cls)
        found = tuple((name, _decoder_for(hints[name])) for name in _names(cls))
        _DECODERS[cls] = found
    return found


def _decoder_for(hint: Any) -> Callable[[Any], Any] | None:
    """The converter from a field's JSON value (never None) to its Python value, worked out
    once per field type so that decoding a frame does not consult ``typing``."""
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(hint) if a is not type(None)]
        return _decoder_for(args[0]) if len(args) == 1 else None
    if hint is datetime:
        return datetime.fromisoformat
    if isinstance(hint, type) and issubclass(hint, enum.Enum):
        return hint
    if origin is tuple:
        item_args = typing.get_args(hint)
        inner = _decoder_for(item_args[0]) if item_args else None
        if inner is None:
            return tuple
        return lambda value: tuple(None if v is None else inner(v) for v in value)
    return None


def frame_to_dict(frame: Frame) -> dict[str, Any]:
    data: dict[str, Any] = {"type": frame.type}
    for name in _names(type(frame)):
        data[name] = _encode(getattr(frame, name))
    return data


_BODY_FIELDS: dict[type[Frame], tuple[tuple[str, ...], tuple[tuple[str, Any], ...]]] = {}
"""Each frame class's stored fields: those without a plain default, and those with theirs."""
_ENCODED: dict[int, tuple[Frame, str]] = {}
"""Bodies encoded once and not yet asked for again, by ``id``: a frame is encoded when it is
emitted (so an unstorable one fails the step that made it), and its commit takes the body out.
Each entry holds its frame, so an id is not reused while it is here."""
_ENCODED_KEEP = 256


def frame_body_json(frame: Frame) -> str:
    """The frame's fields except ``run_id`` and ``seq`` as JSON: what a store keeps beside
    those two columns and the type. ``TypeError`` if a field holds something JSON cannot."""
    known = _ENCODED.pop(id(frame), None)
    if known is not None and known[0] is frame:
        return known[1]
    text = _encode_body(frame)
    if len(_ENCODED) >= _ENCODED_KEEP:
        _ENCODED.clear()
    _ENCODED[id(frame)] = (frame, text)
    return text


def _encode_body(frame: Frame) -> str:
    cls = type(frame)
    fields = _BODY_FIELDS.get(cls)
    if fields is None:
        stored = [f for f in dataclasses.fields(cls) if f.name not in ("run_id", "seq")]
        fields = _BODY_FIELDS[cls] = (
            tuple(f.name for f in stored if type(f.default) not in _PLAIN),
            tuple((f.name, f.default) for f in stored if type(f.default) in _PLAIN),
        )
    always, optional = fields
    body = {name: getattr(frame, name) for name in always}
    # a field at its plain default (None, "", 0, False) is left out: reading fills it back in
    for name, default in optional:
        value = getattr(frame, name)
        if value is not default and (type(value) is not type(default) or value != default):
            body[name] = value
    try:
        # orjson writes enums, datetimes and tuples exactly as _encode converts them
        return orjson.dumps(body, option=orjson.OPT_PASSTHROUGH_DATACLASS).decode()
    except TypeError:
        return jsoncodec.dumps({name: _encode(value) for name, value in body.items()})


def unstorable_field(frame: Frame) -> str:
    """Which field keeps ``frame`` from being stored, and why (for error messages)."""
    for name in _names(type(frame)):
        try:
            jsoncodec.dumps(_encode(getattr(frame, name)))
        except (TypeError, ValueError) as exc:
            return f"frame '{frame.type}' field '{name}' cannot be stored ({exc})"
    return f"frame '{frame.type}' cannot be stored"


_SLOTS: dict[type[Frame], tuple[tuple[Any, Any], ...]] = {}
_set_run_id = Frame.__dict__["run_id"].__set__
_set_seq = Frame.__dict__["seq"].__set__


def stamped(frame: F, run_id: str, seq: int) -> F:
    """A copy of ``frame`` with its run id and seq set (what ``dataclasses.replace`` does,
    without re-running ``__init__``: frames are stamped on every emit)."""
    cls = type(frame)
    slots = _SLOTS.get(cls)
    if slots is None:
        descriptors = [getattr(cls, name) for name in _names(cls)]
        if not all(hasattr(d, "__set__") and hasattr(d, "__get__") for d in descriptors):
            return dataclasses.replace(frame, run_id=run_id, seq=seq)
        slots = _SLOTS[cls] = tuple(
            (d.__get__, d.__set__)
            for d, name in zip(descriptors, _names(cls), strict=True)
            if name not in ("run_id", "seq")
        )
    copy: F = object.__new__(cls)
    for get, put in slots:
        put(copy, get(frame))
    _set_run_id(copy, run_id)
    _set_seq(copy, seq)
    return copy


_LEGACY_TOOL_TYPES = frozenset(
    {"tool.start", "tool.success", "tool.error", "agent.tool_call", "agent.tool_result"}
)
"""Before one call frame and one result frame, a call was recorded as these four (two by the
execution wrapper, two by the agent) with renamed copies of the same fields."""


def upgrade_legacy_frame(data: dict[str, Any]) -> dict[str, Any]:
    """``data`` in today's vocabulary when it is a frame of the old tool-call vocabulary.

    Frame by frame: each old frame becomes a call or a result frame. A store upgrades whole
    logs instead (``kforge.store.migrations``), which also folds the agent's copies into the
    execution frames so that each call is one call and one result frame.
    """
    kind = data.get("type")
    if kind not in _LEGACY_TOOL_TYPES and not (
        kind == "agent.observation" and "tool_result_frame_id" in data
    ):
        return data
    keep: dict[str, Any] = {
        k: data[k] for k in ("id", "run_id", "seq", "created_at", "tool_name") if k in data
    }
    if kind == "agent.observation":
        upgraded = {k: v for k, v in data.items() if k != "tool_result_frame_id"}
        upgraded.setdefault("call_id", "")
        return upgraded
    if kind in ("tool.start", "agent.tool_call"):
        return {
            **keep,
            "type": ToolCallFrame.TYPE,
            "call_id": data.get("call_id", ""),
            "arguments": data.get("arguments", data.get("tool_arguments", {})),
            "reasoning": data.get("reasoning", ""),
            "read_only": data.get("read_only", False),
            "iteration": data.get("iteration", 0),
            "plan_frame_id": data.get("plan_frame_id"),
        }
    success = kind == "tool.success" or (kind == "agent.tool_result" and data.get("success"))
    error = str(data.get("error", data.get("error_message", "")))
    summary = data.get("result_summary", data.get("result_text", error))
    return {
        **keep,
        "type": ToolResultFrame.TYPE,
        "call_id": data.get("call_id", ""),
        "success": bool(success),
        "summary": summary,
        "error": error,
        "result": data.get("result") or {},
        "execution_time_ms": data.get("execution_time_ms", 0.0),
        "cached": data.get("cached", False),
    }


def frame_from_dict(data: dict[str, Any]) -> Frame:
    type_name = data.get("type")
    if not isinstance(type_name, str):
        raise ValueError("frame JSON has no 'type'")
    if type_name in _LEGACY_TOOL_TYPES or type_name == "agent.observation":
        data = upgrade_legacy_frame(data)
        type_name = data["type"]
    cls = _REGISTRY.get(type_name)
    if cls is None:
        if type_name.startswith("data."):
            cls = DataEvent
        else:
            raise ValueError(f"unknown frame type '{type_name}'")
    kwargs = {}
    for name, decode in _decoders(cls):
        if name in data:
            value = data[name]
            kwargs[name] = value if decode is None or value is None else decode(value)
    return cls(**kwargs)


def frame_to_json(frame: Frame) -> str:
    return jsoncodec.dumps(frame_to_dict(frame))


def frame_from_json(text: str) -> Frame:
    return frame_from_dict(jsoncodec.loads(text))
