"""The worker threads that run blocking tool functions."""

from __future__ import annotations

import asyncio
import contextvars
import os
import subprocess
import sys
import threading
import time

import pytest

from kforge.tools import tool
from kforge.tools.threads import INLINE_AFTER, INLINE_WITHIN_S, WorkerPool, run_blocking

REQUEST = contextvars.ContextVar("request", default="none")


async def test_results_exceptions_and_context_reach_the_caller() -> None:
    pool = WorkerPool(2)
    REQUEST.set("r-1")
    caller = threading.get_ident()
    assert await pool.run(lambda a, b=0: (a + b, REQUEST.get()), 2, b=3) == (5, "r-1")
    assert await pool.run(threading.get_ident) != caller
    with pytest.raises(ZeroDivisionError):
        await pool.run(lambda: 1 / 0)
    assert await pool.run(len, "abc") == 3  # a failure leaves the worker usable


async def test_blocking_calls_run_side_by_side_up_to_the_bound() -> None:
    pool = WorkerPool(4)
    # each call waits for all four: they only get past the barrier if they run side by side
    together = threading.Barrier(4, timeout=10)
    assert sorted(await asyncio.gather(*(pool.run(together.wait) for _ in range(4)))) == [
        0,
        1,
        2,
        3,
    ]
    assert pool.workers == 4
    await asyncio.gather(*(pool.run(time.sleep, 0.01) for _ in range(10)))
    assert pool.workers == 4  # the bound holds; the extra jobs waited their turn


async def test_workers_are_reused_not_started_per_call() -> None:
    pool = WorkerPool(8)
    for _ in range(20):
        await pool.run(time.sleep, 0)
    assert pool.workers == 1


async def test_a_caller_that_stops_waiting_leaves_the_pool_working() -> None:
    pool = WorkerPool(1)
    release = threading.Event()
    with pytest.raises(TimeoutError):
        async with asyncio.timeout(0.05):
            await pool.run(release.wait, 5)
    release.set()  # the abandoned job ends; its result goes nowhere
    assert await pool.run(lambda: "next") == "next"


def test_a_job_outliving_its_loop_is_dropped_quietly() -> None:
    pool = WorkerPool(1)
    started, release = threading.Event(), threading.Event()

    def hold() -> bool:
        started.set()
        return release.wait(5)

    async def abandon() -> None:
        job = asyncio.ensure_future(pool.run(hold))
        assert await asyncio.to_thread(started.wait, 5)
        job.cancel()

    asyncio.run(abandon())
    release.set()  # settles into a closed loop
    assert asyncio.run(pool.run(lambda: 7)) == 7


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_a_forked_child_starts_its_own_workers() -> None:
    script = (
        "import asyncio, os, sys\n"
        "from kforge.tools.threads import run_blocking\n"
        "assert asyncio.run(run_blocking(sum, [1, 2])) == 3\n"
        "pid = os.fork()\n"
        "if pid == 0:\n"
        "    os._exit(0 if asyncio.run(run_blocking(sum, [3, 4])) == 7 else 1)\n"
        "_, status = os.waitpid(pid, 0)\n"
        "sys.exit(os.waitstatus_to_exitcode(status))\n"
    )
    done = subprocess.run([sys.executable, "-c", script], timeout=30, capture_output=True)
    assert done.returncode == 0, done.stderr.decode()


async def test_sync_tools_run_off_the_event_loop() -> None:
    loop_thread = threading.get_ident()

    @tool
    def where() -> bool:
        """Say whether this runs on the event loop's thread."""
        return threading.get_ident() == loop_thread

    result = await where.execute({})
    assert result.text == "false"
    assert await run_blocking(threading.get_ident) != loop_thread


async def test_a_quick_closed_world_read_only_tool_moves_onto_the_callers_thread() -> None:
    loop_thread = threading.get_ident()
    REQUEST.set("outer")

    @tool(read_only=True)
    def where() -> bool:
        """Say whether this runs on the event loop's thread (and try to change the context)."""
        REQUEST.set("inner")
        return threading.get_ident() == loop_thread

    seen = [(await where.execute({})).text for _ in range(INLINE_AFTER + 2)]
    assert seen == ["false"] * INLINE_AFTER + ["true"] * 2
    assert REQUEST.get() == "outer"  # the tool ran in a copy of the caller's context


async def test_tools_that_may_block_or_act_stay_on_worker_threads() -> None:
    loop_thread = threading.get_ident()

    def on_loop() -> bool:
        return threading.get_ident() == loop_thread

    acting = tool(on_loop, name="acting")  # not read-only
    reaching_out = tool(read_only=True, open_world=True, name="reaching_out")(on_loop)

    @tool(read_only=True)
    def slow() -> bool:
        """Take longer than a hand-off to a thread costs."""
        time.sleep(INLINE_WITHIN_S * 4)
        return on_loop()

    for each in (acting, reaching_out, slow):
        seen = {(await each.execute({})).text for _ in range(INLINE_AFTER + 2)}
        assert seen == {"false"}, each.name


async def test_one_slow_call_sends_a_tool_back_to_worker_threads_for_good() -> None:
    loop_thread = threading.get_ident()
    slow = [False]

    @tool(read_only=True)
    def sometimes_slow() -> bool:
        """Quick unless told otherwise."""
        if slow[0]:
            time.sleep(INLINE_WITHIN_S * 4)
        return threading.get_ident() == loop_thread

    for _ in range(INLINE_AFTER):
        await sometimes_slow.execute({})
    slow[0] = True
    assert (await sometimes_slow.execute({})).text == "true"  # it ran inline, and overran
    slow[0] = False
    seen = {(await sometimes_slow.execute({})).text for _ in range(INLINE_AFTER + 2)}
    assert seen == {"false"}


async def test_a_quick_tool_that_cannot_run_on_the_loop_s_thread_still_works() -> None:
    @tool(read_only=True)
    def own_loop() -> str:
        """Work only where no event loop runs (as code calling asyncio.run inside does)."""
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return "ok"
        raise RuntimeError("asyncio.run() cannot be called from a running event loop")

    results = [(await own_loop.execute({})).text for _ in range(INLINE_AFTER + 3)]
    assert results == ["ok"] * (INLINE_AFTER + 3)
