"""Runtime: concurrency, subscribe, cancel, fork, corruption recovery and limits."""

from __future__ import annotations

import asyncio
import sqlite3
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from kforge.engine.limits import RunLimits
from kforge.errors import ConfigurationError, InvalidRunStateError, ValidationError
from kforge.frames import ErrorFrame, LimitReached, ModelCall
from kforge.llm.testing.scripted import ScriptedModel
from kforge.runtime import Runtime
from kforge.store import MemoryStore, RunStatus, SQLiteStore
from tests.engine.sample_agents import make_registry


async def test_many_runs_run_concurrently() -> None:
    model = ScriptedModel(["1"] * 60)
    rt = Runtime(MemoryStore(), model=model, registry=make_registry())
    ids = [await rt.start("test.counter", {"target": 3}) for _ in range(20)]
    runs = await asyncio.gather(*(rt.wait(i) for i in ids))
    assert all(r.status == RunStatus.COMPLETED for r in runs)
    model.assert_consumed()


async def test_subscribe_replays_then_follows_live() -> None:
    rt = Runtime(MemoryStore(), model=ScriptedModel(["1", "2", "3"]), registry=make_registry())
    run_id = await rt.start("test.counter", {"target": 3})
    seen = [f.seq async for f in rt.subscribe(run_id)]
    assert seen == list(range(1, rt.get_run(run_id).last_seq + 1))
    later = [f.seq async for f in rt.subscribe(run_id, after_seq=5)]
    assert later == seen[5:]


async def test_cancel_a_waiting_run_and_refuse_to_resume_it() -> None:
    rt = Runtime(MemoryStore(), model=ScriptedModel([{"items": ["a"]}]), registry=make_registry())
    run = await rt.run("test.draft", {"topic": "t"})
    await rt.cancel(run.id)
    assert rt.get_run(run.id).status == RunStatus.CANCELLED
    with pytest.raises(InvalidRunStateError, match="is cancelled"):
        await rt.resume(run.id, "approve")


async def test_cancel_a_running_run() -> None:
    entered = asyncio.Event()

    class Slow(ScriptedModel):
        async def complete(self, *a, **k):  # type: ignore[no-untyped-def]
            entered.set()
            await asyncio.sleep(10)
            return await super().complete(*a, **k)

    rt = Runtime(MemoryStore(), model=Slow(["1"]), registry=make_registry())
    run_id = await rt.start("test.counter", {"target": 1})
    await asyncio.wait_for(entered.wait(), 5)
    await rt.cancel(run_id)
    assert rt.get_run(run_id).status == RunStatus.CANCELLED
    assert rt.frames(run_id)[-1].type == "status.changed"


async def test_fork_from_a_seq_replays_from_there_and_leaves_the_source_alone() -> None:
    rt = Runtime(MemoryStore(), model=ScriptedModel(["1", "2", "3"]), registry=make_registry())
    source = await rt.run("test.counter", {"target": 3})
    calls = [f for f in rt.frames(source.id) if isinstance(f, ModelCall)]
    cut = calls[1].seq + 1  # after the second model call and its usage frame
    forked = await rt.fork(source.id, at_seq=cut)
    assert rt.get_run(forked).status == RunStatus.PAUSED
    rt2 = Runtime(rt.store, model=ScriptedModel(["30"]), registry=make_registry())
    await rt2.resume(forked)
    done = await rt2.wait(forked)
    assert done.result == {"values": [1, 2, 30]}
    assert rt.get_run(source.id).result == {"values": [1, 2, 3]}


async def test_a_fork_counts_the_steps_it_holds() -> None:
    rt = Runtime(MemoryStore(), model=ScriptedModel(["1", "2", "3"]), registry=make_registry())
    source = await rt.run("test.counter", {"target": 3})
    assert source.iteration == 3
    forked = await rt.fork(source.id)
    assert rt.get_run(forked).iteration == 3


async def test_unreadable_snapshot_falls_back_to_frames(tmp_path: Path) -> None:
    db = tmp_path / "k.db"
    rt = Runtime(SQLiteStore(db), model=ScriptedModel([{"items": ["a"]}]), registry=make_registry())
    run = await rt.run("test.draft", {"topic": "t"})
    conn = sqlite3.connect(db)
    conn.execute("UPDATE snapshots SET state = '{broken' WHERE run_id = ?", (run.id,))
    conn.commit()
    conn.close()
    rt2 = Runtime(
        SQLiteStore(db), model=ScriptedModel([{"verdict": "ok"}]), registry=make_registry()
    )
    await rt2.resume(run.id, "approve")
    assert (await rt2.wait(run.id)).status == RunStatus.COMPLETED


async def test_state_that_cannot_be_rebuilt_fails_only_that_run(tmp_path: Path) -> None:
    db = tmp_path / "k.db"
    rt = Runtime(
        SQLiteStore(db),
        model=ScriptedModel([{"items": ["a"]}, {"items": ["b"]}]),
        registry=make_registry(),
    )
    broken = await rt.run("test.draft", {"topic": "t"})
    healthy = await rt.run("test.draft", {"topic": "u"})
    conn = sqlite3.connect(db)
    conn.execute("UPDATE snapshots SET state = 'nope' WHERE run_id = ?", (broken.id,))
    conn.execute(
        'UPDATE steps SET delta = \'[["a", ["missing"], [1]]]\' WHERE run_id = ? AND step = 1',
        (broken.id,),
    )
    conn.commit()
    conn.close()
    rt2 = Runtime(
        SQLiteStore(db), model=ScriptedModel([{"verdict": "ok"}]), registry=make_registry()
    )
    await rt2.resume(broken.id, "approve")
    run = await rt2.wait(broken.id)
    assert run.status == RunStatus.FAILED
    assert run.error is not None and "state corruption" in run.error
    assert isinstance(rt2.frames(broken.id)[-2], ErrorFrame)
    await rt2.resume(healthy.id, "approve")
    assert (await rt2.wait(healthy.id)).status == RunStatus.COMPLETED


async def test_phase_visit_limit_pauses_with_partial_result() -> None:
    replies = [{"items": ["a"]}, {"verdict": "more"}, {"items": ["b"]}, {"verdict": "more"}]
    rt = Runtime(
        MemoryStore(),
        model=ScriptedModel(replies),
        registry=make_registry(),
        limits=RunLimits(max_phase_visits=2),
    )
    run = await rt.run("test.draft", {"topic": "t"})
    while run.status == RunStatus.AWAITING_USER:
        await rt.resume(run.id, "approve")
        run = await rt.wait(run.id)
    assert run.status == RunStatus.PAUSED
    assert run.pause_reason == "limit:max_phase_visits"
    limit = next(f for f in rt.frames(run.id) if isinstance(f, LimitReached))
    assert limit.partial_result["items"] == ["a", "b"]


async def test_wall_time_limit() -> None:
    rt = Runtime(
        MemoryStore(),
        model=ScriptedModel(["1", "2"]),
        registry=make_registry(),
        limits=RunLimits(max_wall_time_s=0.0),
    )
    run = await rt.run("test.counter", {"target": 2})
    assert run.pause_reason == "limit:max_wall_time_s"


async def test_token_budget_limit_ends_with_best_result() -> None:
    rt = Runtime(
        MemoryStore(),
        model=ScriptedModel(["1", "2"]),
        registry=make_registry(),
        limits=RunLimits(max_tokens=1),
    )
    run = await rt.run("test.counter", {"target": 5})
    assert run.status == RunStatus.PAUSED
    assert run.pause_reason == "limit:max_tokens"
    assert run.result == {"values": [1]}


async def test_unknown_agent_type_is_a_clear_error() -> None:
    rt = Runtime(MemoryStore(), model=ScriptedModel(), registry=make_registry())
    with pytest.raises(ConfigurationError, match="unknown agent type 'nope'"):
        await rt.start("nope")


@pytest.mark.parametrize(
    ("args", "named"),
    [
        ({"target": 1, "since": datetime(2024, 1, 1, tzinfo=UTC)}, "since"),
        ({"target": 1, "tags": {"a", "b"}}, "tags"),
        ({"target": 1, "notes": ["ok", "\ud800"]}, "notes"),
        ({"target": 1, "weights": {"w": float("nan")}}, "weights"),
        ({"target": 1, "limits": {1: "one"}}, "limits"),
    ],
)
async def test_start_refuses_arguments_that_are_not_json(
    tmp_path: Path, args: dict[str, Any], named: str
) -> None:
    rt = Runtime(SQLiteStore(tmp_path / "k.db"), model=ScriptedModel(), registry=make_registry())
    with pytest.raises(ValidationError, match=f"argument '{named}'"):
        await rt.start("test.counter", args)
    assert rt.store.list_runs() == []


async def test_child_agents_fork_and_wait_record_the_parent() -> None:
    from kforge.runtime.services import ChildAgents

    rt = Runtime(MemoryStore(), model=ScriptedModel(["1", "2", "3", "4"]), registry=make_registry())
    parent = await rt.run("test.counter", {"target": 1})
    children = ChildAgents(rt, parent.id, agent_type="test.counter")
    handle = await children.fork("count to three")
    assert rt.get_run(handle).parent_id == parent.id
    assert await children.wait(handle) == '{"values": [2, 3, 4]}'
    with pytest.raises(ValidationError, match="not a run forked by this run"):
        await children.wait(parent.id)
    with pytest.raises(ValidationError, match="prompt is empty"):
        await children.fork("  ")


async def test_wait_raises_the_error_of_a_stretch_that_ended_however_late_it_is_called() -> None:
    from kforge.errors import StoreError

    class FailingStore(MemoryStore):
        fail = False

        def commit(self, run_id, frames, **kw):  # type: ignore[no-untyped-def]
            if self.fail:
                raise StoreError("disk full: free some space, then resume the run")
            return super().commit(run_id, frames, **kw)

    store = FailingStore()
    rt = Runtime(store, model=ScriptedModel(["1", "2"]), registry=make_registry())
    run_id = await rt.start("test.counter", {"target": 2})
    store.fail = True
    while rt.is_active(run_id):  # let the stretch end unobserved
        await asyncio.sleep(0)
    for _ in range(2):
        with pytest.raises(StoreError, match="disk full"):
            await rt.wait(run_id)
    store.fail = False
    rt._model = ScriptedModel(["1", "2"])
    await rt.resume(run_id)
    assert (await rt.wait(run_id)).status == RunStatus.COMPLETED


class CorpusReader:
    """One step: the best passage of the ``docs`` corpus for ``question``."""

    agent_type = "test.reader"

    def __init__(self, args: dict[str, Any] | None = None) -> None:
        self.question = str((args or {}).get("question", ""))

    async def step(self, ctx: Any) -> Any:
        from kforge.engine.agent import StepOutcome

        [best, *_] = ctx.corpus("docs").search(self.question, 1)
        return StepOutcome(True, {"text": best.chunk.text}, "read")

    def get_state(self) -> dict[str, Any]:
        return {"question": self.question}

    def restore_state(self, state: dict[str, Any]) -> None:
        self.question = state["question"]

    def partial_result(self) -> dict[str, Any]:
        return {}


async def test_a_runtime_runs_over_a_run_log_alone_and_reads_a_passage_store_of_its_own(
    tmp_path: Path,
) -> None:
    """The two halves of a store can be two stores: the runs in one run log, the corpora in a
    passage store given as the runs' corpora."""
    from kforge.engine.services import Services
    from kforge.rag.catalog import Corpora
    from kforge.store.memory_passages import MemoryPassageStore
    from kforge.store.memory_runs import MemoryRunLog

    (tmp_path / "tides.md").write_text("# Tides\n\nSpring tides come twice a month.\n")
    passages, run_log = MemoryPassageStore(), MemoryRunLog()
    corpora = Corpora(passages)
    corpora.open("docs").ingest(tmp_path)
    registry = make_registry()
    registry.register(CorpusReader.agent_type, CorpusReader)
    rt = Runtime(run_log, model=ScriptedModel([]), registry=registry)
    failed = await rt.run("test.reader", {"question": "spring tides"})
    assert failed.status == RunStatus.FAILED
    assert "Services(corpora=kforge.rag.catalog.Corpora(passage_store))" in (failed.error or "")

    rt = Runtime(
        run_log, model=ScriptedModel([]), registry=registry, services=Services(corpora=corpora)
    )
    run = await rt.run("test.reader", {"question": "spring tides"})
    assert run.status == RunStatus.COMPLETED, run.error
    assert "twice a month" in (run.result or {})["text"]
    assert run_log.get_run(run.id).status == RunStatus.COMPLETED
    assert not hasattr(passages, "get_run") and not hasattr(run_log, "search_passages")
