"""Recovery at start: a run whose process was killed (or closed its runtime mid-run) continues in
the next runtime that recovers, with a frame saying so and no recorded reply asked for again; a
run whose lease is live elsewhere is never taken."""

from __future__ import annotations

import asyncio
import json
import signal
from pathlib import Path
from typing import Any

import pytest

from kforge.engine.run_context import SUBAGENTS_REASON
from kforge.frames import ModelCall, StatusChanged, utc_now
from kforge.llm.testing.scripted import ScriptedModel
from kforge.runtime import Runtime
from kforge.runtime.recovery import RECOVERED, SHUT_DOWN_REASON, recover_runs
from kforge.store import RunStatus, SQLiteStore
from kforge.store.base import RunRecord
from kforge.store.lease import Lease
from kforge.store.open import open_store
from tests.engine.sample_agents import make_registry
from tests.runtime.test_crash_resume import model_calls, worker


def killed_mid_run(db: Path, target: int = 5) -> str:
    """A counter run whose process was SIGKILLed after its third model call was recorded."""
    args = {"target": target, "kill_after_value": 3, "kill_marker": str(db.with_name("killed"))}
    replies = [str(i) for i in range(1, 4)]
    proc = worker(str(db), "start", "test.counter", json.dumps(args), json.dumps(replies))
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == -signal.SIGKILL, err
    return out.split()[0]


def recovery_runtime(db: Path, replies: list[str]) -> Runtime:
    return Runtime(SQLiteStore(db), model=ScriptedModel(replies), registry=make_registry())


async def test_a_run_whose_process_was_killed_continues_in_the_runtime_that_recovers(
    tmp_path: Path,
) -> None:
    db = tmp_path / "runs.db"
    run_id = killed_mid_run(db)
    runtime = recovery_runtime(db, ["4", "5"])
    try:
        assert runtime.get_run(run_id).status == RunStatus.RUNNING  # nobody marked it
        recovery = await recover_runs(runtime)
        assert recovery.resumed == (run_id,) and recovery.skipped == ()
        run = await runtime.wait(run_id)
        assert run.status == RunStatus.COMPLETED
        assert run.result == {"values": [1, 2, 3, 4, 5]}
        statuses = [f for f in runtime.frames(run_id) if isinstance(f, StatusChanged)]
        said = [f for f in statuses if f.reason.startswith(RECOVERED)]
        assert len(said) == 1 and "is gone" in said[0].reason
        assert (said[0].from_status, said[0].to_status) == ("running", "paused")
        assert statuses[-2:][0].to_status == "running"
        frames = runtime.frames(run_id)
        assert [f.seq for f in frames] == list(range(1, len(frames) + 1))
        # a second start finds nothing left to recover
        assert (await recover_runs(runtime)).resumed == ()
    finally:
        await runtime.aclose()
    assert model_calls(db, run_id) == ["1", "2", "3", "4", "5"]  # none asked twice


def running_with_lease(
    db: Path | str,
    owner: str,
    expires_in: float,
    agent_type: str = "test.counter",
    args: dict[str, Any] | None = None,
    parent_id: str | None = None,
) -> str:
    """A run recorded as running under ``owner``'s lease, as that process left it (``db``: a
    SQLite file or a PostgreSQL URL)."""
    store = open_store(db)
    try:
        now = utc_now()
        run = RunRecord(
            id=f"held-{agent_type}-{owner}-{int(expires_in)}".replace(":", "-"),
            parent_id=parent_id,
            agent_type=agent_type,
            status=RunStatus.PENDING,
            created_at=now,
            updated_at=now,
            input={"args": args or {"target": 1}, "limits": {}, "model": "test"},
        )
        created = StatusChanged(run_id=run.id, seq=1, from_status=None, to_status="pending")
        store.create_run(run, [created])
        began = StatusChanged(run_id=run.id, seq=2, from_status="pending", to_status="running")
        store.commit(
            run.id,
            [began],
            run_fields={"status": RunStatus.RUNNING},
            lease=Lease(owner=owner, ttl_s=expires_in),
        )
        return run.id
    finally:
        store.close()


async def test_a_run_whose_lease_is_live_elsewhere_is_never_taken(tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    live = running_with_lease(db, "elsewhere.example:4242:aa", expires_in=600)
    lapsed = running_with_lease(db, "elsewhere.example:4343:bb", expires_in=-1)
    runtime = recovery_runtime(db, ["7"])
    try:
        before = runtime.get_run(live)
        recovery = await recover_runs(runtime)
        assert recovery.resumed == (lapsed,)
        after = runtime.get_run(live)
        assert (after.status, after.last_seq, after.lease_owner) == (
            RunStatus.RUNNING,
            before.last_seq,
            "elsewhere.example:4242:aa",
        )
        done = await runtime.wait(lapsed)
        assert done.status == RunStatus.COMPLETED and done.result == {"values": [7]}
        reasons = [f.reason for f in runtime.frames(lapsed) if isinstance(f, StatusChanged)]
        assert any(r.startswith(RECOVERED) and "expired" in r for r in reasons)
    finally:
        await runtime.aclose()


async def test_two_runtimes_recovering_at_once_take_each_run_once(tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    ids = [running_with_lease(db, f"gone{i}.example:1:cc", expires_in=-1) for i in range(4)]
    first, second = recovery_runtime(db, ["1"] * 4), recovery_runtime(db, ["1"] * 4)
    try:
        one, two = await asyncio.gather(recover_runs(first), recover_runs(second))
        assert sorted(one.resumed + two.resumed) == sorted(ids)
        assert not set(one.resumed) & set(two.resumed)
        for run_id in ids:
            owner = first if run_id in one.resumed else second
            assert (await owner.wait(run_id)).status == RunStatus.COMPLETED
            calls = [f for f in owner.frames(run_id) if isinstance(f, ModelCall)]
            assert len(calls) == 1
    finally:
        await first.aclose()
        await second.aclose()


async def test_a_run_paused_by_a_closing_runtime_is_recovered_and_an_unknown_agent_is_left(
    tmp_path: Path,
) -> None:
    db = tmp_path / "runs.db"
    gate = asyncio.Event()

    class Waiting(ScriptedModel):
        async def complete(self, *args: object, **kwargs: object):  # type: ignore[no-untyped-def]
            await gate.wait()
            return await super().complete(*args, **kwargs)  # type: ignore[arg-type]

    closing = Runtime(SQLiteStore(db), model=Waiting(["1"]), registry=make_registry())
    run_id = await closing.start("test.counter", {"target": 2})
    await closing.opened(run_id)
    await closing.aclose()  # mid-step: the run pauses there
    runtime = recovery_runtime(db, ["1", "2"])
    try:
        paused = runtime.get_run(run_id)
        assert (paused.status, paused.pause_reason) == (RunStatus.PAUSED, SHUT_DOWN_REASON)
        stranger = running_with_lease(db, "gone.example:1:dd", -1, agent_type="not.registered")
        recovery = await recover_runs(runtime)
        assert recovery.resumed == (run_id,)
        assert [s[0] for s in recovery.skipped] == [stranger]
        assert "not registered" in recovery.skipped[0][1]
        assert (await runtime.wait(run_id)).status == RunStatus.COMPLETED
        assert runtime.get_run(stranger).status == RunStatus.RUNNING
    finally:
        await runtime.aclose()


async def test_a_parent_whose_subagents_all_ended_while_nothing_ran_it_continues(
    tmp_path: Path,
) -> None:
    db = tmp_path / "runs.db"
    owners = {"parent": "gone.example:1:ee", "child": "gone.example:2:ff"}
    parent = running_with_lease(db, owners["parent"], -1)
    child = running_with_lease(db, owners["child"], -1, parent_id=parent)
    store = SQLiteStore(db)
    try:
        for name, run_id, fields in (
            ("parent", parent, {"status": RunStatus.PAUSED, "pause_reason": SUBAGENTS_REASON}),
            ("child", child, {"status": RunStatus.COMPLETED}),
        ):
            frame = StatusChanged(
                run_id=run_id, seq=3, from_status="running", to_status=fields["status"].value
            )
            ending = Lease(owner=owners[name], release=True)
            store.commit(run_id, [frame], run_fields=fields, lease=ending)
    finally:
        store.close()
    runtime = recovery_runtime(db, ["5"])
    try:
        recovery = await recover_runs(runtime)
        assert recovery.resumed == (parent,)
        assert (await runtime.wait(parent)).status == RunStatus.COMPLETED
        reasons = [f.reason for f in runtime.frames(parent) if isinstance(f, StatusChanged)]
        assert any("subagents ended" in r for r in reasons)
    finally:
        await runtime.aclose()


async def test_a_worker_queues_the_runs_a_gone_server_left_unless_told_not_to(
    postgres_url: str, tmp_path: Path
) -> None:
    pytest.importorskip("dbos", reason="the dbos extra is not installed")
    from tests.runtime.test_workers import start_worker, stop_workers
    from tests.server.test_recovery import gone_owner

    effects = tmp_path / "effects.txt"
    effects.touch()
    left = running_with_lease(
        postgres_url, gone_owner(), 30.0, agent_type="test.effects", args={"steps": 2}
    )
    # a worker that recovers nothing leaves it as it is (recovery comes before it is ready)
    idle, _ = start_worker(postgres_url, effects, 1, "--no-recover")
    stop_workers([idle])
    runtime = Runtime(postgres_url, model="test", executor="dbos")
    try:
        run = runtime.get_run(left)
        assert (run.status, run.last_seq) == (RunStatus.RUNNING, 2)
        worker_proc, owner = start_worker(postgres_url, effects, 1)
        try:
            async with asyncio.timeout(120):
                done = await runtime.wait(left)
                while done.status != RunStatus.COMPLETED:
                    done = await runtime.wait(left)
        finally:
            stop_workers([worker_proc])
        reasons = [f.reason for f in runtime.frames(left) if isinstance(f, StatusChanged)]
        said = [r for r in reasons if r.startswith(f"{RECOVERED} by {owner}")]
        assert len(said) == 1 and "is gone" in said[0]
        assert effects.read_text().splitlines() == [f"{left} 1", f"{left} 2"]
    finally:
        await runtime.aclose()
