"""The execution wrapper: every tool call of a run goes through ``execute_tool``.

It records each call as one ``tool.call`` frame and one ``tool.result`` frame, validates arguments, asks for approval
of destructive tools, applies a timeout, caches read-only results, and never lets a tool crash
the run. It is durable: a re-executed step gets the recorded result instead of running the tool
again, and a side-effecting tool whose start was recorded without a result is not re-run blindly.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Coroutine, Mapping, Sequence
from typing import Any, Protocol, TypeVar

from kforge import jsoncodec
from kforge.effects import Effect
from kforge.errors import ModelUnavailableError, ToolArgumentsError, ToolError
from kforge.frames import Frame, ToolCallFrame, ToolResultFrame, new_id
from kforge.llm.base import Model
from kforge.llm.types import ToolCall
from kforge.tools.approval import ApprovalPolicy
from kforge.tools.base import Tool
from kforge.tools.cache import ToolResultCache
from kforge.tools.registry import ToolRegistry
from kforge.tools.result import ToolResult
from kforge.tools.tool_context import ToolContext, ToolServices

__all__ = [
    "APPROVAL_SERVICE",
    "CACHE_SERVICE",
    "RunServices",
    "ToolRunContext",
    "execute_call",
    "execute_tool",
    "run_tool",
]

APPROVAL_SERVICE = "tool_approval"
"""Former ``ctx.services`` key of the run's ``ApprovalPolicy``: now ``Services.approval``."""
CACHE_SERVICE = "tool_cache"
"""Former ``ctx.services`` key of the run's ``ToolResultCache``: now ``Services.cache``."""

T = TypeVar("T")


class RunServices(Protocol):
    """What the wrapper reads of the run's services (``kforge.engine.services.Services``)."""

    @property
    def approval(self) -> ApprovalPolicy | None:
        """Which calls need approval (default: the destructive ones)."""
        ...

    @property
    def cache(self) -> ToolResultCache | None:
        """Results of read-only calls shared by the run (default: none)."""
        ...

    @property
    def for_tools(self) -> ToolServices:
        """What a tool sees as ``ToolContext.services``."""
        ...


class ToolRunContext(Protocol):
    """What the wrapper needs from the run (``kforge.engine.run_context.RunContext`` provides it)."""

    run_id: str
    model: Model

    @property
    def services(self) -> RunServices: ...

    def step(
        self,
        effect: Effect[T],
        fn: Callable[..., Awaitable[T] | T],
        /,
        *args: Any,
        **kwargs: Any,
    ) -> Coroutine[Any, Any, T | None]: ...

    async def ask(
        self,
        prompt: str,
        *,
        kind: str = "question",
        options: Sequence[str] = (),
        payload: dict[str, Any] | None = None,
    ) -> dict[str, Any]: ...


_DEFAULT_POLICY = ApprovalPolicy()
"""The policy of a run given none (frozen: one serves every call)."""

_Done = tuple[ToolResult, bool, float, ToolCallFrame | None]
"""A call's result, whether it came from the cache, how long it took (ms), and its call frame
as recorded (None when read back from the log)."""


async def execute_tool(
    ctx: ToolRunContext,
    tool: Tool,
    arguments: dict[str, Any],
    *,
    reasoning: str = "",
    iteration: int = 0,
    plan_frame_id: str | None = None,
    call_id: str | None = None,
    policy: ApprovalPolicy | None = None,
    cache: ToolResultCache | None = None,
    timeout_s: float | None = None,
) -> ToolResult:
    """Run ``tool`` once for the run behind ``ctx`` and return its result (never raises for
    tool failures; ``Suspended`` propagates while the run waits for an approval).

    ``reasoning``, ``iteration`` and ``plan_frame_id`` say why the agent called it and go into
    the call frame; ``call_id`` (default: a new id) pairs the call with its result frame.
    The call is one journaled step (``RunContext.step``): its call frame is written before it
    runs (and commits first when the tool is not read-only), its result frame after.
    """
    policy = policy or ctx.services.approval or _DEFAULT_POLICY
    if cache is None:
        cache = ctx.services.cache
    safe = tool.annotations.is_safe_to_repeat
    try:
        problems = tool.check_arguments(arguments)
    except Exception as exc:  # a broken schema is the tool's fault, not the run's
        problems = []
        broken: str | None = f"tool '{tool.name}' has an unusable input schema: {exc}"
    else:
        broken = None

    # Approval comes before the call frame, so that a recorded call always means "about to run".
    rejection: str | None = None
    if not problems and broken is None and policy.needs_approval(tool):
        answer = await ctx.ask(
            _approval_prompt(tool, arguments, reasoning),
            kind="approval",
            options=("approve", "reject"),
            payload={
                "tool": tool.name,
                "arguments": arguments,
                "reasoning": reasoning,
                "annotations": tool.annotations.to_dict(),
            },
        )
        if answer.get("action") != "approve":
            why = str(answer.get("reason") or "").strip()
            rejection = f"a person rejected the call to '{tool.name}'" + (f": {why}" if why else "")

    start = ToolCallFrame(
        tool_name=tool.name,
        call_id=call_id or new_id(),
        arguments=_as_dict(arguments),
        reasoning=reasoning,
        read_only=safe,
        iteration=iteration,
        plan_frame_id=plan_frame_id,
    )

    refused: ToolResult | None = None
    if broken is not None:
        refused = ToolResult.error(broken, kind="tool_error")
    elif problems:
        refused = ToolResult.error(
            tool.validator.message(problems),
            kind="invalid_arguments",
            details={"problems": [p.to_dict() for p in problems]},
        )
    elif rejection is not None:
        refused = ToolResult.error(rejection, kind="rejected")
    done = await ctx.step(
        _SAFE_CALL if safe else _UNSAFE_CALL,
        _call,
        start,
        ctx,
        tool,
        arguments,
        refused,
        cache if safe else None,
        timeout_s,
    )
    assert done is not None
    return done[0]


async def execute_call(
    ctx: ToolRunContext,
    registry: ToolRegistry,
    call: ToolCall,
    *,
    reasoning: str = "",
    iteration: int = 0,
    plan_frame_id: str | None = None,
    policy: ApprovalPolicy | None = None,
    cache: ToolResultCache | None = None,
) -> ToolResult:
    """Resolve ``call`` by name in ``registry`` and execute it; an unknown name is an error
    result naming the tools that exist. ``call.id`` (when set) pairs the frames."""
    tool = registry.get(call.name)
    if tool is not None:
        return await execute_tool(
            ctx,
            tool,
            call.arguments,
            reasoning=reasoning,
            iteration=iteration,
            plan_frame_id=plan_frame_id,
            call_id=call.id or None,
            policy=policy,
            cache=cache,
        )
    start = ToolCallFrame(
        tool_name=call.name,
        call_id=call.id or new_id(),
        arguments=_as_dict(call.arguments),
        reasoning=reasoning,
        read_only=True,
        iteration=iteration,
        plan_frame_id=plan_frame_id,
    )

    def unknown(recorded: ToolCallFrame) -> _Done:
        available = ", ".join(registry.names()) or "none"
        error = f"unknown tool '{call.name}'; available tools: {available}"
        return ToolResult.error(error, kind="unknown_tool"), False, 0.0, recorded

    done = await ctx.step(_SAFE_CALL, unknown, start)
    assert done is not None
    return done[0]


async def run_tool(
    tool: Tool,
    arguments: dict[str, Any],
    context: ToolContext | None = None,
    *,
    timeout_s: float | None = None,
    in_run: bool = False,
) -> ToolResult:
    """Execute ``tool`` with a timeout, turning every exception into an error result (but, with
    ``in_run``, a model that cannot be reached, which pauses the run)."""
    limit = timeout_s if timeout_s is not None else tool.timeout_s
    try:
        if tool.runs_inline:  # nothing to stop it while it runs: no timer to set and cancel
            result = await tool.execute(arguments, context)
        else:
            # a timeout scope, not wait_for: no extra task and loop turn per call
            async with asyncio.timeout(limit):
                result = await tool.execute(arguments, context)
    except TimeoutError:
        return ToolResult.error(
            f"tool '{tool.name}' did not finish within {limit:g} s and was stopped; "
            "try smaller or more specific arguments",
            kind="timeout",
        )
    except ToolArgumentsError as exc:
        return ToolResult.error(str(exc), kind="invalid_arguments")
    except ToolError as exc:
        return ToolResult.error(str(exc) or type(exc).__name__, kind="tool_error")
    except Exception as exc:
        if in_run and isinstance(exc, ModelUnavailableError):
            raise  # an outage is no result of the tool's: the run pauses, the call runs again
        return ToolResult.error(
            f"tool '{tool.name}' failed: {type(exc).__name__}: {exc}", kind="exception"
        )
    if not isinstance(result, ToolResult):
        return ToolResult.error(
            f"tool '{tool.name}' returned {type(result).__name__} instead of a ToolResult",
            kind="tool_error",
        )
    return result


async def _call(
    recorded: ToolCallFrame,
    ctx: ToolRunContext,
    tool: Tool,
    arguments: dict[str, Any],
    refused: ToolResult | None,
    cache: ToolResultCache | None,
    timeout_s: float | None,
) -> _Done:
    """The call itself, once its call frame is on record (``cache`` only for a safe tool)."""
    started = time.perf_counter()
    if refused is not None:
        return refused, False, _since(started), recorded
    if cache is not None:
        hit = cache.get(tool.name, arguments)
        if hit is not None:
            return hit, True, _since(started), recorded
    context = ToolContext(
        run_id=ctx.run_id,
        call_id=recorded.call_id,
        services=ctx.services.for_tools,
        model=ctx.model,
    )
    result = await run_tool(tool, arguments, context, timeout_s=timeout_s, in_run=True)
    if cache is not None:
        cache.put(tool.name, arguments, result)
    return result, False, _since(started), recorded


def _record(done: _Done) -> Frame:
    result, cached, elapsed_ms, start = done
    assert start is not None
    error = result.summary(1000) if result.is_error else ""
    return ToolResultFrame(
        tool_name=start.tool_name,
        call_id=start.call_id,
        success=not result.is_error,
        summary=error or result.summary(),
        error=error,
        result=result.to_dict(),
        execution_time_ms=elapsed_ms,
        cached=cached,
    )


def _is_result(frame: Frame) -> bool:
    return isinstance(frame, ToolResultFrame)


def _restored(frame: Frame) -> _Done:
    assert isinstance(frame, ToolResultFrame)
    if frame.result:
        result = jsoncodec.convert(frame.result, ToolResult)
    else:
        result = (
            ToolResult.success(frame.summary) if frame.success else ToolResult.error(frame.error)
        )
    return result, frame.cached, frame.execution_time_ms, None


def _unknown(start: Frame) -> _Done:
    assert isinstance(start, ToolCallFrame)
    return _outcome_unknown(start.tool_name, start.call_id), False, 0.0, start


def _call_effect(safe: bool) -> Effect[_Done]:
    """A tool call as a journaled step: its call frame (the first argument), then its result
    frame. Committed with the step, not at once: a kill before repeats only a safe call."""
    return Effect(
        name="tool call",
        starts=True,
        repeatable=safe,
        record=_record,
        restore=_restored,
        matches=_is_result,
        unknown=_unknown,
        durable=False,
    )


_SAFE_CALL = _call_effect(True)
_UNSAFE_CALL = _call_effect(False)


def _since(started: float) -> float:
    return round((time.perf_counter() - started) * 1000, 3)


def _outcome_unknown(tool_name: str, call_id: str) -> ToolResult:
    return ToolResult.error(
        f"tool '{tool_name}' was started (call {call_id}) but the run stopped before its result "
        "was recorded, so whether it took effect is unknown; it was not run again because it "
        "is not read-only. Check its effect, then retry the call or carry on",
        kind="outcome_unknown",
        details={"call_id": call_id},
    )


def _approval_prompt(tool: Tool, arguments: Mapping[str, Any], reasoning: str) -> str:
    shown = ", ".join(f"{k}={v!r:.80}" for k, v in arguments.items()) or "no arguments"
    why = f" Reason given: {reasoning}" if reasoning else ""
    return f"Approve running '{tool.name}' ({shown})?{why}"


def _as_dict(arguments: Any) -> dict[str, Any]:
    return dict(arguments) if isinstance(arguments, Mapping) else {"arguments": arguments}
