"""Fault benchmark: runs with a side-effecting tool killed at random points, resumed twice at
once, and resumed from damaged records; agent trees steered while they run and killed (see
``_faults_tree.py``); all from outside in real processes.

Reports: runs resumed, side effects duplicated, steps lost, model calls requested again after
their reply was recorded, runs left unrecoverable; tool calls whose outcome a kill left unknown
(recorded as such, never run again) and, of those, effects that were never done; per kind of
record damage, what became of the run. Prints a table; ``--json PATH`` writes the numbers.

usage: python benchmarks/faults.py [--kills 30] [--races 10] [--steps 8] [--trees 10]
                                  [--json PATH]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve()
sys.path.insert(0, str(HERE.parents[1] / "src"))

from kforge.engine.agent import StepOutcome  # noqa: E402
from kforge.engine.append_only import AppendOnlyList  # noqa: E402
from kforge.engine.limits import RunLimits  # noqa: E402
from kforge.engine.registry import AgentRegistry  # noqa: E402
from kforge.engine.run_context import RunContext  # noqa: E402
from kforge.errors import ForgeError, StateCorruptionError  # noqa: E402
from kforge.llm.testing.function import CallInfo, FunctionModel  # noqa: E402
from kforge.llm.types import Message  # noqa: E402
from kforge.runtime.runtime import Runtime  # noqa: E402
from kforge.store.sqlite import SQLiteStore  # noqa: E402
from kforge.tools import ToolAnnotations, execute_tool, tool  # noqa: E402

sys.path.insert(0, str(HERE.parent))
from _faults_tree import spawn, tree_kills  # noqa: E402

AGENT_TYPE = "bench.ledger"


@tool(annotations=ToolAnnotations(destructive_hint=False), requires_approval=False)
def append_entry(entry: str) -> str:
    """Append an entry to the ledger, a file outside the run's database (the side effect).

    Args:
        entry: The line to append.
    """
    with open(os.environ["FAULTS_LEDGER"], "a", encoding="utf-8") as fh:
        fh.write(entry + "\n")
        fh.flush()
        os.fsync(fh.fileno())
    return "appended"


class LedgerAgent:
    """Each step asks the model for the next number, then appends it to the ledger; the
    numbers so far are state declared append-only."""

    agent_type = AGENT_TYPE

    def __init__(self, args: dict[str, Any]) -> None:
        self.target = int(args.get("target", 8))
        self.values = AppendOnlyList()

    async def step(self, ctx: RunContext) -> StepOutcome:
        k = len(self.values) + 1
        reply = await ctx.complete([Message.user(f"entry {k}")], purpose="next")
        value = int(reply.text)
        await execute_tool(ctx, append_entry, {"entry": f"{ctx.run_id}:{value}"})
        self.values.append(value)
        if len(self.values) >= self.target:
            return StepOutcome(True, {"values": list(self.values)}, "ledger written")
        return StepOutcome()

    def get_state(self) -> dict[str, Any]:
        return {"target": self.target, "values": self.values}

    def restore_state(self, state: dict[str, Any]) -> None:
        self.target, self.values = int(state["target"]), AppendOnlyList(state["values"])

    def partial_result(self) -> dict[str, Any]:
        return {"values": list(self.values)}


def _model(db: str, requests_log: str) -> FunctionModel:
    """Answers ``entry k`` with ``k``, noting each request and whether its reply was already
    recorded (the k-th model call of the run committed before this request arrived)."""

    async def reply(messages: list[Message], info: CallInfo) -> str:
        k = int(str(messages[-1].content).split()[-1])
        run_id = os.environ["FAULTS_RUN"]
        conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
        try:
            (recorded,) = conn.execute(
                "SELECT COUNT(*) FROM frames WHERE run_id = ? AND type = 'model.call'", (run_id,)
            ).fetchone()
        finally:
            conn.close()
        with open(requests_log, "a", encoding="utf-8") as fh:
            role = os.environ.get("FAULTS_ROLE", "")
            fh.write(json.dumps({"k": k, "again": recorded >= k, "role": role}) + "\n")
        await asyncio.sleep(float(os.environ.get("FAULTS_DELAY", "0")))
        return str(k)

    return FunctionModel(reply, name="faults:counter")


async def _work(argv: list[str]) -> int:
    """Worker: ``start DB LOG STEPS [MAX_STEPS]`` or ``resume DB LOG RUN_ID [MAX_STEPS]``."""
    mode, db, log = argv[0], argv[1], argv[2]
    registry = AgentRegistry()
    registry.register(AGENT_TYPE, LedgerAgent)
    rt = Runtime(SQLiteStore(db), model=_model(db, log), registry=registry)
    limits = RunLimits(max_steps=int(argv[4])) if len(argv) > 4 else None
    try:
        if mode == "start":
            run_id = await rt.start(AGENT_TYPE, {"target": int(argv[3])}, limits=limits)
            os.environ["FAULTS_RUN"] = run_id
        else:
            run_id = os.environ["FAULTS_RUN"] = argv[3]
            await rt.resume(run_id, limits=limits, durable=True)
        print(run_id, flush=True)
        run = await rt.wait(run_id)
    except ForgeError as exc:
        print(f"error {type(exc).__name__}: {exc}", flush=True)
        return 3
    print(run.status.value, flush=True)
    return 0


# -- the parent: faults from outside --------------------------------------------------------


class Trial:
    """One run's folder: its database, ledger and model request log."""

    def __init__(self, root: Path, name: str) -> None:
        self.dir = root / name
        self.dir.mkdir()
        self.db, self.ledger, self.log = self.dir / "k.db", self.dir / "ledger", self.dir / "req"
        self.run_id = ""

    def worker(self, *args: str, delay: float = 0.0, role: str = "") -> subprocess.Popen[str]:
        env = {"FAULTS_LEDGER": str(self.ledger), "FAULTS_DELAY": str(delay), "FAULTS_ROLE": role}
        return spawn(HERE, "--worker", *args, **env)

    def start(self, steps: int, *extra: str, delay: float = 0.0) -> subprocess.Popen[str]:
        proc = self.worker("start", str(self.db), str(self.log), str(steps), *extra, delay=delay)
        assert proc.stdout is not None
        self.run_id = proc.stdout.readline().strip()
        return proc

    def resume(self, *extra: str, role: str = "") -> subprocess.Popen[str]:
        return self.worker("resume", str(self.db), str(self.log), self.run_id, *extra, role=role)

    def resume_until_done(self, attempts: int = 3, *extra: str) -> str:
        status = ""
        for _ in range(attempts):
            out, _ = self.resume(*extra).communicate(timeout=120)
            status = out.split()[-1] if out.split() else "crashed"
            if status in ("completed", "failed"):
                break
        return status

    def record(self, steps: int, losers: tuple[str, ...] = ()) -> dict[str, Any]:
        """What became of the run; requests made by ``losers`` (processes refused the run)
        are counted apart: their replies are never recorded or used."""
        store = SQLiteStore(self.db)
        try:
            run = store.get_run(self.run_id)
            try:
                frames = store.read_frames(self.run_id)
            except StateCorruptionError:
                frames = []  # what the damage benchmark did on purpose
        finally:
            store.close()
        entries = Counter(self.ledger.read_text().split()) if self.ledger.exists() else Counter()
        requests = [json.loads(line) for line in self.log.read_text().splitlines()]
        values = (run.result or {}).get("values", [])
        unknown = sum(1 for f in frames if f.type == "tool.result" and "unknown" in str(f))
        return {
            "status": run.status.value,
            "gap_free": bool(frames) and [f.seq for f in frames] == list(range(1, len(frames) + 1)),
            "duplicated_effects": sum(n - 1 for n in entries.values() if n > 1),
            "lost_steps": steps - len(set(values) & set(range(1, steps + 1)))
            if run.status.value == "completed"
            else steps,
            "re_requested": sum(1 for r in requests if r["again"] and r["role"] not in losers),
            "loser_requests": sum(1 for r in requests if r["role"] in losers),
            "outcome_unknown": unknown,
            "missing_effects": sum(1 for k in values if entries[f"{self.run_id}:{k}"] == 0),
        }


def random_kills(root: Path, kills: int, steps: int, rng: random.Random) -> dict[str, Any]:
    delay = 0.02
    calibrate = Trial(root, "calibrate")
    proc = calibrate.start(steps, delay=delay)
    began = time.perf_counter()  # from the run's start to its end, process start-up excluded
    proc.communicate(timeout=120)
    span = time.perf_counter() - began
    rows = []
    for i in range(kills):
        trial = Trial(root, f"kill-{i}")
        proc = trial.start(steps, delay=delay)
        time.sleep(rng.uniform(0.0, span))  # a random point of the run, from outside
        died = proc.poll() is None
        if died:
            proc.send_signal(signal.SIGKILL)
        proc.communicate(timeout=60)
        status = trial.resume_until_done() if died else "completed"
        rows.append({"killed": died, "resumed_to": status, **trial.record(steps)})
    summary = _summary(rows)
    summary["killed_mid_run"] = sum(1 for r in rows if r["killed"])
    return summary


def races(root: Path, count: int, steps: int) -> dict[str, Any]:
    rows = []
    for i in range(count):
        trial = Trial(root, f"race-{i}")
        trial.start(steps, str(steps // 2)).communicate(timeout=120)  # paused by its step limit
        both = [trial.resume(str(steps * 2), role=role) for role in ("a", "b")]
        outs = [p.communicate(timeout=120)[0] for p in both]
        proceeded = sum(1 for out in outs if out.split()[-1:] == ["completed"])
        refused = sum(1 for out in outs if "error" in out)
        losers = tuple(role for role, out in zip("ab", outs, strict=True) if "error" in out)
        if proceeded == 0:  # both refused or crashed: a third resume must still finish it
            trial.resume_until_done(1, str(steps * 2))
        row = trial.record(steps, losers)
        rows.append({"proceeded": proceeded, "refused": refused, **row})
    summary = _summary(rows)
    summary["loser_model_requests"] = sum(r["loser_requests"] for r in rows)
    summary["exactly_one_proceeded"] = sum(1 for r in rows if r["proceeded"] == 1)
    summary["loser_refused"] = sum(1 for r in rows if r["refused"] == 1)
    return summary


def _summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "trials": len(rows),
        "completed": sum(1 for r in rows if r["status"] == "completed"),
        "gap_free": sum(1 for r in rows if r["gap_free"]),
        "duplicated_effects": sum(r["duplicated_effects"] for r in rows),
        "lost_steps": sum(r["lost_steps"] for r in rows),
        "re_requested": sum(r["re_requested"] for r in rows),
        "outcome_unknown": sum(r["outcome_unknown"] for r in rows),
        "missing_effects": sum(r["missing_effects"] for r in rows),
        "unrecoverable": sum(1 for r in rows if r["status"] != "completed"),
    }


DAMAGE = {
    "snapshot: flipped byte": (
        "UPDATE snapshots SET state = CAST(substr(CAST(state AS BLOB), 1, 20) || X'FF' || "
        "substr(CAST(state AS BLOB), 22) AS TEXT)",
        True,
    ),
    "snapshot: empty object": ("UPDATE snapshots SET state = '{}', checksum = NULL", True),
    "snapshot: valid JSON, wrong value": (
        "UPDATE snapshots SET state = replace(state, '\"values\":[1', '\"values\":[7')",
        True,
    ),
    "step delta: wrong value": (
        "UPDATE steps SET delta = replace(delta, '[1]', '[7]') WHERE step = 1",
        True,
    ),
    "snapshot and deltas": (
        "UPDATE snapshots SET state = '{}', checksum = NULL; "
        "UPDATE steps SET delta = replace(delta, '[1]', '[7]') WHERE step = 1",
        False,  # nothing intact is left to rebuild from: the run must fail alone, clearly
    ),
    "last frame": (
        "UPDATE frames SET data = CAST(X'7B22FF' AS TEXT) "
        "WHERE seq = (SELECT MAX(seq) - 1 FROM frames)",
        False,  # the unfinished step's record is gone: fail clearly, fork from before it
    ),
}


def damage(root: Path, steps: int) -> dict[str, Any]:
    results: dict[str, Any] = {}
    for i, (kind, (sql, recoverable)) in enumerate(DAMAGE.items()):
        trial = Trial(root, f"damage-{i}")
        trial.start(steps, str(steps // 2)).communicate(timeout=120)  # paused, with a snapshot
        conn = sqlite3.connect(trial.db)
        conn.executescript(sql)
        changed = conn.total_changes
        conn.close()
        out, _ = trial.resume(str(steps * 2)).communicate(timeout=120)
        row = trial.record(steps)
        store = SQLiteStore(trial.db)
        error = store.get_run(trial.run_id).error or ""
        store.close()
        if kind == "last frame":
            row["status_after_fork"] = _fork_before_damage(trial, steps)
        results[kind] = {
            "records_intact_enough": recoverable,
            "rows_damaged": changed,
            "recovered_by_fork": row.get("status_after_fork") == "completed",
            "status": row["status"],
            "failed_clearly": row["status"] == "failed" and "fork" in error,
            "duplicated_effects": row["duplicated_effects"],
            "re_requested": row["re_requested"],
            "worker_raised": "Traceback" in out,
        }
    results["database pages"] = _damaged_pages(root)
    return results


def _fork_before_damage(trial: Trial, steps: int) -> str:
    """Fork the run from the seq before its damaged frame, as its error message says, and
    finish the fork."""
    conn = sqlite3.connect(trial.db)
    (damaged,) = conn.execute(
        "SELECT MIN(seq) FROM frames WHERE run_id = ? AND CAST(data AS BLOB) = X'7B22FF'",
        (trial.run_id,),
    ).fetchone()
    conn.close()
    rt = Runtime(SQLiteStore(trial.db))
    trial.run_id = asyncio.run(rt.fork(trial.run_id, at_seq=damaged - 1))
    rt.store.close()
    return trial.resume_until_done(2, str(steps * 2))


def _damaged_pages(root: Path) -> dict[str, Any]:
    trial = Trial(root, "damage-pages")
    trial.start(4).communicate(timeout=120)
    size = trial.db.stat().st_size
    with open(trial.db, "r+b") as fh:
        fh.seek(4096)
        fh.write(b"\xa5" * max(0, size - 4096))
    cli = subprocess.run(
        [sys.executable, "-m", "kforge", "--db", str(trial.db), "runs", "list"],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(HERE.parents[1] / "src")},
        timeout=120,
    )
    lines = cli.stderr.strip().splitlines()
    return {
        "records_intact_enough": False,
        "exit_code": cli.returncode,
        "one_line": len(lines) == 1 and "Traceback" not in cli.stderr,
        "says_how_to_recover": ".recover" in cli.stderr,
    }


def main() -> int:
    if len(sys.argv) > 1 and sys.argv[1] == "--worker":
        return asyncio.run(_work(sys.argv[2:]))
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kills", type=int, default=30, help="random SIGKILL points (30)")
    parser.add_argument("--races", type=int, default=10, help="double-resume races (10)")
    parser.add_argument("--steps", type=int, default=8, help="steps per run (8)")
    parser.add_argument(
        "--trees", type=int, default=10, help="steered trees killed at random points (10)"
    )
    parser.add_argument("--seed", type=int, default=13)
    parser.add_argument("--json", metavar="PATH", help="write the results as JSON")
    args = parser.parse_args()
    rng = random.Random(args.seed)
    with tempfile.TemporaryDirectory(prefix="kforge-faults-") as tmp:
        root = Path(tmp)
        results = {
            "steps_per_run": args.steps,
            "sigkill": random_kills(root, args.kills, args.steps, rng),
            "double_resume": races(root, args.races, args.steps),
            "damage": damage(root, args.steps),
            "tree": tree_kills(root, args.trees, rng),
        }
    _print_table(results)
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
        print(f"\nwrote {args.json}")
    return 0


def _print_table(results: dict[str, Any]) -> None:
    cols = {
        "trials": "trials",
        "completed": "resumed",
        "duplicated_effects": "dup effects",
        "lost_steps": "lost steps",
        "re_requested": "re-requested",
        "outcome_unknown": "unknown",
        "missing_effects": "not done",
        "unrecoverable": "unrecoverable",
    }
    print(f"{'fault':<16}" + "".join(f"{c:>14}" for c in cols.values()))
    for name in ("sigkill", "double_resume"):
        row = results[name]
        print(f"{name:<16}" + "".join(f"{row[c]:>14}" for c in cols))
    kills = results["sigkill"]
    print(f"\nSIGKILL landed mid-run in {kills['killed_mid_run']} of {kills['trials']} trials")
    race = results["double_resume"]
    print(
        f"\ndouble resume: exactly one proceeded in {race['exactly_one_proceeded']} of "
        f"{race['trials']}, the other refused in {race['loser_refused']}; model requests the "
        f"refused side made before its first commit (replies never recorded or used): "
        f"{race['loser_model_requests']}"
    )
    _print_tree(results["tree"])
    print(f"\n{'record damage':<36}{'outcome':>24}{'expected':>16}")
    for kind, row in results["damage"].items():
        if "status" in row:
            outcome = row["status"] + (" (clear)" if row["failed_clearly"] else "")
        else:
            outcome = f"exit {row['exit_code']}" + (", 1 line" if row["one_line"] else "")
        expected = "recovers" if row["records_intact_enough"] else "fails clearly"
        if row.get("recovered_by_fork"):
            outcome += ", fork ok"
        print(f"{kind:<36}{outcome:>24}{expected:>16}")


def _print_tree(row: dict[str, Any]) -> None:
    print(
        f"\nsteered trees (1 root + 4 children, comments and modifies sent at random while they "
        f"run and while killed): {row['trials']} trials, killed mid-run in "
        f"{row['killed_mid_run']}, completed {row['completed']}, {row['agents']} agents"
    )
    cols = ("sent", "accepted", "refused", "lost", "applied_twice", "failed_agents")
    print("".join(f"{c.replace('_', ' '):>15}" for c in (*cols, "dup effects")))
    print("".join(f"{row[c]:>15}" for c in (*cols, "duplicated_effects")))


if __name__ == "__main__":
    raise SystemExit(main())
