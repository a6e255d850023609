"""Interventions that race: a delete and a modify of one agent at the same instant, from two
processes or one. The loser is refused with a clear error and nothing of it is kept."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import kforge
from kforge.engine.agent import StepOutcome
from kforge.engine.run_context import RunContext
from kforge.errors import InvalidRunStateError
from kforge.frames import Intervention as InterventionFrame
from kforge.runtime import AgentRegistry, Intervention, Runtime
from kforge.store import RunStatus, SQLiteStore
from kforge.store.base import RunRecord, Snapshot
from tests.agents.tree_model import Gates, TreeScript

SRC = Path(kforge.__file__).resolve().parents[1]
PARTY = "Plan my birthday party"
PICNIC = "Plan a picnic instead"


class Meanwhile(SQLiteStore):
    """A store whose first read of ``run_id`` is answered as it was, while ``kforge`` with
    ``argv`` acts on that run in another process right after the read."""

    run_id = ""
    argv: tuple[str, ...] = ()

    def _then(self, run_id: str) -> None:
        if run_id != self.run_id:
            return
        self.run_id = ""
        env = {**os.environ, "PYTHONPATH": str(SRC)}
        cli = [sys.executable, "-m", "kforge", "--db", str(self.path)]
        done = subprocess.run([*cli, *self.argv], capture_output=True, text=True, env=env)
        assert done.returncode == 0, done.stderr

    def get_run(self, run_id: str) -> RunRecord:
        run = super().get_run(run_id)
        self._then(run_id)
        return run

    def get_run_with_snapshot(self, run_id: str) -> tuple[RunRecord, Snapshot | None]:
        found = super().get_run_with_snapshot(run_id)
        self._then(run_id)
        return found


def interventions(rt: Runtime, run_id: str) -> list[tuple[str, str]]:
    return [(f.action, f.content) for f in rt.frames(run_id) if isinstance(f, InterventionFrame)]


async def test_a_modify_racing_a_delete_from_another_process_is_refused(tmp_path: Path) -> None:
    db = tmp_path / "k.db"
    store = Meanwhile(db)
    rt = Runtime(store, model=TreeScript(ambiguous=(PARTY,)).model())
    run = await rt.run("tree", {"prompt": PARTY})
    assert run.status == RunStatus.AWAITING_USER  # parked: no process executes it
    store.run_id, store.argv = run.id, ("intervene", run.id, "--delete")
    with pytest.raises(InvalidRunStateError, match=r"ended \(deleted\) before this modify"):
        await rt.intervene(run.id, Intervention.modify(PICNIC))
    assert rt.get_run(run.id).status == RunStatus.DELETED
    assert interventions(rt, run.id) == [("delete", "")]
    assert rt.interventions.pending(run.id) == []
    await rt.aclose()


async def test_a_modify_behind_a_waiting_delete_is_refused_and_the_delete_applies(
    tmp_path: Path,
) -> None:
    gates = Gates()
    script = TreeScript(gates={PARTY: gates.gate(PARTY)})
    rt = Runtime(SQLiteStore(tmp_path / "k.db"), model=script.model())
    root = await rt.start("tree", {"prompt": PARTY})
    await gates.entered(PARTY)  # inside its main execution step
    deleted = await rt.intervene(root, Intervention.delete())
    assert deleted["applied"] == "next_step"
    with pytest.raises(InvalidRunStateError, match=r"being deleted \(that came first\)"):
        await rt.intervene(root, Intervention.modify(PICNIC))
    with pytest.raises(InvalidRunStateError, match="being deleted"):
        await rt.intervene(root, Intervention.delete())  # the second delete loses too
    assert [i.action for i in rt.interventions.pending(root)] == ["delete"]
    gates.release(PARTY)
    run = await rt.wait(root)
    assert run.status == RunStatus.DELETED
    assert interventions(rt, root) == [("delete", "")]
    assert rt.interventions.pending(root) == []
    await rt.aclose()


async def test_a_modify_ahead_of_a_delete_applies_then_the_delete(tmp_path: Path) -> None:
    gates = Gates()
    script = TreeScript(gates={PARTY: gates.gate(PARTY)})
    rt = Runtime(SQLiteStore(tmp_path / "k.db"), model=script.model())
    root = await rt.start("tree", {"prompt": PARTY})
    await gates.entered(PARTY)
    assert (await rt.intervene(root, Intervention.modify(PICNIC)))["applied"] == "next_step"
    assert (await rt.intervene(root, Intervention.delete()))["applied"] == "next_step"
    gates.release(PARTY)
    run = await rt.wait(root)
    assert run.status == RunStatus.DELETED
    assert interventions(rt, root) == [("modify", PICNIC), ("delete", "")]
    assert (run.result or {})["metadata"]["modifications"] == [PICNIC]
    assert rt.interventions.pending(root) == []
    await rt.aclose()


class Notebook:
    """One step that waits for ``gate``, then ends with the notes people sent it."""

    agent_type = "test.notebook"
    gate: asyncio.Event
    entered: asyncio.Event

    def __init__(self, args: dict[str, Any]) -> None:
        self.notes: list[str] = []

    async def step(self, ctx: RunContext) -> StepOutcome:
        Notebook.entered.set()
        await Notebook.gate.wait()
        return StepOutcome(True, {"notes": list(self.notes)})

    def intervene(self, ctx: RunContext, action: str, content: str) -> None:
        self.notes.append(f"{action}: {content}")

    def get_state(self) -> dict[str, Any]:
        return {"notes": list(self.notes)}

    def restore_state(self, state: dict[str, Any]) -> None:
        self.notes = list(state["notes"])

    def partial_result(self) -> dict[str, Any]:
        return {"notes": list(self.notes)}


async def test_a_comment_sent_during_the_last_step_is_taken_before_the_run_ends(
    tmp_path: Path,
) -> None:
    Notebook.gate, Notebook.entered = asyncio.Event(), asyncio.Event()
    registry = AgentRegistry()
    registry.register(Notebook.agent_type, Notebook)
    db = tmp_path / "k.db"
    rt = Runtime(SQLiteStore(db), registry=registry)
    run_id = await rt.start(Notebook.agent_type)
    await Notebook.entered.wait()  # inside its only step
    other = Runtime(SQLiteStore(db))  # another process, as far as the inbox can tell
    said = await other.intervene(run_id, Intervention.comment("bring cake"))
    assert said["applied"] == "next_step"
    Notebook.gate.set()
    run = await rt.wait(run_id)
    assert run.status == RunStatus.COMPLETED
    assert (run.result or {})["notes"] == ["comment: bring cake"]  # not lost at the end
    assert interventions(rt, run_id) == [("comment", "bring cake")]
    assert rt.interventions.pending(run_id) == []
    with pytest.raises(InvalidRunStateError, match="it has finished"):
        await other.intervene(run_id, Intervention.comment("too late"))
    other.store.close()
    await rt.aclose()


async def test_a_resume_that_races_a_comment_from_another_process_starts_over_and_takes_it(
    tmp_path: Path,
) -> None:
    store = Meanwhile(tmp_path / "k.db")
    rt = Runtime(store, model=TreeScript(ambiguous=(PARTY,)).model())
    run = await rt.run("tree", {"prompt": PARTY, "max_subquestions": 0})
    assert run.status == RunStatus.AWAITING_USER
    # the comment is recorded right after the resume read the run, before its opening
    store.run_id, store.argv = run.id, ("intervene", run.id, "--comment", "keep it cheap")
    await rt.resume(run.id, "the small one", durable=True)
    run = await rt.wait(run.id)
    assert run.status == RunStatus.COMPLETED, run.error
    assert (run.result or {})["metadata"]["comments"] == ["keep it cheap"]
    assert (run.result or {})["metadata"]["clarifications"][0]["answer"] == "the small one"
    frames = rt.frames(run.id)
    assert [f.seq for f in frames] == list(range(1, len(frames) + 1))
    assert interventions(rt, run.id) == [("comment", "keep it cheap")]
    await rt.aclose()
