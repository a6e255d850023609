"""The fault benchmark's tree case: a tree agent with four side-effecting children, steered from
outside (comments and modifies on random agents) while it runs, killed with SIGKILL at a random
point, steered while no process runs it, and resumed in a new process.

Reports, over all trials: interventions sent, accepted and refused (an agent that ended, or
ended meanwhile, refuses one with a clear error); interventions accepted but never applied
(lost) or applied more than once; agents failed by a kill; side effects duplicated; trees left
unfinished. Run by ``faults.py``; this file is also its worker process.
"""

from __future__ import annotations

import asyncio
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
sys.path.insert(0, str(HERE.parents[1] / "src"))

from kforge.agents.tree import prompts  # noqa: E402
from kforge.engine.services import Services  # noqa: E402
from kforge.errors import InvalidRunStateError  # noqa: E402
from kforge.frames import Intervention  # noqa: E402
from kforge.llm.testing.function import CallInfo, FunctionModel, FunctionReply  # noqa: E402
from kforge.llm.types import Message, ToolCall  # noqa: E402
from kforge.runtime.interventions import Intervention as Request  # noqa: E402
from kforge.runtime.interventions import descendants  # noqa: E402
from kforge.runtime.runtime import Runtime  # noqa: E402
from kforge.store.base import TERMINAL_STATUSES, RunRecord, RunStatus  # noqa: E402
from kforge.store.sqlite import SQLiteStore  # noqa: E402
from kforge.tools import ToolAnnotations, tool  # noqa: E402

__all__ = ["spawn", "tree_kills"]

PARTS = ("the budget", "the venue", "the guests", "the schedule")
"""What each of the four children is asked about."""
DECIDED = {
    prompts.CLARIFY_PROMPT: {"ambiguous": False, "question": ""},
    prompts.MISSING_PROMPT: {"missing": False, "question": ""},
    prompts.RESOLVE_PROMPT: {"ask": False, "question": ""},
}


@tool(annotations=ToolAnnotations(destructive_hint=False), requires_approval=False)
def book(item: str) -> str:
    """Book something for the plan: a line in the ledger, a file outside the run's database.

    Args:
        item: What to book.
    """
    with open(os.environ["FAULTS_LEDGER"], "a", encoding="utf-8") as fh:
        fh.write(item + "\n")
        fh.flush()
        os.fsync(fh.fileno())
    return "booked"


def _request(messages: list[Message]) -> str:
    for message in messages:
        if "Request: " in message.content:
            return message.content.partition("Request: ")[2].partition("\n")[0].strip()
    return messages[-1].content


async def _reply(messages: list[Message], info: CallInfo) -> FunctionReply:
    """Decides as a tree agent asks; its main execution books its request once, then answers
    (a note from the user that comes later gets an answer again, not another booking)."""
    await asyncio.sleep(float(os.environ.get("FAULTS_DELAY", "0")))
    system, request = messages[0].content, _request(messages)
    if system in DECIDED:
        return DECIDED[system]
    if system.startswith("Split the user's request"):
        return {"subquestions": [f"What about {part} for: {request}?" for part in PARTS]}
    booked = any(m.role == "tool" for m in messages)
    if info.tools and messages[-1].role == "user" and not booked:
        return ToolCall("book", {"item": request}, "call-1")
    return f"Planned {request}."


def _runtime(db: str) -> Runtime:
    model = FunctionModel(_reply, name="function:faults-tree")
    return Runtime(SQLiteStore(db), model=model, services=Services(tools=[book]))


async def _to_the_end(rt: Runtime, root: str) -> RunRecord:
    """Wait for the tree: a parent that paused for its children goes on when they end."""
    run = await rt.wait(root)
    deadline = time.monotonic() + 120
    while run.status not in TERMINAL_STATUSES and time.monotonic() < deadline:
        if not rt.is_active(root) and run.status != RunStatus.PAUSED:
            break
        await asyncio.sleep(0.02)
        run = await rt.wait(root)
    return run


async def _work(argv: list[str]) -> int:
    """Worker: ``start DB PROMPT`` or ``resume DB ROOT``; prints the root's id, then its status."""
    mode, db, what = argv
    rt = _runtime(db)
    if mode == "start":
        args = {"prompt": what, "tools": ["book"], "max_depth": 1, "max_subquestions": 4}
        root = await rt.start("tree", args)
    else:
        root = what
        await rt.resume(root, durable=True)
    print(root, flush=True)
    run = await _to_the_end(rt, root)
    print(run.status.value, flush=True)
    return 0


# -- the parent: steering and kills from outside ----------------------------------------------


def spawn(script: Path, *args: str, **env: str) -> subprocess.Popen[str]:
    """``script`` run as a worker process with ``env`` added to this one's environment."""
    pipe, full = subprocess.PIPE, {**os.environ, **env}
    return subprocess.Popen(
        [sys.executable, str(script), *args], stdout=pipe, stderr=pipe, text=True, env=full
    )


def _worker(*args: str, ledger: Path, delay: float) -> subprocess.Popen[str]:
    return spawn(HERE, *args, FAULTS_LEDGER=str(ledger), FAULTS_DELAY=str(delay))


class _Steering:
    """Sends comments and modifies to random agents of a tree and notes what became of each."""

    def __init__(self, db: Path, root: str, rng: random.Random, name: str) -> None:
        self.rt = Runtime(SQLiteStore(db))
        self.root, self.rng, self.name = root, rng, name
        self.accepted: list[dict[str, str]] = []
        self.refused = 0
        self.workers: list[str] = []
        """How resume workers that did not complete the tree ended."""

    async def send(self) -> None:
        store = self.rt.store
        agents = [store.get_run(self.root), *descendants(store, self.root)]
        open_ = [a for a in agents if a.status not in TERMINAL_STATUSES]
        if not open_:
            return
        agent = self.rng.choice(open_)
        action = self.rng.choice(("comment", "comment", "modify"))
        content = f"{action}-{self.name}-{len(self.accepted) + self.refused}"
        try:
            sent = Request.comment(content) if action == "comment" else Request.modify(content)
            said = await self.rt.intervene(agent.id, sent)
        except InvalidRunStateError:
            self.refused += 1
            return
        self.accepted.append({"agent": agent.id, "action": action, "content": content, **said})

    async def steer_while(self, proc: subprocess.Popen[str] | None, until: float) -> None:
        """Send at random intervals until ``proc`` ends or ``until`` (monotonic) passes."""
        while time.monotonic() < until and (proc is None or proc.poll() is None):
            await asyncio.sleep(self.rng.uniform(0.0, 0.08))
            await self.send()


async def _trial(root_dir: Path, i: int, span: float, rng: random.Random) -> dict[str, Any]:
    folder = root_dir / f"tree-{i}"
    folder.mkdir()
    db, ledger, delay = folder / "k.db", folder / "ledger", 0.02
    proc = _worker("start", str(db), f"Plan party {i}", ledger=ledger, delay=delay)
    assert proc.stdout is not None
    root = (await asyncio.to_thread(proc.stdout.readline)).strip()
    steering = _Steering(db, root, rng, f"t{i}")
    await steering.steer_while(proc, time.monotonic() + rng.uniform(0.0, span))
    killed = proc.poll() is None
    if killed:
        proc.send_signal(signal.SIGKILL)
    await asyncio.to_thread(proc.communicate)
    if killed:
        await steering.steer_while(None, time.monotonic() + 0.1)  # no process runs the tree
    for _ in range(3):
        run = steering.rt.store.get_run(root)
        if run.status in TERMINAL_STATUSES:
            break
        proc = _worker("resume", str(db), root, ledger=ledger, delay=delay)
        await steering.steer_while(proc, time.monotonic() + 120)
        out, err = await asyncio.to_thread(proc.communicate)
        said = (out.split() or ["nothing"])[-1]
        if said != "completed":  # what the worker said, for a tree left unfinished
            steering.workers.append(f"{said}: {err.strip().splitlines()[-1:]}")
    row = _record(steering, ledger)
    steering.rt.store.close()
    return {"killed": killed, **row}


def _record(steering: _Steering, ledger: Path) -> dict[str, Any]:
    store = steering.rt.store
    root = store.get_run(steering.root)
    agents = {a.id: a for a in [root, *descendants(store, root.id)]}
    lost = twice = 0
    for sent in steering.accepted:
        agent = agents[sent["agent"]]
        recorded = [
            f
            for f in store.read_frames(agent.id)
            if isinstance(f, Intervention) and f.content == sent["content"]
        ]
        metadata = (agent.result or {}).get("metadata", {})
        kept = "comments" if sent["action"] == "comment" else "modifications"
        applied = list(metadata.get(kept, [])).count(sent["content"])
        if agent.status == RunStatus.COMPLETED and applied == 0:
            lost += 1
        if len(recorded) > 1 or applied > 1:
            twice += 1
    lines = Counter(ledger.read_text().splitlines()) if ledger.exists() else Counter()
    return {
        "completed": root.status == RunStatus.COMPLETED,
        "ended": f"{root.status.value} {root.pause_reason or root.error or ''} {steering.workers}",
        "agents": len(agents),
        "sent": len(steering.accepted) + steering.refused,
        "accepted": len(steering.accepted),
        "refused": steering.refused,
        "lost": lost,
        "applied_twice": twice,
        "failed_agents": sum(1 for a in agents.values() if a.status == RunStatus.FAILED),
        "duplicated_effects": sum(n - 1 for n in lines.values() if n > 1),
    }


async def _calibrate(root_dir: Path) -> float:
    """How long an uninterrupted tree takes, from its start to its end."""
    folder = root_dir / "tree-calibrate"
    folder.mkdir()
    proc = _worker("start", str(folder / "k.db"), "Plan a party", ledger=folder / "l", delay=0.02)
    assert proc.stdout is not None
    await asyncio.to_thread(proc.stdout.readline)
    began = time.monotonic()
    await asyncio.to_thread(proc.communicate)
    return time.monotonic() - began


def tree_kills(root_dir: Path, trials: int, rng: random.Random) -> dict[str, Any]:
    """Run ``trials`` steered and killed trees; returns the totals."""

    async def all_trials() -> list[dict[str, Any]]:
        span = await _calibrate(root_dir)
        return [await _trial(root_dir, i, span, rng) for i in range(trials)]

    rows = asyncio.run(all_trials())
    keys = ("agents", "sent", "accepted", "refused", "lost", "applied_twice", "failed_agents")
    totals = {k: sum(r[k] for r in rows) for k in (*keys, "duplicated_effects")}
    return {
        "trials": len(rows),
        "killed_mid_run": sum(1 for r in rows if r["killed"]),
        "completed": sum(1 for r in rows if r["completed"]),
        **totals,
        "unfinished": sum(1 for r in rows if not r["completed"]),
        "unfinished_as": sorted(r["ended"] for r in rows if not r["completed"]),
    }


if __name__ == "__main__":
    raise SystemExit(asyncio.run(_work(sys.argv[1:])))
