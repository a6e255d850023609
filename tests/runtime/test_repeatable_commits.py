"""Which commits the engine marks ``repeatable`` (a store may commit them without waiting for
the disk): a model's reply committed before it is used, and nothing else: not the step, not
a stretch's opening (an answer, the "running" status), not an effect's record."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from kforge.frames import Frame
from kforge.llm.testing.scripted import ScriptedModel
from kforge.runtime import Runtime
from kforge.store import MemoryStore, RunStatus
from tests.engine.sample_agents import make_registry
from tests.runtime.test_opening import paused_run


class NotingStore(MemoryStore):
    """Notes each commit's frame types, whether it held a step, and its ``repeatable``."""

    def __init__(self) -> None:
        super().__init__()
        self.commits: list[tuple[list[str], bool, bool]] = []

    def commit(self, run_id: str, frames: Sequence[Frame], **kwargs: Any) -> None:
        super().commit(run_id, frames, **kwargs)
        step = kwargs.get("step") is not None
        self.commits.append(([f.type for f in frames], step, bool(kwargs.get("repeatable"))))


async def test_a_model_reply_inside_a_step_is_committed_as_repeatable_work() -> None:
    store = NotingStore()
    rt = Runtime(store, model=ScriptedModel(["1", "2", "3"]), registry=make_registry())
    run = await rt.run("test.counter", {"target": 3})
    assert run.status == RunStatus.COMPLETED
    replies = [c for c in store.commits if "model.call" in c[0]]
    assert len(replies) == 3
    # the first carries the stretch's opening ("running"), which waits for the disk
    assert [repeatable for *_, repeatable in replies] == [False, True, True]
    assert all(not repeatable for _, step, repeatable in store.commits if step)


async def test_an_answer_committed_with_a_model_reply_is_not_repeatable() -> None:
    store = NotingStore()
    rt, run_id = await paused_run(store, ScriptedModel(["1", "2"]))  # type: ignore[arg-type]
    store.commits.clear()
    await rt.resume(run_id, "go")
    assert (await rt.wait(run_id)).status == RunStatus.COMPLETED
    [(types, _, repeatable), *_] = store.commits
    assert "interaction.answered" in types and "model.call" in types and not repeatable


async def test_an_effect_record_is_not_repeatable(tmp_path: Path) -> None:
    store = NotingStore()
    rt = Runtime(store, model=ScriptedModel([]), registry=make_registry())
    run = await rt.run("test.journal", {"ledger": str(tmp_path / "ledger")})
    assert run.status == RunStatus.COMPLETED
    assert store.commits and not any(repeatable for *_, repeatable in store.commits)
