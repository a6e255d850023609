"""The six testing requirements of a phase-graph agent with a backward transition and a
blocking checkpoint."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from kforge.engine.runner import load_state
from kforge.frames import (
    Complete,
    DataEvent,
    InteractionRequested,
    PhaseChanged,
    PhaseCheckpoint,
    StatusChanged,
)
from kforge.llm.testing.scripted import ScriptedModel
from kforge.runtime import Runtime
from kforge.store import MemoryStore, RunStatus
from kforge.store.sqlite import SQLiteStore
from tests.engine.sample_agents import DraftAgent, make_registry
from tests.table_dumps import insert_rows


def runtime_with(model: ScriptedModel) -> Runtime:
    return Runtime(MemoryStore(), model=model, registry=make_registry())


def phases_of(rt: Runtime, run_id: str) -> list[tuple[str | None, str, bool]]:
    return [
        (f.from_phase, f.to_phase, f.is_backward)
        for f in rt.frames(run_id)
        if isinstance(f, PhaseChanged)
    ]


async def test_forward_progression_through_every_phase() -> None:
    model = ScriptedModel([{"items": ["a", "b"]}, {"verdict": "ok"}])
    rt = runtime_with(model)
    run = await rt.run("test.draft", {"topic": "t"})
    assert run.status == RunStatus.AWAITING_USER
    await rt.resume(run.id, "approve")
    run = await rt.wait(run.id)
    assert run.status == RunStatus.COMPLETED
    assert run.result == {"items": ["a", "b"], "published": True}
    assert phases_of(rt, run.id) == [
        (None, "draft", False),
        ("draft", "review", False),
        ("review", "publish", False),
        ("publish", "complete", False),
    ]
    model.assert_consumed()


async def test_backward_transition_returns_to_draft_with_its_trigger() -> None:
    model = ScriptedModel(
        [
            {"items": ["a"]},
            {"verdict": "more", "detail": "needs sources"},
            {"items": ["a", "c"]},
            {"verdict": "ok"},
        ]
    )
    rt = runtime_with(model)
    run = await rt.run("test.draft", {"topic": "t"})
    await rt.resume(run.id, "approve")
    run = await rt.wait(run.id)
    assert run.status == RunStatus.AWAITING_USER  # the checkpoint after DRAFT again
    await rt.resume(run.id, {"action": "approve"})
    run = await rt.wait(run.id)
    assert run.status == RunStatus.COMPLETED
    changes = [f for f in rt.frames(run.id) if isinstance(f, PhaseChanged)]
    backward = [c for c in changes if c.is_backward]
    assert len(backward) == 1
    assert (backward[0].from_phase, backward[0].to_phase) == ("review", "draft")
    assert backward[0].reason == "needs_more_material"
    assert backward[0].detail == "needs sources"
    assert backward[0].visit == 2
    assert run.result is not None and run.result["items"] == ["a", "c"]


async def test_reentry_prompt_differs_from_first_visit() -> None:
    model = ScriptedModel(
        [{"items": ["a"]}, {"verdict": "more", "detail": "d"}, {"items": ["b"]}, {"verdict": "ok"}]
    )
    rt = runtime_with(model)
    run = await rt.run("test.draft", {"topic": "t"})
    await rt.resume(run.id, "approve")
    await rt.wait(run.id)
    first_draft_prompt = model.calls[0].messages[0].content
    reentry_prompt = model.calls[2].messages[0].content
    assert first_draft_prompt.startswith("First visit to draft")
    assert reentry_prompt.startswith("You are returning to the draft phase.")
    assert "**Why we're back:** needs_more_material" in reentry_prompt
    assert "Work already completed:**\na" in reentry_prompt
    assert reentry_prompt != first_draft_prompt


async def test_blocking_checkpoint_waits_and_modify_reruns_the_phase() -> None:
    model = ScriptedModel([{"items": ["a"]}, {"items": []}, {"verdict": "ok"}])
    rt = runtime_with(model)
    run = await rt.run("test.draft", {"topic": "t"})
    assert run.status == RunStatus.AWAITING_USER
    assert run.pending_interaction is not None
    assert run.pending_interaction["kind"] == "checkpoint"
    assert run.pending_interaction["payload"]["items"] == ["a"]
    assert not rt.is_active(run.id)  # waiting holds no task

    await rt.resume(run.id, {"action": "modify", "modifications": {"items": ["x", "y"]}})
    run = await rt.wait(run.id)
    assert run.status == RunStatus.AWAITING_USER
    assert run.pending_interaction is not None
    assert run.pending_interaction["payload"]["items"] == ["x", "y"]
    await rt.resume(run.id, "approve")
    run = await rt.wait(run.id)
    assert run.status == RunStatus.COMPLETED
    assert run.result == {"items": ["x", "y"], "published": True}


async def test_reject_without_backward_transition_reenters_with_the_reason() -> None:
    model = ScriptedModel([{"items": ["a"]}, {"items": ["b"]}, {"verdict": "ok"}])
    rt = runtime_with(model)
    run = await rt.run("test.draft", {"topic": "t"})
    await rt.resume(run.id, {"action": "reject", "reason": "too vague"})
    run = await rt.wait(run.id)
    assert run.status == RunStatus.AWAITING_USER
    assert "**Why we're back:** too vague" in model.calls[1].messages[0].content
    await rt.resume(run.id, "approve")
    assert (await rt.wait(run.id)).status == RunStatus.COMPLETED


async def test_invalid_checkpoint_answer_is_refused_and_loses_nothing() -> None:
    model = ScriptedModel([{"items": ["a"]}, {"verdict": "ok"}])
    rt = runtime_with(model)
    run = await rt.run("test.draft", {"topic": "t"})
    from kforge.errors import ValidationError

    with pytest.raises(ValidationError, match="must be one of approve, modify, reject"):
        await rt.resume(run.id, "maybe")
    assert rt.get_run(run.id).status == RunStatus.AWAITING_USER
    await rt.resume(run.id, "approve")
    assert (await rt.wait(run.id)).status == RunStatus.COMPLETED


async def test_events_emitted_at_each_stage() -> None:
    model = ScriptedModel([{"items": ["a", "b"]}, {"verdict": "ok"}])
    rt = runtime_with(model)
    run = await rt.run("test.draft", {"topic": "t"})
    await rt.resume(run.id, "approve")
    await rt.wait(run.id)
    frames = rt.frames(run.id)
    types = [f.type for f in frames]
    assert [f.seq for f in frames] == list(range(1, len(frames) + 1))
    assert types[0] == "status.changed"
    assert types.count("data.item.added") == 2
    checkpoint = next(f for f in frames if isinstance(f, PhaseCheckpoint))
    request = next(f for f in frames if isinstance(f, InteractionRequested))
    assert checkpoint.seq < request.seq
    assert checkpoint.payload == {"items": ["a", "b"]}
    statuses = [f.to_status for f in frames if isinstance(f, StatusChanged)]
    assert statuses == ["pending", "running", "awaiting_user", "running", "completed"]
    assert isinstance(frames[-2], Complete)
    assert [f.payload["item"] for f in frames if isinstance(f, DataEvent)] == ["a", "b"]
    # model calls are recorded before the phase moves on
    assert types.index("model.call") < types.index("data.item.added")


def test_state_round_trip_preserves_phase_context() -> None:
    agent = DraftAgent({"topic": "t"})
    agent.ctx_data.items = ["a", "b"]
    agent.ctx_data.phase_visits = {"draft": 2, "review": 1}
    agent.ctx_data.backward_trigger = "needs_more_material"
    agent.prompts = ["p1"]
    state: dict[str, Any] = agent.get_state()
    clone = DraftAgent({})
    clone.restore_state(state)
    assert clone.get_state() == state
    assert clone.ctx_data.items == ["a", "b"]
    assert clone.args == {"topic": "t"}


async def test_a_phase_that_stays_is_not_reentered() -> None:
    # The first draft is empty: the checkpoint is approved, no transition matches, DRAFT stays.
    model = ScriptedModel([{"items": []}, {"items": ["a"]}, {"verdict": "ok"}])
    rt = runtime_with(model)
    run = await rt.run("test.draft", {"topic": "t"})
    await rt.resume(run.id, "approve")
    run = await rt.wait(run.id)
    assert run.status == RunStatus.AWAITING_USER
    second_pass = model.calls[1].messages[0].content
    assert second_pass.startswith("First visit to draft"), second_pass
    await rt.resume(run.id, "approve")
    run = await rt.wait(run.id)
    assert run.status == RunStatus.COMPLETED
    entries = [c for c in rt.frames(run.id) if isinstance(c, PhaseChanged)]
    assert [(c.to_phase, c.visit) for c in entries][:2] == [("draft", 1), ("review", 1)]


async def test_a_backward_transition_chosen_by_the_graph_says_why() -> None:
    # The review asks for more without giving a detail of its own.
    model = ScriptedModel(
        [{"items": ["a"]}, {"verdict": "more"}, {"items": ["a", "c"]}, {"verdict": "ok"}]
    )
    rt = runtime_with(model)
    run = await rt.run("test.draft", {"topic": "t"})
    await rt.resume(run.id, "approve")
    await rt.wait(run.id)
    backward = [f for f in rt.frames(run.id) if isinstance(f, PhaseChanged) and f.is_backward]
    assert len(backward) == 1 and backward[0].detail
    assert "needs_more_material" in backward[0].detail and "review" in backward[0].detail
    reentry = model.calls[2].messages[0].content
    assert "**Detail:** (none)" not in reentry
    assert f"**Detail:** {backward[0].detail}" in reentry


OLD_STATE = Path(__file__).parent / "data" / "phase_state_before_typed_codec.json"
"""A SQLite store's runs, frames, steps and snapshots dumped to JSON, written by kforge before
agent state was saved by its fields' types: a ``test.draft`` run sent back from REVIEW to DRAFT,
waiting at the checkpoint after DRAFT. Its transitions are saved as ``{"from", "to", ...}``
with ``+00:00`` timestamps."""


def old_store(path: Path, *, snapshot: bool) -> tuple[SQLiteStore, str]:
    dump = json.loads(OLD_STATE.read_text(encoding="utf-8"))
    if not snapshot:
        del dump["snapshots"]  # the state is then rebuilt from the step deltas alone
    SQLiteStore(path).close()
    conn = sqlite3.connect(path)
    insert_rows(conn, dump)
    conn.commit()
    conn.close()
    return SQLiteStore(path), str(dump["runs"]["rows"][0][0])


@pytest.mark.parametrize("snapshot", [True, False], ids=["snapshot", "step-deltas"])
async def test_a_run_saved_before_typed_state_resumes_with_its_transitions(
    tmp_path: Path, snapshot: bool
) -> None:
    store, run_id = old_store(tmp_path / "old.db", snapshot=snapshot)
    model = ScriptedModel([{"verdict": "ok"}])
    rt = Runtime(store, model=model, registry=make_registry())
    await rt.resume(run_id, "approve")
    run = await rt.wait(run_id)
    assert run.status == RunStatus.COMPLETED, run.error
    assert run.result == {"items": ["a", "c"], "published": True}
    model.assert_consumed()  # the draft and the first review were not asked for again
    assert phases_of(rt, run_id)[-3:-1] == [
        ("draft", "review", False),
        ("review", "publish", False),
    ]
    state, _, _ = load_state(store, run_id)
    history = state["agent"]["transition_history"]
    assert [(h["from_phase"], h["to_phase"], h["reason"]) for h in history] == [
        ("draft", "review", "draft_ready"),
        ("review", "draft", "needs_more_material"),
        ("draft", "review", "draft_ready"),
        ("review", "publish", "review_passed"),
        ("publish", "complete", "published"),
    ]
    assert state["agent"]["phase_context"]["phase_visits"] == {
        "draft": 2,
        "review": 2,
        "publish": 1,
        "complete": 1,
    }
    await rt.aclose()
    store.close()
