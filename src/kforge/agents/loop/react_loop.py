"""The bounded ReAct loop: decide, act, observe, one durable step at a time, at most
``max_steps`` decisions and ``max_retries`` failures per action, with Reflexion on failures and
context compaction.

``ReactLoop.step`` runs one iteration; a phase of a ``ForgeAgent`` or the ``react`` agent calls
it until it reports that it is finished. Every decision, call, result, observation, reflection
and status change is a frame, and everything the loop branches on comes from its saved state or
from journaled model replies and tool results, so a resumed step replays exactly.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from kforge import jsoncodec
from kforge.agents.decisions import structured
from kforge.agents.loop.config import LoopConfig
from kforge.agents.loop.decision import Decision, decision_schema, native_tools, parse_decision
from kforge.agents.loop.prompts import (
    SYNTHESIZE_SYSTEM,
    ObservationReply,
    call_text,
    decision_request,
    merge_messages,
    observation_messages,
    react_system,
    retry_request,
    synthesis_request,
)
from kforge.agents.loop.reflexion import MeteredRun, Reflexion, lessons_for, memory_for
from kforge.agents.loop.state import LoopState
from kforge.agents.results import ReactResult
from kforge.engine.run_context import RunContext
from kforge.errors import ModelOutputError
from kforge.frames import (
    AgentAction,
    AgentControl,
    AgentResponse,
    ErrorFrame,
    Frame,
    Observation,
    Plan,
)
from kforge.llm.types import Message, ModelResponse, ModelSettings, ToolCall
from kforge.memory.compaction import CompactionError, compact_in_run, compaction_step
from kforge.memory.episodic import EpisodicMemory, call_key
from kforge.memory.window import ContextWindow
from kforge.tools.execution import execute_call
from kforge.tools.registry import ToolRegistry

__all__ = ["AnswerCheck", "ReactLoop"]

AnswerCheck = Callable[[str], str | None]
"""Checks a final answer: None when it passes, else what is wrong with it."""

_HISTORY_CHARS = 4000
_DECISION = "decision"
_RESPOND = "respond"
_STOP_NOTES = {
    "max_steps": "the step limit of {max_steps} was reached",
    "max_time": "the time limit of {max_time_s:g} s was reached",
    "max_retries": "an action failed {max_retries} times",
}


class ReactLoop:
    """One goal pursued in at most ``config.max_steps`` decisions.

    The loop holds what it keeps between steps in ``state`` (a ``LoopState``), the one thing
    saved and restored. ``check`` (optional) judges a final answer; a failed check is reflected on and retried like
    a failed tool call. It is code, not state: pass it again to ``restore``.
    """

    def __init__(
        self,
        goal: str,
        config: LoopConfig | None = None,
        *,
        memory_scope: str = "react",
        user_id: str = "default",
        preferences: dict[str, str] | None = None,
        check: AnswerCheck | None = None,
    ) -> None:
        self.state = LoopState(
            goal,
            config or LoopConfig(),
            memory_scope=memory_scope,
            user_id=user_id,
            preferences=dict(preferences or {}),
        )
        """Everything the loop keeps between steps; ``to_dict`` saves it."""
        self.check = check

    @property
    def reflexion(self) -> Reflexion:
        """What the loop does about failures, working on this loop's state."""
        return Reflexion(self.state)

    @classmethod
    def restore(cls, data: dict[str, Any], *, check: AnswerCheck | None = None) -> ReactLoop:
        """The loop saved by ``to_dict`` (by this or any earlier version), with its ``check``."""
        loop = cls.__new__(cls)
        loop.state, loop.check = jsoncodec.convert(data, LoopState), check
        return loop

    def to_dict(self) -> dict[str, Any]:
        """The loop's state as JSON values; ``restore`` reads it back."""
        saved: dict[str, Any] = jsoncodec.to_builtins(self.state)
        return saved

    def result(self) -> ReactResult:
        """The answer, whether the goal was reached, why the loop stopped, and its metrics."""
        return self.state.result()

    @property
    def finished(self) -> bool:
        return self.state.finished

    @property
    def answer(self) -> str:
        return self.state.answer

    # -- the step ---------------------------------------------------------------------------

    async def step(self, ctx: RunContext, tools: ToolRegistry) -> bool:
        """One iteration with ``tools`` offered; returns True once the loop has its answer."""
        if self.state.finished:
            return True
        started = time.monotonic()
        run = MeteredRun(ctx)
        try:
            await self._step(ctx, run, tools)
        finally:
            self.state.tokens[0] += run.usage.input_tokens
            self.state.tokens[1] += run.usage.output_tokens
        self.state.elapsed_s += time.monotonic() - started
        return self.state.finished

    async def _step(self, ctx: RunContext, run: MeteredRun, tools: ToolRegistry) -> None:
        cfg = self.state.config
        if self.state.elapsed_s >= cfg.max_time_s:
            self._control(ctx, timeout=True)
            await self._synthesize(ctx, run, achieved=False, reason="max_time")
            return
        self.state.iteration += 1
        self.state.context_window(ctx)
        self.state.emit_status(ctx, "thinking", run.usage)
        offered = ToolRegistry(t for t in tools if t.name not in self.state.retired)
        memory = memory_for(ctx, scope=self.state.memory_scope, user_id=self.state.user_id)
        try:
            response = await self._ask_for_decision(ctx, run, offered, memory)
            decision = parse_decision(
                response, native=cfg.decision_mode == "native", allow_ask=cfg.allow_ask
            )
        except ModelOutputError as exc:  # bad JSON, missing fields, or output past repair
            await self._unusable(ctx, run, "invalid_decision", str(exc))
        else:
            await self._act(ctx, run, decision, offered, memory)
        if not self.state.finished and self.state.iteration >= cfg.max_steps:
            self._control(ctx, max_steps=True)
            await self._synthesize(ctx, run, achieved=False, reason="max_steps")

    # -- deciding -----------------------------------------------------------------------------

    def _suggested(self) -> ToolCall | None:
        """The alternative call proposed after a repeated error (``state.suggestion``), if any."""
        suggestion = self.state.suggestion
        return jsoncodec.convert(suggestion, ToolCall) if suggestion else None

    async def _ask_for_decision(
        self, ctx: RunContext, run: MeteredRun, offered: ToolRegistry, memory: EpisodicMemory
    ) -> ModelResponse:
        cfg = self.state.config
        specs = offered.specs()
        recent = [jsoncodec.loads_as(k, ToolCall) for k in self.state.failed_calls[-3:]]
        structured = cfg.decision_mode == "structured"
        suggestion = self._suggested()
        if suggestion is not None and suggestion.name not in offered:
            suggestion = None  # its tool was retired since
        request = decision_request(
            step=self.state.iteration,
            max_steps=cfg.max_steps,
            suggestion=suggestion,
            suggestion_reason=str((self.state.suggestion or {}).get("reasoning", "")),
            retired=self.state.retired,
            structured=structured,
            allow_ask=cfg.allow_ask,
        )
        system = react_system(
            self.state.goal,
            specs,
            cfg.max_steps,
            lessons_for(memory, specs, recent, goal=self.state.goal),
        )
        settings = ModelSettings(temperature=cfg.temperature, max_tokens=cfg.max_tokens)
        if structured:
            schema = decision_schema(specs, allow_ask=cfg.allow_ask)
            messages = await self._prompt(ctx, run, system, request, described=schema)
            return await run.complete(
                messages, settings, output_schema=schema, purpose="react.decide"
            )
        tools = native_tools(specs, allow_ask=cfg.allow_ask)
        described = [t.to_dict() for t in tools]
        messages = await self._prompt(ctx, run, system, request, described=described)
        return await run.complete(messages, settings, tools=tools, purpose="react.decide")

    async def _unusable(self, ctx: RunContext, run: MeteredRun, kind: str, problem: str) -> None:
        """A decision that cannot be carried out: an error frame and a bounded retry."""
        cfg = self.state.config
        self.state.errors += 1
        failures = self.state.count_failure(_DECISION)
        ctx.emit(
            ErrorFrame(
                error_type=kind,
                recoverable=failures < cfg.max_retries,
                message=f"step {self.state.iteration}: the model's decision could not be used "
                f"({problem}); attempt {failures} of {cfg.max_retries}",
            )
        )
        self.state.context_window(ctx).add("user", retry_request(problem))
        if failures >= cfg.max_retries:
            self._control(ctx)
            await self._synthesize(ctx, run, achieved=False, reason="max_retries")

    # -- acting -------------------------------------------------------------------------------

    async def _act(
        self,
        ctx: RunContext,
        run: MeteredRun,
        decision: Decision,
        offered: ToolRegistry,
        memory: EpisodicMemory,
    ) -> None:
        suggested = self._suggested()
        self.state.suggestion = None  # shown to this decision; a new failure makes a new one
        reasoning = decision.thought or _implicit_reasoning(decision)
        plan = ctx.emit(
            Plan(
                goal=self.state.goal,
                reasoning=reasoning,
                observations=tuple(self.state.observations[-3:]),
                next_action=decision.action,
                iteration=self.state.iteration,
                max_iterations=self.state.config.max_steps,
            )
        )
        window = self.state.context_window(ctx)
        if decision.kind == "plan":
            window.add("assistant", f"Thought: {reasoning}")
        elif decision.kind == "ask_user":
            window.add(
                "assistant", f"Thought: {reasoning}\nQuestion to the user: {decision.question}"
            )
            answer = await ctx.ask(decision.question, kind="question")
            text = str(
                answer.get("text") or answer.get("action") or jsoncodec.dumps(answer, spaced=True)
            )
            window.add("user", f"The user answered: {text}")
        elif decision.kind == "respond":
            await self._respond(ctx, run, decision, memory)
        elif decision.tool in self.state.retired:
            await self._unusable(
                ctx,
                run,
                "retired_tool",
                f"'{decision.tool}' failed {self.state.config.max_retries} times in this run and is no "
                "longer offered; choose another action",
            )
        else:
            call = decision.to_call()
            if call_key(call) in self.state.failed_calls:
                replacement = await self.reflexion.replace_failed_call(
                    ctx, run, memory, call, offered, suggested
                )
                if replacement is None:
                    return
                call, reasoning = replacement
            await self._call_tool(ctx, run, call, reasoning, plan.id, offered, memory)

    async def _respond(
        self, ctx: RunContext, run: MeteredRun, decision: Decision, memory: EpisodicMemory
    ) -> None:
        answer = decision.answer.strip()
        problem = None if answer else "the answer is empty"
        if problem is None and self.check is not None:
            problem = self.check(answer)
        if problem is None:
            self.state.emit_status(ctx, "synthesizing", run.usage)
            self._finish(ctx, answer, achieved=True, reason="")
            return
        self.state.emit_status(ctx, "analyzing", run.usage)
        content = f"The proposed answer failed its check: {problem}"
        ctx.emit(Observation(content=content, goal_achieved=False, iteration=self.state.iteration))
        self._observed(ctx, content)
        failed = ToolCall(_RESPOND, {"answer": answer[:300]})
        await self.reflexion.reflect(
            ctx, run, memory, failed, content, kind="check", key=_RESPOND, offered=ToolRegistry()
        )
        if self.state.failures.get(_RESPOND, 0) >= self.state.config.max_retries:
            self._control(ctx)
            await self._synthesize(ctx, run, achieved=False, reason="max_retries")

    async def _call_tool(
        self,
        ctx: RunContext,
        run: MeteredRun,
        call: ToolCall,
        reasoning: str,
        plan_id: str,
        offered: ToolRegistry,
        memory: EpisodicMemory,
    ) -> None:
        window = self.state.context_window(ctx)
        window.add("assistant", f"Thought: {reasoning}\nAction: {call_text(call)}")
        # a structured decision has no call id: the plan's (recorded, so the same when the
        # step is re-executed) names the call
        call_id = call.id or f"call-{plan_id}"
        self.state.emit_status(ctx, "executing", run.usage, tool=call.name)
        result = await execute_call(
            ctx,
            offered,
            ToolCall(call.name, dict(call.arguments), call_id),
            reasoning=reasoning,
            iteration=self.state.iteration,
            plan_frame_id=plan_id,
        )
        error = result.text.removeprefix("Error: ") if result.is_error else ""
        ctx.flush()  # the result is durable before anything else happens in this step
        self.state.tools_called.append(call.name)
        window.add("tool", result.text[:_HISTORY_CHARS], name=call.name)
        self.state.emit_status(ctx, "analyzing", run.usage, tool=call.name)
        if result.is_error:
            self.state.errors += 1
            content, achieved = f"{call.name} failed: {error[:500]}", False
        else:
            content, achieved = await self._observe(ctx, run, call, result.text)
        ctx.emit(
            Observation(
                content=content,
                goal_achieved=achieved,
                iteration=self.state.iteration,
                call_id=call_id,
            )
        )
        self._observed(ctx, content)
        if result.is_error:
            await self.reflexion.reflect(
                ctx, run, memory, call, error, kind="tool", key=call.name, offered=offered
            )
            return
        window.complete_subtask(f"{call_text(call)[:160]}: {content[:160]}")
        if achieved:
            await self._synthesize(ctx, run, achieved=True, reason="")

    async def _observe(
        self, ctx: RunContext, run: MeteredRun, call: ToolCall, result_text: str
    ) -> tuple[str, bool]:
        """The model's judgement of a successful result against the goal."""
        messages = observation_messages(self.state.goal, call, result_text)
        settings = ModelSettings(temperature=0.0, max_tokens=200)
        try:
            judged = await structured(run, messages, settings, ObservationReply, "react.observe")
            return judged.observation, judged.goal_achieved
        except ModelOutputError as exc:
            problem = str(exc)
        ctx.emit(
            ErrorFrame(
                error_type="invalid_observation",
                recoverable=True,
                message=f"the model's judgement of {call.name}'s result could not be read "
                f"({problem}); the loop carries on as if the goal is not met",
            )
        )
        return f"{call.name} returned: {' '.join(result_text.split())[:300]}", False

    # -- finishing ----------------------------------------------------------------------------

    async def _synthesize(
        self, ctx: RunContext, run: MeteredRun, *, achieved: bool, reason: str
    ) -> None:
        """Write the final answer from what was found (a best partial one when stopped early)."""
        self.state.emit_status(ctx, "synthesizing", run.usage)
        cfg = self.state.config
        note = _STOP_NOTES.get(reason, reason).format(
            max_steps=cfg.max_steps, max_time_s=cfg.max_time_s, max_retries=cfg.max_retries
        )
        request = synthesis_request(self.state.goal, "" if achieved else note)
        messages = await self._prompt(ctx, run, SYNTHESIZE_SYSTEM, request)
        settings = ModelSettings(temperature=cfg.temperature, max_tokens=cfg.max_tokens)
        try:
            response = await run.complete(messages, settings, purpose="react.synthesize")
            answer = response.text.strip()
        except ModelOutputError:
            answer = ""
        if not answer:
            found = "; ".join(self.state.observations[-3:])
            answer = (
                f"No final answer could be written. What was found: {found}"
                if found
                else "No final answer could be written and nothing was found."
            )
        self._finish(ctx, answer, achieved=achieved, reason=reason)

    def _finish(self, ctx: RunContext, answer: str, *, achieved: bool, reason: str) -> None:
        state = self.state
        state.answer, state.goal_achieved, state.stop_reason = answer, achieved, reason
        state.finished = True
        ctx.emit(
            AgentResponse(
                response_text=answer,
                goal_achieved=achieved,
                iterations_used=state.iteration,
                tools_called=tuple(state.tools_called),
                reasoning_trace=" → ".join(o[:120] for o in state.observations),
            )
        )

    def _control(self, ctx: RunContext, *, max_steps: bool = False, timeout: bool = False) -> None:
        ctx.emit(
            AgentControl(
                action=AgentAction.RESPOND,
                should_continue=False,
                iteration=self.state.iteration,
                max_iterations_reached=max_steps,
                timeout_reached=timeout,
            )
        )

    async def _prompt(
        self, ctx: RunContext, run: MeteredRun, system: str, request: str, *, described: Any = None
    ) -> list[Message]:
        """The messages of a model call over the context: the context is compacted first when
        what is sent (system prompt, context, request, and the tools or schema ``described``) is
        past 80 % of the model's window. Never the grounding; the compaction is a frame."""
        window = self.state.context_window(ctx)
        messages = merge_messages([*window.to_messages(system), Message.user(request)])
        sent = sum(window.count_tokens(m.content) for m in messages)
        if described is not None:
            sent += window.count_tokens(jsoncodec.dumps(described, spaced=True))
        overhead = max(0, sent - window.token_count)
        # The summary gets a quarter of the room the threshold leaves the context and the whole
        # context aims at three quarters of it: a summary filling all the room would settle
        # just under the threshold and be summarised again at the next call.
        room = max(0, int(window.threshold * window.max_tokens) - overhead)

        async def compact(started: Frame | None) -> ContextWindow | None:
            try:
                result = await compact_in_run(
                    run, window, max_summary_tokens=min(1024, room // 4), fit_within=room * 3 // 4
                )
            except CompactionError as exc:
                ctx.emit(
                    ErrorFrame(error_type="CompactionError", message=str(exc), recoverable=True)
                )
                return None
            return result.context

        effect, start = compaction_step(window, overhead)
        compacted = await ctx.step(effect, compact, start)
        if compacted is None:  # not due, or it could not shrink the context
            return messages
        self.state.window = compacted
        return merge_messages([*self.state.window.to_messages(system), Message.user(request)])

    def _observed(self, ctx: RunContext, content: str) -> None:
        self.state.observations.append(content)
        self.state.context_window(ctx).add("observation", content)


def _implicit_reasoning(decision: Decision) -> str:
    if decision.kind == "tool_call":
        return f"(no reasoning stated) the model chose {call_text(decision.to_call())}"
    return f"(no reasoning stated) the model chose to {decision.kind.replace('_', ' ')}"
