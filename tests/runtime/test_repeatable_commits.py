"""Which commits the engine marks ``repeatable`` (a store may commit them without waiting for
the disk): a model's reply committed before it is used, with the stretch's opening when
nobody waits to see that durable at once, and nothing else: not the step, not an answer given
with ``durable=True``, not an effect's record."""

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


async def test_an_answer_someone_waits_to_see_durable_is_not_repeatable() -> None:
    store = NotingStore()
    rt, run_id = await paused_run(store, ScriptedModel(["1", "2"]))  # type: ignore[arg-type]
    store.commits.clear()
    await rt.resume(run_id, "go", durable=True)
    assert (await rt.wait(run_id)).status == RunStatus.COMPLETED
    [(types, _, repeatable), *_] = store.commits
    assert "interaction.answered" in types and "model.call" in types and not repeatable


class OpenedNotingStore(NotingStore):
    """Also notes, at each commit, whether the run's opening was reported durable yet."""

    runtime: Runtime | None = None

    def __init__(self) -> None:
        super().__init__()
        self.opened_before: list[bool] = []

    def commit(self, run_id: str, frames: Sequence[Frame], **kwargs: Any) -> None:
        if self.runtime is not None:
            self.opened_before.append(self.runtime._opened[run_id].done())
        super().commit(run_id, frames, **kwargs)


async def test_an_opening_nobody_waits_for_goes_with_the_reply_and_is_durable_with_the_step() -> (
    None
):
    store = OpenedNotingStore()
    rt, run_id = await paused_run(store, ScriptedModel(["1", "2"]))  # type: ignore[arg-type]
    store.runtime = rt
    store.commits.clear()
    store.opened_before.clear()
    await rt.resume(run_id, "go")
    assert (await rt.wait(run_id)).status == RunStatus.COMPLETED
    [(types, step, repeatable), (_, next_step, next_repeatable), *_] = store.commits
    # the answer rides with the model's reply, which does not wait for the disk ...
    assert "interaction.answered" in types and "model.call" in types and repeatable
    assert not step and next_step and not next_repeatable
    # ... and the opening is reported durable only once the step's commit, which waits,
    # has made it so
    assert store.opened_before[:2] == [False, False]
    await rt.opened(run_id)


async def test_an_effect_record_is_not_repeatable(tmp_path: Path) -> None:
    store = NotingStore()
    rt = Runtime(store, model=ScriptedModel([]), registry=make_registry())
    run = await rt.run("test.journal", {"ledger": str(tmp_path / "ledger")})
    assert run.status == RunStatus.COMPLETED
    assert store.commits and not any(repeatable for *_, repeatable in store.commits)
