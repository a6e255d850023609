"""RunContext: what a step sees of the model is exactly what a re-executed step sees."""

from __future__ import annotations

import asyncio
import math
from typing import Any

import pytest

from kforge.engine import run_context
from kforge.engine.agent import StepOutcome
from kforge.engine.run_context import RunContext
from kforge.engine.services import Services
from kforge.frames import ModelCall, UsageFrame
from kforge.llm.testing.function import CallInfo, FunctionModel
from kforge.llm.testing.scripted import ScriptedModel
from kforge.llm.types import Message, ModelResponse, ToolCall, ToolSpec
from kforge.runtime import AgentRegistry, Runtime
from kforge.store import MemoryStore, RunStatus
from kforge.tools import execute_tool, tool
from tests.step_context import step_context

SCALE = ToolSpec("scale", "Scale a value.", {"type": "object"})


class AskingAgent:
    """Calls the model once, reports what it saw to the ``seen`` service, then asks a person."""

    agent_type = "test.asking"

    def __init__(self, args: dict[str, Any] | None = None) -> None:
        self.done = False

    async def step(self, ctx: RunContext) -> StepOutcome:
        response = await ctx.complete([Message.user("scale it")], tools=[SCALE])
        seen = response.tool_calls[0].arguments if response.tool_calls else response.parsed
        ctx.services.extra["seen"].append(seen)
        await ctx.ask("Go on?")
        return StepOutcome(True, {"seen": seen})

    def get_state(self) -> dict[str, Any]:
        return {"done": self.done}

    def restore_state(self, state: dict[str, Any]) -> None:
        self.done = bool(state["done"])

    def partial_result(self) -> dict[str, Any]:
        return {}


def asking_runtime(reply: Any, seen: list[Any]) -> Runtime:
    agents = AgentRegistry()
    agents.register(AskingAgent.agent_type, AskingAgent)

    def function(messages: list[Message], info: CallInfo) -> Any:
        return reply

    return Runtime(
        MemoryStore(),
        model=FunctionModel(function),
        registry=agents,
        services=Services(extra={"seen": seen}),
    )


async def test_a_finite_reply_is_seen_the_same_when_the_step_is_re_executed() -> None:
    seen: list[Any] = []
    rt = asking_runtime(ToolCall("scale", {"factor": 0.5, "by": [1e300, -2]}), seen)
    run = await rt.run("test.asking")
    assert run.status == RunStatus.AWAITING_USER
    await rt.resume(run.id, "yes")
    run = await rt.wait(run.id)
    assert run.status == RunStatus.COMPLETED
    assert seen == [{"factor": 0.5, "by": [1e300, -2]}] * 2


@pytest.mark.parametrize(
    ("reply", "where"),
    [
        (ToolCall("scale", {"factor": math.nan}), "tool call 'scale', argument 'factor'"),
        (ToolCall("scale", {"by": [1, math.inf]}), "tool call 'scale', argument 'by'"),
        (ModelResponse(text="{}", parsed={"a": {"b": -math.inf}}), "structured output at a.b"),
    ],
)
async def test_a_reply_holding_nan_or_infinity_is_refused_before_it_is_recorded(
    reply: Any, where: str
) -> None:
    seen: list[Any] = []
    rt = asking_runtime(reply, seen)
    run = await rt.run("test.asking")
    assert run.status == RunStatus.FAILED
    assert run.error is not None and where in run.error and "JSON" in run.error
    assert seen == []  # the step never saw a value that a re-execution would see as null
    assert not [f for f in rt.frames(run.id) if isinstance(f, ModelCall)]


class LookingAgent:
    """Each step: one model call, then ``look`` (which may wait), three steps."""

    agent_type = "test.looking"

    def __init__(self, args: dict[str, Any] | None = None) -> None:
        self.steps = 0

    async def step(self, ctx: RunContext) -> StepOutcome:
        await ctx.complete([Message.user("look")], tools=[SCALE])
        await execute_tool(ctx, ctx.services.extra["look"], {})
        self.steps += 1
        return StepOutcome(self.steps == 3, {"steps": self.steps})

    def get_state(self) -> dict[str, Any]:
        return {"steps": self.steps}

    def restore_state(self, state: dict[str, Any]) -> None:
        self.steps = int(state["steps"])

    def partial_result(self) -> dict[str, Any]:
        return {}


def looking_runtime(look: Any) -> Runtime:
    agents = AgentRegistry()
    agents.register(LookingAgent.agent_type, LookingAgent)
    return Runtime(
        MemoryStore(),
        model=FunctionModel(lambda messages, info: "looked"),
        registry=agents,
        services=Services(extra={"look": look}),
    )


async def test_steps_that_never_wait_still_let_other_tasks_run_between_them() -> None:
    ticks = 0
    at_steps: list[int] = []

    @tool(read_only=True)
    async def look() -> str:
        """Answer at once, noting how often the other task ran so far."""
        at_steps.append(ticks)
        return "seen"

    async def tick() -> None:
        nonlocal ticks
        while True:
            ticks += 1
            await asyncio.sleep(0)

    ticker = asyncio.create_task(tick())
    run = await looking_runtime(look).run(LookingAgent.agent_type)
    ticker.cancel()
    assert run.status == RunStatus.COMPLETED
    assert len(at_steps) == 3
    assert at_steps[0] < at_steps[1] < at_steps[2]  # it ran between each two steps


async def test_a_model_call_records_the_frames_it_built_without_copying_them(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    copied: list[Any] = []
    stamped = run_context.stamped

    def counted(frame: Any, run_id: str, seq: int) -> Any:
        copied.append(frame)
        return stamped(frame, run_id, seq)

    monkeypatch.setattr(run_context, "stamped", counted)
    committed: list[Any] = []
    ctx = step_context(ScriptedModel(["hi"]), committed)
    await ctx.complete([Message.user("hello")])
    assert copied == []
    assert [(type(f), f.run_id, f.seq) for f in committed] == [
        (ModelCall, "run-1", 1),
        (UsageFrame, "run-1", 2),
    ]
