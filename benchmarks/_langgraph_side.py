"""The LangGraph half of ``runtime_vs_langgraph.py``: runs in LangGraph's own virtual environment.

Reads its parameters as JSON on stdin and prints one round of measurements as JSON on stdout.
The workload mirrors the kforge side: an agent node whose scripted "model" asks for ``add`` K
times, a ``ToolNode`` that runs it, ``MessagesState`` as the state, ``SqliteSaver`` on a file
database.
"""

from __future__ import annotations

import functools
import json
import platform
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from importlib.metadata import version
from pathlib import Path
from typing import Annotated, Any, TypedDict

from langchain_core.messages import AIMessage, AnyMessage, HumanMessage, ToolMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import tool
from langgraph.channels import DeltaChannel
from langgraph.checkpoint.base import (
    BaseCheckpointSaver,
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
)
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.graph.message import add_messages
from langgraph.graph.state import CompiledStateGraph
from langgraph.prebuilt import ToolNode, tools_condition
from langgraph.types import Command, Durability, interrupt

__all__ = ["main"]

PROMPT = "Add one, K times, with the add tool."
QUESTION = "Halfway there. Keep going?"
ANSWER = "continue"


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def _add_batch(state: list[AnyMessage], writes: Sequence[Any]) -> Any:
    return functools.reduce(add_messages, writes, state)  # type: ignore[arg-type]


class DeltaMessagesState(TypedDict):
    """MessagesState with LangGraph 1.2's (beta) DeltaChannel: checkpoints store deltas."""

    messages: Annotated[list[AnyMessage], DeltaChannel(_add_batch)]


def scripted_reply(done: int, k: int) -> AIMessage:
    """What the scripted model says after ``done`` tool calls (same script as the kforge side)."""
    if done < k:
        call = {"name": "add", "args": {"a": done, "b": 1}, "id": f"call_{done}"}
        return AIMessage(content="", tool_calls=[call])
    return AIMessage(content=f"The total is {k}.")


def build_graph(
    k: int,
    pause_at: int | None,
    saver: BaseCheckpointSaver[Any] | None,
    schema: type = MessagesState,
) -> CompiledStateGraph[Any, Any, Any, Any]:
    def agent(state: Any) -> dict[str, list[AnyMessage]]:  # Any: no input schema to infer
        last = state["messages"][-1]
        done = (
            int(last.tool_call_id.removeprefix("call_")) + 1 if isinstance(last, ToolMessage) else 0
        )
        new: list[AnyMessage] = []
        if done == pause_at:
            new.append(HumanMessage(content=str(interrupt(QUESTION))))
        new.append(scripted_reply(done, k))
        return {"messages": new}

    builder: StateGraph[Any, Any, Any, Any] = StateGraph(schema)
    builder.add_node("agent", agent)
    builder.add_node("tools", ToolNode([add]))
    builder.add_edge(START, "agent")
    builder.add_conditional_edges("agent", tools_condition)
    builder.add_edge("tools", "agent")
    return builder.compile(checkpointer=saver)


def timing_saver(base: type[Any]) -> type[Any]:
    """``base`` (a checkpoint saver) noting when the first checkpoint holding a tool result has
    been committed, in ``step_committed_at``."""

    class StepTimingSaver(base):  # type: ignore[misc,valid-type]
        _tool_written = False
        step_committed_at: float | None = None

        def put_writes(
            self,
            config: RunnableConfig,
            writes: Sequence[tuple[str, Any]],
            task_id: str,
            task_path: str = "",
        ) -> None:
            super().put_writes(config, writes, task_id, task_path)
            for channel, value in writes:
                values = value if isinstance(value, list) else [value]
                if channel == "messages" and any(isinstance(v, ToolMessage) for v in values):
                    self._tool_written = True

        def put(
            self,
            config: RunnableConfig,
            checkpoint: Checkpoint,
            metadata: CheckpointMetadata,
            new_versions: ChannelVersions,
        ) -> RunnableConfig:
            saved: RunnableConfig = super().put(config, checkpoint, metadata, new_versions)
            if self._tool_written and self.step_committed_at is None:
                self.step_committed_at = time.perf_counter()
            return saved

    return StepTimingSaver


StepTimingSaver = timing_saver(SqliteSaver)


def connect(path: Path, synchronous: str) -> sqlite3.Connection:
    conn = sqlite3.connect(str(path), check_same_thread=False)
    conn.execute(f"PRAGMA synchronous={synchronous}")
    return conn


def database_bytes(path: Path) -> int:
    """Size after folding the WAL into the file (same method as the kforge side)."""
    conn = sqlite3.connect(str(path))
    try:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        pages = conn.execute("PRAGMA page_count").fetchone()[0]
        return int(pages * conn.execute("PRAGMA page_size").fetchone()[0])
    finally:
        conn.close()


def _config(k: int) -> RunnableConfig:
    return RunnableConfig(configurable={"thread_id": "bench"}, recursion_limit=2 * k + 10)


def run_loop(
    path: Path, k: int, synchronous: str, durability: Durability, schema: type = MessagesState
) -> tuple[float, float]:
    """(wall, CPU) seconds for one K-step run from invoke to its final answer."""
    conn = connect(path, synchronous)
    saver = SqliteSaver(conn)
    saver.setup()
    graph = build_graph(k, None, saver, schema)
    config = _config(k)
    started, cpu = time.perf_counter(), time.process_time()
    out = graph.invoke({"messages": [HumanMessage(content=PROMPT)]}, config, durability=durability)
    elapsed = time.perf_counter() - started, time.process_time() - cpu
    conn.close()
    _check_answer(out, k)
    return elapsed


def run_loop_without_checkpointer(k: int) -> tuple[float, float]:
    """(wall, CPU) seconds for one K-step run with no checkpointer at all: nothing is durable, the
    state lives in memory only (what LangGraph costs when it commits nothing)."""
    graph = build_graph(k, None, None)
    config = RunnableConfig(recursion_limit=2 * k + 10)
    started, cpu = time.perf_counter(), time.process_time()
    out = graph.invoke({"messages": [HumanMessage(content=PROMPT)]}, config)
    elapsed = time.perf_counter() - started, time.process_time() - cpu
    _check_answer(out, k)
    return elapsed


def resume_once(path: Path, k: int, synchronous: str) -> tuple[float, float]:
    """(warm, cold) seconds from resuming a paused run until its next step is committed.

    Warm starts at ``invoke(Command(resume=...))``; cold also counts opening the connection
    and compiling the graph.
    """
    pause_at = k // 2
    config = _config(k)
    conn = connect(path, synchronous)
    saver = SqliteSaver(conn)
    saver.setup()
    out = build_graph(k, pause_at, saver).invoke(
        {"messages": [HumanMessage(content=PROMPT)]}, config, durability="sync"
    )
    conn.close()
    if "__interrupt__" not in out:
        raise RuntimeError("the LangGraph run did not pause for the question")
    cold_start = time.perf_counter()
    conn = connect(path, synchronous)
    timing = StepTimingSaver(conn)
    timing.setup()
    graph = build_graph(k, pause_at, timing)
    started = time.perf_counter()
    out = graph.invoke(Command(resume=ANSWER), config, durability="sync")
    conn.close()
    _check_answer(out, k)
    if timing.step_committed_at is None:
        raise RuntimeError("no checkpoint with a tool result was committed after the resume")
    return timing.step_committed_at - started, timing.step_committed_at - cold_start


def _check_answer(out: dict[str, Any], k: int) -> None:
    last = out["messages"][-1]
    if last.content != f"The total is {k}.":
        raise RuntimeError(f"unexpected final message from the LangGraph run: {last!r:.200}")


def serve() -> None:
    """Paired resumes: one JSON request per stdin line, one JSON sample per stdout line.

    ``{"db": path, "k": K, "synchronous": level}`` → ``{"warm": s, "cold": s}``. The harness
    alternates these with kforge resumes, so that both sides of a pair meet the same machine.
    """
    with tempfile.TemporaryDirectory() as tmp:
        run_loop(Path(tmp) / "warm-up.db", 3, "NORMAL", "sync")  # lazy imports, caches
        resume_once(Path(tmp) / "warm-up-resume.db", 4, "NORMAL")
    print(json.dumps({"ready": True}), flush=True)
    for line in sys.stdin:
        request = json.loads(line)
        warm, cold = resume_once(Path(request["db"]), request["k"], request["synchronous"])
        print(json.dumps({"warm": warm, "cold": cold}), flush=True)


def main() -> None:
    if sys.argv[1:] == ["--serve"]:
        serve()
        return
    params = json.load(sys.stdin)
    db_dir = Path(params["db_dir"])
    ks: list[int] = params["ks"]
    levels: list[str] = params["synchronous"]
    counter = iter(range(1_000_000))

    def fresh_db() -> Path:
        return db_dir / f"langgraph-{next(counter)}.db"

    run_loop(fresh_db(), 3, levels[0], "sync")  # warm-up: lazy imports, caches
    run_loop_without_checkpointer(3)
    no_checkpointer = {k: run_loop_without_checkpointer(k) for k in ks}
    result: dict[str, Any] = {
        "per_step_no_checkpointer_us": {
            str(k): w * 1e6 / k for k, (w, _) in no_checkpointer.items()
        },
        "per_step_no_checkpointer_cpu_us": {
            str(k): c * 1e6 / k for k, (_, c) in no_checkpointer.items()
        },
        "per_step_us": {},
        "per_step_cpu_us": {},
        "per_step_async_us": {},
        "resume_ms": {},
    }
    for level in levels:
        runs = {k: run_loop(fresh_db(), k, level, "sync") for k in ks}
        result["per_step_us"][level] = {str(k): w * 1e6 / k for k, (w, _) in runs.items()}
        result["per_step_cpu_us"][level] = {str(k): c * 1e6 / k for k, (_, c) in runs.items()}
        result["per_step_async_us"][level] = {
            str(k): run_loop(fresh_db(), k, level, "async")[0] * 1e6 / k for k in ks
        }
        samples = [
            resume_once(fresh_db(), params["resume_k"], level)
            for _ in range(params.get("resume_samples", 1))
        ]
        if samples:  # none when the harness pairs resumes with kforge's (serve)
            result["resume_ms"][level] = {
                "warm": statistics.median(w for w, _ in samples) * 1e3,
                "cold": statistics.median(c for _, c in samples) * 1e3,
            }
    result["bytes"], result["bytes_delta_channel"] = {}, {}
    for k in ks:
        path = fresh_db()
        run_loop(path, k, levels[0], "sync")
        result["bytes"][str(k)] = database_bytes(path)
        path = fresh_db()
        run_loop(path, k, levels[0], "sync", DeltaMessagesState)
        result["bytes_delta_channel"][str(k)] = database_bytes(path)
    result["versions"] = {
        "langgraph": version("langgraph"),
        "langgraph-checkpoint-sqlite": version("langgraph-checkpoint-sqlite"),
        "langchain-core": version("langchain-core"),
        "python": platform.python_version(),
        "sqlite": sqlite3.sqlite_version,
    }
    json.dump(result, sys.stdout)


if __name__ == "__main__":
    main()
