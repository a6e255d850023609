"""Instructions of a committed step and of a resume, counted by callgrind, so that a change's
before and after can be compared on a busy machine (time per step moves with the load, the
instruction count hardly does).

The workload is ``runtime_vs_langgraph.py``'s tool loop on SQLite. A committed step is the count
of a K = 220 run minus a K = 20 run, over 200; a resume is a run paused after 100 steps, resumed
in a new Runtime until its next step commits: the event loop stops at that commit, so the
count ends with the rest of that step's turn of the loop, never the stretch's next step.
``--postgres URL`` counts the resume on PostgreSQL instead (databases made on that server and
dropped after), once warm (the store opened before) and once cold (opening the store counted
too: its connection and schema check); only this process's instructions count, not the
server's. ``--phase`` counts only the instructions inside the functions named (``module.function`` or
``module:Class.method``), each alone; a coroutine function's count holds its own resumptions
and the coroutines it awaits, not what the event loop runs meanwhile.

    python benchmarks/step_instructions.py
    python benchmarks/step_instructions.py --phase kforge.engine.runner.diff_state --json out.json
    python benchmarks/step_instructions.py --postgres "$KFORGE_DB"
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import importlib
import inspect
import json
import operator
import os
import re
import shutil
import subprocess
import sys
import tempfile
import types
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
TOGGLE = "*_operator_call*"
"""Counting is on only inside ``operator.call``: the region or phase measured runs in it."""
SMALL_K, LARGE_K, RESUME_K = 20, 220, 200


def resolve(spec: str) -> tuple[Any, str]:
    """The owner (module or class) and attribute a phase names: ``pkg.mod.func`` or
    ``pkg.mod:Class.method``; SystemExit saying how to write it when it names no function."""
    module, _, rest = spec.partition(":") if ":" in spec else spec.rpartition(".")
    path, attr = rest.rpartition(".")[::2] if ":" in spec else ("", rest)
    try:
        owner: Any = importlib.import_module(module)
        for part in filter(None, path.split(".")):
            owner = getattr(owner, part)
    except (ImportError, AttributeError, ValueError) as exc:
        owner = exc
    if not attr or not callable(getattr(owner, attr, None)):
        raise SystemExit(
            f"--phase {spec!r} names no function ({owner if isinstance(owner, Exception) else attr}"
            "); write module.function or module:Class.method"
        )
    return owner, attr


def count_inside(spec: str) -> None:
    """Make every call of the function ``spec`` names run inside ``operator.call``."""
    owner, attr = resolve(spec)
    inner: Callable[..., Any] = getattr(owner, attr)

    def counted(*args: Any, **kwargs: Any) -> Any:
        return operator.call(inner, *args, **kwargs)

    @types.coroutine
    def driven(coro: Any) -> Any:
        """``coro`` run with each of its resumptions inside ``operator.call`` (what it awaits
        runs on the event loop, outside the count, unless it is a coroutine it awaits)."""
        send, value, error = coro.send, None, None
        while True:
            try:
                if error is None:
                    waited = operator.call(send, value)
                else:
                    waited = operator.call(coro.throw, error)
            except StopIteration as done:
                return done.value
            value = error = None
            try:
                value = yield waited
            except BaseException as exc:  # thrown in by the event loop (a cancel)
                error = exc

    async def counted_async(*args: Any, **kwargs: Any) -> Any:
        return await driven(inner(*args, **kwargs))

    setattr(owner, attr, counted_async if inspect.iscoroutinefunction(inner) else counted)


def _workload() -> Any:
    sys.path.insert(0, str(HERE))
    import kforge.tools.threads as threads
    import runtime_vs_langgraph as bench

    # under valgrind the quick `add` tool takes long enough to be sent to worker threads,
    # which a real run never does: keep it where a real run has it
    threads.INLINE_WITHIN_S = 1.0
    return bench


def inner_step(k: int, phases: Sequence[str]) -> None:
    bench = _workload()
    with tempfile.TemporaryDirectory() as tmp:
        runner = bench.KforgeBench(Path(tmp))
        asyncio.run(runner.run_loop(runner.fresh_db(), 3, "NORMAL"))  # imports, caches
        loop = asyncio.new_event_loop()
        region = runner.run_loop(runner.fresh_db(), k, "NORMAL")
        gc.collect()
        if phases:
            for spec in phases:
                count_inside(spec)
            loop.run_until_complete(region)
        else:
            operator.call(loop.run_until_complete, region)
        loop.close()


def inner_resume(phases: Sequence[str], urls: Sequence[str] = (), cold: bool = False) -> None:
    """A resume on SQLite, or on the PostgreSQL databases ``urls`` (warm-up, measured); ``cold``
    counts opening the store too."""
    bench = _workload()
    from kforge.llm.testing.scripted import ScriptedModel
    from kforge.runtime.runtime import Runtime
    from kforge.store.base import RunStatus
    from kforge.store.sqlite import SQLiteStore

    base: Any = SQLiteStore
    if urls:
        from kforge.store.postgres import PostgresStore

        base = PostgresStore

    class StoppingStore(base):  # type: ignore[misc]
        """Stops the running event loop right after it commits its first step record (where
        ``runtime_vs_langgraph.py`` times a resume's end): the stretch then goes no further in
        that turn of the loop than its next ``await``."""

        step_committed = False

        def commit(self, run_id: str, frames: Sequence[Any], **kwargs: Any) -> None:
            super().commit(run_id, frames, **kwargs)
            if kwargs.get("step") is not None and not self.step_committed:
                self.step_committed = True
                asyncio.get_running_loop().stop()

    half = RESUME_K // 2
    replies = bench.script(RESUME_K)

    async def paused(runner: Any, url: str | None) -> tuple[Any, str]:
        path = url or runner.fresh_db()
        first = Runtime(base(path), model=ScriptedModel(replies[:half]), registry=runner.registry)
        run = await first.run(bench.AGENT_TYPE, {"pause_at": half}, limits=bench._limits(RESUME_K))
        await first.aclose()
        if run.status != RunStatus.AWAITING_USER:
            raise RuntimeError(f"the run did not pause for the question ({run.status})")
        return path, run.id

    async def resume(runtime: Any, store: Any, run_id: str) -> None:
        if runtime is None:  # cold: the store opens in the count
            store = StoppingStore(store)
            runtime = Runtime(store, model=ScriptedModel(replies[half:]), registry=runner.registry)
        await runtime.resume(run_id, bench.ANSWER)
        await runtime.wait(run_id)  # returns only if the loop did not stop at the step's commit
        raise RuntimeError(f"the resumed run committed no step ({store.get_run(run_id).status})")

    def stop(task: asyncio.Task[None]) -> None:
        task.get_loop().stop()

    tmp = tempfile.mkdtemp()
    try:
        runner = bench.KforgeBench(Path(tmp))
        asyncio.run(runner.run_loop(runner.fresh_db(), 3, "NORMAL"))
        for attempt, url in zip(("warm-up", "measured"), urls or (None, None), strict=True):
            path, run_id = asyncio.run(paused(runner, url))
            store: Any = path if cold and attempt == "measured" else StoppingStore(path)
            loop = asyncio.new_event_loop()

            async def opened(store: Any = store) -> Any:
                if isinstance(store, (str, Path)):
                    return None
                return Runtime(store, model=ScriptedModel(replies[half:]), registry=runner.registry)

            runtime = loop.run_until_complete(opened())
            resumed = loop.create_task(resume(runtime, store, run_id))
            resumed.add_done_callback(stop)
            if attempt == "measured":
                gc.collect()
                for spec in phases:
                    count_inside(spec)
            if attempt == "measured" and not phases:
                operator.call(loop.run_forever)
            else:
                loop.run_forever()
            if resumed.done():
                resumed.result()  # why the run committed no step
            if attempt == "warm-up":
                resumed.remove_done_callback(stop)
                resumed.cancel()
                loop.run_until_complete(runtime.wait(run_id))
                loop.run_until_complete(runtime.aclose())
                store.close()
                loop.close()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    # the resumed stretch is left unfinished on purpose (what comes after is not counted): no
    # interpreter shutdown to wait for it
    os._exit(0)


def callgrind(args: Sequence[str], out_dir: Path) -> int:
    """Instructions counted in one run of this script's inner workload under callgrind."""
    out = out_dir / f"callgrind-{len(list(out_dir.iterdir()))}.out"
    env = {**os.environ, "PYTHONHASHSEED": "0"}
    done = subprocess.run(
        [
            "valgrind",
            "--tool=callgrind",
            "--collect-atstart=no",
            f"--toggle-collect={TOGGLE}",
            f"--callgrind-out-file={out}",
            sys.executable,
            str(Path(__file__).resolve()),
            "--inner",
            *args,
        ],
        env=env,
        capture_output=True,
        text=True,
    )
    if done.returncode != 0 or not out.exists():
        raise RuntimeError(f"callgrind run {' '.join(args)} failed:\n{done.stderr[-3000:]}")
    found = re.search(r"^summary:\s*(\d+)", out.read_text(), re.MULTILINE)
    if found is None:
        raise RuntimeError(f"no instruction count in {out}")
    return int(found.group(1))


def measure(phases: Sequence[str]) -> dict[str, Any]:
    targets: list[tuple[str, list[str]]] = [("all", [])] + [(p, ["--phase", p]) for p in phases]
    result: dict[str, Any] = {"step": {}, "resume": {}}
    with tempfile.TemporaryDirectory() as tmp:
        out_dir = Path(tmp)
        for name, extra in targets:
            small = callgrind(["step", str(SMALL_K), *extra], out_dir)
            large = callgrind(["step", str(LARGE_K), *extra], out_dir)
            result["step"][name] = (large - small) / (LARGE_K - SMALL_K)
            result["resume"][name] = callgrind(["resume", *extra], out_dir)
    return result


def measure_postgres(admin_url: str, phases: Sequence[str]) -> dict[str, Any]:
    """Instructions of a warm and of a cold resume on PostgreSQL, each on fresh databases of
    the server ``admin_url`` names (dropped after)."""
    import secrets
    from urllib.parse import urlsplit, urlunsplit

    import psycopg

    targets: list[tuple[str, list[str]]] = [("all", [])] + [(p, ["--phase", p]) for p in phases]
    result: dict[str, Any] = {"resume": {}, "resume_cold": {}}
    made: list[str] = []

    def fresh() -> str:
        name = f"instructions_{secrets.token_hex(5)}"
        with psycopg.connect(admin_url, autocommit=True) as conn:
            conn.execute(f"CREATE DATABASE {name}")
        made.append(name)
        return urlunsplit(urlsplit(admin_url)._replace(path=f"/{name}"))

    try:
        with tempfile.TemporaryDirectory() as tmp:
            for name, extra in targets:
                for key, cold in (("resume", []), ("resume_cold", ["--cold"])):
                    urls = ["--url", fresh(), "--url", fresh()]
                    result[key][name] = callgrind(["resume", *urls, *cold, *extra], Path(tmp))
    finally:
        with psycopg.connect(admin_url, autocommit=True) as conn:
            for name in made:
                conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
    return result


def print_table(result: dict[str, Any]) -> None:
    if "step" not in result:
        print(f"{'instructions (this process)':<60} {'warm resume':>12} {'cold resume':>12}")
        for name, warm in result["resume"].items():
            label = "resume, in all" if name == "all" else f"inside {name}"
            print(f"{label:<60} {warm:>12,} {result['resume_cold'][name]:>12,}")
        print(
            f"\nPostgreSQL. Resume: K={RESUME_K} paused at {RESUME_K // 2}, resumed until its "
            "next step commits; cold also opens the store."
        )
        return
    print(f"{'instructions':<60} {'per step':>12} {'per resume':>12}")
    for name, per_step in result["step"].items():
        label = "committed step / resume, in all" if name == "all" else f"inside {name}"
        print(f"{label:<60} {per_step:>12,.0f} {result['resume'][name]:>12,}")
    print(
        f"\nPer step: (K={LARGE_K} run - K={SMALL_K} run) / {LARGE_K - SMALL_K}, SQLite NORMAL. "
        f"Resume: K={RESUME_K} paused at {RESUME_K // 2}, resumed until its next step commits."
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--phase",
        action="append",
        default=[],
        help="also count inside this function (module.function or module:Class.method)",
    )
    parser.add_argument("--json", type=Path, help="write the counts as JSON to this path")
    parser.add_argument(
        "--postgres",
        metavar="URL",
        help="count resumes on PostgreSQL instead, on databases this makes on that server",
    )
    parser.add_argument("--inner", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.inner:
        kind, *rest = args.inner
        phases = [rest[i + 1] for i, word in enumerate(rest) if word == "--phase"]
        if kind == "step":
            inner_step(int(rest[0]), phases)
        else:
            urls = [rest[i + 1] for i, word in enumerate(rest) if word == "--url"]
            inner_resume(phases, urls, cold="--cold" in rest)
        return 0
    for spec in args.phase:
        resolve(spec)  # a misspelt phase fails now, not after minutes of counting
    if shutil.which("valgrind") is None:
        parser.error("valgrind is not installed (apt install valgrind): it counts instructions")
    result = measure_postgres(args.postgres, args.phase) if args.postgres else measure(args.phase)
    print_table(result)
    if args.json is not None:
        args.json.write_text(json.dumps(result, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
