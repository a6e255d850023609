"""The LangGraph half of ``tree.py``: runs in LangGraph's own virtual environment.

Reads ``{"n", "max_depth", "fanout", "setup"}`` as JSON on stdin and prints one measurement as
JSON on stdout; with ``"db"``, ``"ledger"`` and ``"resume"`` too, it runs (or resumes) the trees
of tree.py's kill scenario in that database, noting every node it runs in the ledger.

The workload mirrors the kforge side: an agent is six nodes (clarify, questions,
subquestions, execute, check, summary) with the same scripted decisions; its subquestions fan
out with ``Send`` to child agents (the same graph one level down, run inside the ``child`` node
so that it checkpoints in the parent's ``SqliteSaver``), which run beside the agent's own
execute; ``check`` waits for all of them. N trees run at once in one process, each
checkpointed after every superstep (``durability="sync"``) to one SQLite file, in one of three
setups: ``shared`` (a thread per tree, one ``SqliteSaver`` connection that its lock serialises),
``per_thread`` (a thread per tree, each with its own connection and ``SqliteSaver``) or ``async``
(``AsyncSqliteSaver`` on one event loop, the trees as tasks).
"""

from __future__ import annotations

import asyncio
import json
import operator
import os
import resource
import sqlite3
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from importlib.metadata import version
from pathlib import Path
from typing import Annotated, Any, TypedDict

import aiosqlite
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.types import Send

__all__ = ["main"]

SUBQUESTION = "Subquestion {n} on {level} of {prompt}?"
LEVELS = ("cost estimates", "risk factors", "timing plans")
"""The same subquestions as the kforge side's."""
NAMES = ("alpha", "beta", "gamma", "delta")
SETUPS = ("shared", "per_thread", "async")
LEDGER_FLAGS = os.O_WRONLY | os.O_APPEND | os.O_CREAT


class Agent(TypedDict, total=False):
    prompt: str
    depth: int
    subquestions: list[str]
    answer: str
    results: Annotated[list[str], operator.add]


class Steps:
    """Counts the nodes run; with a ledger, also appends ``node prompt`` to it for each, so that
    a node run again after a kill shows as a line written twice."""

    def __init__(self, ledger: str | None = None) -> None:
        self.count = 0
        self._lock = threading.Lock()
        self._ledger = None if ledger is None else os.open(ledger, LEDGER_FLAGS, 0o644)

    def add(self, node: str = "", prompt: str = "") -> None:
        with self._lock:
            self.count += 1
        if self._ledger is not None:
            os.write(self._ledger, f"{node} {prompt}\n".encode())


def decide(kind: str, prompt: str, depth: int, max_depth: int, fanout: int) -> Any:
    """The scripted model's replies, as on the kforge side."""
    if kind == "clarify":
        return {"ambiguous": False, "question": ""}
    if kind == "questions":
        return {"missing": False, "question": ""}
    if kind == "subquestions":
        if depth >= max_depth:
            return {"subquestions": []}
        stem = prompt.rstrip("?")
        level = LEVELS[stem.count("Subquestion") % len(LEVELS)]
        return {
            "subquestions": [
                SUBQUESTION.format(n=NAMES[i], level=level, prompt=stem) for i in range(fanout)
            ]
        }
    return f"Answer about {prompt}."


def rss_kb() -> int:
    with open("/proc/self/statm") as f:
        pages = int(f.read().split()[1])
    return pages * resource.getpagesize() // 1024


def build(
    depth: int,
    max_depth: int,
    fanout: int,
    steps: Steps,
    saver: BaseCheckpointSaver[Any] | None,
    is_async: bool = False,
) -> Any:
    graph = StateGraph(Agent)

    def clarify(state: Agent) -> dict[str, Any]:
        steps.add("clarify", state["prompt"])
        decide("clarify", state["prompt"], depth, max_depth, fanout)
        return {}

    def questions(state: Agent) -> dict[str, Any]:
        steps.add("questions", state["prompt"])
        decide("questions", state["prompt"], depth, max_depth, fanout)
        return {}

    def subquestions(state: Agent) -> dict[str, Any]:
        steps.add("subquestions", state["prompt"])
        found = decide("subquestions", state["prompt"], depth, max_depth, fanout)
        return {"subquestions": found["subquestions"]}

    def execute(state: Agent) -> dict[str, Any]:
        steps.add("execute", state["prompt"])
        return {"answer": decide("answer", state["prompt"], depth, max_depth, fanout)}

    def check(state: Agent) -> dict[str, Any]:
        steps.add("check", state["prompt"])
        return {}

    def summary(state: Agent) -> dict[str, Any]:
        steps.add("summary", state["prompt"])
        parts = [state.get("answer", ""), *state.get("results", [])]
        return {"answer": "\n".join(parts)}

    for name, node in (
        ("clarify", clarify),
        ("questions", questions),
        ("subquestions", subquestions),
        ("execute", execute),
        ("check", check),
        ("summary", summary),
    ):
        graph.add_node(name, node)
    graph.add_edge(START, "clarify")
    graph.add_edge("clarify", "questions")
    graph.add_edge("questions", "subquestions")
    if depth < max_depth:
        below: CompiledStateGraph[Any, Any, Any, Any] = build(
            depth + 1, max_depth, fanout, steps, None, is_async
        )

        def child(task: dict[str, Any]) -> dict[str, Any]:
            out = below.invoke({"prompt": task["prompt"], "depth": depth + 1, "results": []})
            return {"results": [out["answer"]]}

        async def child_async(task: dict[str, Any]) -> dict[str, Any]:
            start = {"prompt": task["prompt"], "depth": depth + 1, "results": []}
            out = await below.ainvoke(start)
            return {"results": [out["answer"]]}

        def fan_out(state: Agent) -> list[Send]:
            sends = [Send("child", {"prompt": q}) for q in state.get("subquestions", [])]
            return [*sends, Send("execute", state)]

        graph.add_node("child", child_async if is_async else child)
        graph.add_conditional_edges("subquestions", fan_out, ["child", "execute"])
        graph.add_edge(["child", "execute"], "check")
    else:
        graph.add_edge("subquestions", "execute")
        graph.add_edge("execute", "check")
    graph.add_edge("check", "summary")
    graph.add_edge("summary", END)
    return graph.compile(checkpointer=saver)


def connect(path: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(str(path), check_same_thread=False)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=NORMAL")
    conn.execute("PRAGMA busy_timeout=30000")  # connections of other threads write too
    return conn


def _start(i: int) -> tuple[dict[str, Any], dict[str, Any]]:
    config = {"configurable": {"thread_id": f"tree-{i}"}}
    return {"prompt": f"Request number {i}", "depth": 0, "results": []}, config


def run_trees(
    path: Path,
    n: int,
    max_depth: int,
    fanout: int,
    setup: str,
    ledger: str | None = None,
    resume: bool = False,
) -> dict[str, Any]:
    """Run N trees to their end; with ``resume``, continue each thread from its last checkpoint
    (as after a kill) instead of starting it."""
    if setup == "async":
        return asyncio.run(run_trees_async(path, n, max_depth, fanout, ledger, resume))
    steps = Steps(ledger)
    conns = [connect(path) for _ in range(n if setup == "per_thread" else 1)]
    savers = [SqliteSaver(conn) for conn in conns]
    savers[0].setup()
    # connections and graphs are made before the clock starts, as the shared setup's are
    graphs = [build(0, max_depth, fanout, steps, saver) for saver in savers]

    def one(i: int) -> str:
        start, config = _start(i)
        out = graphs[i % len(graphs)].invoke(_input(start, resume), config, durability="sync")
        return str(out["answer"])

    started, cpu = time.perf_counter(), time.process_time()
    with ThreadPoolExecutor(max_workers=n) as pool:
        answers = list(pool.map(one, range(n)))
    wall, cpu = time.perf_counter() - started, time.process_time() - cpu
    for conn in conns:
        conn.close()
    return {"wall_s": wall, "cpu_s": cpu, "steps": steps.count, "answers": len(answers)}


def _input(start: dict[str, Any], resume: bool) -> dict[str, Any] | None:
    return None if resume else start  # None: go on from the thread's last checkpoint


async def run_trees_async(
    path: Path, n: int, max_depth: int, fanout: int, ledger: str | None, resume: bool
) -> dict[str, Any]:
    conn = await aiosqlite.connect(str(path))
    await conn.execute("PRAGMA journal_mode=WAL")
    await conn.execute("PRAGMA synchronous=NORMAL")
    saver = AsyncSqliteSaver(conn)
    await saver.setup()
    steps = Steps(ledger)
    graph = build(0, max_depth, fanout, steps, saver, is_async=True)

    async def one(i: int) -> str:
        start, config = _start(i)
        out = await graph.ainvoke(_input(start, resume), config, durability="sync")
        return str(out["answer"])

    started, cpu = time.perf_counter(), time.process_time()
    answers = await asyncio.gather(*(one(i) for i in range(n)))
    wall, cpu = time.perf_counter() - started, time.process_time() - cpu
    await conn.close()
    return {"wall_s": wall, "cpu_s": cpu, "steps": steps.count, "answers": len(answers)}


def main() -> None:
    params = json.loads(sys.stdin.read())
    n, max_depth, fanout = int(params["n"]), int(params["max_depth"]), int(params["fanout"])
    setup = str(params.get("setup", "shared"))
    if setup not in SETUPS:
        raise SystemExit(f"setup must be one of {', '.join(SETUPS)} (got {setup!r})")
    if "db" in params:  # tree.py's kill scenario: no warm-up, its database and ledger
        db, ledger, resume = Path(params["db"]), str(params["ledger"]), bool(params["resume"])
        print(json.dumps(run_trees(db, n, max_depth, fanout, setup, ledger, resume)))
        return
    with tempfile.TemporaryDirectory() as tmp:
        run_trees(Path(tmp) / "warmup.db", 1, max_depth, fanout, setup)
        baseline = rss_kb()
        measured = run_trees(Path(tmp) / "trees.db", n, max_depth, fanout, setup)
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    measured.update(
        side="langgraph",
        version=version("langgraph"),
        n=n,
        setup=setup,
        baseline_rss_kb=baseline,
        peak_rss_kb=peak,
    )
    print(json.dumps(measured))


if __name__ == "__main__":
    main()
