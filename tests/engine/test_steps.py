"""``ctx.step``: an effect runs once; a re-executed step sees what the first execution saw."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kforge.engine.agent import StepOutcome
from kforge.engine.limits import RunLimits
from kforge.engine.run_context import RunContext
from kforge.errors import ReplayDivergenceError, ValidationError
from kforge.frames import DataEvent, Frame, Observation
from kforge.llm.testing.scripted import ScriptedModel
from kforge.runtime import AgentRegistry, Runtime
from kforge.store import MemoryStore, RunStatus
from tests.engine.sample_agents import OneStepAgent


class ReadingAgent(OneStepAgent):
    """Reads a changing value through ``ctx.step``, then asks a person to go on."""

    agent_type = "test.reading"
    reads: list[int] = []
    seen: list[dict[str, Any]] = []

    async def step(self, ctx: RunContext) -> StepOutcome:
        def read() -> dict[str, Any]:
            ReadingAgent.reads.append(len(ReadingAgent.reads) + 1)
            return {"value": len(ReadingAgent.reads), "pair": (1, 2)}

        seen = await ctx.step("clock.read", read)
        ReadingAgent.seen.append(seen)
        await ctx.ask("Go on?")
        return StepOutcome(True, seen)


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

    journal: list[Frame] = []
    first = context(journal)
    assert await first.step("rag.hits", search) == {"hits": ["a"]}
    assert await first.step("rag.linked", lambda: {"chunks": []}) == {"chunks": []}
    assert first.take_pending() == []  # each record committed before its step returned
    again = context([], journal)
    assert await again.step("rag.hits", search) == {"hits": ["a"]}
    assert await again.step("rag.linked", lambda: {"chunks": ["new"]}) == {"chunks": []}
    assert calls == ["search"] and again.take_pending() == []


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ({"score": float("nan")}, "step 'score.read' returned NaN at score"),
        ({1: "x"}, "an object key that is not a string"),
        (object(), "step 'score.read' returned"),
    ],
)
async def test_an_effect_that_json_cannot_record_is_refused(value: Any, message: str) -> None:
    log: list[Frame] = []
    ctx = context(log)
    with pytest.raises(ValidationError, match=message):
        await ctx.step("score.read", lambda: value)
    assert ctx.take_pending() == [] and log == []


async def test_a_re_executed_step_that_reads_something_else_names_the_divergence() -> None:
    journal = [Observation(run_id="r", seq=1, content="seen", goal_achieved=False, iteration=1)]
    ctx = context([], journal)
    with pytest.raises(ReplayDivergenceError, match=r"emitted 'data\.clock\.read'"):
        await ctx.step("clock.read", lambda: {"value": 1})


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**53), 2**53)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(st.characters(blacklist_categories=("Cs",))),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.tuples(inner, inner)
        | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)


def as_read_back(value: Any) -> Any:
    """What JSON gives back: tuples as lists."""
    if isinstance(value, list | tuple):
        return [as_read_back(v) for v in value]
    if isinstance(value, dict):
        return {k: as_read_back(v) for k, v in value.items()}
    return value


@given(value=json_values)
@settings(max_examples=150, deadline=None)
def test_any_json_value_reads_back_the_same_on_both_executions(value: Any) -> None:
    async def both() -> tuple[Any, Any]:
        journal: list[Frame] = []
        first = await context(journal).step("value.read", lambda: value)
        again = await context([], journal).step("value.read", lambda: "something else")
        return first, again

    first, again = asyncio.run(both())
    assert first == again == as_read_back(value)


async def test_a_step_passes_its_arguments_to_a_sync_or_an_async_function() -> None:
    async def fetch(url: str, *, retries: int) -> list[Any]:
        return [url, retries]

    def count(*items: int) -> int:
        return sum(items)

    journal: list[Frame] = []
    ctx = context(journal)
    assert await ctx.step("page.fetch", fetch, "https://example.org", retries=2) == [
        "https://example.org",
        2,
    ]
    assert await ctx.step("items.count", count, 1, 2, 3) == 6
    assert [(f.type, f.payload) for f in journal if isinstance(f, DataEvent)] == [
        ("data.page.fetch", {"value": ["https://example.org", 2]}),
        ("data.items.count", {"value": 6}),
    ]


async def test_a_failing_step_records_nothing_and_runs_again_when_re_executed() -> None:
    calls: list[int] = []

    def flaky() -> dict[str, Any]:
        calls.append(1)
        if len(calls) == 1:
            raise OSError("disk busy")
        return {"read": len(calls)}

    journal: list[Frame] = []
    with pytest.raises(OSError, match="disk busy"):  # as it was raised, not wrapped
        await context(journal).step("disk.read", flaky)
    assert journal == []
    again = context([], journal)
    assert await again.step("disk.read", flaky) == {"read": 2}
    assert len(calls) == 2


async def test_a_step_renamed_between_executions_names_both_names_and_the_seq() -> None:
    journal: list[Frame] = []
    await context(journal).step("clock.read", lambda: 1)
    ctx = context([], journal)
    with pytest.raises(
        ReplayDivergenceError,
        match=r"emitted 'data\.clock\.now' where the log recorded 'data\.clock\.read' \(seq 1\)",
    ):
        await ctx.step("clock.now", lambda: 1)
