"""Frames are encoded when they are emitted: one the store could not take fails its step cleanly,
and the log stays gap-free with the seq counter where the store has it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from kforge.engine.agent import StepOutcome
from kforge.engine.registry import AgentRegistry
from kforge.engine.run_context import RunContext
from kforge.frames import DataEvent, ErrorFrame, ModelCall
from kforge.llm.testing.scripted import ScriptedModel
from kforge.llm.types import Message
from kforge.runtime import Runtime
from kforge.store import RunStatus, SQLiteStore


class Emitter:
    """Step 1 emits a good event; step 2 emits ``args['payload']``; step 3 asks the model."""

    agent_type = "test.emitter"

    def __init__(self, args: dict[str, Any] | None = None) -> None:
        self.args = args or {}
        self.steps = 0

    async def step(self, ctx: RunContext) -> StepOutcome:
        self.steps += 1
        if self.steps == 1:
            ctx.emit(DataEvent(name="fine", payload={"n": 1}))
            ctx.flush()
        elif self.steps == 2:
            ctx.emit(DataEvent(name="good.before", payload={"n": 2}))
            payload = self.args.get("payload")
            if payload == "set":
                ctx.emit(DataEvent(name="bad", payload={"tags": {"a", "b"}}))
        else:
            reply = await ctx.complete([Message.user("say something")])
            return StepOutcome(True, {"text": reply.text}, "done")
        return StepOutcome()

    def get_state(self) -> dict[str, Any]:
        return {"steps": self.steps}

    def restore_state(self, state: dict[str, Any]) -> None:
        self.steps = state["steps"]

    def partial_result(self) -> dict[str, Any]:
        return {}


def registry() -> AgentRegistry:
    r = AgentRegistry()
    r.register(Emitter.agent_type, Emitter)
    return r


def assert_gap_free(store: SQLiteStore, run_id: str) -> None:
    frames = store.read_frames(run_id)
    assert [f.seq for f in frames] == list(range(1, len(frames) + 1))
    assert store.get_run(run_id).last_seq == len(frames)


async def test_a_set_in_a_payload_fails_that_step_naming_the_field(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "k.db")
    rt = Runtime(store, model=ScriptedModel([]), registry=registry())
    run = await rt.run("test.emitter", {"payload": "set"})
    assert run.status == RunStatus.FAILED
    assert run.error is not None and "frame 'data.bad' field 'payload'" in run.error
    assert run.lease_owner is None
    assert_gap_free(store, run.id)
    frames = store.read_frames(run.id)
    # what the step emitted before the bad frame is kept, then the error
    assert [f.type for f in frames][-3:] == ["data.good.before", "error", "status.changed"]
    assert isinstance(frames[-2], ErrorFrame) and frames[-2].error_type == "ValidationError"


async def test_a_lone_surrogate_in_a_model_reply_fails_the_step_cleanly(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "k.db")
    rt = Runtime(store, model=ScriptedModel(["bad \ud800 text"]), registry=registry())
    run = await rt.run("test.emitter", {})
    assert run.status == RunStatus.FAILED
    assert run.error is not None and "frame 'model.call' field 'response'" in run.error
    assert "surrogate" in run.error
    assert_gap_free(store, run.id)
    assert not [f for f in store.read_frames(run.id) if isinstance(f, ModelCall)]
    run.error.encode("utf-8")  # the stored message itself is clean text


async def test_frames_of_a_flush_that_failed_are_committed_with_the_failure(
    tmp_path: Path,
) -> None:
    from kforge.errors import StoreError

    class OnceFailing(SQLiteStore):
        failures = 0

        def commit(self, run_id, frames, **kw):  # type: ignore[no-untyped-def]
            if any(f.type == "data.fine" for f in frames) and not self.failures:
                self.failures += 1
                raise StoreError("database is busy: try again")
            return super().commit(run_id, frames, **kw)

    store = OnceFailing(tmp_path / "k.db")
    rt = Runtime(store, model=ScriptedModel([]), registry=registry())
    run = await rt.run("test.emitter", {})
    assert run.status == RunStatus.FAILED and "database is busy" in (run.error or "")
    assert_gap_free(store, run.id)
    types = [f.type for f in store.read_frames(run.id)]
    assert types[-3:] == ["data.fine", "error", "status.changed"]
