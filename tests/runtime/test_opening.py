"""How a stretch opens. The answer and the "running" status are group-committed: with the step's
first durable point when the step gets there without waiting, else as soon as it first waits.
The step that asked is re-entered with its recorded frames, read from the log unless the
question was all it recorded."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from kforge.engine.agent import StepOutcome
from kforge.engine.run_context import RunContext
from kforge.errors import StoreError
from kforge.frames import Frame
from kforge.llm.testing.scripted import ScriptedModel
from kforge.llm.types import Message, ModelResponse
from kforge.runtime import AgentRegistry, Runtime
from kforge.store import MemoryStore, RunStatus


class AskingAgent:
    """Each step asks the model for a number, until it has two; the second step first asks a
    person (after a model call of its own with ``think_first``)."""

    agent_type = "test.asking"

    def __init__(self, args: dict[str, Any] | None = None) -> None:
        self.values: list[int] = []
        self.think_first = bool((args or {}).get("think_first"))

    async def step(self, ctx: RunContext) -> StepOutcome:
        if len(self.values) == 1:
            if self.think_first:
                await ctx.complete([Message.user("plan")], purpose="plan")
            await ctx.ask("Go on?", options=("go", "stop"))
        response = await ctx.complete([Message.user(f"number {len(self.values) + 1}")])
        self.values.append(int(response.text))
        return StepOutcome(len(self.values) >= 2, {"values": self.values}, "counted")

    def get_state(self) -> dict[str, Any]:
        return {"values": list(self.values), "think_first": self.think_first}

    def restore_state(self, state: dict[str, Any]) -> None:
        self.values = list(state["values"])
        self.think_first = bool(state.get("think_first"))

    def partial_result(self) -> dict[str, Any]:
        return {"values": list(self.values)}


class RecordingStore(MemoryStore):
    """Notes the frame types of every commit; can be told to fail the next one, or all."""

    def __init__(self) -> None:
        super().__init__()
        self.commits: list[tuple[list[str], dict[str, Any]]] = []
        self.fail_next = False
        self.fail_always = False
        self.reads: list[int] = []

    def read_frames(self, run_id: str, *, after_seq: int = 0, limit: int | None = None) -> Any:
        self.reads.append(after_seq)
        return super().read_frames(run_id, after_seq=after_seq, limit=limit)

    def commit(self, run_id: str, frames: Sequence[Frame], **kwargs: Any) -> None:
        if self.fail_next or self.fail_always:
            self.fail_next = False
            raise StoreError("disk full (simulated)")
        super().commit(run_id, frames, **kwargs)
        self.commits.append(([f.type for f in frames], dict(kwargs.get("run_fields") or {})))


class GatedModel(ScriptedModel):
    """A scripted model that, once armed, waits for ``release`` before answering."""

    def __init__(self, replies: list[Any]) -> None:
        super().__init__(replies)
        self.armed = False
        self.called = asyncio.Event()
        self.release = asyncio.Event()

    async def complete(self, *args: Any, **kwargs: Any) -> ModelResponse:
        if self.armed:
            self.called.set()
            await self.release.wait()
        return await super().complete(*args, **kwargs)


async def paused_run(
    store: RecordingStore, model: ScriptedModel, args: dict[str, Any] | None = None
) -> tuple[Runtime, str]:
    registry = AgentRegistry()
    registry.register(AskingAgent.agent_type, AskingAgent)
    rt = Runtime(store, model=model, registry=registry)
    run = await rt.run(AskingAgent.agent_type, args or {})
    assert run.status == RunStatus.AWAITING_USER
    return rt, run.id


def assert_gap_free(rt: Runtime, run_id: str) -> list[Frame]:
    frames = rt.frames(run_id)
    assert [f.seq for f in frames] == list(range(1, len(frames) + 1))
    return frames


async def test_a_step_that_does_not_wait_commits_the_answer_with_its_model_reply() -> None:
    store = RecordingStore()
    rt, run_id = await paused_run(store, ScriptedModel(["1", "2"]))
    before = len(store.commits)
    await rt.resume(run_id, "go")
    done = await rt.wait(run_id)
    assert done.status == RunStatus.COMPLETED and done.result == {"values": [1, 2]}
    types, fields = store.commits[before]
    assert types == ["interaction.answered", "status.changed", "model.call", "usage"]
    assert fields["status"] == RunStatus.RUNNING and fields["pending_interaction"] is None
    frames = assert_gap_free(rt, run_id)
    assert [f.type for f in frames].count("interaction.answered") == 1


async def test_a_step_that_waits_has_its_answer_durable_while_it_waits() -> None:
    store = RecordingStore()
    model = GatedModel(["1", "2"])
    rt, run_id = await paused_run(store, model)
    model.armed = True
    await rt.resume(run_id, "go")
    await asyncio.wait_for(model.called.wait(), 5)  # the model now waits for release
    waiting = store.get_run(run_id)
    assert waiting.status == RunStatus.RUNNING
    assert waiting.pending_interaction is None
    assert "interaction.answered" in [f.type for f in store.read_frames(run_id)]
    model.release.set()
    assert (await rt.wait(run_id)).status == RunStatus.COMPLETED
    assert_gap_free(rt, run_id)


async def test_a_failed_opening_commit_is_retried_by_the_next_one() -> None:
    store = RecordingStore()
    model = GatedModel(["1", "2"])
    rt, run_id = await paused_run(store, model)
    model.armed = True
    store.fail_next = True
    await rt.resume(run_id, "go")
    await asyncio.wait_for(model.called.wait(), 5)  # the model now waits for release
    assert store.get_run(run_id).status == RunStatus.AWAITING_USER  # nothing half-written
    model.release.set()
    done = await rt.wait(run_id)
    assert done.status == RunStatus.COMPLETED
    frames = assert_gap_free(rt, run_id)
    assert [f.type for f in frames].count("interaction.answered") == 1


async def test_a_step_that_only_asked_is_re_entered_without_reading_the_log() -> None:
    store = RecordingStore()
    rt, run_id = await paused_run(store, ScriptedModel(["1", "2"]))
    store.reads.clear()
    await rt.resume(run_id, "go")
    done = await rt.wait(run_id)
    assert done.status == RunStatus.COMPLETED and done.result == {"values": [1, 2]}
    assert store.reads == []  # the question came with the run record
    frames = assert_gap_free(rt, run_id)
    answered = [f for f in frames if f.type == "interaction.answered"]
    asked = [f for f in frames if f.type == "interaction.requested"]
    assert len(answered) == len(asked) == 1
    assert answered[0].interaction_id == asked[0].interaction_id  # type: ignore[attr-defined]


async def test_a_step_that_recorded_more_before_asking_replays_it_from_the_log() -> None:
    store = RecordingStore()
    model = ScriptedModel(["1", "the plan", "2"])
    rt, run_id = await paused_run(store, model, {"think_first": True})
    store.reads.clear()
    await rt.resume(run_id, "go")
    done = await rt.wait(run_id)
    assert done.status == RunStatus.COMPLETED and done.result == {"values": [1, 2]}
    assert store.reads  # the model reply before the question is read back and replayed
    model.assert_consumed()
    assert len(model.calls) == 3  # "the plan" was not asked for again
    assert_gap_free(rt, run_id)


async def test_a_stretch_that_fails_before_anyone_waits_is_reported_by_wait() -> None:
    # the store refuses every commit: the stretch ends with that error at its first commit,
    # before its task's callbacks have run; a wait scheduled after it must raise that error,
    # not hand back the record as it was ("pending"), as if the run were still going
    store = RecordingStore()
    store.fail_always = True
    registry = AgentRegistry()
    registry.register(AskingAgent.agent_type, AskingAgent)
    rt = Runtime(store, model=ScriptedModel(["1", "2"]), registry=registry)
    run_id = await rt.start(AskingAgent.agent_type, {})
    waiting = asyncio.ensure_future(rt.wait(run_id))  # runs after the stretch's first turn
    try:
        await waiting
    except StoreError as exc:
        assert "disk full" in str(exc)
    else:
        raise AssertionError(f"wait returned {store.get_run(run_id).status} without the error")
