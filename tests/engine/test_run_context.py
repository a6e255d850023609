"""RunContext: what a step sees of the model is exactly what a re-executed step sees."""

from __future__ import annotations

import math
from typing import Any

import pytest

from kforge.engine.agent import StepOutcome
from kforge.engine.run_context import RunContext
from kforge.engine.services import Services
from kforge.frames import ModelCall
from kforge.llm.testing.function import CallInfo, FunctionModel
from kforge.llm.types import Message, ModelResponse, ToolCall, ToolSpec
from kforge.runtime import AgentRegistry, Runtime
from kforge.store import MemoryStore, RunStatus

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
