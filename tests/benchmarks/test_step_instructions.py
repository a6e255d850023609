"""benchmarks/step_instructions.py: its workloads run, its phases are checked before any
counting, and a counted phase runs inside the call that switches counting on."""

from __future__ import annotations

import asyncio
import operator
import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "step_instructions.py"
sys.path.insert(0, str(SCRIPT.parent))

import step_instructions  # noqa: E402


def _run(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "TMPDIR": str(tmp_path)}
    return subprocess.run(
        [sys.executable, str(SCRIPT), *args], capture_output=True, text=True, env=env
    )


def test_a_phase_that_names_no_function_is_refused_before_any_counting(tmp_path: Path) -> None:
    done = _run(tmp_path, "--phase", "kforge.engine.runner.no_such_function")
    assert done.returncode != 0
    assert "write module.function or module:Class.method" in done.stderr
    with pytest.raises(SystemExit, match="No module named"):
        step_instructions.resolve("kforge.no_such_module.function")


def test_the_step_and_resume_workloads_run_as_callgrind_would_run_them(tmp_path: Path) -> None:
    assert _run(tmp_path, "--inner", "step", "4").returncode == 0
    resumed = _run(tmp_path, "--inner", "resume", "--phase", "kforge.engine.runner.diff_state")
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    assert list(tmp_path.iterdir()) == []  # its databases are gone


_COUNTING_HOOKS = """
async def counted_complete(self, *args, **kwargs):
    counts["model calls"] += 1
    return await complete(self, *args, **kwargs)

def counted_commit(self, run_id, frames, **kwargs):
    counts["steps committed"] += kwargs.get("step") is not None
    return commit(self, run_id, frames, **kwargs)

def measured(func, *args, **kwargs):
    before = dict(counts)
    result = operator.call(func, *args, **kwargs)
    print({name: counts[name] - before[name] for name in counts}, flush=True)
    return result
"""
"""What both counting scripts wrap: the model's calls, the store's step commits, and each
counted region's share of them (printed)."""

_COUNT_RESUMED = (
    """
import operator, sys
sys.path.insert(0, sys.argv[1])
import step_instructions
from kforge.llm.testing.scripted import ScriptedModel
from kforge.store.sqlite import SQLiteStore

counts = {"model calls": 0, "steps committed": 0}
complete, commit = ScriptedModel.complete, SQLiteStore.commit

"""
    + _COUNTING_HOOKS
    + """
ScriptedModel.complete, SQLiteStore.commit = counted_complete, counted_commit
step_instructions.RESUME_K = 6
step_instructions.operator = type("counting", (), {"call": staticmethod(measured)})
step_instructions.inner_resume([])
"""
)


def test_a_counted_resume_ends_at_its_first_step_commit(tmp_path: Path) -> None:
    # the stretch's next step runs in the same turn of the event loop unless the loop stops
    # at that commit: counted, it would add a whole step to the resume
    done = subprocess.run(
        [sys.executable, "-c", _COUNT_RESUMED, str(SCRIPT.parent)],
        capture_output=True,
        text=True,
        env={**os.environ, "TMPDIR": str(tmp_path)},
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "{'model calls': 1, 'steps committed': 1}"


def test_a_counted_phase_runs_inside_operator_call(monkeypatch: pytest.MonkeyPatch) -> None:
    module = ModuleType("counted_phase_example")
    module.double = lambda x: 2 * x  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, module.__name__, module)
    inside: list[Any] = []
    real_call = operator.call

    def call(func: Any, *args: Any, **kwargs: Any) -> Any:
        inside.append(args)
        return real_call(func, *args, **kwargs)

    monkeypatch.setattr(operator, "call", call)
    step_instructions.count_inside("counted_phase_example.double")
    assert module.double(21) == 42
    assert inside == [(21,)]


def test_a_counted_coroutine_runs_each_resumption_inside_operator_call(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    module = ModuleType("counted_coroutine_example")

    async def twice(x: int) -> int:
        await asyncio.sleep(0)  # the event loop runs between the two resumptions
        if x < 0:
            raise ValueError("negative")
        return 2 * x

    async def waits() -> None:
        await asyncio.sleep(10)

    module.twice = twice  # type: ignore[attr-defined]
    module.waits = waits  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, module.__name__, module)
    inside: list[Any] = []
    real_call = operator.call

    def call(func: Any, *args: Any, **kwargs: Any) -> Any:
        inside.append(getattr(func, "__name__", func))
        return real_call(func, *args, **kwargs)

    monkeypatch.setattr(operator, "call", call)
    step_instructions.count_inside("counted_coroutine_example.twice")
    step_instructions.count_inside("counted_coroutine_example.waits")

    async def main() -> None:
        assert await module.twice(21) == 42
        assert inside == ["send", "send"]  # started, then resumed after its sleep
        with pytest.raises(ValueError, match="negative"):
            await module.twice(-1)
        task = asyncio.ensure_future(module.waits())
        await asyncio.sleep(0)
        task.cancel()  # thrown into the counted coroutine, inside the count too
        with pytest.raises(asyncio.CancelledError):
            await task
        assert inside[-1] == "throw"

    asyncio.run(main())


_COUNT_RESUMED_ON_POSTGRES = (
    """
import operator, sys
sys.path.insert(0, sys.argv[1])
import step_instructions
from kforge.llm.testing.scripted import ScriptedModel
from kforge.store.postgres import PostgresStore

counts = {"stores opened": 0, "model calls": 0, "steps committed": 0}
init, complete, commit = PostgresStore.__init__, ScriptedModel.complete, PostgresStore.commit

def counted_init(self, *args, **kwargs):
    counts["stores opened"] += 1
    init(self, *args, **kwargs)

"""
    + _COUNTING_HOOKS
    + """
PostgresStore.__init__ = counted_init
ScriptedModel.complete, PostgresStore.commit = counted_complete, counted_commit
step_instructions.RESUME_K = 6
step_instructions.operator = type("counting", (), {"call": staticmethod(measured)})
step_instructions.inner_resume([], sys.argv[2:4], cold=sys.argv[4] == "cold")
"""
)


@pytest.mark.parametrize("kind", ["warm", "cold"])
def test_a_counted_resume_on_postgresql_opens_its_store_inside_the_count_only_when_cold(
    postgres_server: str, tmp_path: Path, kind: str
) -> None:
    import secrets

    import psycopg

    from tests.postgres import with_database

    names = [f"t_{secrets.token_hex(6)}" for _ in range(2)]
    with psycopg.connect(postgres_server, autocommit=True) as conn:
        for name in names:
            conn.execute(f"CREATE DATABASE {name}")
    try:
        urls = [with_database(postgres_server, name) for name in names]
        done = subprocess.run(
            [sys.executable, "-c", _COUNT_RESUMED_ON_POSTGRES, str(SCRIPT.parent), *urls, kind],
            capture_output=True,
            text=True,
            env={**os.environ, "TMPDIR": str(tmp_path)},
        )
    finally:
        with psycopg.connect(postgres_server, autocommit=True) as conn:
            for name in names:
                conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
    assert done.returncode == 0, done.stderr[-2000:]
    opened = 1 if kind == "cold" else 0
    expected = {"stores opened": opened, "model calls": 1, "steps committed": 1}
    assert done.stdout.strip() == str(expected)
