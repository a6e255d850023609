"""Agent trees at once: kforge's tree agent vs the same workload in LangGraph 1.2 + SqliteSaver.

Each tree is 1 root x 4 children x 4 grandchildren (21 agents), every agent the six steps of
the tree agent with a scripted model (no clarification, no questions, 4 subquestions above the
depth limit). N trees run at once in one process, N = 1, 10, 50 by default, each side in a
fresh process: wall time, agent steps per second, peak memory and memory per agent. LangGraph
runs in each of its setups (one shared SqliteSaver connection, a connection per thread, the
AsyncSqliteSaver on one event loop) and the ratio is taken against its fastest. LangGraph
is never a kforge dependency: its half runs in ``_tree_langgraph_side.py`` under the virtual
environment ``runtime_vs_langgraph.py`` sets up beside this script.

    python benchmarks/tree.py --json tree.json
    python benchmarks/tree.py --ns 1,10 --skip-langgraph
    python benchmarks/tree.py --scenario faults --ns 1,10

The faults scenario (``_tree_kill.py``) runs the same trees steered from another process,
killed with SIGKILL once half their steps are done and resumed in a new process: wall time
including the resume, steps run again after the kill, interventions lost or applied twice.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
LANGGRAPH_SIDE = HERE / "_tree_langgraph_side.py"
TARGET = 4.0
"""kforge's steps per second at every N, as a multiple of LangGraph's fastest setup's."""
LANGGRAPH_SETUPS = ("shared", "per_thread", "async")
"""As ``_tree_langgraph_side.py`` names them."""
SUBQUESTION = "Subquestion {n} on {level} of {prompt}?"
LEVELS = ("cost estimates", "risk factors", "timing plans")
"""A word per level, so that each subquestion asks for something its parent does not say (the
tree agent starts no subagent that only restates its parent)."""
NAMES = ("alpha", "beta", "gamma", "delta")


def rss_kb() -> int:
    with open("/proc/self/statm") as f:
        pages = int(f.read().split()[1])
    return pages * resource.getpagesize() // 1024


class ScriptedTreeModel:
    """Replies as the LangGraph side's ``decide``, chosen by the decision asked; like that
    side's scripted functions it neither estimates tokens nor checks its own replies (the
    agent validates structured replies against their schema as it always does)."""

    name = "bench:scripted"

    def __init__(self, fanout: int) -> None:
        from kforge.agents.tree import prompts

        self.fanout = fanout
        self.replies: dict[str, dict[str, Any]] = {
            prompts.CLARIFY_PROMPT: {"ambiguous": False, "question": ""},
            prompts.MISSING_PROMPT: {"missing": False, "question": ""},
            prompts.RESOLVE_PROMPT: {"ask": False, "question": ""},
        }

    async def complete(self, messages: Any, settings: Any = None, **kwargs: Any) -> Any:
        from kforge.llm.types import ModelResponse, Usage

        system, user = messages[0].content, messages[-1].content
        prompt = user.partition("Request: ")[2].partition("\n")[0].strip()
        parsed = self.replies.get(system)
        if parsed is None and system.startswith("Split the user's request"):
            stem = prompt.rstrip("?")
            level = LEVELS[stem.count("Subquestion") % len(LEVELS)]
            parsed = {
                "subquestions": [
                    SUBQUESTION.format(n=NAMES[i], level=level, prompt=stem)
                    for i in range(self.fanout)
                ]
            }
        usage = Usage(input_tokens=len(user) // 4, output_tokens=8)
        if parsed is not None:
            return ModelResponse(text=json.dumps(parsed), parsed=parsed, usage=usage)
        return ModelResponse(text=f"Answer about {prompt}.", usage=usage)

    def stream(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError("the benchmark's model does not stream")


async def run_trees(path: Path, n: int, max_depth: int, fanout: int) -> dict[str, Any]:
    from kforge.engine.limits import RunLimits
    from kforge.runtime.runtime import Runtime
    from kforge.store.base import RunStatus

    rt = Runtime(path, model=ScriptedTreeModel(fanout), limits=RunLimits(max_steps=50))
    args = {"max_depth": max_depth, "max_subquestions": fanout}
    started, cpu = time.perf_counter(), time.process_time()
    roots = await asyncio.gather(
        *(rt.run("tree", {"prompt": f"Request number {i}", **args}) for i in range(n))
    )
    wall, cpu = time.perf_counter() - started, time.process_time() - cpu
    agents = [run for root in roots for run in [root, *_below(rt, root.id)]]
    bad = [r.id for r in agents if r.status != RunStatus.COMPLETED]
    if bad:
        raise RuntimeError(f"{len(bad)} agent(s) did not complete, e.g. {bad[0]}")
    steps = sum(r.iteration for r in agents)
    await rt.aclose()
    return {"wall_s": wall, "cpu_s": cpu, "steps": steps, "agents": len(agents)}


def _below(rt: Any, run_id: str) -> list[Any]:
    from kforge.runtime.interventions import descendants

    return descendants(rt.store, run_id)


def kforge_side(n: int, max_depth: int, fanout: int) -> dict[str, Any]:
    import kforge

    with tempfile.TemporaryDirectory() as tmp:
        asyncio.run(run_trees(Path(tmp) / "warmup.db", 1, max_depth, fanout))
        baseline = rss_kb()
        measured = asyncio.run(run_trees(Path(tmp) / "trees.db", n, max_depth, fanout))
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return {
        **measured,
        "side": "kforge",
        "version": kforge.__version__,
        "n": n,
        "baseline_rss_kb": baseline,
        "peak_rss_kb": peak,
    }


def in_subprocess(command: list[str], params: dict[str, Any]) -> dict[str, Any]:
    done = subprocess.run(command, input=json.dumps(params), capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"{command[-1]} failed:\n{done.stderr[-4000:]}")
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def summarize(side: dict[str, Any], agents_per_tree: int) -> dict[str, Any]:
    n = side["n"]
    agents = n * agents_per_tree
    grown_kb = max(0, side["peak_rss_kb"] - side["baseline_rss_kb"])
    return {
        "n": n,
        "agents": agents,
        "steps": side["steps"],
        "wall_s": round(side["wall_s"], 4),
        "cpu_s": round(side["cpu_s"], 4),
        "steps_per_s": round(side["steps"] / side["wall_s"], 1),
        "steps_per_cpu_s": round(side["steps"] / side["cpu_s"], 1),
        "peak_rss_mb": round(side["peak_rss_kb"] / 1024, 1),
        "kb_per_agent": round(grown_kb / agents, 1),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--ns", default="1,10,50", help="trees at once (default 1,10,50)")
    parser.add_argument("--fanout", type=int, default=4, help="subagents per agent (default 4)")
    parser.add_argument("--depth", type=int, default=2, help="levels below the root (default 2)")
    parser.add_argument("--json", metavar="PATH", help="write the results as JSON")
    parser.add_argument(
        "--repeat",
        type=int,
        default=3,
        help="rounds per N, each starting with another side; each side's fastest round is kept "
        "(default 3)",
    )
    parser.add_argument("--skip-langgraph", action="store_true", help="measure kforge only")
    parser.add_argument("--langgraph-venv", metavar="DIR", help="LangGraph's virtual environment")
    parser.add_argument(
        "--scenario",
        choices=("plain", "faults", "all"),
        default="plain",
        help="plain: the trees run undisturbed (default); faults: steered, killed and resumed "
        "(see _tree_kill.py); all: both",
    )
    parser.add_argument("--seed", type=int, default=13, help="the faults scenario's steering")
    parser.add_argument("--side", choices=("kforge",), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.side == "kforge":
        params = json.loads(sys.stdin.read())
        print(json.dumps(kforge_side(params["n"], params["max_depth"], params["fanout"])))
        return 0
    ns = [int(x) for x in args.ns.split(",") if x.strip()]
    agents_per_tree = sum(args.fanout**level for level in range(args.depth + 1))
    langgraph_python: Path | None = None
    if not args.skip_langgraph:
        sys.path.insert(0, str(HERE))
        from runtime_vs_langgraph import LANGGRAPH_VENV, ensure_langgraph_env

        venv = Path(args.langgraph_venv) if args.langgraph_venv else LANGGRAPH_VENV
        langgraph_python = ensure_langgraph_env(venv)
    result: dict[str, Any] = {
        "tree": {"agents_per_tree": agents_per_tree, "fanout": args.fanout, "depth": args.depth},
        "machine": {"python": platform.python_version(), "cpus": os.cpu_count()},
    }
    if args.scenario != "faults":
        result.update(plain(args, ns, agents_per_tree, langgraph_python))
    if args.scenario != "plain":
        result["faults"] = faults(args, ns, langgraph_python)
        print_faults(result["faults"])
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    return 0


def plain(
    args: argparse.Namespace, ns: list[int], agents_per_tree: int, langgraph_python: Path | None
) -> dict[str, Any]:
    """The trees undisturbed, each side's best of ``args.repeat`` rounds at each N."""
    rows: list[dict[str, Any]] = []
    for n in ns:
        params = {"n": n, "max_depth": args.depth, "fanout": args.fanout}
        sides: dict[str, tuple[list[str], dict[str, Any]]] = {
            "kforge": ([sys.executable, str(Path(__file__).resolve()), "--side", "kforge"], params)
        }
        if langgraph_python is not None:
            for setup in LANGGRAPH_SETUPS:
                command = [str(langgraph_python), str(LANGGRAPH_SIDE)]
                sides[f"langgraph_{setup}"] = (command, {**params, "setup": setup})
        rounds: dict[str, list[dict[str, Any]]] = {side: [] for side in sides}
        for round_no in range(max(1, args.repeat)):
            for side in run_order(list(sides), round_no):
                command, side_params = sides[side]
                rounds[side].append(in_subprocess(command, side_params))
        rows.append(make_row(n, rounds, agents_per_tree))
    print_table(rows)
    speedups = {str(row["n"]): row.get("speedup") for row in rows}
    return {
        "rows": rows,
        "target": {
            "kforge_steps_per_s_vs_fastest_langgraph_setup_at_every_n": TARGET,
            "measured": speedups,
            "met": None
            if langgraph_python is None
            else all(v is not None and v >= TARGET for v in speedups.values()),
        },
    }


FAULT_NOTES = (
    "wall s: from the first process's start to the last tree's end, both process starts and "
    "the resume included",
    "re-run: steps run again after the kill; kforge notes a step when it commits, LangGraph a "
    "node when it runs (it has no per-node commit to note), so a LangGraph node cut off "
    "between running and its checkpoint counts too",
    "steps: an intervention makes its kforge agent answer again, so kforge's steered trees "
    "take more steps than LangGraph's unsteered ones",
    "interventions: comments and modifies sent from another process to agents still running; "
    "LangGraph has no counterpart (update_state edits a thread's state between runs, not a "
    "running child's), so its side is killed and resumed without them",
)


def faults(
    args: argparse.Namespace, ns: list[int], langgraph_python: Path | None
) -> dict[str, Any]:
    """Each N's trees steered, killed once half their steps are done and resumed, on each side."""
    sys.path.insert(0, str(HERE))
    from _tree_kill import kill_and_resume, langgraph_kill_and_resume

    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as tmp:
        for n in ns:
            row: dict[str, Any] = {
                "n": n,
                "kforge": kill_and_resume(Path(tmp), n, args.depth, args.fanout, args.seed),
            }
            for setup in LANGGRAPH_SETUPS if langgraph_python is not None else ():
                params = {"n": n, "max_depth": args.depth, "fanout": args.fanout, "setup": setup}
                row[f"langgraph_{setup}"] = langgraph_kill_and_resume(
                    Path(tmp), langgraph_python, LANGGRAPH_SIDE, params
                )
            rows.append(row)
    return {"rows": rows, "notes": list(FAULT_NOTES)}


def print_faults(result: dict[str, Any]) -> None:
    print("\nsteered, killed (SIGKILL once half the steps are done) and resumed:")
    head = f"{'N':>4} {'side':<13} {'steps':>6} {'at kill':>7} {'re-run':>6} {'wall s':>7}"
    print(
        head
        + f" {'resume s':>8} {'sent':>5} {'applied':>7} {'refused':>7} {'lost':>4} {'twice':>5}"
    )
    for row in result["rows"]:
        for side in ("kforge", *(f"langgraph_{setup}" for setup in LANGGRAPH_SETUPS)):
            m = row.get(side)
            if m is None:
                continue
            steering = (
                (m["sent"], m["accepted"], m["refused"], m["lost"], m["applied_twice"])
                if "sent" in m
                else ("-",) * 5
            )
            print(
                f"{row['n']:>4} {side.replace('langgraph_', 'LG '):<13} {m['steps']:>6} "
                f"{m['steps_before_kill']:>7} {m['steps_reexecuted']:>6} {m['wall_s']:>7.3f} "
                f"{m['resume_wall_s']:>8.3f} {steering[0]:>5} {steering[1]:>7} {steering[2]:>7} "
                f"{steering[3]:>4} {steering[4]:>5}"
            )
    for note in result["notes"]:
        print(f"  {note}")


def run_order(sides: list[str], round_no: int) -> list[str]:
    """The sides in the order round ``round_no`` runs them: each round starts one further along,
    so that no side always meets the machine first (or right after another's write-back)."""
    shift = round_no % len(sides)
    return sides[shift:] + sides[:shift]


def make_row(
    n: int, rounds: dict[str, list[dict[str, Any]]], agents_per_tree: int
) -> dict[str, Any]:
    """One N's results: each side's fastest round; ``langgraph`` is LangGraph's fastest setup."""
    row: dict[str, Any] = {"n": n}
    for side, measured in rounds.items():
        best = min(measured, key=lambda m: m["wall_s"])
        row[side] = summarize(best, agents_per_tree)
        row[side]["rounds_wall_s"] = [round(m["wall_s"], 4) for m in measured]
    setups = [side for side in rounds if side.startswith("langgraph_")]
    if setups:
        fastest = max(setups, key=lambda side: row[side]["steps_per_s"])
        row["langgraph"] = row[fastest]
        row["langgraph_setup"] = fastest.removeprefix("langgraph_")
        row["langgraph_version"] = rounds[fastest][0]["version"]
        kf, lg = row["kforge"], row["langgraph"]
        row["speedup"] = round(kf["steps_per_s"] / lg["steps_per_s"], 2)
        row["cpu_speedup"] = round(kf["steps_per_cpu_s"] / lg["steps_per_cpu_s"], 2)
    return row


def print_table(rows: list[dict[str, Any]]) -> None:
    head = f"{'N':>4} {'side':<13} {'agents':>7} {'steps':>7} {'wall s':>8} {'steps/s':>9}"
    print(head + f" {'steps/cpu-s':>11} {'peak MB':>8} {'KB/agent':>9} {'speedup':>8}")
    for row in rows:
        for side in ("kforge", *(f"langgraph_{setup}" for setup in LANGGRAPH_SETUPS)):
            m = row.get(side)
            if m is None:
                continue
            speed = f"{row['speedup']:>7}x" if side == "kforge" and "speedup" in row else ""
            if side == f"langgraph_{row.get('langgraph_setup')}":
                speed = "fastest"
            label = side.replace("langgraph_", "LG ")
            print(
                f"{row['n']:>4} {label:<13} {m['agents']:>7} {m['steps']:>7} {m['wall_s']:>8.3f} "
                f"{m['steps_per_s']:>9.1f} {m['steps_per_cpu_s']:>11.1f} {m['peak_rss_mb']:>8.1f} "
                f"{m['kb_per_agent']:>9.1f} "
                f"{speed:>8}"
            )


if __name__ == "__main__":
    sys.exit(main())
