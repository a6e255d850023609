"""Worker threads for blocking tool functions.

``asyncio.to_thread`` reaches a thread through the loop's default executor: a
``concurrent.futures.Future`` with its condition variable, an asyncio future chained to it, and
callbacks in both directions. A sync tool call pays all of that on every call. Here a worker
takes the job from a C queue and settles the caller's asyncio future itself with one
``call_soon_threadsafe``. The calling context (``contextvars``) travels with the job, as with
``to_thread``.

Workers are daemon threads, started on demand up to a bound and reused; a tool still running
when its caller gave up (a timeout) finishes in the background and its result is dropped.

A read-only tool that reaches nothing outside (no ``open_world``) and has proven quick on its
worker thread several times in a row runs on the caller's thread instead (``Placement``): the
hand-off costs more than such a call (an addition, a lookup in memory). One call over the bound
sends it back to worker threads for good, so at most one call ever holds the event loop longer,
and only that call cannot be stopped by its timeout; a call that fails there runs again on a
worker thread (where it may work: ``asyncio.run`` inside, say) and sends it back too.
"""

from __future__ import annotations

import asyncio
import contextvars
import os
import queue
import threading
import time
from collections.abc import Callable
from typing import Any, TypeVar

__all__ = [
    "INLINE_AFTER",
    "INLINE_WITHIN_S",
    "Placement",
    "WorkerPool",
    "run_blocking",
    "run_placed",
]

T = TypeVar("T")

_Job = tuple[
    asyncio.AbstractEventLoop,
    "asyncio.Future[Any]",
    contextvars.Context,
    Callable[..., Any],
    tuple[Any, ...],
    dict[str, Any],
]


def _settle(future: asyncio.Future[Any], value: Any, failed: bool) -> None:
    if not future.done():  # the caller may have stopped waiting (timeout, cancellation)
        if failed:
            future.set_exception(value)
        else:
            future.set_result(value)


class WorkerPool:
    """Runs blocking callables on reused threads for asyncio callers."""

    def __init__(self, max_workers: int | None = None, *, name: str = "kforge-worker") -> None:
        self.max_workers = max_workers or min(32, (os.cpu_count() or 1) + 4)
        self.name = name
        self._reset()
        # a forked child has none of the parent's threads: start from an empty pool there
        os.register_at_fork(after_in_child=self._reset)

    def _reset(self) -> None:
        self._jobs: queue.SimpleQueue[_Job] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._workers = 0
        self._idle = 0
        """Workers not running a job."""
        self._queued = 0
        """Jobs put in the queue that no worker has taken yet."""

    @property
    def workers(self) -> int:
        return self._workers

    async def run(self, func: Callable[..., T], /, *args: Any, **kwargs: Any) -> T:
        """``func(*args, **kwargs)`` on a worker thread, in a copy of the current context."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[T] = loop.create_future()
        self._submit((loop, future, contextvars.copy_context(), func, args, kwargs))
        return await future

    def _submit(self, job: _Job) -> None:
        with self._lock:
            self._jobs.put(job)
            self._queued += 1
            if self._queued > self._idle and self._workers < self.max_workers:
                self._workers += 1
                self._idle += 1
                threading.Thread(
                    target=self._work,
                    args=(self._jobs, self._lock),
                    name=f"{self.name}-{self._workers}",
                    daemon=True,
                ).start()

    def _work(self, jobs: queue.SimpleQueue[_Job], lock: threading.Lock) -> None:
        while True:
            loop, future, context, func, args, kwargs = jobs.get()
            with lock:
                self._queued -= 1
                self._idle -= 1
            try:
                value: Any = context.run(func, *args, **kwargs)
                failed = False
            except BaseException as exc:  # handed to the caller, as to_thread does
                value, failed = exc, True
            # idle again before the caller hears back, so that its next call finds this worker
            with lock:
                self._idle += 1
            try:
                loop.call_soon_threadsafe(_settle, future, value, failed)
            except RuntimeError:  # the caller's loop has closed: nobody is waiting
                pass
            del loop, future, context, func, args, kwargs, value


_pool = WorkerPool(name="kforge-tool")

INLINE_WITHIN_S = 0.0005
"""A call this quick (on its worker thread) costs less than handing it to the thread."""
INLINE_AFTER = 3
"""Quick calls in a row after which a tool runs on the caller's thread."""


class Placement:
    """Where one blocking tool's calls run: on worker threads until ``INLINE_AFTER`` calls in
    a row took at most ``INLINE_WITHIN_S`` each, then on the caller's thread while they stay
    that quick; one slower call (or a tool not ``eligible``) keeps it on worker threads."""

    __slots__ = ("_quick",)

    def __init__(self, eligible: bool) -> None:
        self._quick = 0 if eligible else -1
        """Quick calls in a row; -1: never inline."""

    @property
    def inline(self) -> bool:
        return self._quick >= INLINE_AFTER

    def ran(self, seconds: float) -> None:
        if self._quick < 0:
            return
        self._quick = self._quick + 1 if seconds <= INLINE_WITHIN_S else -1


def _timed(
    context: contextvars.Context, func: Callable[..., T], kwargs: dict[str, Any]
) -> tuple[T, float]:
    started = time.perf_counter()
    value = context.run(func, **kwargs)
    return value, time.perf_counter() - started


async def run_placed(placement: Placement, func: Callable[..., T], kwargs: dict[str, Any]) -> T:
    """``func(**kwargs)`` where ``placement`` says (in a copy of the current context either
    way), noting how long it took."""
    if placement._quick < 0:
        return await _pool.run(func, **kwargs)
    context = contextvars.copy_context()
    if placement.inline:
        try:
            value, seconds = _timed(context, func, kwargs)
        except Exception:
            # it may need a thread of its own (asyncio.run inside, a thread-bound client): it
            # is read-only, so it runs again where it always ran, and stays there
            placement.ran(float("inf"))
            return await _pool.run(func, **kwargs)
    else:
        value, seconds = await _pool.run(_timed, context, func, kwargs)
    placement.ran(seconds)
    return value


async def run_blocking(func: Callable[..., T], /, *args: Any, **kwargs: Any) -> T:
    """Run a blocking ``func`` on kforge's shared worker threads and wait for its result."""
    return await _pool.run(func, *args, **kwargs)
