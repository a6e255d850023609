"""kforge's Runtime vs LangGraph 1.2 + SqliteSaver on the same K-step tool loop.

Both sides declare that the message history only grows: kforge's agent keeps it in an
``AppendOnlyList``, LangGraph's graph uses ``MessagesState``, whose ``messages`` channel is
reduced by ``add_messages``.

Measures µs per step with durable SQLite commits (and against LangGraph with no checkpointer at
all, which commits nothing), database bytes after K steps, resume latency after a pause for a
human answer, and import time. LangGraph is never a kforge dependency: its
half runs in ``_langgraph_side.py`` under a virtual environment this script creates beside it.

    python benchmarks/runtime_vs_langgraph.py --json results.json
    python benchmarks/runtime_vs_langgraph.py --skip-langgraph --k 5
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import kforge
from kforge.engine.agent import StepOutcome
from kforge.engine.append_only import AppendOnlyList
from kforge.engine.limits import RunLimits
from kforge.engine.registry import AgentRegistry
from kforge.engine.run_context import RunContext
from kforge.llm.testing.scripted import ScriptedModel, ScriptedReply
from kforge.llm.types import Message, ToolCall
from kforge.runtime.runtime import Runtime
from kforge.store.base import RunStatus, Snapshot, StepRecord
from kforge.store.lease import Lease
from kforge.store.sqlite import SQLiteStore
from kforge.tools import execute_tool, tool

HERE = Path(__file__).resolve().parent
LANGGRAPH_SIDE = HERE / "_langgraph_side.py"
LANGGRAPH_VENV = HERE / ".venv-langgraph"
LANGGRAPH_REQUIREMENTS = ("langgraph>=1.2,<1.3", "langgraph-checkpoint-sqlite")
PROMPT = "Add one, K times, with the add tool."
QUESTION = "Halfway there. Keep going?"
ANSWER = "continue"
AGENT_TYPE = "bench.add_loop"
LEVELS = ("NORMAL", "FULL")
HEADLINE_LEVEL = "NORMAL"
IMPORTS = {
    "kforge_import_s": ("kforge", "import kforge"),
    "kforge_runtime_import_s": ("kforge", "from kforge import Runtime"),
    "langgraph_import_s": ("langgraph", "from langgraph.graph import StateGraph"),
}


@tool(read_only=True)
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


ADD_SPEC = add.to_spec()


class AddLoopAgent:
    """Each step: one model call, then the ``add`` call it asked for; the history is state,
    declared append-only (as LangGraph's ``MessagesState`` declares it with ``add_messages``)."""

    agent_type = AGENT_TYPE

    def __init__(self, args: dict[str, Any]) -> None:
        self.pause_at: int | None = args.get("pause_at")
        self.messages = AppendOnlyList([Message.user(PROMPT)])
        self.tool_calls = 0

    def _append(self, message: Message) -> None:
        self.messages.append(message)

    async def step(self, ctx: RunContext) -> StepOutcome:
        if self.tool_calls == self.pause_at:
            answer = await ctx.ask(QUESTION, options=(ANSWER, "stop"))
            self._append(Message.user(str(answer["action"])))
        response = await ctx.complete(self.messages, tools=(ADD_SPEC,), purpose="loop")
        self._append(Message.assistant(response.text, response.tool_calls))
        if not response.tool_calls:
            return StepOutcome(True, {"answer": response.text}, response.text)
        for call in response.tool_calls:
            result = await execute_tool(ctx, add, call.arguments)
            self._append(Message.tool(result.text, call.id, call.name))
            self.tool_calls += 1
        return StepOutcome()

    def get_state(self) -> dict[str, Any]:
        return {"messages": self.messages, "tool_calls": self.tool_calls}

    def restore_state(self, state: dict[str, Any]) -> None:
        self.messages = AppendOnlyList.of_messages(state["messages"])
        self.tool_calls = int(state["tool_calls"])

    def partial_result(self) -> dict[str, Any]:
        return {"tool_calls": self.tool_calls}


def step_timing(base: type[Any]) -> type[Any]:
    """``base`` (a store class) noting when the first step record has been committed, in
    ``step_committed_at``."""

    class StepTimingStore(base):  # type: ignore[misc,valid-type]
        step_committed_at: float | None = None

        def commit(
            self,
            run_id: str,
            frames: Sequence[Any],
            *,
            step: StepRecord | None = None,
            snapshot: Snapshot | None = None,
            run_fields: dict[str, Any] | None = None,
            lease: Lease | None = None,
            repeatable: bool = False,
        ) -> None:
            super().commit(
                run_id,
                frames,
                step=step,
                snapshot=snapshot,
                run_fields=run_fields,
                lease=lease,
                repeatable=repeatable,
            )
            if step is not None and self.step_committed_at is None:
                self.step_committed_at = time.perf_counter()

    return StepTimingStore


StepTimingStore = step_timing(SQLiteStore)


def script(k: int) -> list[ScriptedReply]:
    """The model's replies: K calls to ``add``, then the answer (same as the LangGraph side)."""
    calls: list[ScriptedReply] = [ToolCall("add", {"a": i, "b": 1}, f"call_{i}") for i in range(k)]
    return [*calls, f"The total is {k}."]


def database_bytes(path: Path) -> int:
    """Size after folding the WAL into the file (same method as the LangGraph side)."""
    conn = sqlite3.connect(str(path))
    try:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        pages = conn.execute("PRAGMA page_count").fetchone()[0]
        return int(pages * conn.execute("PRAGMA page_size").fetchone()[0])
    finally:
        conn.close()


class KforgeBench:
    def __init__(self, db_dir: Path) -> None:
        self.db_dir = db_dir
        self.registry = AgentRegistry()
        self.registry.register(AGENT_TYPE, AddLoopAgent)
        self._count = 0

    def fresh_db(self) -> Path:
        self._count += 1
        return self.db_dir / f"kforge-{self._count}.db"

    async def run_loop(self, path: Path, k: int, synchronous: str) -> tuple[float, float]:
        """(wall, CPU) seconds for one K-step run from ``start`` to its final answer."""
        model = ScriptedModel(script(k))
        runtime = Runtime(
            SQLiteStore(path, synchronous=synchronous), model=model, registry=self.registry
        )
        started, cpu = time.perf_counter(), time.process_time()
        run = await runtime.run(AGENT_TYPE, {}, limits=_limits(k))
        elapsed = time.perf_counter() - started, time.process_time() - cpu
        await runtime.aclose()
        _check_completed(run.status, run.result, k)
        model.assert_consumed()
        return elapsed

    async def resume_once(self, path: Path, k: int, synchronous: str) -> tuple[float, float]:
        """(warm, cold) seconds from resuming a paused run in a fresh Runtime until its next step
        is committed. Warm starts at ``resume``; cold also counts opening the store."""
        pause_at = k // 2
        replies = script(k)
        first = Runtime(
            SQLiteStore(path, synchronous=synchronous),
            model=ScriptedModel(replies[:pause_at]),
            registry=self.registry,
        )
        run = await first.run(AGENT_TYPE, {"pause_at": pause_at}, limits=_limits(k))
        await first.aclose()
        if run.status != RunStatus.AWAITING_USER:
            raise RuntimeError(f"the kforge run did not pause for the question ({run.status})")
        model = ScriptedModel(replies[pause_at:])
        cold_start = time.perf_counter()
        store = StepTimingStore(path, synchronous=synchronous)
        runtime = Runtime(store, model=model, registry=self.registry)
        started = time.perf_counter()
        await runtime.resume(run.id, ANSWER)
        done = await runtime.wait(run.id)
        await runtime.aclose()
        _check_completed(done.status, done.result, k)
        model.assert_consumed()
        if store.step_committed_at is None:
            raise RuntimeError("no step was committed after the resume")
        return store.step_committed_at - started, store.step_committed_at - cold_start

    async def measure(self, ks: list[int], resume_k: int, resume_samples: int) -> dict[str, Any]:
        """One round: one sample of every kforge metric (same shape as the LangGraph side's);
        the resume latency is the median of ``resume_samples`` resumes."""
        await self.run_loop(self.fresh_db(), 3, HEADLINE_LEVEL)  # warm-up: lazy imports, caches
        result: dict[str, Any] = {"per_step_us": {}, "per_step_cpu_us": {}, "resume_ms": {}}
        for level in LEVELS:
            runs = {k: await self.run_loop(self.fresh_db(), k, level) for k in ks}
            result["per_step_us"][level] = {str(k): w * 1e6 / k for k, (w, _) in runs.items()}
            result["per_step_cpu_us"][level] = {str(k): c * 1e6 / k for k, (_, c) in runs.items()}
            samples = [
                await self.resume_once(self.fresh_db(), resume_k, level)
                for _ in range(resume_samples)
            ]
            if samples:  # none when resumes are paired with LangGraph's (paired_resumes)
                result["resume_ms"][level] = resume_summary(samples)
        result["bytes"] = {}
        for k in ks:
            path = self.fresh_db()
            await self.run_loop(path, k, HEADLINE_LEVEL)
            result["bytes"][str(k)] = database_bytes(path)
        return result


def resume_summary(samples: Sequence[tuple[float, float]]) -> dict[str, float]:
    """Median warm and cold milliseconds of (warm, cold) second pairs."""
    return {
        "warm": statistics.median(w for w, _ in samples) * 1e3,
        "cold": statistics.median(c for _, c in samples) * 1e3,
    }


class LangGraphResumer:
    """The LangGraph side kept running (``--serve``) to take resume samples on request."""

    def __init__(self, python: Path) -> None:
        self._proc = subprocess.Popen(
            [str(python), str(LANGGRAPH_SIDE), "--serve"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        self._reply()  # ready, after its warm-up

    def _reply(self) -> dict[str, Any]:
        assert self._proc.stdout is not None
        line = self._proc.stdout.readline()
        if not line:
            self._proc.wait()
            stderr = self._proc.stderr.read() if self._proc.stderr else ""
            raise RuntimeError(f"the LangGraph side failed:\n{stderr[-4000:]}")
        reply: dict[str, Any] = json.loads(line)
        return reply

    def resume_once(self, path: Path, k: int, synchronous: str) -> tuple[float, float]:
        assert self._proc.stdin is not None
        request = {"db": str(path), "k": k, "synchronous": synchronous}
        self._proc.stdin.write(json.dumps(request) + "\n")
        self._proc.stdin.flush()
        reply = self._reply()
        return float(reply["warm"]), float(reply["cold"])

    def close(self) -> None:
        if self._proc.stdin is not None:
            self._proc.stdin.close()
        self._proc.wait(timeout=60)


async def paired_resumes(
    kforge: KforgeBench,
    langgraph: LangGraphResumer,
    db_dir: Path,
    resume_k: int,
    samples: int,
) -> tuple[dict[str, Any], dict[str, Any], list[float]]:
    """Resume samples taken in pairs, one kforge and one LangGraph, alternating which goes
    first: both halves of a pair meet the same machine. Returns each side's per-level medians
    and every pair's warm ratio (kforge / LangGraph) at the headline level."""
    kf: dict[str, list[tuple[float, float]]] = {level: [] for level in LEVELS}
    lg: dict[str, list[tuple[float, float]]] = {level: [] for level in LEVELS}
    ratios: list[float] = []
    for level in LEVELS:
        for pair in range(samples):
            order = ("kforge", "langgraph") if pair % 2 == 0 else ("langgraph", "kforge")
            for side in order:
                settle_disk()
                if side == "kforge":
                    kf[level].append(await kforge.resume_once(kforge.fresh_db(), resume_k, level))
                else:
                    path = db_dir / f"langgraph-resume-{level}-{pair}.db"
                    lg[level].append(langgraph.resume_once(path, resume_k, level))
            if level == HEADLINE_LEVEL:
                ratios.append(kf[level][-1][0] / lg[level][-1][0])
    return (
        {level: resume_summary(kf[level]) for level in LEVELS},
        {level: resume_summary(lg[level]) for level in LEVELS},
        ratios,
    )


def median_of_rounds(rounds: list[Any]) -> Any:
    """Merge same-shaped results: the median of every number, the first of anything else."""
    first = rounds[0]
    if isinstance(first, dict):
        return {key: median_of_rounds([r[key] for r in rounds]) for key in first}
    if isinstance(first, int | float) and not isinstance(first, bool):
        return (
            statistics.median_low(rounds) if isinstance(first, int) else statistics.median(rounds)
        )
    return first


def _limits(k: int) -> RunLimits:
    return RunLimits(max_steps=k + 10)


def _check_completed(status: RunStatus, result: dict[str, Any] | None, k: int) -> None:
    if status != RunStatus.COMPLETED or (result or {}).get("answer") != f"The total is {k}.":
        raise RuntimeError(f"the kforge run ended {status.value} with {result!r:.200}")


# -- the LangGraph side ----------------------------------------------------------------------


def _venv_python(venv: Path) -> Path:
    return venv / ("Scripts/python.exe" if os.name == "nt" else "bin/python")


def ensure_langgraph_env(venv: Path) -> Path:
    """The interpreter of a virtual environment holding LangGraph 1.2; created when missing."""
    python = _venv_python(venv)
    check = (
        "import langgraph.checkpoint.sqlite, importlib.metadata as m; print(m.version('langgraph'))"
    )
    if python.exists():
        found = subprocess.run([str(python), "-c", check], capture_output=True, text=True)
        if found.returncode == 0 and found.stdout.strip().startswith("1.2."):
            return python
    else:
        print(f"creating {venv} for the LangGraph side ...", file=sys.stderr)
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    print(f"installing {' '.join(LANGGRAPH_REQUIREMENTS)} ...", file=sys.stderr)
    subprocess.run(
        [str(python), "-m", "pip", "install", "--quiet", *LANGGRAPH_REQUIREMENTS],
        check=True,
        stdout=sys.stderr,
    )
    return python


def run_langgraph_side(python: Path, params: dict[str, Any]) -> dict[str, Any]:
    done = subprocess.run(
        [str(python), str(LANGGRAPH_SIDE)],
        input=json.dumps(params),
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        raise RuntimeError(f"the LangGraph side failed:\n{done.stderr[-4000:]}")
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def settle_disk() -> None:
    """Write back what the previous side left dirty, so its write-back does not land on the next
    side's fsyncs (LangGraph's round leaves about 100 MB of database pages behind)."""
    if hasattr(os, "sync"):
        os.sync()


def import_seconds(python: Path | str, statement: str, runs: int) -> float:
    """Median seconds for ``statement`` in fresh isolated interpreters (startup not counted)."""
    code = f"import time; t = time.perf_counter(); {statement}; print(time.perf_counter() - t)"

    def once() -> float:
        done = subprocess.run(
            [str(python), "-I", "-c", code], capture_output=True, text=True, check=True
        )
        return float(done.stdout)

    once()  # the first run may write bytecode caches
    return statistics.median(once() for _ in range(runs))


# -- report ----------------------------------------------------------------------------------

TARGETS = {
    "us_per_step_vs_no_checkpointer": (
        "kforge_us_per_step",
        "langgraph_no_checkpointer_us_per_step",
        1.0,
    ),
    "us_per_step": ("kforge_us_per_step", "langgraph_us_per_step", 0.06),
    "bytes": ("kforge_bytes_k{kmax}", "langgraph_bytes_k{kmax}", 1 / 10),
    "resume": ("kforge_resume_ms", "langgraph_resume_ms", 0.10),
    "import": ("kforge_import_s", "langgraph_import_s", 1 / 3),
}
"""Issue targets: kforge / LangGraph must not exceed the limit."""


def _ratio(a: float | None, b: float | None) -> float | None:
    return None if a is None or not b else a / b


def summarize(
    kf: dict[str, Any],
    lg: dict[str, Any] | None,
    imports: dict[str, float],
    settings: dict[str, Any],
) -> dict[str, Any]:
    """The flat result: headline keys, per-level and per-K details, ratios and settings."""
    ks = sorted(int(k) for k in kf["bytes"])
    # storage growth is judged between the two largest K: at a small K the file is mostly the
    # pages every database starts with, which would make any growth look linear
    kmin, kmax = (ks[-2] if len(ks) > 1 else ks[0]), ks[-1]
    sides = [("kforge", kf)] if lg is None else [("kforge", kf), ("langgraph", lg)]
    out: dict[str, Any] = {}
    for name, side in sides:
        out[f"{name}_us_per_step"] = side["per_step_us"][HEADLINE_LEVEL][str(kmax)]
        out[f"{name}_resume_ms"] = side["resume_ms"][HEADLINE_LEVEL]["warm"]
        out[f"{name}_resume_cold_ms"] = side["resume_ms"][HEADLINE_LEVEL]["cold"]
        for k in ks:
            out[f"{name}_bytes_k{k}"] = side["bytes"][str(k)]
        for level in LEVELS:
            for k in ks:
                low = level.lower()
                out[f"{name}_us_per_step_{low}_k{k}"] = side["per_step_us"][level][str(k)]
                out[f"{name}_cpu_us_per_step_{low}_k{k}"] = side["per_step_cpu_us"][level][str(k)]
            out[f"{name}_resume_ms_{level.lower()}"] = side["resume_ms"][level]["warm"]
    out.update(imports)
    out["kforge_bytes_growth"] = kf["bytes"][str(kmax)] / kf["bytes"][str(kmin)]
    targets: dict[str, Any] = {
        "bytes_growth": {
            "value": out["kforge_bytes_growth"],
            "limit": 1.1 * kmax / kmin,
            "pass": out["kforge_bytes_growth"] <= 1.1 * kmax / kmin,
        }
    }
    if lg is not None:
        for level in LEVELS:
            for k in ks:
                key = f"langgraph_async_us_per_step_{level.lower()}_k{k}"
                out[key] = lg["per_step_async_us"][level][str(k)]
        for k in ks:
            out[f"langgraph_delta_channel_bytes_k{k}"] = lg["bytes_delta_channel"][str(k)]
            nocp = lg["per_step_no_checkpointer_us"][str(k)]
            out[f"langgraph_no_checkpointer_us_per_step_k{k}"] = nocp
            nocp_cpu = lg["per_step_no_checkpointer_cpu_us"][str(k)]
            out[f"langgraph_no_checkpointer_cpu_us_per_step_k{k}"] = nocp_cpu
        out["langgraph_no_checkpointer_us_per_step"] = out[
            f"langgraph_no_checkpointer_us_per_step_k{kmax}"
        ]
        for name, (kkey, lkey, limit) in TARGETS.items():
            ratio = _ratio(out[kkey.format(kmax=kmax)], out[lkey.format(kmax=kmax)])
            out[f"ratio_{name}"] = ratio
            targets[name] = {
                "value": ratio,
                "limit": limit,
                "pass": ratio is not None and ratio <= limit,
            }
        settings["langgraph_versions"] = lg["versions"]
    out["targets"] = targets
    out["settings"] = settings
    return out


Row = tuple[str, str, str, str | None]
"""(label, kforge key, LangGraph key, target name)."""


def _rows(out: dict[str, Any]) -> list[Row]:
    """The table's rows; the first five are the issue's targets."""
    ks, lg = out["settings"]["k"], "langgraph_us_per_step" in out
    kmax, head = ks[-1], HEADLINE_LEVEL

    def same(label: str, suffix: str, target: str | None = None) -> Row:
        return (label, f"kforge_{suffix}", f"langgraph_{suffix}", target)

    rows = [
        (
            f"µs/step, {head}, K={kmax}, LangGraph no checkpointer",
            "kforge_us_per_step",
            "langgraph_no_checkpointer_us_per_step",
            "us_per_step_vs_no_checkpointer",
        ),
        same(f"µs/step, {head}, K={kmax}", "us_per_step", "us_per_step"),
        same(f"DB bytes after K={kmax}", f"bytes_k{kmax}", "bytes"),
        same(f"resume → next step committed, ms, {head}", "resume_ms", "resume"),
        same("import s: import kforge | StateGraph", "import_s", "import"),
    ]
    for level in LEVELS:
        low = level.lower()
        for k in ks:
            if (level, k) != (head, kmax):
                rows.append(same(f"µs/step, {level}, K={k}", f"us_per_step_{low}_k{k}"))
        for k in ks if lg and level == head else ():
            if k != kmax:
                label = f"µs/step, {level}, K={k}, LangGraph no checkpointer"
                rows.append(
                    (
                        label,
                        f"kforge_us_per_step_{low}_k{k}",
                        f"langgraph_no_checkpointer_us_per_step_k{k}",
                        None,
                    )
                )
        for k in ks if lg else ():
            label = f"µs/step, {level}, K={k}, LangGraph durability=async"
            rows.append(
                (
                    label,
                    f"kforge_us_per_step_{low}_k{k}",
                    f"langgraph_async_us_per_step_{low}_k{k}",
                    None,
                )
            )
    for level in LEVELS:
        for k in ks:
            label = f"CPU µs/step (all threads), {level}, K={k}"
            rows.append(same(label, f"cpu_us_per_step_{level.lower()}_k{k}"))
    for k in ks if lg else ():
        rows.append(
            (
                f"CPU µs/step, {head}, K={k}, LG no checkpointer",
                f"kforge_cpu_us_per_step_{head.lower()}_k{k}",
                f"langgraph_no_checkpointer_cpu_us_per_step_k{k}",
                None,
            )
        )
    rows += [same(f"DB bytes after K={k}", f"bytes_k{k}") for k in ks[:-1]]
    if lg:
        label = f"DB bytes K={kmax}, LangGraph DeltaChannel (beta)"
        rows.append(
            (label, f"kforge_bytes_k{kmax}", f"langgraph_delta_channel_bytes_k{kmax}", None)
        )
    rows += [
        same("resume ms, FULL", "resume_ms_full"),
        same("resume ms incl. opening the DB", "resume_cold_ms"),
        (
            "import s: from kforge import Runtime | StateGraph",
            "kforge_runtime_import_s",
            "langgraph_import_s",
            None,
        ),
    ]
    return rows


def print_table(out: dict[str, Any]) -> None:
    header = f"{'metric':<50} {'kforge':>11} {'LangGraph':>11} {'ratio':>7}  target"
    rule = "-" * (len(header) + 8)
    print(header, rule, sep="\n")
    for index, (label, kkey, lkey, target) in enumerate(_rows(out)):
        if index == len(TARGETS):
            print(rule)
        kv, lv = out.get(kkey), out.get(lkey)
        ratio = _ratio(kv, lv)
        goal = ""
        if target is not None:
            limit = TARGETS[target][2]
            verdict = "" if ratio is None else ("pass" if ratio <= limit else "MISS")
            goal = f"≤ {limit:.3g}  {verdict}"
        shown = "—" if ratio is None else f"{ratio:.3f}"
        print(f"{label:<50} {_fmt(kv):>11} {_fmt(lv):>11} {shown:>7}  {goal}")
    ks, growth = out["settings"]["k"], out["targets"]["bytes_growth"]
    label = f"kforge bytes K={ks[-1]} / bytes K={ks[-2] if len(ks) > 1 else ks[0]}"
    verdict = "pass" if growth["pass"] else "MISS"
    print(f"{label:<50} {growth['value']:>11.3f} {'':>19}  ≤ {growth['limit']:.3g}  {verdict}")
    print(
        "\nAbove the line: the issue's targets (ratio = kforge / LangGraph). Both sides use a file "
        "DB in WAL mode at the same synchronous level; LangGraph runs with durability='sync' (each "
        f"checkpoint committed before the next step, as kforge does); 'no checkpointer' is LangGraph "
        "compiled without one, durable nothing. Medians of "
        f"{out['settings']['repeat']} rounds (resume: of each round's median of "
        f"{out['settings'].get('resume_samples_per_round', 1)}"
        + (", taken in kforge/LangGraph pairs" if "resume_ratio_pairs" in out else "")
        + "); µs/step = a whole run's time / K tool-call steps."
    )


def _fmt(value: float | None) -> str:
    if value is None:
        return "—"
    if isinstance(value, int) or abs(value) >= 100:
        return f"{value:,.0f}"
    return f"{value:.2f}" if abs(value) >= 1 else f"{value:.4f}"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", type=Path, help="write the results as JSON to this path")
    parser.add_argument(
        "--k", default="10,50,200", help="comma-separated step counts (default 10,50,200)"
    )
    parser.add_argument(
        "--repeat", type=int, default=7, help="rounds of every measurement; medians are reported"
    )
    parser.add_argument(
        "--import-runs", type=int, default=7, help="fresh interpreters per import timing"
    )
    parser.add_argument(
        "--resume-samples",
        type=int,
        default=5,
        help="resumes per round and side; each round keeps their median (default 5)",
    )
    parser.add_argument("--skip-langgraph", action="store_true", help="measure kforge only")
    parser.add_argument(
        "--langgraph-venv",
        type=Path,
        default=LANGGRAPH_VENV,
        help="virtual environment for the LangGraph side (created when missing)",
    )
    parser.add_argument(
        "--db-dir", type=Path, help="where the benchmark databases go (a temporary directory)"
    )
    args = parser.parse_args(argv)
    ks = sorted({int(k) for k in args.k.split(",") if k.strip()})
    if not ks or ks[0] < 2 or min(args.repeat, args.import_runs, args.resume_samples) < 1:
        parser.error(
            "--k needs step counts ≥ 2; --repeat, --import-runs and --resume-samples need at "
            "least 1"
        )
    resume_k = ks[-1]
    lg_python = None if args.skip_langgraph else ensure_langgraph_env(args.langgraph_venv)
    samples = args.resume_samples
    kf_rounds: list[dict[str, Any]] = []
    lg_rounds: list[dict[str, Any]] = []
    pair_ratios: list[list[float]] = []
    # With LangGraph, resumes are sampled in kforge/LangGraph pairs after each round's other
    # measurements; alone, kforge takes its own in the round.
    own = samples if lg_python is None else 0
    resumer = None if lg_python is None else LangGraphResumer(lg_python)
    with tempfile.TemporaryDirectory(dir=args.db_dir) as tmp:
        for round_no in range(args.repeat):
            # Rounds alternate which side goes first, so drifting machine load hits both alike.
            db_dir = Path(tmp) / f"round-{round_no}"
            db_dir.mkdir()
            kforge_first = round_no % 2 == 0
            if kforge_first:
                settle_disk()
                kf_rounds.append(asyncio.run(KforgeBench(db_dir).measure(ks, resume_k, own)))
            if lg_python is not None:
                params = {"db_dir": str(db_dir), "ks": ks, "synchronous": list(LEVELS)}
                params.update(resume_k=resume_k, resume_samples=own)
                settle_disk()
                lg_rounds.append(run_langgraph_side(lg_python, params))
            if not kforge_first:
                settle_disk()
                kf_rounds.append(asyncio.run(KforgeBench(db_dir).measure(ks, resume_k, own)))
            if resumer is not None:
                kf_resume, lg_resume, ratios = asyncio.run(
                    paired_resumes(
                        KforgeBench(db_dir / "pairs"), resumer, db_dir, resume_k, samples
                    )
                )
                kf_rounds[-1]["resume_ms"] = kf_resume
                lg_rounds[-1]["resume_ms"] = lg_resume
                pair_ratios.append(ratios)
    if resumer is not None:
        resumer.close()
    kf = median_of_rounds(kf_rounds)
    lg = median_of_rounds(lg_rounds) if lg_rounds else None
    pythons: dict[str, Path | str] = {"kforge": sys.executable}
    if lg_python is not None:
        pythons["langgraph"] = lg_python
    imports = {
        key: import_seconds(pythons[side], statement, args.import_runs)
        for key, (side, statement) in IMPORTS.items()
        if side in pythons
    }
    settings = {
        "k": ks,
        "repeat": args.repeat,
        "import_runs": args.import_runs,
        "headline_synchronous": HEADLINE_LEVEL,
        "synchronous_levels": list(LEVELS),
        "journal_mode": "WAL",
        "langgraph_durability": "sync",
        "resume_k": resume_k,
        "resume_pause_at": resume_k // 2,
        "resume_samples_per_round": samples,
        "resume_sampling": "paired" if lg_python is not None else "kforge only",
        "per_step": "median wall time of a whole run (start to final answer) / K tool-call steps",
        "cpu_per_step": "the same with process CPU time (user + system, all threads)",
        "bytes": "PRAGMA page_count * page_size after wal_checkpoint(TRUNCATE)",
        "kforge_tool_path": "kforge.tools.execute_tool",
        "kforge_version": kforge.__version__,
        "python": platform.python_version(),
        "sqlite": sqlite3.sqlite_version,
        "platform": platform.platform(),
    }
    out = summarize(kf, lg, imports, settings)
    if lg_rounds:
        # How much the per-round and per-pair ratios spread shows how much of the headline
        # ratio is machine drift.
        out["resume_ratio_per_round"] = [
            k["resume_ms"][HEADLINE_LEVEL]["warm"] / g["resume_ms"][HEADLINE_LEVEL]["warm"]
            for k, g in zip(kf_rounds, lg_rounds, strict=True)
        ]
        every_pair = [r for ratios in pair_ratios for r in ratios]
        out["resume_ratio_pairs"] = every_pair
        out["resume_ratio_pair_median"] = statistics.median(every_pair)
    print_table(out)
    if "resume_ratio_per_round" in out:
        spread = ", ".join(f"{r:.3f}" for r in out["resume_ratio_per_round"])
        print(f"resume ratio per round: {spread}")
        pairs = sorted(out["resume_ratio_pairs"])
        print(
            f"resume ratio of single kforge/LangGraph pairs: median "
            f"{out['resume_ratio_pair_median']:.3f}, range {pairs[0]:.3f} to {pairs[-1]:.3f} "
            f"({len(pairs)} pairs)"
        )
    if args.json is not None:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(out, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
