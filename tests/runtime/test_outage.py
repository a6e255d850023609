"""A model outage that outlasts the retries pauses the run (reason ``model_unavailable``) and the
run resumes once the endpoint is back; a failed run forks by default from before its failure."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import kforge
from kforge.errors import ModelOutputError, ModelUnavailableError
from kforge.frames import ModelCall
from kforge.llm.scripted import ScriptedModel
from kforge.runtime import Runtime
from kforge.store import MemoryStore, RunStatus, SQLiteStore
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
    assert run.error is None and run.lease_owner is None
    last = rt.frames(run.id)[-1]
    assert "cannot reach test" in getattr(last, "reason", "")
    back = ScriptedModel(["3", "4"])  # strict: only the replies never recorded
    rt2 = Runtime(store, model=back, registry=make_registry())
    await rt2.resume(run.id)
    done = await rt2.wait(run.id)
    assert done.status == RunStatus.COMPLETED and done.result == {"values": [1, 2, 3, 4]}
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


def test_an_endpoint_down_then_back_pauses_and_resumes_to_completion(tmp_path: Path) -> None:
    db = tmp_path / "k.db"
    env = {
        **os.environ,
        "OPENAI_API_KEY": "test-key",
        "PYTHONPATH": os.pathsep.join([str(SRC), os.environ.get("PYTHONPATH", "")]),
    }

    def kforge_cli(endpoint: SchemaEndpoint, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "kforge", "--db", str(db), *args],
            capture_output=True,
            text=True,
            env={**env, "KFORGE_BASE_URL": endpoint.base_url},
            cwd=tmp_path,
            timeout=300,
        )

    with SchemaEndpoint() as endpoint:
        endpoint.down = True
        first = kforge_cli(endpoint, "research", "What is RAG?", "--model", "openai:fake", "--yes")
        assert first.returncode == 4, first.stderr  # paused, as by a limit
        assert endpoint.refused >= 4  # the retries ran out
        run_id = next(
            line.split()[1] for line in first.stderr.splitlines() if line.startswith("run ")
        )
        assert "paused (model_unavailable)" in first.stderr
        store = SQLiteStore(db)
        assert store.get_run(run_id).status == RunStatus.PAUSED
        store.close()

        endpoint.down = False
        resumed = kforge_cli(endpoint, "runs", "resume", run_id, "--yes")
        assert resumed.returncode == 0, resumed.stderr
        assert f"run {run_id} completed" in resumed.stderr
        store = SQLiteStore(db)
        calls = [f for f in store.read_frames(run_id) if isinstance(f, ModelCall)]
        store.close()
        assert len(calls) == endpoint.answered  # every answered call recorded once
