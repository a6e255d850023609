"""One live writer per run: a second process resuming or answering a run that is live elsewhere is
refused at once and writes nothing; a race that both sides enter leaves one winner and a log
with no frame from the loser."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from kforge.errors import RunLeasedError, WriteConflictError
from kforge.frames import InteractionAnswered, StatusChanged
from kforge.llm.testing.scripted import ScriptedModel
from kforge.runtime import Runtime
from kforge.store import RunStatus, SQLiteStore
from tests.engine.sample_agents import make_registry

WORKER = Path(__file__).with_name("worker.py")


def worker(*args: str, gate: bool = False) -> subprocess.Popen[str]:
    env = {**os.environ, "WORKER_GATE": "1" if gate else "0"}
    return subprocess.Popen(
        [sys.executable, str(WORKER), *args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )


def finish(proc: subprocess.Popen[str]) -> tuple[int, str, str]:
    out, err = proc.communicate(timeout=60)
    return proc.returncode, out, err


def statuses(db: Path, run_id: str) -> list[str]:
    store = SQLiteStore(db)
    try:
        frames = store.read_frames(run_id)
        assert [f.seq for f in frames] == list(range(1, len(frames) + 1))
        return [f.to_status for f in frames if isinstance(f, StatusChanged)]
    finally:
        store.close()


def draft_waiting(db: Path) -> str:
    proc = worker(str(db), "start", "test.draft", json.dumps({"topic": "t"}), '[{"items": ["a"]}]')
    code, out, err = finish(proc)
    assert code == 0, err
    run_id, status = out.split()[:2]
    assert status == "awaiting_user"
    return run_id


def test_second_answer_while_the_first_is_live_is_refused_and_writes_nothing(
    tmp_path: Path,
) -> None:
    db = tmp_path / "runs.db"
    run_id = draft_waiting(db)
    rest = json.dumps([{"verdict": "ok"}])
    first = worker(str(db), "resume", run_id, rest, '"approve"', gate=True)
    assert first.stdout is not None and first.stdin is not None
    assert first.stdout.readline().strip() == run_id  # its answer and lease are durable

    code, out, _ = finish(worker(str(db), "resume", run_id, rest, '"reject"'))
    assert code == 3, out
    assert "error RunLeasedError" in out and "lease held by" in out and "until" in out

    first.stdin.write("\n")
    first.stdin.flush()
    code, out, err = finish(first)
    assert code == 0, err
    assert out.split()[0] == "completed", out
    store = SQLiteStore(db)
    answers = [f.answer for f in store.read_frames(run_id) if isinstance(f, InteractionAnswered)]
    assert answers == [{"action": "approve"}]
    assert store.get_run(run_id).lease_owner is None  # released when the run ended
    store.close()
    assert statuses(db, run_id) == [
        "pending",
        "running",
        "awaiting_user",
        "running",
        "completed",
    ]


def test_two_processes_resuming_a_crashed_run_one_proceeds(tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    marker = tmp_path / "killed"
    args = {"target": 4, "kill_after_value": 2, "kill_marker": str(marker)}
    code, out, _ = finish(worker(str(db), "start", "test.counter", json.dumps(args), '["1", "2"]'))
    assert code < 0  # killed itself mid-step, holding its lease
    run_id = out.split()[0]
    store = SQLiteStore(db)
    crashed = store.get_run(run_id)
    store.close()
    assert crashed.status == RunStatus.RUNNING and crashed.lease_owner is not None
    assert not crashed.is_live()  # its process is gone: interrupted, not live

    first = worker(str(db), "resume", run_id, '["3", "4"]', gate=True)
    assert first.stdout is not None and first.stdin is not None
    assert first.stdout.readline().strip() == run_id  # took the dead owner's lease over
    second = worker(str(db), "resume", run_id, '["3", "4"]')
    code, out, _ = finish(second)
    assert code == 3 and "error RunLeasedError" in out, out

    first.stdin.write("\n")
    first.stdin.flush()
    code, out, err = finish(first)
    assert code == 0, err
    assert out.split()[0] == "completed", out
    store = SQLiteStore(db)
    assert store.get_run(run_id).result == {"values": [1, 2, 3, 4]}
    store.close()
    assert statuses(db, run_id) == ["pending", "running", "running", "completed"]


async def test_answers_racing_past_the_check_leave_one_applied(tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    setup = Runtime(
        SQLiteStore(db), model=ScriptedModel([{"items": ["a"]}]), registry=make_registry()
    )
    run = await setup.run("test.draft", {"topic": "t"})
    winner = Runtime(
        SQLiteStore(db), model=ScriptedModel([{"verdict": "ok"}]), registry=make_registry()
    )
    loser = Runtime(SQLiteStore(db), model=ScriptedModel([]), registry=make_registry())
    # both read the run before either commits: the store decides
    await winner.resume(run.id, "approve")
    await loser.resume(run.id, "reject")
    done = await winner.wait(run.id)
    assert done.status == RunStatus.COMPLETED
    with pytest.raises(WriteConflictError):
        await loser.wait(run.id)
    with pytest.raises(WriteConflictError):  # however late it is asked
        await loser.wait(run.id)
    with pytest.raises(WriteConflictError):
        await loser.opened(run.id)
    frames = winner.frames(run.id)
    assert [f.answer for f in frames if isinstance(f, InteractionAnswered)] == [
        {"action": "approve"}
    ]
    assert frames[-1].type == "status.changed" and winner.get_run(run.id).error is None


async def test_durable_resume_of_a_live_run_raises_the_lease_error(tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    gate = asyncio.Event()

    class Gated(ScriptedModel):
        async def complete(self, *a, **k):  # type: ignore[no-untyped-def]
            await gate.wait()
            return await super().complete(*a, **k)

    rt = Runtime(SQLiteStore(db), model=Gated(["1", "2"]), registry=make_registry())
    run_id = await rt.start("test.counter", {"target": 2})
    await rt.opened(run_id)
    other = Runtime(SQLiteStore(db), model=ScriptedModel([]), registry=make_registry())
    with pytest.raises(RunLeasedError, match=rf"lease held by {rt.owner} until"):
        await other.resume(run_id, durable=True)
    gate.set()
    assert (await rt.wait(run_id)).status == RunStatus.COMPLETED
    assert rt.get_run(run_id).lease_owner is None


async def test_a_long_step_keeps_its_lease_by_heartbeat_and_stops_when_it_is_lost(
    tmp_path: Path,
) -> None:
    from kforge.store.lease import Lease

    renewed = asyncio.Event()

    class Watched(SQLiteStore):
        answer = True

        def renew_lease(self, run_id: str, lease: Lease) -> bool:
            ok = super().renew_lease(run_id, lease) and self.answer
            renewed.set()
            return ok

    gate = asyncio.Event()

    class Gated(ScriptedModel):
        async def complete(self, *a, **k):  # type: ignore[no-untyped-def]
            await gate.wait()
            return await super().complete(*a, **k)

    store = Watched(tmp_path / "k.db")
    rt = Runtime(store, model=Gated(["1", "2"]), registry=make_registry(), lease_ttl_s=0.05)
    run_id = await rt.start("test.counter", {"target": 2})
    await rt.opened(run_id)
    before = store.get_run(run_id).heartbeat_at
    await renewed.wait()  # the step is still waiting on its model
    assert (store.get_run(run_id).heartbeat_at or 0) > (before or 0)
    assert store.get_run(run_id).lease_owner == rt.owner

    renewed.clear()
    store.answer = False  # from now on another writer holds the run
    await renewed.wait()
    with pytest.raises(WriteConflictError, match="lapsed"):
        await rt.wait(run_id)
    last = store.get_run(run_id).last_seq
    gate.set()
    assert store.get_run(run_id).last_seq == last  # the stopped stretch wrote nothing more
