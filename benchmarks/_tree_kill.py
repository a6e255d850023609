"""``tree.py``'s second scenario: the same trees, steered while they run, killed and resumed.

N trees start in a worker process; while it runs, comments and modifies go to random agents
that have not ended (``_faults_tree.py``'s steering); once half the trees' steps are committed
the worker gets SIGKILL, and a new worker resumes every root and runs the trees to their end,
still steered. Every committed step is noted in a ledger beside the database (the worker's
store appends ``run iteration`` after each commit), so that a committed step run again after
the kill shows as a line written twice. Reported: the wall time from the first worker's start
to the last tree's end (both process starts and the resume included), the resume's share of
it, the steps committed before the kill, committed steps run again, and the interventions
accepted, refused (an agent that ended refuses one with a clear error), lost and applied twice.

This file is also the worker: ``start DB LEDGER N DEPTH FANOUT`` prints the roots' ids as one
JSON line; ``resume DB LEDGER ROOT...`` resumes them; both run the trees to their end.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve()
sys.path.insert(0, str(HERE.parent))

from _faults_tree import _record, _Steering, _to_the_end, spawn  # noqa: E402
from kforge.engine.limits import RunLimits  # noqa: E402
from kforge.runtime.runtime import Runtime  # noqa: E402
from kforge.store.base import TERMINAL_STATUSES, StepRecord  # noqa: E402
from kforge.store.sqlite import SQLiteStore  # noqa: E402

__all__ = ["kill_and_resume", "langgraph_kill_and_resume"]

STEPS_PER_AGENT = 6
KILL_AT = 0.5
"""The share of the trees' steps committed when the first worker is killed."""


class LedgerStore(SQLiteStore):
    """A SQLite store that notes each committed step in an append-only file after the commit."""

    def __init__(self, path: str, ledger: str) -> None:
        super().__init__(path)
        self._ledger = os.open(ledger, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)

    def commit(
        self, run_id: str, frames: Any, *, step: StepRecord | None = None, **kw: Any
    ) -> None:
        super().commit(run_id, frames, step=step, **kw)
        if step is not None and step.step > 0:  # step 0 is the initial state, not a step
            os.write(self._ledger, f"{run_id} {step.step}\n".encode())


async def _work(argv: list[str]) -> int:
    from tree import ScriptedTreeModel

    mode, db, ledger, *rest = argv
    if mode == "start":
        n, depth, fanout = (int(x) for x in rest)
    else:
        fanout = 4  # the scripted model only splits requests above the depth limit
    rt = Runtime(
        LedgerStore(db, ledger), model=ScriptedTreeModel(fanout), limits=RunLimits(max_steps=50)
    )
    if mode == "start":
        args = {"max_depth": depth, "max_subquestions": fanout}
        roots = [
            await rt.start("tree", {"prompt": f"Request number {i}", **args}) for i in range(n)
        ]
        print(json.dumps(roots), flush=True)
    else:
        roots = rest
        for root in roots:
            if rt.store.get_run(root).status not in TERMINAL_STATUSES:
                await rt.resume(root, durable=True)
    ended = await asyncio.gather(*(_to_the_end(rt, root) for root in roots))
    print(json.dumps([run.status.value for run in ended]), flush=True)
    await rt.aclose()
    return 0


async def _steer(steerings: list[_Steering], proc: subprocess.Popen[str], stop: Any) -> None:
    """Send interventions to random open agents until ``proc`` ends or ``stop()`` is true."""
    rng = steerings[0].rng
    while proc.poll() is None and not stop():
        await rng.choice(steerings).send()
        await asyncio.sleep(rng.uniform(0.0, 0.01))


def _lines(ledger: Path) -> int:
    try:
        return ledger.read_bytes().count(b"\n")
    except FileNotFoundError:
        return 0


def _kill_at(proc: subprocess.Popen[Any], ledger: Path, count: int) -> bool:
    """SIGKILL ``proc`` once ``ledger`` holds ``count`` lines; False if it ended before."""
    while proc.poll() is None and _lines(ledger) < count:
        time.sleep(0.002)
    if proc.poll() is not None:
        return False
    proc.send_signal(signal.SIGKILL)
    return True


def _steps(n: int, depth: int, fanout: int) -> int:
    """The steps ``n`` unsteered trees take."""
    return n * sum(fanout**level for level in range(depth + 1)) * STEPS_PER_AGENT


def _timed(
    ledger: Path, times: tuple[float, float, float], needed: int, before: int
) -> dict[str, Any]:
    """What both sides report: times are the first start, the resume's start and the end."""
    began, resumed, ended = times
    ran = Counter(ledger.read_text().splitlines())
    return {
        "wall_s": round(ended - began, 4),
        "resume_wall_s": round(ended - resumed, 4),
        "steps": len(ran),
        "steps_without_interventions": needed,
        "steps_before_kill": before,
        "steps_reexecuted": sum(count - 1 for count in ran.values()),
    }


async def _scenario(folder: Path, n: int, depth: int, fanout: int, seed: int) -> dict[str, Any]:
    db, ledger = folder / "trees.db", folder / "ledger"
    needed = _steps(n, depth, fanout)
    began = time.perf_counter()
    proc = spawn(HERE, "start", str(db), str(ledger), str(n), str(depth), str(fanout))
    assert proc.stdout is not None
    roots: list[str] = json.loads(await asyncio.to_thread(proc.stdout.readline))
    rng = random.Random(seed)
    steerings = [_Steering(db, root, rng, f"t{i}") for i, root in enumerate(roots)]
    # The kill is watched in its own thread: a send that waits on the database lock must not
    # let the worker run on past half its steps before anyone looks at the ledger.
    watcher = asyncio.ensure_future(
        asyncio.to_thread(_kill_at, proc, ledger, int(needed * KILL_AT))
    )
    await _steer(steerings, proc, watcher.done)
    killed = await watcher
    await asyncio.to_thread(proc.communicate)
    before = _lines(ledger)
    resumed = time.perf_counter()
    proc = spawn(HERE, "resume", str(db), str(ledger), *roots)
    await _steer(steerings, proc, lambda: False)
    _, err = await asyncio.to_thread(proc.communicate)
    ended = time.perf_counter()
    if proc.returncode != 0:
        raise RuntimeError(f"the resuming worker failed:\n{err[-4000:]}")
    rows = [_record(steering, folder / "no-side-effects") for steering in steerings]
    for steering in steerings:
        steering.rt.store.close()
    keys = ("agents", "sent", "accepted", "refused", "lost", "applied_twice", "failed_agents")
    return {
        "n": n,
        "killed": killed,
        **_timed(ledger, (began, resumed, ended), needed, before),
        "completed_trees": sum(1 for r in rows if r["completed"]),
        **{k: sum(r[k] for r in rows) for k in keys},
        "unfinished_as": sorted(r["ended"] for r in rows if not r["completed"]),
    }


def kill_and_resume(root_dir: Path, n: int, depth: int, fanout: int, seed: int) -> dict[str, Any]:
    """Run the scenario for ``n`` trees in ``root_dir`` (a fresh folder); returns one row."""
    folder = root_dir / f"kill-{n}"
    folder.mkdir()
    return asyncio.run(_scenario(folder, n, depth, fanout, seed))


def langgraph_kill_and_resume(
    root_dir: Path, python: Path, script: Path, params: dict[str, Any]
) -> dict[str, Any]:
    """LangGraph's side of the scenario, killed and resumed from its checkpointer in the same
    way, without interventions (see ``tree.py``'s notes); ``params`` as the side reads them."""
    n, depth, fanout = params["n"], params["max_depth"], params["fanout"]
    folder = root_dir / f"kill-langgraph-{params['setup']}-{n}"
    folder.mkdir()
    ledger = folder / "ledger"
    needed = _steps(n, depth, fanout)
    params = {**params, "db": str(folder / "trees.db"), "ledger": str(ledger), "resume": False}
    pipe = subprocess.PIPE
    began = time.perf_counter()
    proc = subprocess.Popen([str(python), str(script)], stdin=pipe, stdout=pipe, stderr=pipe)
    assert proc.stdin is not None
    proc.stdin.write(json.dumps(params).encode())
    proc.stdin.close()
    killed = _kill_at(proc, ledger, int(needed * KILL_AT))
    proc.wait()  # it prints one line only at its end: the pipes cannot fill
    before = _lines(ledger)
    resumed = time.perf_counter()
    command = [str(python), str(script)]
    done = subprocess.run(command, input=json.dumps({**params, "resume": True}), text=True,
                          capture_output=True)  # fmt: skip
    ended = time.perf_counter()
    if done.returncode != 0:
        raise RuntimeError(f"LangGraph's resume failed:\n{done.stderr[-4000:]}")
    timed = _timed(ledger, (began, resumed, ended), needed, before)
    return {"n": n, "setup": params["setup"], "killed": killed, **timed}


if __name__ == "__main__":
    raise SystemExit(asyncio.run(_work(sys.argv[1:])))
