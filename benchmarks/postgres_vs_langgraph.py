"""kforge on PostgreSQL vs LangGraph 1.2 + PostgresSaver, on the same server and workload.

The workload is ``runtime_vs_langgraph.py``'s K-step tool loop. Measured: µs per step with
durable commits, database bytes after K steps, resume latency after a pause for a human answer,
and the throughput of many short runs spread over 1, 2 and 4 ``kforge worker`` processes (the
dbos executor): runs per second (and per core) and the 95th percentile of a run's latency (queued
to done), each beside a plain DBOS workflow doing the same steps (``_dbos_plain_side.py``).
LangGraph is never a kforge dependency: its half runs in ``_langgraph_postgres_side.py`` under
a virtual environment this script creates beside it. The server is a throwaway one started with
``scripts/postgres`` (fsync on), unless ``--url`` names one this script may create databases on.

    python benchmarks/postgres_vs_langgraph.py --json results.json
    python benchmarks/postgres_vs_langgraph.py --skip-langgraph --k 20 --runs 40
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import secrets
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager as ContextManager
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import psycopg  # noqa: E402

from _dbos_plain_side import plain_dbos_throughput, worker_processes  # noqa: E402
from _round_trips import traced  # noqa: E402
from _worker_cold import worker_resume  # noqa: E402
from kforge.engine.registry import AgentRegistry  # noqa: E402
from kforge.llm.testing.function import CallInfo, FunctionModel  # noqa: E402
from kforge.llm.testing.scripted import ScriptedModel  # noqa: E402
from kforge.llm.types import Message, ToolCall  # noqa: E402
from kforge.runtime.runtime import Runtime  # noqa: E402
from kforge.store.base import RunStatus  # noqa: E402
from kforge.store.postgres import PostgresStore  # noqa: E402
from runtime_vs_langgraph import (  # noqa: E402
    AGENT_TYPE,
    ANSWER,
    AddLoopAgent,
    _check_completed,
    _limits,
    median_of_rounds,
    script,
    settle_disk,
    step_timing,
)

SIDE = HERE / "_langgraph_postgres_side.py"
VENV = HERE / ".venv-langgraph-postgres"
REQUIREMENTS = (
    "langgraph>=1.2,<1.3",
    "langgraph-checkpoint-sqlite",
    "langgraph-checkpoint-postgres",
    "psycopg[binary]",
)
SCRIPT = HERE.parent / "scripts" / "postgres"
LEVELS = ("off", "on")
HEADLINE = "on"
"""``synchronous_commit`` levels measured; the headline waits for the WAL flush (fsync)."""
TARGETS: dict[str, tuple[str, str, float | None]] = {
    "us_per_step": ("kforge_us_per_step", "langgraph_us_per_step", 0.15),
    "bytes": ("kforge_bytes", "langgraph_bytes", 1 / 10),
    "resume": ("kforge_resume_ms", "langgraph_resume_ms", 0.15),
    "resume_cold": ("kforge_resume_cold_ms", "langgraph_resume_cold_ms", None),
    "resume_worker": ("kforge_resume_worker_ms", "langgraph_resume_worker_ms", 0.25),
}
"""kforge / LangGraph must not exceed the limit (None: a ratio with no target). The cold one is a worker's first resume (the
usual case): a new process whose connection was opened (and, for kforge, warmed) when it
started, before the clock; the cold resume that opens its own connection on the clock has no
target, since connecting alone costs the server more than a quarter of LangGraph's time."""


def registry() -> AgentRegistry:
    found = AgentRegistry()
    found.register(AGENT_TYPE, AddLoopAgent)
    return found


def add_loop_model(k: int) -> FunctionModel:
    """The scripted model of ``script(k)`` as a function of the conversation, so that many runs
    can share it: K calls to ``add``, then the answer."""

    def reply(messages: Sequence[Message], info: CallInfo) -> ToolCall | str:
        done = sum(1 for m in messages if m.role == "tool")
        if done < k:
            return ToolCall("add", {"a": done, "b": 1}, f"call_{done}")
        return f"The total is {k}."

    return FunctionModel(reply, name="bench:add-loop")


class Databases:
    """Fresh databases on one server, dropped at the end."""

    def __init__(self, admin_url: str) -> None:
        self.admin_url = admin_url
        self.made: list[str] = []
        self.synchronous_commit = "on"
        """What new databases set: "on" waits for the WAL flush (fsync) at each commit, "off"
        does not (a server crash may lose the last commits, as SQLite's NORMAL may)."""

    def fresh(self) -> str:
        name = f"bench_{secrets.token_hex(5)}"
        with psycopg.connect(self.admin_url, autocommit=True) as conn:
            conn.execute(f"CREATE DATABASE {name}")
            conn.execute(
                f"ALTER DATABASE {name} SET synchronous_commit = {self.synchronous_commit}"
            )
        self.made.append(name)
        return urlunsplit(urlsplit(self.admin_url)._replace(path=f"/{name}"))

    def drop_all(self) -> None:
        with psycopg.connect(self.admin_url, autocommit=True) as conn:
            for name in self.made:
                conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


def table_bytes(url: str) -> int:
    """Bytes of every table in the public schema, with its indexes and TOAST (both sides)."""
    with psycopg.connect(url) as conn:
        row = conn.execute(
            "SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0) FROM pg_class c "
            "JOIN pg_namespace n ON n.oid = c.relnamespace "
            "WHERE n.nspname = 'public' AND c.relkind = 'r'"
        ).fetchone()
    return int(row[0]) if row else 0


StepTimingStore = step_timing(PostgresStore)


async def kforge_loop(url: str, k: int) -> float:
    """Seconds for one K-step run from ``start`` to its final answer."""
    model = ScriptedModel(script(k))
    runtime = Runtime(PostgresStore(url), model=model, registry=registry())
    started = time.perf_counter()
    run = await runtime.run(AGENT_TYPE, {}, limits=_limits(k))
    elapsed = time.perf_counter() - started
    await runtime.aclose()
    _check_completed(run.status, run.result, k)
    return elapsed


async def kforge_resume(url: str, k: int) -> tuple[float, float]:
    """(warm, cold) seconds from resuming a run paused at K/2 in a fresh runtime until its next
    step commits; cold also counts opening the store (its pool and migration check)."""
    pause_at, replies = k // 2, script(k)
    first = Runtime(
        PostgresStore(url), model=ScriptedModel(replies[:pause_at]), registry=registry()
    )
    run = await first.run(AGENT_TYPE, {"pause_at": pause_at}, limits=_limits(k))
    await first.aclose()
    if run.status != RunStatus.AWAITING_USER:
        raise RuntimeError(f"the kforge run did not pause for the question ({run.status})")
    cold_start = time.perf_counter()
    store = StepTimingStore(url)
    runtime = Runtime(store, model=ScriptedModel(replies[pause_at:]), registry=registry())
    started = time.perf_counter()
    await runtime.resume(run.id, ANSWER)
    done = await runtime.wait(run.id)
    await runtime.aclose()
    _check_completed(done.status, done.result, k)
    if store.step_committed_at is None:
        raise RuntimeError("no step was committed after the resume")
    return store.step_committed_at - started, store.step_committed_at - cold_start


async def kforge_resume_trips(url: str, k: int) -> dict[str, int]:
    """Round trips and statements of a cold resume (``kforge_resume``, untimed): opening the
    store, then the resume until its next step commits."""
    pause_at, replies = k // 2, script(k)
    first = Runtime(
        PostgresStore(url), model=ScriptedModel(replies[:pause_at]), registry=registry()
    )
    run = await first.run(AGENT_TYPE, {"pause_at": pause_at}, limits=_limits(k))
    await first.aclose()
    counts: dict[str, int] = {}
    with tempfile.TemporaryDirectory() as folder, traced(Path(folder) / "trace") as tracer:

        class CountingStore(StepTimingStore):  # type: ignore[misc,valid-type]
            def commit(self, *args: Any, **kwargs: Any) -> None:
                super().commit(*args, **kwargs)
                if kwargs.get("step") is not None and not counts.get("resume_round_trips"):
                    done = tracer.count()
                    counts.update({f"resume_{key}": value for key, value in done.items()})

        store = CountingStore(url)
        counts.update({f"open_{key}": value for key, value in tracer.count().items()})
        runtime = Runtime(store, model=ScriptedModel(replies[pause_at:]), registry=registry())
        await runtime.resume(run.id, ANSWER)
        done = await runtime.wait(run.id)
        await runtime.aclose()
    _check_completed(done.status, done.result, k)
    return counts


async def kforge_side(
    dbs: Databases, k: int, resume_k: int, samples: int, worker_samples: int = 0
) -> dict[str, Any]:
    await kforge_loop(dbs.fresh(), 3)  # warm-up: lazy imports, caches
    per_step = await kforge_loop(dbs.fresh(), k) * 1e6 / k
    bytes_url, half_url = dbs.fresh(), dbs.fresh()
    await kforge_loop(bytes_url, k)
    await kforge_loop(half_url, k // 2)
    resumes = [await kforge_resume(dbs.fresh(), resume_k) for _ in range(samples)]
    return {
        "us_per_step": per_step,
        "bytes": table_bytes(bytes_url),
        "bytes_per_step": (table_bytes(bytes_url) - table_bytes(half_url)) / (k - k // 2),
        "resume_ms": statistics.median(w for w, _ in resumes) * 1e3,
        "resume_cold_ms": statistics.median(c for _, c in resumes) * 1e3,
        **await kforge_resume_trips(dbs.fresh(), resume_k),
        **await worker_figures(dbs, resume_k, worker_samples),
    }


async def worker_figures(dbs: Databases, k: int, samples: int) -> dict[str, float]:
    """The median of ``samples`` first resumes in new processes (``_worker_cold.py``), if any."""
    if not samples:
        return {}
    found = [await worker_resume(dbs.fresh(), k) for _ in range(samples)]
    return {"resume_worker_ms": statistics.median(found) * 1e3}


# -- throughput over workers -----------------------------------------------------------------


def worker_main(url: str, k: int, concurrency: int) -> None:
    """A ``kforge worker`` for the add loop (its model is a function, not a spec)."""
    from kforge.runtime.worker import run_worker

    stop = threading.Event()
    threading.Thread(target=lambda: (sys.stdin.read(), stop.set()), daemon=True).start()
    run_worker(
        url,
        concurrency=concurrency,
        model=add_loop_model(k),
        registry=registry(),
        stop=stop,
        on_ready=lambda owner: print(owner, flush=True),
        poll_s=0.05,
    )


def workers(url: str, count: int, k: int, concurrency: int) -> ContextManager[None]:
    """``count`` ``kforge worker`` processes for the add loop, stopped on leaving."""
    return worker_processes(Path(__file__), count, url, str(k), str(concurrency))


async def throughput(url: str, runs: int, k: int, count: int, concurrency: int) -> dict[str, float]:
    """``runs`` runs started at once and executed by ``count`` workers: runs per second from the
    first start to the last completion, and the p95 of each run's created-to-completed time."""
    runtime = Runtime(
        PostgresStore(url), model="bench:add-loop", registry=registry(), executor="dbos"
    )
    with workers(url, count, k, concurrency):
        started = time.perf_counter()
        ids = [await runtime.start(AGENT_TYPE, {}, limits=_limits(k)) for _ in range(runs)]
        done = [await runtime.wait(run_id) for run_id in ids]
        elapsed = time.perf_counter() - started
    await runtime.aclose()
    for run in done:
        _check_completed(run.status, run.result, k)
    latencies = sorted((r.updated_at - r.created_at).total_seconds() for r in done)
    return {
        "runs_per_s": runs / elapsed,
        "p95_latency_ms": latencies[max(0, round(0.95 * len(latencies)) - 1)] * 1e3,
        "median_latency_ms": statistics.median(latencies) * 1e3,
    }


# -- the LangGraph side ----------------------------------------------------------------------


def ensure_langgraph_env(venv: Path) -> Path:
    """The interpreter of a virtual environment holding LangGraph 1.2 with PostgresSaver."""
    python = venv / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
    check = "import langgraph.checkpoint.postgres, langgraph.checkpoint.sqlite"
    if python.exists() and subprocess.run([str(python), "-c", check]).returncode == 0:
        return python
    if not python.exists():
        print(f"creating {venv} for the LangGraph side ...", file=sys.stderr)
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    print(f"installing {' '.join(REQUIREMENTS)} ...", file=sys.stderr)
    subprocess.run(
        [str(python), "-m", "pip", "install", "--quiet", *REQUIREMENTS],
        check=True,
        stdout=sys.stderr,
    )
    return python


def langgraph_side(
    python: Path, dbs: Databases, k: int, resume_k: int, samples: int, worker_samples: int = 0
) -> dict[str, Any]:
    params = {
        "urls": [dbs.fresh() for _ in range(4 + samples + worker_samples)],
        "k": k,
        "resume_k": resume_k,
        "resume_samples": samples,
        "worker_samples": worker_samples,
    }
    done = subprocess.run(
        [str(python), str(SIDE)], input=json.dumps(params), capture_output=True, text=True
    )
    if done.returncode != 0:
        raise RuntimeError(f"the LangGraph side failed:\n{done.stderr[-4000:]}")
    result: dict[str, Any] = json.loads(done.stdout)
    result["bytes"] = table_bytes(result.pop("bytes_url"))
    half = table_bytes(result.pop("half_url"))
    result["bytes_per_step"] = (result["bytes"] - half) / (k - k // 2)
    return result


# -- the server, the run, the report ---------------------------------------------------------


@contextmanager
def server(url: str | None) -> Iterator[str]:
    """``url``, or a throwaway server's for the length of the benchmark."""
    if url:
        yield url
        return
    started = subprocess.run(
        ["bash", str(SCRIPT), "start", "-c", "max_connections=300"],
        capture_output=True,
        text=True,
        check=True,
    )
    env = dict(
        line.removeprefix("export ").split("=", 1)
        for line in started.stdout.splitlines()
        if line.startswith("export ")
    )
    try:
        yield env["KFORGE_DB"]
    finally:
        subprocess.run(["bash", str(SCRIPT), "stop", env["KFORGE_PG_DIR"]], check=False)


def summarize(kf: dict[str, Any], lg: dict[str, Any] | None, tp: dict[str, Any]) -> dict[str, Any]:
    """Headline keys at the durable level (``synchronous_commit=on``), the same keys suffixed
    ``_async_commit`` for ``off``, ratios against the targets, and throughput per worker count."""
    out: dict[str, Any] = {}
    sides = [("kforge", kf)] + ([("langgraph", lg)] if lg is not None else [])
    for name, side in sides:
        for level, values in side.items():
            suffix = "" if level == HEADLINE else "_async_commit"
            for key, value in values.items():
                if key != "versions":
                    out[f"{name}_{key}{suffix}"] = value
    targets: dict[str, Any] = {}
    if lg is not None:
        for name, (kkey, lkey, limit) in TARGETS.items():
            if kkey not in out or lkey not in out:
                continue  # not measured in this run
            ratio = out[kkey] / out[lkey] if out[lkey] else None
            out[f"ratio_{name}"] = ratio
            if f"{kkey}_async_commit" in out:
                slow = out[f"{lkey}_async_commit"]
                out[f"ratio_{name}_async_commit"] = out[f"{kkey}_async_commit"] / slow
            if limit is None:
                continue
            targets[name] = {
                "value": ratio,
                "limit": limit,
                "pass": ratio is not None and ratio <= limit,
            }
    cpus = os.cpu_count() or 1
    for count, values in tp.items():
        for key, value in values.items():
            side, key = ("dbos", key[5:]) if key.startswith("dbos_") else ("kforge", key)
            out[f"{side}_workers{count}_{key}"] = value
        # the processes share the machine's cores: per core is per process up to their number
        for side in ("kforge", "dbos"):
            if f"{side}_workers{count}_runs_per_s" in out:
                per_core = out[f"{side}_workers{count}_runs_per_s"] / min(count, cpus)
                out[f"{side}_workers{count}_runs_per_s_per_core"] = per_core
    out["targets"] = targets
    return out


def print_table(out: dict[str, Any], workers_counts: list[int]) -> None:
    lg = "langgraph_us_per_step" in out
    rows = [
        ("µs per step", "us_per_step", "{:.0f}"),
        ("database bytes", "bytes", "{:,}"),
        ("bytes per step (K/2 to K)", "bytes_per_step", "{:,.0f}"),
        ("resume latency ms (warm)", "resume_ms", "{:.2f}"),
        ("resume latency ms (cold)", "resume_cold_ms", "{:.2f}"),
        ("resume ms (worker's first)", "resume_worker_ms", "{:.2f}"),
        ("µs per step, async commit", "us_per_step_async_commit", "{:.0f}"),
        ("resume ms, async commit", "resume_ms_async_commit", "{:.2f}"),
        ("store open: round trips", "open_round_trips", "{:.0f}"),
        ("store open: statements", "open_statements", "{:.0f}"),
        ("resume: round trips", "resume_round_trips", "{:.0f}"),
        ("resume: statements", "resume_statements", "{:.0f}"),
    ]
    limits = {kkey: limit for kkey, _, limit in TARGETS.values()}
    print(f"{'metric':<28}{'kforge+PG':>14}{'LangGraph+PG':>16}{'ratio':>9}{'target':>9}")
    for label, key, fmt in rows:
        kfv, lgv = out[f"kforge_{key}"], out.get(f"langgraph_{key}")
        ratio = f"{kfv / lgv:.3f}" if lg and lgv else ""
        limit = limits.get(f"kforge_{key}")
        target = f"≤{limit:.2f}" if limit is not None else ""
        shown = fmt.format(lgv) if lgv is not None else "-"
        print(f"{label:<28}{fmt.format(kfv):>14}{shown:>16}{ratio:>9}{target:>9}")
    print()
    print(
        f"{'workers':<10}{'runs/s':>10}{'per core':>10}{'p95 ms':>10}{'median ms':>11}"
        f"{'plain DBOS runs/s':>19}{'per core':>10}{'kforge/DBOS':>13}"
    )
    for count in workers_counts:
        p, d = f"kforge_workers{count}_", f"dbos_workers{count}_"
        print(
            f"{count:<10}{out[p + 'runs_per_s']:>10.1f}{out[p + 'runs_per_s_per_core']:>10.1f}"
            f"{out[p + 'p95_latency_ms']:>10.0f}{out[p + 'median_latency_ms']:>11.0f}"
            f"{out[d + 'runs_per_s']:>19.1f}{out[d + 'runs_per_s_per_core']:>10.1f}"
            f"{out[p + 'runs_per_s'] / out[d + 'runs_per_s']:>13.3f}"
        )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", metavar="PATH", help="also write the results here")
    parser.add_argument(
        "--url", help="a server to use (a database there this may create others on)"
    )
    parser.add_argument("--k", type=int, default=200, help="steps of the tool loop (default 200)")
    parser.add_argument("--resume-samples", type=int, default=5)
    parser.add_argument(
        "--repeat",
        type=int,
        default=3,
        help="rounds of both sides, alternating which goes first; figures are their medians "
        "(a single run meets whatever the disk's flush latency is at that moment)",
    )
    parser.add_argument("--runs", type=int, default=200, help="short runs for throughput")
    parser.add_argument("--run-k", type=int, default=3, help="steps of each short run")
    parser.add_argument("--workers", default="1,2,4", help="worker counts (default 1,2,4)")
    parser.add_argument("--concurrency", type=int, default=16, help="stretches per worker")
    parser.add_argument("--skip-langgraph", action="store_true")
    parser.add_argument("--langgraph-venv", type=Path, default=VENV)
    parser.add_argument("--worker", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        worker_main(args.worker[0], int(args.worker[1]), int(args.worker[2]))
        return 0
    if args.repeat < 1:
        parser.error("--repeat needs at least one round")
    counts = [int(c) for c in args.workers.split(",")]
    lg_python = None if args.skip_langgraph else ensure_langgraph_env(args.langgraph_venv)
    resume_k = args.k
    kf_rounds: list[dict[str, Any]] = []
    lg_rounds: list[dict[str, Any]] = []
    with server(args.url) as admin:
        dbs = Databases(admin)
        try:
            for round_no in range(args.repeat):
                kf_round: dict[str, Any] = {}
                lg_round: dict[str, Any] = {}
                for level in LEVELS:  # the headline level last: its databases are what stay
                    dbs.synchronous_commit = level
                    sides = ["kforge", "langgraph"] if lg_python is not None else ["kforge"]
                    # a worker's first resume, in new processes: at the headline level only
                    first = args.resume_samples if level == HEADLINE else 0
                    for side in sides if round_no % 2 == 0 else sides[::-1]:
                        settle_disk()
                        if side == "kforge":
                            kf_round[level] = asyncio.run(
                                kforge_side(dbs, args.k, resume_k, args.resume_samples, first)
                            )
                        elif lg_python is not None:
                            lg_round[level] = langgraph_side(
                                lg_python, dbs, args.k, resume_k, args.resume_samples, first
                            )
                kf_rounds.append(kf_round)
                if lg_round:
                    lg_rounds.append(lg_round)
            tp = {}
            for count in counts:  # each beside a plain DBOS workflow doing the same steps
                settle_disk()
                tp[count] = asyncio.run(
                    throughput(dbs.fresh(), args.runs, args.run_k, count, args.concurrency)
                )
                settle_disk()
                plain = plain_dbos_throughput(
                    dbs.fresh(), args.runs, args.run_k, count, args.concurrency
                )
                tp[count].update({f"dbos_{key}": value for key, value in plain.items()})
        finally:
            dbs.drop_all()
    kf: dict[str, Any] = median_of_rounds(kf_rounds)
    lg: dict[str, Any] | None = median_of_rounds(lg_rounds) if lg_rounds else None
    out = summarize(kf, lg, tp)
    out["rounds"] = {"kforge": kf_rounds, "langgraph": lg_rounds}
    out["settings"] = {
        "k": args.k,
        "resume_k": resume_k,
        "resume_samples": args.resume_samples,
        "repeat": args.repeat,
        "runs": args.runs,
        "run_k": args.run_k,
        "concurrency_per_worker": args.concurrency,
        "python": platform.python_version(),
        "machine": platform.machine(),
        "cpus": os.cpu_count(),
        "langgraph_versions": (lg or {}).get(HEADLINE, {}).get("versions"),
        "resume_worker": (
            "cold: a new process's first resume, its connection opened (and warmed, for "
            "kforge, as `kforge worker` does) before the clock starts"
        ),
        "durability": (
            "kforge: the model's reply commits before it is used, then the step (two WAL "
            "flushes a step); LangGraph: durability='sync'; fsync on"
        ),
    }
    print_table(out, counts)
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
