"""Reflexion: reflect on a failed tool call or check, and suggest a different action.

A failed action's reflection is kept (in ``kforge.memory.episodic``) and offered again before a
similar action.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, create_model

from kforge import jsoncodec
from kforge.errors import ModelError, ModelOutputError, ScriptedModelError
from kforge.frames import Reflection, new_id
from kforge.llm.structured import complete_structured
from kforge.llm.types import Message, ModelSettings, ToolCall, ToolSpec
from kforge.memory.compaction import CompleteFn, RunHandle, journaled_complete
from kforge.memory.episodic import EpisodicMemory, FailureKind, ReflectionRecord, call_key
from kforge.prompts import prompt_text

__all__ = [
    "ALTERNATIVE_PROMPT",
    "ERROR_TYPES",
    "REFLECTION_PROMPT",
    "AlternativeAction",
    "AlternativeReply",
    "ReflectionDraft",
    "ReflectionReply",
    "alternative_reply",
    "classify_error",
    "format_reflections",
    "generate_reflection",
    "reflect_in_run",
    "reflect_on_failure",
    "suggest_alternative",
]

log = logging.getLogger(__name__)

_FIXES: dict[str, str] = {
    "invalid_arguments": "correct the arguments the error names so they match the tool's input "
    "schema before calling it again",
    "not_found": "check the name, id or path, or search for the right one first, instead of "
    "calling it again with the same value",
    "permission_denied": "use a resource the user has access to, or ask the user for access",
    "timeout": "narrow the request (fewer items, a smaller range) or use a faster tool",
    "rate_limited": "wait before retrying, or use a different tool that gives the same information",
    "empty_result": "broaden or rephrase the query, or try another source",
    "wrong_tool": "choose a tool whose description matches the goal",
    "check_failed": "change the approach that produced the rejected result rather than repeating it",
    "tool_error": "change the arguments or choose another tool; the same call is likely to fail again",
}
"""The rule-based fix for each error type, used when the model's reflection is unusable."""

ERROR_TYPES: tuple[str, ...] = tuple(_FIXES)

_PATTERNS: tuple[tuple[str, str], ...] = (
    ("timeout", r"time[d ]?out|timed out|deadline"),
    ("rate_limited", r"rate.?limit|too many requests|\b429\b|quota"),
    ("permission_denied", r"permission|forbidden|denied|unauthori[sz]ed|\b40[13]\b|not allowed"),
    ("not_found", r"not found|no such|does not exist|doesn't exist|unknown|\b404\b|missing file"),
    (
        "invalid_arguments",
        r"invalid|argument|parameter|schema|required|must be|expected|type error",
    ),
    ("empty_result", r"no results?|empty|nothing found|zero results"),
)


class ReflectionReply(BaseModel):
    """The model's reflection on a failure; ``error_type`` is mapped onto ``ERROR_TYPES``."""

    model_config = ConfigDict(
        str_strip_whitespace=True, json_schema_extra={"additionalProperties": False}
    )

    error_type: Annotated[str, Field(min_length=1, json_schema_extra={"enum": list(ERROR_TYPES)})]
    analysis: str = Field(min_length=1)
    suggested_fix: str = Field(min_length=1)


class AlternativeReply(BaseModel):
    """A different action: a ToolCall-like object; ``alternative_reply`` narrows its ``name``."""

    model_config = ConfigDict(json_schema_extra={"additionalProperties": False})

    name: str = Field(min_length=1)
    arguments: dict[str, Any]
    reasoning: str


@lru_cache(maxsize=32)
def alternative_reply(names: tuple[str, ...]) -> type[AlternativeReply]:
    """The ``AlternativeReply`` whose ``name`` is one of ``names`` (any name when empty)."""
    if not names:
        return AlternativeReply
    return create_model(
        "AlternativeReply",
        __base__=AlternativeReply,
        __doc__=AlternativeReply.__doc__,
        name=(Literal[names], ...),  # type: ignore[arg-type]
    )


REFLECTION_PROMPT = prompt_text("REFLECTION")
ALTERNATIVE_PROMPT = prompt_text("ALTERNATIVE_ACTION")

_MAX_ERROR_CHARS = 2000


@dataclass(frozen=True, slots=True)
class ReflectionDraft:
    """What reflecting on one failure produced, before it is stored."""

    error_type: str
    analysis: str
    suggested_fix: str
    from_model: bool
    """False when the model's output was unusable and the rule-based fallback was used."""


@dataclass(frozen=True, slots=True)
class AlternativeAction:
    call: ToolCall
    reasoning: str


# -- reflecting ---------------------------------------------------------------------------------


def classify_error(error: str, kind: FailureKind = "tool") -> str:
    """The error type for ``error`` by keywords; ``check_failed`` for checks, else ``tool_error``."""
    if kind == "check":
        return "check_failed"
    lowered = error.lower()
    for error_type, pattern in _PATTERNS:
        if re.search(pattern, lowered):
            return error_type
    return "tool_error"


async def generate_reflection(
    complete: CompleteFn,
    failed_action: ToolCall,
    error: str,
    *,
    kind: FailureKind = "tool",
    goal: str = "",
    previous: Sequence[ReflectionRecord] = (),
    settings: ModelSettings | None = None,
) -> ReflectionDraft:
    """Ask the model why ``failed_action`` failed; fall back to rules when its answer is unusable."""
    request = _describe_failure(failed_action, error, kind, goal, previous)
    try:
        reply = await complete_structured(
            complete,
            [Message.system(REFLECTION_PROMPT), Message.user(request)],
            ReflectionReply,
            settings,
            attempts=1,
            what="reflection",
        )
    except ScriptedModelError:
        raise  # a mis-scripted test must fail, not be hidden by the fallback
    except ModelOutputError:
        return _fallback_reflection(failed_action, error, kind)
    except ModelError as exc:
        log.warning("reflection model call failed, using the rule-based reflection: %s", exc)
        return _fallback_reflection(failed_action, error, kind)
    analysis, fix = reply.analysis, reply.suggested_fix
    error_type = re.sub(r"[^a-z0-9]+", "_", reply.error_type.lower()).strip("_")
    if error_type not in ERROR_TYPES:
        error_type = classify_error(error, kind)
    return ReflectionDraft(error_type, analysis, fix, from_model=True)


async def reflect_on_failure(
    complete: CompleteFn,
    memory: EpisodicMemory,
    failed_action: ToolCall,
    error: str,
    *,
    kind: FailureKind = "tool",
    goal: str = "",
    run_id: str = "",
    settings: ModelSettings | None = None,
    emit: Callable[[Reflection], Reflection] | None = None,
) -> ReflectionRecord:
    """Reflect on a failure, pass the ``agent.reflection`` frame to ``emit``, and store it.

    The stored record takes its id, time and ``repeated`` flag from the frame ``emit`` returns,
    so when a step is re-executed and the recorded frame comes back, the document is replaced
    rather than duplicated.
    """
    previous = memory.relevant(failed_action)
    draft = await generate_reflection(
        complete, failed_action, error, kind=kind, goal=goal, previous=previous, settings=settings
    )
    record = ReflectionRecord(
        id=new_id(),
        error_type=draft.error_type,
        failed_action=ToolCall(failed_action.name, dict(failed_action.arguments)),
        error=error[:_MAX_ERROR_CHARS],
        analysis=draft.analysis,
        suggested_fix=draft.suggested_fix,
        kind=kind,
        repeated=memory.is_repeated(draft.error_type),
        run_id=run_id,
    )
    if emit is not None:
        frame = emit(record.to_frame())
        record = replace(record, id=frame.reflection_id, created_at=frame.created_at)
        record = replace(record, repeated=frame.repeated, run_id=frame.run_id or run_id)
    memory.save(record)
    return record


async def reflect_in_run(
    run: RunHandle,
    memory: EpisodicMemory,
    failed_action: ToolCall,
    error: str,
    *,
    kind: FailureKind = "tool",
    goal: str = "",
    settings: ModelSettings | None = None,
) -> ReflectionRecord:
    """``reflect_on_failure`` through the run's journaled model, emitting the frame in the run."""
    complete = journaled_complete(run, "reflexion.reflect")
    return await reflect_on_failure(
        complete,
        memory,
        failed_action,
        error,
        kind=kind,
        goal=goal,
        settings=settings,
        emit=run.emit,
    )


def format_reflections(records: Sequence[ReflectionRecord]) -> str:
    """Reflections as prompt text for the next attempt; empty when there are none."""
    if not records:
        return ""
    lines = ["Lessons from earlier failures of similar actions:"]
    for r in records:
        call = call_key(r.failed_action)
        lines.append(f"- {call} failed ({r.error_type}): {r.analysis} Fix: {r.suggested_fix}")
    return "\n".join(lines)


# -- alternatives -------------------------------------------------------------------------------


async def suggest_alternative(
    complete: CompleteFn,
    failed_action: ToolCall,
    error: str,
    *,
    memory: EpisodicMemory | None = None,
    tools: Sequence[ToolSpec] = (),
    goal: str = "",
    settings: ModelSettings | None = None,
) -> AlternativeAction | None:
    """A different action than ``failed_action`` and than every failed call in ``memory``.

    Returns None when the model proposes nothing usable (malformed output, an unknown tool, or
    a call that already failed): the caller should then stop retrying this action.
    """
    failed = {call_key(c): c for c in (*(memory.failed_calls() if memory else ()), failed_action)}
    # The prompt shows the latest failures of this tool; the check below refuses every one.
    same_tool = [c for c in failed.values() if c.name == failed_action.name][-10:]
    lines = [f"Goal: {goal}" if goal else "", f"Error: {error[:_MAX_ERROR_CHARS]}"]
    lines.append("Calls that already failed:")
    lines.extend(f"- {call_key(c)}" for c in same_tool)
    if memory:
        lines.append(format_reflections(memory.relevant(failed_action)))
    if tools:
        lines.append("Available tools:")
        lines.extend(
            f"- {t.name}: {t.description} input: {jsoncodec.dumps(t.input_schema, spaced=True)}"
            for t in tools
        )
    request = "\n".join(line for line in lines if line)
    try:
        reply = await complete_structured(
            complete,
            [Message.system(ALTERNATIVE_PROMPT), Message.user(request)],
            alternative_reply(tuple(t.name for t in tools)),
            settings,
            attempts=1,
            what="alternative action",
        )
    except ScriptedModelError:
        raise  # a mis-scripted test must fail, not be hidden by the fallback
    except ModelOutputError:
        return None
    except ModelError as exc:
        log.warning("alternative-action model call failed: %s", exc)
        return None
    call = ToolCall(reply.name, reply.arguments)
    if call_key(call) in failed:
        return None
    return AlternativeAction(call, reply.reasoning)


# -- helpers ------------------------------------------------------------------------------------


def _describe_failure(
    action: ToolCall,
    error: str,
    kind: FailureKind,
    goal: str,
    previous: Sequence[ReflectionRecord],
) -> str:
    what = "Failed tool call" if kind == "tool" else "Failed check"
    lines = [f"Goal: {goal}"] if goal else []
    lines.append(f"{what}: {call_key(action)}")
    lines.append(f"Error: {error[:_MAX_ERROR_CHARS]}")
    lessons = format_reflections(previous)
    if lessons:
        lines.append(lessons)
    lines.append(f"error_type is one of: {', '.join(ERROR_TYPES)}.")
    return "\n".join(lines)


def _fallback_reflection(action: ToolCall, error: str, kind: FailureKind) -> ReflectionDraft:
    error_type = classify_error(error, kind)
    what = "calling" if kind == "tool" else "the check"
    detail = " ".join(error.split())[:300] or "no error message"
    args = jsoncodec.dumps(action.arguments, sort_keys=True, default=str, spaced=True)
    analysis = f"{what.capitalize()} '{action.name}' with {args} failed: {detail}"
    fix = f"For '{action.name}': {_FIXES[error_type]}."
    return ReflectionDraft(error_type, analysis, fix, from_model=False)
