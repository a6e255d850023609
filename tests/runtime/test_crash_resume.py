"""A run killed with SIGKILL mid-run resumes in a new process: no committed step is lost and no
recorded model response is requested again (the strict scripted model would fail if it were)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

from kforge.frames import ModelCall
from kforge.store import RunStatus, SQLiteStore

WORKER = Path(__file__).with_name("worker.py")


def worker(*args: str, delay: float = 0.0) -> subprocess.Popen[str]:
    env = {**os.environ, "WORKER_DELAY": str(delay)}
    return subprocess.Popen(
        [sys.executable, str(WORKER), *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )


def model_calls(db: Path, run_id: str) -> list[str]:
    store = SQLiteStore(db)
    try:
        return [f.response["text"] for f in store.read_frames(run_id) if isinstance(f, ModelCall)]
    finally:
        store.close()


def test_sigkill_inside_a_step_after_its_model_call_resumes_without_asking_again(
    tmp_path: Path,
) -> None:
    db = tmp_path / "runs.db"
    marker = tmp_path / "killed"
    args = {"target": 5, "kill_after_value": 3, "kill_marker": str(marker)}
    proc = worker(str(db), "start", "test.counter", json.dumps(args), json.dumps(["1", "2", "3"]))
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == -signal.SIGKILL, err
    run_id = out.split()[0]
    store = SQLiteStore(db)
    run = store.get_run(run_id)
    assert run.status == RunStatus.RUNNING  # it died, nobody marked it
    assert run.iteration == 2  # steps 1 and 2 committed; step 3 died after its model call
    store.close()
    assert model_calls(db, run_id) == ["1", "2", "3"]

    # The new process is only given the replies that were never recorded.
    proc = worker(str(db), "resume", run_id, json.dumps(["4", "5"]))
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    assert out.split()[1] == "completed", out
    store = SQLiteStore(db)
    run = store.get_run(run_id)
    assert run.result == {"values": [1, 2, 3, 4, 5]}
    frames = store.read_frames(run_id)
    assert [f.seq for f in frames] == list(range(1, len(frames) + 1))
    store.close()
    assert model_calls(db, run_id) == ["1", "2", "3", "4", "5"]


def kill_mid_run_and_resume(db: Path, agent_type: str, replies: list[str]) -> str:
    """Start a run of ``agent_type`` (one model call a step) in a worker, kill it from outside
    (SIGKILL) once its sixth model call began, and resume it to its end in a new worker given
    only the replies never recorded. Returns the run id."""
    args = json.dumps({"target": len(replies)})
    proc = worker(str(db), "start", agent_type, args, json.dumps(replies), delay=0.05)
    assert proc.stdout is not None
    run_id = proc.stdout.readline().split()[0]
    assert proc.stderr is not None
    # one model call per step: the sixth call begins once five steps are committed
    for line in proc.stderr:
        if line.strip() == "model call 6":
            break
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)

    store = SQLiteStore(db)
    committed = store.get_run(run_id).iteration
    assert 5 <= committed < len(replies)
    store.close()
    recorded = model_calls(db, run_id)
    assert recorded == replies[: len(recorded)]

    proc = worker(str(db), "resume", run_id, json.dumps(replies[len(recorded) :]))
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    assert out.split()[1] == "completed", out
    return run_id


def test_sigkill_from_outside_mid_run_then_resume_in_new_process(tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    replies = [str(i) for i in range(1, 21)]
    run_id = kill_mid_run_and_resume(db, "test.counter", replies)
    store = SQLiteStore(db)
    assert store.get_run(run_id).result == {"values": list(range(1, 21))}
    store.close()
    assert model_calls(db, run_id) == replies


def test_checkpoint_answered_in_a_new_process(tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    proc = worker(
        str(db), "start", "test.draft", json.dumps({"topic": "t"}), json.dumps([{"items": ["a"]}])
    )
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    run_id, status = out.split()[:2]
    assert status == "awaiting_user"
    proc = worker(
        str(db),
        "resume",
        run_id,
        json.dumps([{"verdict": "ok"}]),
        json.dumps({"action": "approve"}),
    )
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    assert out.split()[1] == "completed"


def test_sigkill_after_a_journaled_step_resumes_without_taking_it_again(tmp_path: Path) -> None:
    db, ledger, marker = tmp_path / "runs.db", tmp_path / "ledger", tmp_path / "killed"
    args = {"ledger": str(ledger), "kill_marker": str(marker)}
    proc = worker(str(db), "start", "test.journal", json.dumps(args), "[]")
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == -signal.SIGKILL, err
    run_id = out.split()[0]
    first = ledger.read_text().splitlines()
    assert len(first) == 1  # the effect happened once, and the step died before it committed

    proc = worker(str(db), "resume", run_id, "[]")
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    assert out.split()[1] == "completed", out
    assert ledger.read_text().splitlines() == first  # not taken again
    store = SQLiteStore(db)
    run = store.get_run(run_id)
    killed_pid = int(first[0].split()[1])
    # the resumed step got the value the killed process recorded
    assert run.result == {"ticket": {"ticket": 1, "pid": killed_pid}}
    store.close()


def _history(values: list[str]) -> list[dict[str, object]]:
    history: list[dict[str, object]] = [{"role": "user", "content": "count"}]
    for step, value in enumerate(values, 1):
        history.append({"role": "assistant", "content": value})
        history.append({"role": "tool", "content": f"noted {value}", "step": step})
    return history


def _appended_per_step(db: Path, run_id: str) -> list[list[object]]:
    """What each step's delta did to the append-only history (the start's delta excepted)."""
    store = SQLiteStore(db)
    try:
        steps = store.read_steps(run_id, after_step=0)
    finally:
        store.close()
    return [[op for op in s.delta if op[1] == ["agent", "history"]] for s in steps]


def test_an_append_only_history_killed_mid_run_resumes_exactly(tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    replies = [str(i) for i in range(1, 21)]
    run_id = kill_mid_run_and_resume(db, "test.history", replies)
    store = SQLiteStore(db)
    assert store.get_run(run_id).result == {"history": _history(replies)}
    store.close()
    assert model_calls(db, run_id) == replies  # each asked once: nothing lost, nothing repeated
    # every step, before the kill and after the resume, stored only the two items it appended
    assert _appended_per_step(db, run_id) == [
        [["a", ["agent", "history"], _history(replies)[2 * i + 1 : 2 * i + 3]]] for i in range(20)
    ]


def test_an_append_only_history_killed_inside_a_step_resumes_it_once(tmp_path: Path) -> None:
    db, marker = tmp_path / "runs.db", tmp_path / "killed"
    replies = [str(i) for i in range(1, 6)]
    args = {"target": 5, "kill_after_value": 3, "kill_marker": str(marker)}
    proc = worker(str(db), "start", "test.history", json.dumps(args), json.dumps(replies[:3]))
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == -signal.SIGKILL, err
    run_id = out.split()[0]
    assert model_calls(db, run_id) == replies[:3]  # step 3's reply committed, the step not

    proc = worker(str(db), "resume", run_id, json.dumps(replies[3:]))
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    assert out.split()[1] == "completed", out
    store = SQLiteStore(db)
    assert store.get_run(run_id).result == {"history": _history(replies)}
    store.close()
    assert model_calls(db, run_id) == replies
