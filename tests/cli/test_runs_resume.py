"""``kforge runs resume --answer`` raced by two processes: one answer is recorded, the other
command says its answer was not applied."""

from __future__ import annotations

import asyncio
import socket
import sys
import textwrap
from pathlib import Path

from kforge.frames import InteractionAnswered
from kforge.runtime import AgentRegistry, Runtime
from kforge.store import RunStatus, SQLiteStore
from tests.cli.processes import kforge_popen

RACE_APP = '''
"""An agent that asks one question and returns the answer. Built to continue a run, it first
waits at the test's barrier (RACE_BARRIER=HOST:PORT), after the run was read and before its
answer is written: every racer has then seen the question open."""

import os
import socket

from kforge import register_agent
from kforge.engine.agent import StepOutcome


class AskOnce:
    agent_type = "race.ask"

    def __init__(self, args=None):
        self.args = dict(args or {})
        self.answer = None
        address = os.environ.get("RACE_BARRIER")
        if address:
            host, port = address.rsplit(":", 1)
            with socket.create_connection((host, int(port)), timeout=60) as barrier:
                barrier.sendall(b"here")
                barrier.recv(2)

    async def step(self, ctx):
        if self.answer is None:
            self.answer = await ctx.ask("Which colour?")
        return StepOutcome(done=True, result={"answer": self.answer})

    def get_state(self):
        return {"answer": self.answer}

    def restore_state(self, state):
        self.answer = state.get("answer")

    def partial_result(self):
        return {}


register_agent("race.ask", AskOnce, replace=True)
'''


def barrier() -> tuple[str, socket.socket]:
    """A barrier on 127.0.0.1: each party connects, says it is here, and waits for 'go'."""
    server = socket.create_server(("127.0.0.1", 0))
    server.settimeout(60)
    return f"127.0.0.1:{server.getsockname()[1]}", server


def release_when_all_arrive(server: socket.socket, parties: int) -> None:
    arrived = []
    for _ in range(parties):
        conn, _ = server.accept()
        conn.settimeout(60)
        conn.recv(4)
        arrived.append(conn)
    for conn in arrived:
        conn.sendall(b"go")
        conn.close()
    server.close()


def test_two_answers_at_once_one_is_applied_and_the_other_command_says_so(
    tmp_path: Path,
) -> None:
    (tmp_path / "raceapp.py").write_text(textwrap.dedent(RACE_APP), encoding="utf-8")
    db = tmp_path / "race.db"
    sys.path.insert(0, str(tmp_path))
    try:
        import raceapp  # type: ignore[import-not-found]
    finally:
        sys.path.remove(str(tmp_path))
    registry = AgentRegistry()
    registry.register("race.ask", raceapp.AskOnce)

    async def start() -> str:
        rt = Runtime(SQLiteStore(db), model="test", registry=registry)
        run = await rt.run("race.ask", {})
        await rt.aclose()
        assert run.status == RunStatus.AWAITING_USER
        return run.id

    run_id = asyncio.run(start())
    address, server = barrier()
    resume = ["--db", str(db), "runs", "resume", run_id, "--app", "raceapp", "--answer"]
    procs = {
        colour: kforge_popen(
            [*resume, colour], cwd=tmp_path, env={"RACE_BARRIER": address}, path=[tmp_path]
        )
        for colour in ("red", "blue")
    }
    release_when_all_arrive(server, 2)
    outcomes = {colour: (p.wait(120), *p.communicate()) for colour, p in procs.items()}
    codes = sorted(code for code, _, _ in outcomes.values())
    assert codes == [0, 1], outcomes
    winner = next(c for c, (code, _, _) in outcomes.items() if code == 0)
    loser = next(c for c, (code, _, _) in outcomes.items() if code == 1)
    err = outcomes[loser][2]
    assert "your answer was not applied" in err and "another process answered" in err, err
    assert f"runs show {run_id}" in err and "Traceback" not in err
    assert "completed" not in err
    store = SQLiteStore(db)
    run = store.get_run(run_id)
    assert run.status == RunStatus.COMPLETED
    assert run.result == {"answer": {"text": winner}}
    answers = [f for f in store.read_frames(run_id) if isinstance(f, InteractionAnswered)]
    assert [a.answer for a in answers] == [{"text": winner}]
    store.close()
