"""Runs spread over ``kforge worker`` processes (the dbos executor on PostgreSQL): every run
completes exactly once even when a worker is killed mid-run, and a run waiting for a person
holds no worker until its answer queues the rest."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pytest

from kforge.errors import ValidationError
from kforge.frames import StatusChanged, ToolResultFrame
from kforge.runtime import Intervention, Runtime
from kforge.store import RunRecord, RunStatus

pytest.importorskip("dbos", reason="the dbos extra is not installed")

ROOT = Path(__file__).resolve().parents[2]


def start_worker(
    url: str, effects: Path, concurrency: int = 4, *options: str
) -> tuple[subprocess.Popen[str], str]:
    """A ``kforge worker`` process and its owner id, once it takes work (its log beside
    ``effects``, so that a chatty worker never blocks on a full pipe)."""
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), str(ROOT)]),
        "KFORGE_TEST_EFFECTS": str(effects),
    }
    log = effects.with_name(f"worker-{len(list(effects.parent.glob('worker-*.log')))}.log")
    with log.open("w") as err:
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "kforge",
                "--db",
                url,
                "worker",
                "--concurrency",
                str(concurrency),
                "--import",
                "tests.runtime.effect_agent",
                *options,
            ],
            stdout=subprocess.PIPE,
            stderr=err,
            text=True,
            env=env,
        )
    assert proc.stdout is not None
    line = proc.stdout.readline()
    if not line:
        proc.wait(timeout=30)
        raise AssertionError(f"worker did not start: {log.read_text()}")
    return proc, line.split()[2].rstrip(":")


def stop_workers(procs: list[subprocess.Popen[str]]) -> None:
    for proc in procs:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
    for proc in procs:
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()


async def test_fifty_runs_over_three_workers_survive_a_killed_worker(
    postgres_url: str, tmp_path: Path
) -> None:
    import tests.runtime.effect_agent  # noqa: F401  (registers test.effects here too)

    effects = tmp_path / "effects.txt"
    effects.touch()
    rt = Runtime(postgres_url, model="test", executor="dbos")
    started = [start_worker(postgres_url, effects) for _ in range(3)]
    procs = [p for p, _ in started]
    victim, victim_owner = started[0]
    try:
        ids = [await rt.start("test.effects", {"steps": 6, "pause_s": 0.05}) for _ in range(50)]
        # Kill the first worker once it holds a run past its first step, with its lease live.
        async with asyncio.timeout(120):
            while not any(
                r.lease_owner == victim_owner and r.iteration >= 1
                for r in rt.store.list_runs(status=RunStatus.RUNNING, limit=100)
            ):
                await asyncio.sleep(0.01)
        victim.send_signal(signal.SIGKILL)
        victim.wait(timeout=30)
        async with asyncio.timeout(300):
            runs = [await rt.wait(run_id) for run_id in ids]
    finally:
        stop_workers(procs)
    assert [r.status for r in runs] == [RunStatus.COMPLETED] * 50
    lines = effects.read_text().split("\n")[:-1]
    counts = Counter(lines)
    assert [line for line, n in counts.items() if n > 1] == []  # no effect happened twice
    taken_over = 0
    for run in runs:
        frames = rt.frames(run.id)
        assert [f.seq for f in frames] == list(range(1, run.last_seq + 1))  # gap-free log
        results = [f for f in frames if isinstance(f, ToolResultFrame)]
        assert len(results) == 6
        for step, result in enumerate(results, start=1):
            if result.success:  # it acted once; an unknown outcome was not re-run
                assert counts[f"{run.id} {step}"] == 1
        stretches = [f for f in frames if isinstance(f, StatusChanged) and f.to_status == "running"]
        taken_over += len(stretches) > 1
    assert taken_over >= 1  # the killed worker's runs went on elsewhere
    await rt.aclose()


async def test_a_waiting_run_holds_no_worker_and_its_answer_queues_the_rest(
    postgres_url: str, tmp_path: Path
) -> None:
    import tests.runtime.effect_agent  # noqa: F401

    effects = tmp_path / "effects.txt"
    effects.touch()
    rt = Runtime(postgres_url, model="test", executor="dbos")
    proc, _ = start_worker(postgres_url, effects, concurrency=1)
    try:
        asking = await rt.start("test.effects", {"steps": 3, "ask_at": 2})
        run = await rt.wait(asking)
        assert run.status == RunStatus.AWAITING_USER and not run.is_live()
        # The only slot of the only worker is free: another run goes through meanwhile.
        other = await rt.run("test.effects", {"steps": 2})
        assert other.status == RunStatus.COMPLETED
        with pytest.raises(ValidationError):  # refused here, before anything is queued
            await rt.resume(asking, {"action": "maybe"})
        assert rt.get_run(asking).status == RunStatus.AWAITING_USER
        await rt.resume(asking, {"action": "approve"})
        run = await rt.wait(asking)
    finally:
        stop_workers([proc])
    assert run.status == RunStatus.COMPLETED and run.result == {"steps": ["ok", "ok", "ok"]}
    frames = rt.frames(asking)
    assert [f.seq for f in frames] == list(range(1, run.last_seq + 1))
    mine = [line for line in effects.read_text().splitlines() if line.startswith(asking)]
    assert mine == [f"{asking} {step}" for step in (1, 2, 3)]  # each step acted once
    await rt.aclose()


async def test_a_parent_waits_for_its_child_without_holding_a_worker(
    postgres_url: str, tmp_path: Path
) -> None:
    """One worker with one slot: a parent that held it while waiting would wait forever, since
    its child could never run. Parked, it frees the slot; the child's end queues it again."""
    import tests.runtime.effect_agent  # noqa: F401

    effects = tmp_path / "effects.txt"
    effects.touch()
    rt = Runtime(postgres_url, model="test", executor="dbos")
    proc, _ = start_worker(postgres_url, effects, concurrency=1)
    try:
        parent = await rt.start("test.parent", {"child_steps": 2})
        async with asyncio.timeout(120):
            while rt.get_run(parent).status not in (RunStatus.COMPLETED, RunStatus.FAILED):
                await asyncio.sleep(0.05)
    finally:
        stop_workers([proc])
    run = rt.get_run(parent)
    assert run.status == RunStatus.COMPLETED, run.error
    assert run.result is not None and run.result["status"] == "completed"
    child = rt.get_run(run.result["child"])
    assert child.parent_id == parent and child.status == RunStatus.COMPLETED
    statuses = [
        (f.from_status, f.to_status, f.reason)
        for f in rt.frames(parent)
        if isinstance(f, StatusChanged)
    ]
    assert ("running", "paused", "subagents") in statuses  # it let go of the worker
    mine = [line for line in effects.read_text().splitlines() if line.startswith(child.id)]
    assert mine == [f"{child.id} 1", f"{child.id} 2"]  # the child started and acted once
    await rt.aclose()


def test_the_dbos_executor_needs_a_postgres_store(tmp_path: Path) -> None:
    from kforge.errors import ConfigurationError

    with pytest.raises(ConfigurationError, match="needs the PostgreSQL store"):
        Runtime(tmp_path / "k.db", executor="dbos")
    with pytest.raises(ConfigurationError, match="executor must be 'local', 'dbos' or an Executor"):
        Runtime(tmp_path / "k.db", executor="celery")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--db", "k.db", "worker"], "kforge worker needs a PostgreSQL database"),
        (
            ["--db", "postgresql://u@127.0.0.1:1/x", "worker", "--concurrency", "0"],
            "--concurrency must be at least 1",
        ),
        (
            ["--db", "postgresql://u@127.0.0.1:1/x", "worker", "--import", "no_such_module_x"],
            "--import no_such_module_x",
        ),
    ],
)
def test_worker_refuses_what_cannot_work(argv: list[str], message: str, tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    env.pop("KFORGE_DB", None)
    done = subprocess.run(
        [sys.executable, "-m", "kforge", *argv],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=60,
    )
    assert done.returncode == 2, done.stderr
    assert message in done.stderr and "Traceback" not in done.stderr


async def test_a_comment_wakes_a_tree_parent_parked_on_its_subagents(
    postgres_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With workers a parent always parks while its subagents work: a comment queues it at
    once, and it takes the comment while they are still held."""
    import tests.runtime.effect_agent  # noqa: F401

    effects = tmp_path / "effects.txt"
    effects.touch()
    gate = tmp_path / "gate"
    monkeypatch.setenv("KFORGE_TEST_GATE", str(gate))
    rt = Runtime(postgres_url, model="test", executor="dbos")
    proc, _ = start_worker(postgres_url, effects, concurrency=4)
    try:
        args = {"prompt": "Compare Python with Go; explain closures", "clarify": False}
        root = await rt.start("test.tree", {**args, "max_question_rounds": 0})

        def parks(run: RunRecord) -> int:
            frames = rt.frames(run.id)
            return sum(isinstance(f, StatusChanged) and f.to_status == "paused" for f in frames)

        await until(rt, root, lambda r: r.pause_reason == "subagents")
        outcome = await rt.intervene(root, Intervention.comment("keep it short"))
        assert outcome["applied"] == "now"
        # woken, it took the comment and parked again, its subagents still held
        await until(rt, root, lambda r: r.pause_reason == "subagents" and parks(r) == 2)
        children = rt.store.list_runs(parent_id=root)
        assert len(children) == 2
        assert {c.status for c in children} <= {RunStatus.PENDING, RunStatus.RUNNING}
        frames = rt.frames(root)
        taken = [f for f in frames if f.type == "agent.thinking" and "keep it short" in f.message]
        assert len(taken) == 1
        assert any(f.type == "phase.changed" and f.reason == "comment from user" for f in frames)
        gate.touch()
        run = await until(rt, root, lambda r: r.status in (RunStatus.COMPLETED, RunStatus.FAILED))
    finally:
        stop_workers([proc])
    assert run.status == RunStatus.COMPLETED, run.error
    assert (run.result or {})["metadata"]["comments"] == ["keep it short"]
    await rt.aclose()


async def until(rt: Runtime, run_id: str, wanted: Callable[[RunRecord], bool]) -> RunRecord:
    """The run once ``wanted(run)`` holds (a final question the fake model asks is answered)."""
    async with asyncio.timeout(120):
        while True:
            run = rt.get_run(run_id)
            if run.status == RunStatus.AWAITING_USER:
                await rt.resume(run_id, "fine")
            elif wanted(run):
                return run
            await asyncio.sleep(0.05)


def test_a_worker_prepares_its_store_and_its_tools_before_its_first_run(
    postgres_url: str,
) -> None:
    """What a worker does at start (``prepare_worker``), in a new process: its store's
    connection made and warmed for steps and resumes, and the library that validates tool
    arguments loaded, before any run arrives."""
    code = (
        "import sys\n"
        "from kforge.runtime.worker import prepare_worker\n"
        "before = 'jsonschema' in sys.modules\n"
        f"store = prepare_worker({postgres_url!r}, concurrency=2)\n"
        "rows = store._first.execute('SELECT name FROM pg_prepared_statements').fetchall()\n"
        "print(before, 'jsonschema' in sys.modules, *(r[0] for r in rows))\n"
        "store.close()\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60
    )
    assert done.returncode == 0, done.stderr
    before, after, *names = done.stdout.split()
    assert (before, after) == ("False", "True")
    assert {"kforge_commit_1", "kforge_commit_lazy_1", "kforge_run_1"} <= set(names)
