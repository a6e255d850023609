"""A worker's first resume, for ``postgres_vs_langgraph.py``: a new process opens its store as
``kforge worker`` does when it starts (``prepare_worker``: its connection made and warmed
before any run arrives), then resumes a run another process paused; timed from the resume
until its next step commits, so the process's start, its imports and its connection are not
in the figure, and its first run's own work is.

    python benchmarks/_worker_cold.py URL RUN_ID K    # prints the seconds
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from kforge.engine.registry import AgentRegistry  # noqa: E402
from kforge.llm.testing.scripted import ScriptedModel  # noqa: E402
from kforge.runtime.runtime import Runtime  # noqa: E402
from kforge.runtime.worker import prepare_worker  # noqa: E402
from kforge.store.base import RunStatus  # noqa: E402
from kforge.store.postgres import PostgresStore  # noqa: E402
from runtime_vs_langgraph import (  # noqa: E402
    AGENT_TYPE,
    ANSWER,
    AddLoopAgent,
    _check_completed,
    _limits,
    script,
    step_timing,
)

CONCURRENCY = 16
"""Stretches per worker, as the benchmark's workers run (the store's pool follows it)."""


def registry() -> AgentRegistry:
    found = AgentRegistry()
    found.register(AGENT_TYPE, AddLoopAgent)
    return found


async def paused_run(url: str, k: int) -> str:
    """A run of the K-step loop paused for its question at K/2, made by this process."""
    first = Runtime(
        PostgresStore(url), model=ScriptedModel(script(k)[: k // 2]), registry=registry()
    )
    run = await first.run(AGENT_TYPE, {"pause_at": k // 2}, limits=_limits(k))
    await first.aclose()
    if run.status != RunStatus.AWAITING_USER:
        raise RuntimeError(f"the kforge run did not pause for the question ({run.status})")
    return run.id


async def worker_resume(url: str, k: int) -> float:
    """Seconds of a new process's first resume (``first_resume``) of a run paused here."""
    run_id = await paused_run(url, k)
    done = subprocess.run(
        [sys.executable, str(Path(__file__).resolve()), url, run_id, str(k)],
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        raise RuntimeError(f"the worker's first resume failed:\n{done.stderr[-4000:]}")
    return float(done.stdout.split()[-1])


async def first_resume(url: str, run_id: str, k: int) -> float:
    """In a new process: open the store as a worker does at start, then resume ``run_id``;
    seconds from the resume until its next step commits."""
    store = prepare_worker(url, concurrency=CONCURRENCY)
    timed = step_timing(type(store))
    store.__class__ = timed  # the worker's own store, noting when the step commits
    runtime = Runtime(store, model=ScriptedModel(script(k)[k // 2 :]), registry=registry())
    started = time.perf_counter()
    await runtime.resume(run_id, ANSWER)
    done = await runtime.wait(run_id)
    await runtime.aclose()
    _check_completed(done.status, done.result, k)
    committed = getattr(store, "step_committed_at", None)
    if committed is None:
        raise RuntimeError("no step was committed after the resume")
    return float(committed - started)


if __name__ == "__main__":
    print(asyncio.run(first_resume(sys.argv[1], sys.argv[2], int(sys.argv[3]))))
