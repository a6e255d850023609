"""The LangGraph half of ``postgres_vs_langgraph.py``: runs in its own virtual environment.

Reads its parameters as JSON on stdin and prints its measurements as JSON on stdout. The
workload is ``_langgraph_side.py``'s (an agent node whose scripted "model" asks for ``add`` K
times, a ``ToolNode`` that runs it, ``MessagesState``) with ``PostgresSaver`` instead of
``SqliteSaver``, each measurement on a new database of the same server as the kforge side.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import time
from importlib.metadata import version
from typing import Any

from langchain_core.messages import HumanMessage
from langgraph.checkpoint.postgres import PostgresSaver
from langgraph.types import Command
from psycopg import Connection
from psycopg.rows import dict_row

from _langgraph_side import ANSWER, PROMPT, _check_answer, _config, build_graph, timing_saver

__all__ = ["main"]

TimingSaver = timing_saver(PostgresSaver)


def connect(url: str) -> Connection[Any]:
    """A connection set up the way ``PostgresSaver.from_conn_string`` sets up its own."""
    return Connection.connect(url, autocommit=True, prepare_threshold=0, row_factory=dict_row)


def run_loop(url: str, k: int) -> float:
    """Seconds for one K-step run from invoke to its final answer (durability "sync")."""
    with connect(url) as conn:
        saver = PostgresSaver(conn)
        saver.setup()
        graph = build_graph(k, None, saver)
        started = time.perf_counter()
        out = graph.invoke(
            {"messages": [HumanMessage(content=PROMPT)]}, _config(k), durability="sync"
        )
        elapsed = time.perf_counter() - started
    _check_answer(out, k)
    return elapsed


def resume_once(url: str, k: int) -> tuple[float, float]:
    """(warm, cold) seconds from resuming a run paused at K/2 until its next step commits;
    cold also counts connecting and compiling the graph."""
    pause_at = k // 2
    config = _config(k)
    with connect(url) as conn:
        saver = PostgresSaver(conn)
        saver.setup()
        out = build_graph(k, pause_at, saver).invoke(
            {"messages": [HumanMessage(content=PROMPT)]}, config, durability="sync"
        )
    if "__interrupt__" not in out:
        raise RuntimeError("the LangGraph run did not pause for the question")
    cold_start = time.perf_counter()
    with connect(url) as conn:
        timing = TimingSaver(conn)
        graph = build_graph(k, pause_at, timing)
        started = time.perf_counter()
        out = graph.invoke(Command(resume=ANSWER), config, durability="sync")
    _check_answer(out, k)
    if timing.step_committed_at is None:
        raise RuntimeError("no checkpoint with a tool result was committed after the resume")
    return timing.step_committed_at - started, timing.step_committed_at - cold_start


def paused(url: str, k: int) -> None:
    """A run of the K-step loop paused for its question at K/2 (on a connection of its own)."""
    with connect(url) as conn:
        saver = PostgresSaver(conn)
        saver.setup()
        out = build_graph(k, k // 2, saver).invoke(
            {"messages": [HumanMessage(content=PROMPT)]}, _config(k), durability="sync"
        )
    if "__interrupt__" not in out:
        raise RuntimeError("the LangGraph run did not pause for the question")


def worker_resume(url: str, k: int) -> float:
    """Seconds of a new process's first resume (``first_resume``) of a run paused here."""
    paused(url, k)
    done = subprocess.run(
        [sys.executable, __file__, "--first-resume", url, str(k)], capture_output=True, text=True
    )
    if done.returncode != 0:
        raise RuntimeError(f"the first resume failed:\n{done.stderr[-4000:]}")
    return float(done.stdout.split()[-1])


def first_resume(url: str, k: int) -> float:
    """In a new process, as a worker that serves the graph would start: connect, ``setup()``
    the saver and compile the graph, then resume; seconds from the resume until its next step
    commits."""
    config = _config(k)
    with connect(url) as conn:
        timing = TimingSaver(conn)
        timing.setup()
        graph = build_graph(k, k // 2, timing)
        started = time.perf_counter()
        out = graph.invoke(Command(resume=ANSWER), config, durability="sync")
    _check_answer(out, k)
    if timing.step_committed_at is None:
        raise RuntimeError("no checkpoint with a tool result was committed after the resume")
    return float(timing.step_committed_at - started)


def main() -> None:
    """``{"urls": [...], "k": K, "resume_k": R, "resume_samples": N, "worker_samples": W}``:
    each measurement takes the next URL (an empty database)."""
    params = json.load(sys.stdin)
    urls = iter(params["urls"])
    k = params["k"]
    run_loop(next(urls), 3)  # warm-up: lazy imports, caches
    per_step = run_loop(next(urls), k) * 1e6 / k
    bytes_url, half_url = next(urls), next(urls)
    run_loop(bytes_url, k)
    run_loop(half_url, k // 2)
    samples = [resume_once(next(urls), params["resume_k"]) for _ in range(params["resume_samples"])]
    result = {
        "us_per_step": per_step,
        "bytes_url": bytes_url,
        "half_url": half_url,
        "resume_ms": statistics.median(w for w, _ in samples) * 1e3,
        "resume_cold_ms": statistics.median(c for _, c in samples) * 1e3,
        **worker_figures(urls, params["resume_k"], params.get("worker_samples", 0)),
        "versions": {
            "langgraph": version("langgraph"),
            "langgraph-checkpoint-postgres": version("langgraph-checkpoint-postgres"),
        },
    }
    print(json.dumps(result))


def worker_figures(urls: Any, k: int, samples: int) -> dict[str, float]:
    """The median of ``samples`` first resumes in new processes, if any."""
    if not samples:
        return {}
    found = [worker_resume(next(urls), k) for _ in range(samples)]
    return {"resume_worker_ms": statistics.median(found) * 1e3}


if __name__ == "__main__":
    if sys.argv[1:2] == ["--first-resume"]:
        print(first_resume(sys.argv[2], int(sys.argv[3])))
    else:
        main()
