"""A model outage that outlasts the retries pauses the run (reason ``model_unavailable``) and the
run resumes once the endpoint is back; a failed run forks by default from before its failure."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import kforge
from kforge.errors import ModelOutputError, ModelUnavailableError
from kforge.frames import (
    DataEvent,
    Frame,
    ModelCall,
    StatusChanged,
    ToolResultFrame,
    frame_to_dict,
)
from kforge.llm.testing.scripted import ScriptedModel
from kforge.runtime import Runtime
from kforge.store import MemoryStore, RunStatus, SQLiteStore
from kforge.tools import tool
from tests.agents.helpers import runtime as agent_runtime
from tests.cli.schema_endpoint import SchemaEndpoint
from tests.engine.sample_agents import make_registry

SRC = Path(kforge.__file__).resolve().parents[1]


class Failing(ScriptedModel):
    """Answers from its script, except call number ``fail_on``, which raises ``error``."""

    def __init__(self, replies: list[Any], *, fail_on: int, error: Exception) -> None:
        super().__init__(replies)
        self.fail_on, self.error, self.count = fail_on, error, 0

    async def complete(self, *a: Any, **k: Any) -> Any:
        self.count += 1
        if self.count == self.fail_on:
            raise self.error
        return await super().complete(*a, **k)


async def test_an_outage_pauses_the_run_and_it_resumes_without_asking_again() -> None:
    store = MemoryStore()
    down = ModelUnavailableError("cannot reach test at http://127.0.0.1:9/v1 (4 attempts)")
    rt = Runtime(store, model=Failing(["1", "2"], fail_on=3, error=down), registry=make_registry())
    run = await rt.run("test.counter", {"target": 4})
    assert run.status == RunStatus.PAUSED and run.pause_reason == "model_unavailable"
    assert run.error == str(down) and run.lease_owner is None  # the whole reason, to show
    last = rt.frames(run.id)[-1]
    assert "cannot reach test" in getattr(last, "reason", "")
    back = ScriptedModel(["3", "4"])  # strict: only the replies never recorded
    rt2 = Runtime(store, model=back, registry=make_registry())
    await rt2.resume(run.id)
    done = await rt2.wait(run.id)
    assert done.status == RunStatus.COMPLETED and done.result == {"values": [1, 2, 3, 4]}
    assert done.error is None  # the outage's reason went with the pause
    back.assert_consumed()


async def test_fork_of_a_failed_run_defaults_to_before_the_failure() -> None:
    store = MemoryStore()
    bad = ModelOutputError("the reply was not a number")
    rt = Runtime(store, model=Failing(["1"], fail_on=2, error=bad), registry=make_registry())
    failed = await rt.run("test.counter", {"target": 3})
    assert failed.status == RunStatus.FAILED
    fork_rt = Runtime(store, model=ScriptedModel(["2", "3"]), registry=make_registry())
    forked = await fork_rt.fork(failed.id)
    assert fork_rt.get_run(forked).forked_at_seq == failed.last_seq - 2
    await fork_rt.resume(forked)
    done = await fork_rt.wait(forked)
    assert done.status == RunStatus.COMPLETED, done.error
    assert done.result == {"values": [1, 2, 3]}


class Cli:
    """``python -m kforge --db DB ...`` in a subprocess, against ``endpoint``."""

    def __init__(self, tmp_path: Path, endpoint: SchemaEndpoint) -> None:
        self.db, self.cwd = tmp_path / "k.db", tmp_path
        self.env = {
            **os.environ,
            "OPENAI_API_KEY": "test-key",
            "KFORGE_BASE_URL": endpoint.base_url,
            "PYTHONPATH": os.pathsep.join([str(SRC), os.environ.get("PYTHONPATH", "")]),
        }

    def __call__(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "kforge", "--db", str(self.db), *args],
            capture_output=True,
            text=True,
            env=self.env,
            cwd=self.cwd,
            timeout=300,
        )

    def frames(self, run_id: str) -> list[Frame]:
        store = SQLiteStore(self.db)
        try:
            return list(store.read_frames(run_id))
        finally:
            store.close()


def run_id_of(stderr: str) -> str:
    return next(line.split()[1] for line in stderr.splitlines() if line.startswith("run "))


def test_an_endpoint_down_then_back_pauses_and_resumes_to_completion(tmp_path: Path) -> None:
    with SchemaEndpoint() as endpoint:
        kforge_cli = Cli(tmp_path, endpoint)
        endpoint.down = True
        first = kforge_cli("research", "What is RAG?", "--model", "openai:fake", "--yes")
        assert first.returncode == 4, first.stderr  # paused, as by a limit
        assert endpoint.refused >= 4  # the retries ran out
        run_id = run_id_of(first.stderr)
        assert "paused (model_unavailable)" in first.stderr
        store = SQLiteStore(kforge_cli.db)
        assert store.get_run(run_id).status == RunStatus.PAUSED
        store.close()

        endpoint.down = False
        resumed = kforge_cli("runs", "resume", run_id, "--yes")
        assert resumed.returncode == 0, resumed.stderr
        assert f"run {run_id} completed" in resumed.stderr
        calls = [f for f in kforge_cli.frames(run_id) if isinstance(f, ModelCall)]
        assert len(calls) == endpoint.answered  # every answered call recorded once


def test_an_outage_while_grading_records_no_verdict_and_the_resumed_answer_uses_the_documents(
    tmp_path: Path,
) -> None:
    # the second grading call is the last one answered: the endpoint is down from then on
    with SchemaEndpoint(hold_at=2) as endpoint:
        kforge_cli = Cli(tmp_path, endpoint)

        def go_down() -> None:
            endpoint.holding.wait(120)
            endpoint.down = True
            endpoint.release.set()

        threading.Thread(target=go_down, daemon=True).start()
        question = "What is retrieval-augmented generation?"
        first = kforge_cli("ask", question, "--model", "openai:fake", "--retries", "0")
        assert first.returncode == 4, first.stderr
        run_id = run_id_of(first.stderr)
        reason = f"cannot reach openai:fake at {endpoint.base_url}: it answered HTTP 503"
        assert f"kforge: {reason} (endpoint down)" in first.stderr
        assert "paused (model_unavailable)" in first.stderr
        assert first.stdout == ""  # no answer was printed

        frames = kforge_cli.frames(run_id)
        calls = [f for f in frames if isinstance(f, ModelCall)]
        assert [c.purpose for c in calls] == ["grading", "grading"]  # only what was answered
        recorded = " ".join(json.dumps(frame_to_dict(f)) for f in frames[:-1])
        assert "HTTP 503" not in recorded and "could not be graded" not in recorded
        assert not any(isinstance(f, DataEvent) and f.name == "answer.checked" for f in frames)
        assert reason in frames[-1].reason  # type: ignore[attr-defined]

        shown = kforge_cli("runs", "show", run_id)
        assert f"why        {reason} (endpoint down); still failing after 1 attempt" in shown.stdout
        explained = kforge_cli("runs", "explain", run_id, "-v")
        assert f"model_unavailable: {reason} (endpoint down); still failing after 1 attempt" in (
            explained.stdout
        )

        endpoint.down = False
        resumed = kforge_cli("runs", "resume", run_id)
        assert resumed.returncode == 0, resumed.stderr
        frames = kforge_cli.frames(run_id)
        grades = [f for f in frames if isinstance(f, ModelCall) and f.purpose == "grading"]
        assert len(grades) == 5  # every passage graded by the model once, none by the outage
        found = [f for f in frames if isinstance(f, DataEvent) and f.name == "source.found"]
        assert found  # the answer stands on the documents
        store = SQLiteStore(kforge_cli.db)
        done = store.get_run(run_id)
        store.close()
        assert done.status == RunStatus.COMPLETED and done.error is None
        assert done.result is not None and done.result["citations"]
        assert "general knowledge" not in done.result["answer"]


class HungEndpoint(SchemaEndpoint):
    """Takes every request and never answers it (until the endpoint closes)."""

    def __init__(self) -> None:
        super().__init__()
        self.hung = 0

    def _reply(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        with self._lock:
            self.hung += 1
        self.release.wait(120)
        return 503, {"error": {"message": "closing"}}


def test_a_hung_endpoint_is_noticed_at_the_first_call_and_the_pause_says_why(
    tmp_path: Path,
) -> None:
    with HungEndpoint() as endpoint:
        kforge_cli = Cli(tmp_path, endpoint)
        question = "What is retrieval-augmented generation?"
        args = ("--model", "openai:fake", "--timeout", "1", "--retries", "0")
        first = kforge_cli("ask", question, *args)
        assert first.returncode == 4, first.stderr
        assert endpoint.hung == 1  # the first call that timed out ended the stretch
        assert (
            f"kforge: cannot reach openai:fake at {endpoint.base_url}: no answer within 1.0 s "
            "(1 attempt); check the server or allow more time: kforge --timeout SECONDS"
        ) in first.stderr


def test_research_paused_while_grading_resumes_with_every_passage_graded(tmp_path: Path) -> None:
    # the decomposition and two grades are answered; the endpoint is down from the third grade
    with SchemaEndpoint(hold_at=3) as endpoint:
        kforge_cli = Cli(tmp_path, endpoint)

        def go_down() -> None:
            endpoint.holding.wait(120)
            endpoint.down = True
            endpoint.release.set()

        threading.Thread(target=go_down, daemon=True).start()
        question = "What is retrieval-augmented generation?"
        first = kforge_cli(
            "research", question, "--model", "openai:fake", "--retries", "0", "--yes"
        )
        assert first.returncode == 4, first.stderr
        run_id = run_id_of(first.stderr)
        assert f"kforge: cannot reach openai:fake at {endpoint.base_url}" in first.stderr
        frames = kforge_cli.frames(run_id)
        recorded = " ".join(json.dumps(frame_to_dict(f)) for f in frames[:-1])
        assert "HTTP 503" not in recorded and "could not be graded" not in recorded
        assert sum(isinstance(f, ModelCall) for f in frames) == endpoint.answered == 3

        endpoint.down = False
        resumed = kforge_cli("runs", "resume", run_id, "--yes")
        assert resumed.returncode == 0, resumed.stderr
        frames = kforge_cli.frames(run_id)
        assert sum(isinstance(f, ModelCall) for f in frames) == endpoint.answered
        # the outage is on record as the pause, never as a verdict
        verdicts = [f for f in frames if not isinstance(f, StatusChanged)]
        recorded = " ".join(json.dumps(frame_to_dict(f)) for f in verdicts)
        assert "HTTP 503" not in recorded and "could not be graded" not in recorded
        graded = [f.payload for f in frames if isinstance(f, DataEvent) and f.name == "rag.graded"]
        assert graded and graded[0]["relevant"] > 0


async def test_a_tool_whose_model_is_unreachable_pauses_the_run_instead_of_failing() -> None:
    down = ModelUnavailableError("cannot reach test at http://127.0.0.1:9/v1: connection refused")
    outages = [down]

    @tool(read_only=True)
    def summarize(text: str) -> str:
        """Summarize a text with the model.

        Args:
            text: The text.
        """
        if outages:
            raise outages.pop()
        return "a short summary"

    step = {"thought": "summarize", "action": "tool_call", "tool": "summarize"}
    store = MemoryStore()
    model = ScriptedModel([{**step, "arguments": {"text": "long text"}}])
    run = await agent_runtime(model, summarize, store=store).run("react", {"goal": "Summarize"})
    assert run.status == RunStatus.PAUSED and run.pause_reason == "model_unavailable"
    assert run.error == str(down)
    assert not [f for f in store.read_frames(run.id) if isinstance(f, ToolResultFrame)]

    observed = {"observation": "The summary is there.", "goal_achieved": True}
    back = ScriptedModel([observed, "A short summary."])  # the decision is not asked again
    rt = agent_runtime(back, summarize, store=store)
    await rt.resume(run.id)
    done = await rt.wait(run.id)
    assert done.status == RunStatus.COMPLETED, done.error
    [result] = [f for f in store.read_frames(run.id) if isinstance(f, ToolResultFrame)]
    assert result.success
    back.assert_consumed()
