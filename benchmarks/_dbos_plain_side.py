"""A plain DBOS workflow doing the add loop's steps, beside ``kforge worker`` in
``postgres_vs_langgraph.py``: each iteration is a model-reply step and an ``add`` step, each a
``DBOS.step`` whose output DBOS checkpoints before the workflow goes on (as kforge commits the
reply, then the step). No frames, no agent state, no leases: what durable execution costs on
DBOS alone. This file is also its worker process (``--worker URL K CONCURRENCY``).
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

__all__ = ["plain_dbos_throughput", "worker_processes"]

APP_NAME = "bench_plain_dbos"
APP_VERSION = "bench-plain-1"
QUEUE_NAME = "bench_plain_runs"
WORKFLOW_NAME = "bench_plain_add_loop"
PROMPT = "Add one, K times, with the add tool."


def serve(url: str, k: int, concurrency: int, poll_s: float = 0.05) -> None:
    """Run the workflow's worker until stdin closes; prints a line once it takes work."""
    from dbos import DBOS

    DBOS(
        config={
            "name": APP_NAME,
            "system_database_url": url,
            "application_version": APP_VERSION,
            "log_level": "WARNING",
        }
    )

    @DBOS.step(name="reply")
    def reply(done: int) -> dict[str, Any]:
        """The scripted model's reply after ``done`` tool calls (the kforge side's script)."""
        if done < k:
            return {"name": "add", "arguments": {"a": done, "b": 1}, "id": f"call_{done}"}
        return {"text": f"The total is {k}."}

    @DBOS.step(name="add")
    def add(a: int, b: int) -> int:
        return a + b

    @DBOS.workflow(name=WORKFLOW_NAME)
    def add_loop() -> str:
        messages: list[dict[str, Any]] = [{"role": "user", "content": PROMPT}]
        done = 0
        while True:
            said = reply(done)
            if "text" in said:
                return str(said["text"])
            messages.append({"role": "assistant", "content": "", "tool_calls": [said]})
            result = add(**said["arguments"])
            messages.append({"role": "tool", "content": str(result), "tool_call_id": said["id"]})
            done += 1

    stop = threading.Event()
    threading.Thread(target=lambda: (sys.stdin.read(), stop.set()), daemon=True).start()
    # the same queue settings as kforge's workers take
    queue: dict[str, Any] = {"worker_concurrency": concurrency, "polling_interval_sec": poll_s}
    try:
        DBOS.launch()
        DBOS.register_queue(QUEUE_NAME, on_conflict="always_update", **queue)
        print("ready", flush=True)
        stop.wait()
    finally:
        DBOS.destroy(destroy_registry=True)


@contextmanager
def worker_processes(script: Path, count: int, *args: str) -> Iterator[None]:
    """``count`` processes of ``script --worker ARGS``, each ready once it prints a line; they
    stop when their stdin closes, on leaving."""
    procs = []
    try:
        for _ in range(count):
            proc = subprocess.Popen(
                [sys.executable, str(script), "--worker", *args],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                text=True,
            )
            procs.append(proc)
            assert proc.stdout is not None
            if not proc.stdout.readline():
                raise RuntimeError(f"a worker of {script.name} did not start")
        yield
    finally:
        for proc in procs:
            if proc.stdin is not None:
                proc.stdin.close()  # its signal to stop
        for proc in procs:
            try:
                proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                proc.kill()


def plain_dbos_throughput(
    url: str, runs: int, k: int, count: int, concurrency: int
) -> dict[str, float]:
    """``runs`` workflows enqueued at once and executed by ``count`` worker processes: runs per
    second from the first enqueue to the last result, and the median and p95 of a workflow's
    created-to-done time (the kforge side's measures)."""
    from dbos import DBOS, DBOSClient

    DBOS.migrate(url)
    client = DBOSClient(system_database_url=url, application_name=APP_NAME)
    try:
        with worker_processes(Path(__file__), count, url, str(k), str(concurrency)):
            started = time.perf_counter()
            handles = [
                client.enqueue(
                    {
                        "queue_name": QUEUE_NAME,
                        "workflow_name": WORKFLOW_NAME,
                        "app_version": APP_VERSION,
                    }
                )
                for _ in range(runs)
            ]
            answers = [h.get_result(polling_interval_sec=0.01) for h in handles]
            elapsed = time.perf_counter() - started
            statuses = [h.get_status() for h in handles]
    finally:
        client.destroy()
    if any(a != f"The total is {k}." for a in answers):
        raise RuntimeError(f"a plain DBOS workflow answered {answers[0]!r:.200}")
    latencies = sorted(
        ((s.updated_at or 0) - (s.created_at or 0)) / 1e3 for s in statuses
    )  # DBOS keeps epoch milliseconds
    return {
        "runs_per_s": runs / elapsed,
        "p95_latency_ms": latencies[max(0, round(0.95 * len(latencies)) - 1)] * 1e3,
        "median_latency_ms": statistics.median(latencies) * 1e3,
    }


if __name__ == "__main__" and sys.argv[1:2] == ["--worker"]:
    serve(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
