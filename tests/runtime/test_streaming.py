"""Streamed model text reaches live subscribers as token deltas; only the finished text is
stored, and a re-executed step replays it without streaming again."""

from __future__ import annotations

from typing import Any

from kforge.engine.agent import StepOutcome
from kforge.engine.run_context import RunContext
from kforge.frames import Frame, ModelCall, TokenDelta
from kforge.llm.testing.scripted import ScriptedModel
from kforge.llm.types import Message
from kforge.runtime import AgentRegistry, Runtime
from kforge.store import MemoryStore, RunStatus


class Writer:
    """One streamed answer, then a question, then done."""

    agent_type = "test.writer"

    def __init__(self, args: dict[str, Any] | None = None) -> None:
        self.answer = ""

    async def step(self, ctx: RunContext) -> StepOutcome:
        response = await ctx.complete([Message.user("write")], purpose="generation", stream=True)
        self.answer = response.text
        await ctx.ask("Keep it?", options=("keep", "drop"))
        return StepOutcome(True, {"answer": self.answer}, "written")

    def get_state(self) -> dict[str, Any]:
        return {"answer": self.answer}

    def restore_state(self, state: dict[str, Any]) -> None:
        self.answer = state["answer"]

    def partial_result(self) -> dict[str, Any]:
        return {"answer": self.answer}


def runtime(model: ScriptedModel, store: MemoryStore | None = None) -> Runtime:
    registry = AgentRegistry()
    registry.register(Writer.agent_type, Writer)
    return Runtime(store or MemoryStore(), model=model, registry=registry)


async def test_deltas_stream_live_and_only_the_finished_text_is_stored() -> None:
    rt = runtime(ScriptedModel(["Solar panels turn light into power."]))
    run_id = await rt.start(Writer.agent_type, {})
    seen: list[Frame | TokenDelta] = [item async for item in rt.subscribe(run_id, deltas=True)]
    deltas = [d for d in seen if isinstance(d, TokenDelta)]
    assert "".join(d.text for d in deltas) == "Solar panels turn light into power."
    assert len(deltas) == 6 and {d.purpose for d in deltas} == {"generation"}
    assert {d.run_id for d in deltas} == {run_id}
    stored = rt.frames(run_id)
    assert not [f for f in stored if f.type == TokenDelta.TYPE]
    calls = [f for f in stored if isinstance(f, ModelCall)]
    assert [c.response["text"] for c in calls] == ["Solar panels turn light into power."]
    # the deltas came while the run went on: before the frame that records their text
    first_delta = next(i for i, item in enumerate(seen) if isinstance(item, TokenDelta))
    call_at = next(i for i, item in enumerate(seen) if isinstance(item, ModelCall))
    assert first_delta < call_at


async def test_a_subscriber_without_deltas_sees_frames_only() -> None:
    rt = runtime(ScriptedModel(["One two three."]))
    run_id = await rt.start(Writer.agent_type, {})
    items = [item async for item in rt.subscribe(run_id)]
    assert items and all(isinstance(item, Frame) for item in items)
    assert [f.seq for f in items] == list(range(1, len(items) + 1))


async def test_a_re_executed_step_replays_the_text_without_streaming_it_again() -> None:
    store = MemoryStore()
    model = ScriptedModel(["Kept words."])
    first = runtime(model, store)
    run = await first.run(Writer.agent_type, {})
    assert run.status == RunStatus.AWAITING_USER
    again = runtime(ScriptedModel([]), store)  # any model call now would fail loudly
    await again.resume(run.id, "keep")
    items = [item async for item in again.subscribe(run.id, deltas=True)]
    assert not [item for item in items if isinstance(item, TokenDelta)]
    done = await again.wait(run.id)
    assert done.status == RunStatus.COMPLETED and done.result == {"answer": "Kept words."}
