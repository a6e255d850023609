"""Forks of a tree: the subtree is forked with its root, each child at the point the root had
reached; every fork resumes to its end and no recorded side effect is made again."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from kforge import Runtime, Services
from kforge.frames import ToolResultFrame
from kforge.llm.types import ToolCall
from kforge.runtime.forking import lineage
from kforge.store.base import RunLog, RunRecord, RunStatus
from kforge.tools import ToolRegistry
from tests.agents.helpers import Counter
from tests.agents.tree_model import TreeScript
from tests.postgres import STORE_KINDS, store_of_kind

PARTY = "Plan my birthday party"
FOOD = "What food should we serve?"
VENUE = "Which venue works best?"


def tree_runtime(store: RunLog, counter: Counter) -> Runtime:
    """Every agent of the tree makes one side-effecting tool call in its main execution."""
    calls = {r: ToolCall("record_note", {"note": r}, "call-1") for r in (PARTY, FOOD, VENUE)}
    script = TreeScript(subquestions={PARTY: [FOOD, VENUE]}, tool_calls=calls)
    tools = Services(tools=ToolRegistry([counter.tool]))
    return Runtime(store, model=script.model(), services=tools)


async def resumed_or_parked(rt: Runtime, run_id: str) -> RunRecord:
    await rt.resume(run_id)
    return await rt.wait(run_id)


async def resumed_to_end(rt: Runtime, run_id: str) -> RunRecord:
    run = await resumed_or_parked(rt, run_id)
    assert run.status in (RunStatus.COMPLETED, RunStatus.FAILED), (run.status, run.pause_reason)
    return run


def recorded_calls(rt: Runtime) -> int:
    """Tool calls that ran, as the store records them: a result shared by a fork is one."""
    found = set()
    for run in rt.store.list_runs(limit=100_000):
        frames = rt.store.read_frames(run.id)
        found |= {f.id for f in frames if isinstance(f, ToolResultFrame) and f.success}
    return len(found)


@pytest.fixture(params=STORE_KINDS)
async def tree(
    request: pytest.FixtureRequest, tmp_path: Path
) -> tuple[Runtime, Counter, RunRecord]:
    store = store_of_kind(request.param, request, tmp_path)
    counter = Counter()
    rt = tree_runtime(store, counter)
    run = await rt.run("tree", {"prompt": PARTY, "tools": ["record_note"]})
    assert run.status == RunStatus.COMPLETED, run.error
    assert counter.calls == 3 == recorded_calls(rt)
    return rt, counter, run


async def test_a_fork_at_every_seq_of_a_tree_resumes_and_repeats_no_side_effect(
    tree: tuple[Runtime, Counter, RunRecord],
) -> None:
    rt, counter, run = tree
    for seq in range(1, run.last_seq + 1):
        fork = await rt.fork(run.id, at_seq=seq)
        done = await resumed_to_end(rt, fork)
        assert done.status == RunStatus.COMPLETED, (seq, done.error)
        result = done.result or {}
        subagents = result["subagents"]
        assert [c["prompt"] for c in subagents] == [FOOD, VENUE], seq
        assert [c["status"] for c in subagents] == ["completed"] * 2, seq
        # the fork's subagents are its own runs (results it had recorded before the fork
        # point name the runs that produced them, which its own were forked from)
        children = rt.store.list_runs(parent_id=fork)
        assert len(children) == 2, seq
        for subagent in subagents:
            assert any(subagent["id"] in lineage(rt.store, c) for c in children), seq
        assert all(c.status == RunStatus.COMPLETED for c in children), seq
        # every call that ran is recorded once, and none recorded ran again
        assert counter.calls == recorded_calls(rt), seq
    await rt.aclose()


async def test_a_fork_after_the_subagents_ended_does_none_of_their_work_again(
    tree: tuple[Runtime, Counter, RunRecord],
) -> None:
    rt, counter, run = tree
    frames = rt.frames(run.id)
    collected = next(f.seq for f in frames if f.type == "data.tree.subagents.results")
    fork = await rt.fork(run.id, at_seq=collected)
    children = rt.store.list_runs(parent_id=fork)
    sources = {c.forked_from for c in children}
    assert sources == {c.id for c in rt.store.list_runs(parent_id=run.id)}
    assert {c.status for c in children} == {RunStatus.COMPLETED}  # as they were then
    done = await resumed_to_end(rt, fork)
    assert done.status == RunStatus.COMPLETED, done.error
    assert counter.calls == 3  # only the source's calls ever ran
    await rt.aclose()


async def test_a_fork_of_a_fork_at_every_seq_resumes_and_repeats_no_side_effect(
    tree: tuple[Runtime, Counter, RunRecord],
) -> None:
    rt, counter, run = tree
    tool_result = next(f.seq for f in rt.frames(run.id) if f.type == "tool.result")
    first = await resumed_to_end(rt, await rt.fork(run.id, at_seq=tool_result))
    assert first.status == RunStatus.COMPLETED, first.error
    for seq in range(1, first.last_seq + 1):
        done = await resumed_to_end(rt, await rt.fork(first.id, at_seq=seq))
        assert done.status == RunStatus.COMPLETED, (seq, done.error)
        subagents = (done.result or {})["subagents"]
        assert [c["status"] for c in subagents] == ["completed"] * 2, seq
        assert len(rt.store.list_runs(parent_id=done.id)) == 2, seq
        assert counter.calls == recorded_calls(rt), seq
    await rt.aclose()


async def test_a_fork_of_a_tree_whose_subagent_waits_for_a_person_waits_the_same_way(
    tmp_path: Path,
) -> None:
    script = TreeScript(subquestions={PARTY: [FOOD, VENUE]}, ambiguous=(VENUE,))
    rt = Runtime(tmp_path / "tree.db", model=script.model())
    run = await rt.run("tree", {"prompt": PARTY})
    assert run.status == RunStatus.PAUSED and run.pause_reason == "subagents"
    fork = await rt.fork(run.id)
    asking = [c for c in rt.store.list_runs(parent_id=fork) if c.pending_interaction]
    assert [c.status for c in asking] == [RunStatus.AWAITING_USER]
    parked = await resumed_or_parked(rt, fork)
    assert parked.status == RunStatus.PAUSED and parked.pause_reason == "subagents"
    await rt.resume(asking[0].id, "The rooftop")
    await rt.wait(asking[0].id)
    for _ in range(100):  # the child's end wakes its parent
        done = await rt.wait(fork)
        if done.status == RunStatus.COMPLETED:
            break
        await asyncio.sleep(0)
    assert done.status == RunStatus.COMPLETED, done.error
    result = done.result or {}
    assert [c["status"] for c in result["subagents"]] == ["completed"] * 2
    # the source's own subagent still waits for its answer
    source_children = rt.store.list_runs(parent_id=run.id)
    assert RunStatus.AWAITING_USER in {c.status for c in source_children}
    await rt.aclose()


async def test_a_fork_resumes_its_own_subagents_once_its_source_is_deleted(
    tree: tuple[Runtime, Counter, RunRecord],
) -> None:
    rt, counter, run = tree
    planned = next(f.seq for f in rt.frames(run.id) if f.type == "data.tree.subagents")
    fork = await rt.fork(run.id, at_seq=planned)
    rt.store.delete_runs([run.id, *(c.id for c in rt.store.list_runs(parent_id=run.id))])
    done = await resumed_to_end(rt, fork)
    assert done.status == RunStatus.COMPLETED, done.error
    assert len(rt.store.list_runs(parent_id=fork)) == 2  # the ones forked with it, no others
    assert counter.calls - 3 == recorded_calls(rt)  # the source's three went with it
    await rt.aclose()
