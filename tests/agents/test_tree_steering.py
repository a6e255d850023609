"""The tree agent steered while it waits: interventions reach a parent waiting on its
subagents at once, and subagents a crash left behind resume side by side."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path

from kforge import Intervention, Runtime
from kforge.frames import Complete, Frame, StatusChanged
from kforge.store.base import RunStatus
from tests.agents.tree_model import Gates, TreeScript, barrier_gate, held_worker

PARTY = "Plan my birthday party"
FOOD = "What food should we serve?"
VENUE = "Which venue works best?"
GUESTS = "Who should we invite?"
MUSIC = "What music should play?"
PICNIC = "Plan a picnic instead"
GUARD_S = 60
"""How long a test waits for what must happen before it fails instead of hanging."""


async def seen(
    rt: Runtime, run_id: str, wanted: Callable[[Frame], bool], *, after_seq: int = 0
) -> Frame:
    """The first committed frame of ``run_id`` after ``after_seq`` that is ``wanted``, waiting
    for it to come."""

    async def look() -> Frame:
        async for frame in rt.subscribe(run_id, after_seq=after_seq, follow=True):
            if wanted(frame):
                return frame
        raise AssertionError(f"run {run_id} ended without the frame")

    return await asyncio.wait_for(look(), GUARD_S)


def ended_as(status: str) -> Callable[[Frame], bool]:
    return lambda f: isinstance(f, StatusChanged) and f.to_status == status


async def waiting_on_a_held_child(tmp_path: Path, *held: str) -> tuple[Runtime, Gates, str, str]:
    """A root whose one subagent is held inside its main execution, the root waiting on it."""
    gates = Gates()
    script = TreeScript(
        subquestions={PARTY: [FOOD]}, gates={request: gates.gate(request) for request in held}
    )
    rt = Runtime(tmp_path / "tree.db", model=script.model())
    root = await rt.start("tree", {"prompt": PARTY})
    await gates.entered(FOOD)
    await seen(rt, root, lambda f: f.type == "phase.changed" and f.to_phase == "check")
    (child,) = rt.store.list_runs(parent_id=root)
    return rt, gates, root, child.id


async def test_a_comment_reaches_a_parent_waiting_on_a_slow_child_before_the_child_ends(
    tmp_path: Path,
) -> None:
    rt, gates, root, child = await waiting_on_a_held_child(tmp_path, FOOD)
    outcome = await rt.intervene(root, Intervention.comment("keep it cheap"))
    assert outcome["applied"] == "next_step"
    # the parent writes its answer again with the note while the child is still held
    await seen(
        rt,
        root,
        lambda f: f.type == "model.call" and "Noted: keep it cheap." in f.response["text"],
    )
    assert rt.get_run(child).status == RunStatus.RUNNING
    frames = rt.frames(root)
    assert [f.content for f in frames if f.type == "intervention"] == ["keep it cheap"]
    assert any(f.type == "agent.thinking" and "keep it cheap" in f.message for f in frames)
    gates.release(FOOD)
    run = await rt.wait(root)
    assert run.status == RunStatus.COMPLETED, run.error
    result = run.result or {}
    assert result["answer"].startswith(f"Answer about {PARTY}. Noted: keep it cheap.")
    assert result["metadata"]["comments"] == ["keep it cheap"]
    assert [c["status"] for c in result["subagents"]] == ["completed"]
    checks = [f for f in rt.frames(root) if f.type == "data.tree.intervention_check"]
    assert checks[-1].payload["comments"] == ["keep it cheap"]
    await rt.aclose()


async def test_a_modify_replans_a_waiting_parent_before_its_child_ends(tmp_path: Path) -> None:
    rt, gates, root, child = await waiting_on_a_held_child(tmp_path, FOOD, PICNIC)
    await rt.intervene(root, Intervention.modify(PICNIC))
    await gates.entered(PICNIC)  # the new main execution, with the child still held
    assert rt.get_run(child).status == RunStatus.RUNNING
    gates.release(PICNIC)
    gates.release(FOOD)
    run = await rt.wait(root)
    assert run.status == RunStatus.COMPLETED, run.error
    result = run.result or {}
    assert result["answer"].startswith(f"Answer about {PICNIC}.")
    assert [c["status"] for c in result["subagents"]] == ["completed"]
    await rt.aclose()


async def test_a_delete_ends_a_waiting_parent_before_its_child_ends(tmp_path: Path) -> None:
    rt, gates, root, child = await waiting_on_a_held_child(tmp_path, FOOD)
    await rt.intervene(root, Intervention.delete())
    run = await asyncio.wait_for(rt.wait(root), GUARD_S)
    assert run.status == RunStatus.DELETED
    assert rt.get_run(child).status == RunStatus.RUNNING  # still inside its model call
    gates.release(FOOD)
    assert (await rt.wait(child)).status == RunStatus.DELETED  # at its next step boundary
    await rt.aclose()


async def test_subagents_a_kill_left_behind_resume_side_by_side(tmp_path: Path) -> None:
    db = tmp_path / "tree.db"
    subquestions = [FOOD, VENUE, GUESTS, MUSIC]
    async with held_worker(db, PARTY, subquestions, hold_all=True) as root:
        pass
    # resumed, the root's main execution and the four subagents answer only once all five
    # are inside a model call at once
    barrier = asyncio.Barrier(len(subquestions) + 1)
    script = TreeScript(
        subquestions={PARTY: subquestions},
        gates={q: barrier_gate(barrier) for q in [PARTY, *subquestions]},
    )
    rt = Runtime(db, model=script.model())
    children = rt.store.list_runs(parent_id=root)
    assert {c.status for c in children} == {RunStatus.RUNNING}  # killed mid-way
    last_seqs = {c.id: c.last_seq for c in children}
    await rt.resume(root)
    run = await rt.wait(root)
    assert run.status == RunStatus.COMPLETED, run.error
    assert [c["status"] for c in (run.result or {})["subagents"]] == ["completed"] * 4
    # their resumed stretches overlap: each began before any of them ended
    began, ended = [], []
    for child, seq in last_seqs.items():
        frames = rt.frames(child, after_seq=seq)
        began.append(next(f for f in frames if isinstance(f, StatusChanged)).created_at)
        ended.append(next(f for f in frames if isinstance(f, Complete)).created_at)
    assert max(began) < min(ended)
    await rt.aclose()


async def test_a_comment_wakes_a_parent_parked_while_a_child_waits_for_a_person(
    tmp_path: Path,
) -> None:
    script = TreeScript(subquestions={PARTY: [FOOD, VENUE]}, ambiguous=(VENUE,))
    rt = Runtime(tmp_path / "tree.db", model=script.model())
    root = await rt.start("tree", {"prompt": PARTY})
    run = await rt.wait(root)
    assert run.status == RunStatus.PAUSED and run.pause_reason == "subagents"
    outcome = await rt.intervene(root, Intervention.comment("keep it cheap"))
    assert outcome["applied"] == "now"
    # it answers again with the note while its child still waits for its answer
    noted = await seen(
        rt,
        root,
        lambda f: f.type == "model.call" and "Noted: keep it cheap." in f.response["text"],
    )
    venue = next(
        r for r in rt.store.list_runs(parent_id=root) if r.input["args"]["prompt"] == VENUE
    )
    parked = await seen(rt, root, ended_as("paused"), after_seq=noted.seq)
    assert rt.get_run(venue.id).status == RunStatus.AWAITING_USER
    await rt.resume(venue.id, "The rooftop")
    await rt.wait(venue.id)
    await seen(rt, root, ended_as("completed"), after_seq=parked.seq)
    run = rt.get_run(root)
    assert run.status == RunStatus.COMPLETED, run.error
    assert (run.result or {})["answer"].startswith(f"Answer about {PARTY}. Noted: keep it cheap.")
    await rt.aclose()
