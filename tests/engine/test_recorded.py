"""``ctx.recorded``: an effect that is not a model or tool call runs once; a re-executed step
sees what the first execution saw."""

from __future__ import annotations

from typing import Any

import pytest

from kforge.engine.agent import StepOutcome
from kforge.engine.limits import RunLimits
from kforge.engine.run_context import RunContext
from kforge.errors import ReplayDivergenceError, ValidationError
from kforge.frames import DataEvent, Frame, Observation
from kforge.llm.testing.scripted import ScriptedModel
from kforge.runtime import AgentRegistry, Runtime
from kforge.store import MemoryStore, RunStatus


class ReadingAgent:
    """Reads a changing value through ``ctx.recorded``, then asks a person to go on."""

    agent_type = "test.reading"
    reads: list[int] = []
    seen: list[dict[str, Any]] = []

    def __init__(self, args: dict[str, Any] | None = None) -> None:
        pass

    async def step(self, ctx: RunContext) -> StepOutcome:
        def read() -> dict[str, Any]:
            ReadingAgent.reads.append(len(ReadingAgent.reads) + 1)
            return {"value": len(ReadingAgent.reads), "pair": (1, 2)}

        seen = await ctx.recorded("clock.read", read)
        ReadingAgent.seen.append(seen)
        await ctx.ask("Go on?")
        return StepOutcome(True, seen)

    def get_state(self) -> dict[str, Any]:
        return {}

    def restore_state(self, state: dict[str, Any]) -> None:
        pass

    def partial_result(self) -> dict[str, Any]:
        return {}


async def test_a_re_executed_step_sees_the_recorded_value_without_running_the_effect() -> None:
    agents = AgentRegistry()
    agents.register(ReadingAgent.agent_type, ReadingAgent)
    ReadingAgent.reads, ReadingAgent.seen = [], []
    rt = Runtime(MemoryStore(), model=ScriptedModel(), registry=agents)
    run = await rt.run("test.reading")
    assert run.status == RunStatus.AWAITING_USER
    await rt.resume(run.id, "yes")
    run = await rt.wait(run.id)
    assert run.status == RunStatus.COMPLETED
    assert ReadingAgent.reads == [1]
    assert ReadingAgent.seen == [{"value": 1, "pair": [1, 2]}] * 2
    data = [f for f in rt.frames(run.id) if isinstance(f, DataEvent)]
    assert [(f.type, f.payload) for f in data] == [
        ("data.clock.read", {"value": 1, "pair": [1, 2]})
    ]


def context(log: list[Frame], journal: list[Frame] | None = None) -> RunContext:
    ctx = RunContext(
        run_id="r",
        agent_type="test",
        model=ScriptedModel(),
        limits=RunLimits(),
        next_seq=1,
        flush=log.extend,
    )
    ctx.begin_step(1, journal or [])
    return ctx


async def test_an_async_effect_is_awaited_and_replayed_in_order() -> None:
    calls: list[str] = []

    async def search() -> dict[str, Any]:
        calls.append("search")
        return {"hits": ["a"]}

    first = context([])
    assert await first.recorded("rag.hits", search) == {"hits": ["a"]}
    assert await first.recorded("rag.linked", lambda: {"chunks": []}) == {"chunks": []}
    journal = first.take_pending()
    again = context([], journal)
    assert await again.recorded("rag.hits", search) == {"hits": ["a"]}
    assert await again.recorded("rag.linked", lambda: {"chunks": ["new"]}) == {"chunks": []}
    assert calls == ["search"] and again.take_pending() == []


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ({"score": float("nan")}, "recorded effect 'score.read' returned NaN at score"),
        ({1: "x"}, "an object key that is not a string"),
        (["not", "an", "object"], "returned a list; return a dict"),
    ],
)
async def test_an_effect_that_json_cannot_record_is_refused(value: Any, message: str) -> None:
    ctx = context([])
    with pytest.raises(ValidationError, match=message):
        await ctx.recorded("score.read", lambda: value)
    assert ctx.take_pending() == []


async def test_a_re_executed_step_that_reads_something_else_names_the_divergence() -> None:
    journal = [Observation(run_id="r", seq=1, content="seen", goal_achieved=False, iteration=1)]
    ctx = context([], journal)
    with pytest.raises(ReplayDivergenceError, match=r"emitted 'data\.clock\.read'"):
        await ctx.recorded("clock.read", lambda: {"value": 1})
