"""Reflexion inside the ReAct loop: reflect on a failed call or check, keep the
reflection in episodic memory, show lessons to later decisions, detect repeated errors and put a
different action in place of a call that already failed.

The reflections themselves are written by ``kforge.memory.reflexion``; they persist in the run
store's documents, scoped per agent and per user, so a later run learns from an earlier one.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any, TypeVar

from kforge import jsoncodec
from kforge.agents.loop.prompts import call_text
from kforge.agents.loop.state import LoopState
from kforge.engine.run_context import RunContext
from kforge.frames import AgentThinking, ErrorFrame, Frame
from kforge.llm.types import Message, ModelResponse, ModelSettings, ToolCall, ToolSpec, Usage
from kforge.memory.compaction import journaled_complete
from kforge.memory.episodic import (
    EpisodicMemory,
    FailureKind,
    ReflectionRecord,
    call_key,
)
from kforge.memory.reflexion import reflect_in_run, suggest_alternative
from kforge.store.documents import DocumentStore
from kforge.store.memory_documents import MemoryDocuments
from kforge.tools.registry import ToolRegistry

__all__ = [
    "MEMORY_STORE_SERVICE",
    "MeteredRun",
    "Reflexion",
    "lessons_for",
    "memory_for",
]

F = TypeVar("F", bound=Frame)
T = TypeVar("T")

MEMORY_STORE_SERVICE = "memory_store"
"""Former ``ctx.services`` key of the document store that keeps episodic memory: now
``Services.memory`` (the Runtime gives its store's documents)."""

_MAX_LESSONS = 5


_FALLBACK = MemoryDocuments()
"""Where episodic memory lives as long as the process, when the run has no store."""


def memory_for(ctx: RunContext, *, scope: str, user_id: str) -> EpisodicMemory:
    """The episodic memory of agent ``scope`` for ``user_id`` in the run's document store."""
    store: DocumentStore | None = ctx.services.memory
    return EpisodicMemory(
        store if store is not None else _FALLBACK, agent_type=scope, user_id=user_id
    )


def lessons_for(
    memory: EpisodicMemory,
    tools: Sequence[ToolSpec],
    recent: Sequence[ToolCall],
    *,
    goal: str = "",
) -> list[str]:
    """Lessons for the next decision, one line each: reflections on calls like the ``recent``
    failed ones first, then the two per offered tool whose failed call is most like the
    ``goal`` (the newer first among equals)."""
    chosen: dict[str, ReflectionRecord] = {}
    for call in reversed(recent):
        for record in memory.relevant(call, limit=_MAX_LESSONS):
            chosen.setdefault(record.id, record)
    offered = {spec.name for spec in tools}
    if offered:
        wanted = _words(goal)
        ranked = sorted(
            (r for r in memory.reflections() if r.failed_action.name in offered),
            key=lambda r: (_overlap(wanted, r.failed_action), r.created_at),
            reverse=True,
        )
        shown: dict[str, int] = {}
        for record in ranked:
            name = record.failed_action.name
            if shown.get(name, 0) < 2:
                shown[name] = shown.get(name, 0) + 1
                chosen.setdefault(record.id, record)
    return [
        f"{call_key(r.failed_action)} failed ({r.error_type}): {r.analysis} Fix: {r.suggested_fix}"
        for r in list(chosen.values())[:_MAX_LESSONS]
    ]


def _words(text: str) -> set[str]:
    return set(re.findall(r"\w+", text.lower()))


def _overlap(goal_words: set[str], call: ToolCall) -> float:
    """The share of the words in ``call``'s argument values that the goal also uses."""
    words = _words(" ".join(jsoncodec.dumps(v) for v in call.arguments.values()))
    return len(words & goal_words) / len(words) if words else 0.0


class MeteredRun:
    """``RunContext`` as the memory layer's ``RunHandle``, adding each call's usage to ``usage``."""

    def __init__(self, ctx: RunContext) -> None:
        self.ctx = ctx
        self.usage = Usage(0, 0, 0)

    async def complete(
        self,
        messages: Sequence[Message],
        settings: ModelSettings | None = None,
        *,
        tools: Sequence[ToolSpec] = (),
        output_schema: dict[str, Any] | None = None,
        purpose: str = "",
    ) -> ModelResponse:
        before = self.ctx.usage
        try:
            return await self.ctx.complete(
                messages, settings, tools=tools, output_schema=output_schema, purpose=purpose
            )
        finally:
            after = self.ctx.usage
            self.usage = self.usage + Usage(
                after.input_tokens - before.input_tokens,
                after.output_tokens - before.output_tokens,
                after.requests - before.requests,
            )

    def emit(self, frame: F) -> F:
        return self.ctx.emit(frame)


class Reflexion:
    """The loop's reaction to failures: reflect on them, replace a call that already failed,
    and stop offering a tool that keeps failing. Works on the loop's ``state``."""

    def __init__(self, state: LoopState) -> None:
        self.state = state

    async def reflect(
        self,
        ctx: RunContext,
        run: MeteredRun,
        memory: EpisodicMemory,
        call: ToolCall,
        error: str,
        *,
        kind: FailureKind,
        key: str,
        offered: ToolRegistry,
    ) -> ReflectionRecord:
        """Count the failure of action ``key``, store a reflection on it and, when its error
        type was seen before and a decision is left, ask for an alternative to show in it."""
        self.state.emit_status(
            ctx, "reflecting", run.usage, tool=call.name if kind == "tool" else None
        )
        self.state.count_failure(key)
        self.state.failed_calls.append(call_key(call))
        record = await reflect_in_run(run, memory, call, error, kind=kind, goal=self.state.goal)
        # Memory already holds the record: make its frame durable too, so that a resumed step
        # replays it (same id, document replaced) instead of storing the lesson twice.
        ctx.flush()
        self.state.reflection_ids.append(record.id)
        self.state.context_window(ctx).add(
            "assistant",
            f"Reflection ({record.error_type}): {record.analysis} Fix: {record.suggested_fix}",
        )
        if (
            record.repeated
            and kind == "tool"
            and self.state.iteration < self.state.config.max_steps
        ):
            proposal = await self._alternative(ctx, run, memory, call, error, offered)
            if proposal is not None:
                self.state.suggestion = {
                    **jsoncodec.to_builtins(proposal[0]),
                    "reasoning": proposal[1],
                }
                ctx.emit(
                    AgentThinking(
                        message=f"Repeated {record.error_type} error: suggesting "
                        f"{call_text(proposal[0])} instead"
                    )
                )
        if kind == "tool":
            self.retire_if_exhausted(ctx, call.name)
        return record

    async def replace_failed_call(
        self,
        ctx: RunContext,
        run: MeteredRun,
        memory: EpisodicMemory,
        call: ToolCall,
        offered: ToolRegistry,
        suggested: ToolCall | None,
    ) -> tuple[ToolCall, str] | None:
        """A different call in place of ``call``, which already failed in this run: the
        suggestion made after the last failure, else one asked for now. None (and a counted
        failure) when there is none: the same failure is never repeated."""
        failed = set(self.state.failed_calls)
        if (
            suggested is not None
            and call_key(suggested) not in failed
            and suggested.name in offered
        ):
            replacement: tuple[ToolCall, str] | None = (suggested, "the suggested alternative")
        else:
            replacement = await self._alternative(
                ctx, run, memory, call, self.last_error(call), offered
            )
        if replacement is not None:
            ctx.emit(
                AgentThinking(
                    message=f"Not repeating {call_text(call)}, which already failed; "
                    f"trying {call_text(replacement[0])} instead"
                )
            )
            self.state.context_window(ctx).record_decision(
                f"Replaced the failed call {call_text(call)[:120]} "
                f"by {call_text(replacement[0])[:120]}"
            )
            return replacement
        self.state.errors += 1
        failures = self.state.count_failure(call.name)
        message = (
            f"{call_text(call)} already failed in this run and no different action was found, "
            f"so it was not run again (failure {failures} of {self.state.config.max_retries} for "
            f"{call.name})"
        )
        ctx.emit(ErrorFrame(error_type="repeated_failed_call", message=message, recoverable=True))
        self.state.context_window(ctx).add("user", message)
        self.retire_if_exhausted(ctx, call.name)
        return None

    async def _alternative(
        self,
        ctx: RunContext,
        run: MeteredRun,
        memory: EpisodicMemory,
        call: ToolCall,
        error: str,
        offered: ToolRegistry,
    ) -> tuple[ToolCall, str] | None:
        """A call other than every failed one, or None. The verdict is recorded: a re-executed
        step takes it from the log, since memory may have learned more meanwhile."""

        async def verdict() -> dict[str, Any]:
            alternative = await suggest_alternative(
                journaled_complete(run, "reflexion.alternative"),
                call,
                error,
                memory=memory,
                tools=offered.specs(),
                goal=self.state.goal,
            )
            payload: dict[str, Any] = {"failed": jsoncodec.to_builtins(call), "alternative": None}
            if (
                alternative is not None
                and call_key(alternative.call) not in self.state.failed_calls
            ):
                payload["alternative"] = {
                    **jsoncodec.to_builtins(alternative.call),
                    "reasoning": alternative.reasoning or "a different action",
                }
            return payload

        chosen = (await ctx.step("reflexion.alternative", verdict)).get("alternative")
        if not isinstance(chosen, dict):
            return None
        return jsoncodec.convert(chosen, ToolCall), str(chosen.get("reasoning", ""))

    def retire_if_exhausted(self, ctx: RunContext, tool: str) -> None:
        """Stop offering ``tool`` once it has failed ``max_retries`` times: a call that keeps failing
        is never retried without bound."""
        if (
            self.state.failures.get(tool, 0) >= self.state.config.max_retries
            and tool not in self.state.retired
        ):
            self.state.retired.append(tool)
            ctx.emit(
                AgentThinking(
                    message=f"{tool} failed {self.state.failures[tool]} times; "
                    "it is no longer offered in this run"
                )
            )
            self.state.context_window(ctx).record_decision(
                f"Stopped using {tool} after repeated failures"
            )

    def last_error(self, call: ToolCall) -> str:
        prefix = f"{call.name} failed"
        return next(
            (o for o in reversed(self.state.observations) if o.startswith(prefix)),
            f"{call_text(call)} failed earlier in this run",
        )
