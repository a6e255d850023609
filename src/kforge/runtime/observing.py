"""Observing runs: their records and frames, waiting for a stretch to end, and following a
run's frames live, here or in another process (the ``Runtime``'s reading methods)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Literal, overload

from kforge.agents.results import AgentResult, read_result
from kforge.engine.registry import AgentRegistry
from kforge.frames import Frame, TokenDelta
from kforge.runtime.bus import EventBus
from kforge.runtime.executor import Executor
from kforge.store.base import TERMINAL_STATUSES, RunLog, RunRecord, RunStatus

__all__ = ["RunObserving"]

_POLL_S = 1.0
"""How often a subscriber to a run executing in another process looks in the store when no
notice came (a store without notices, or one missed while its connection was down)."""


class RunObserving:
    """The reading half of ``Runtime`` (which provides what is declared here)."""

    store: RunLog
    bus: EventBus
    registry: AgentRegistry
    executor: Executor
    _tasks: dict[str, asyncio.Task[RunStatus]]
    _errors: dict[str, BaseException]

    def is_active(self, run_id: str) -> bool:
        return run_id in self._tasks

    async def wait(self, run_id: str) -> RunRecord:
        """Wait until the run's current stretch ends (completed, failed, paused, awaiting_user).

        A stretch that ended with an error instead of a status it could record (another writer
        took the run, the store failed) raises that error, however late this is called. A run
        executing elsewhere (a worker) is waited for until it pauses or ends there.
        """
        if run_id not in self._tasks and self.executor.queued:
            async for _ in self.subscribe(run_id, after_seq=self.store.get_run(run_id).last_seq):
                pass
            return self.store.get_run(run_id)
        task = self._tasks.get(run_id)
        if task is not None:
            try:
                await asyncio.shield(task)
            except asyncio.CancelledError:
                if not task.cancelled():
                    raise
            except Exception:
                pass  # raised below, the same way whenever wait is called
            failed = None if task.cancelled() else task.exception()
            if failed is not None:
                # a stretch that failed before its task's callbacks ran (its first commit, say)
                # has not noted its error yet: the task has it
                raise failed
        error = self._errors.get(run_id)
        if error is not None:
            raise error
        return self.store.get_run(run_id)

    @overload
    def subscribe(
        self,
        run_id: str,
        *,
        after_seq: int = 0,
        follow: bool = False,
        deltas: Literal[False] = False,
    ) -> AsyncIterator[Frame]: ...

    @overload
    def subscribe(
        self, run_id: str, *, after_seq: int = 0, follow: bool = False, deltas: bool
    ) -> AsyncIterator[Frame | TokenDelta]: ...

    async def subscribe(
        self, run_id: str, *, after_seq: int = 0, follow: bool = False, deltas: bool = False
    ) -> AsyncIterator[Frame | TokenDelta]:
        """Frames after ``after_seq``, then live ones. Ends when the run stops executing, or with
        ``follow=True`` only when it reaches a terminal status. With ``deltas=True`` it also
        yields model text streamed while it listens (``TokenDelta``, never stored).

        A run executing in another process (its lease is live there) counts as executing: its
        frames come from the store as that process commits them, announced by the store where
        it can (PostgreSQL), else found by looking every ``poll_s`` seconds."""
        # a run this process executes publishes here: other processes' commits are listened
        # for only once it is not (a one-shot command opens no listening connection)
        listening = run_id not in self._tasks
        queue = self.bus.subscribe(run_id, listen=listening)
        last = after_seq
        try:
            for frame in self.store.read_frames(run_id, after_seq=after_seq):
                last = frame.seq
                yield frame
            woke: list[Frame | TokenDelta | None] = []
            while True:
                # What was published meanwhile comes first, in the order it happened (a run can
                # stream, commit and end before this generator runs again).
                while woke or not queue.empty():
                    item = woke.pop() if woke else queue.get_nowait()
                    if isinstance(item, TokenDelta):
                        if deltas:
                            yield item
                    elif item is not None and item.seq == last + 1:
                        last = item.seq
                        yield item
                run = self.store.get_run(run_id)
                if run.last_seq > last:
                    for frame in self.store.read_frames(run_id, after_seq=last):
                        last = frame.seq
                        yield frame
                    continue
                here = run_id in self._tasks
                if run.status in TERMINAL_STATUSES or (
                    not follow and not here and not self._executing_elsewhere(run)
                ):
                    return
                if here:
                    woke.append(await queue.get())
                    continue
                if not listening:  # listen, then look at the store again before waiting
                    self.bus.listen()
                    listening = True
                    continue
                try:
                    async with asyncio.timeout(_POLL_S):
                        woke.append(await queue.get())
                except TimeoutError:
                    pass
        finally:
            self.bus.unsubscribe(run_id, queue)

    def _executing_elsewhere(self, run: RunRecord) -> bool:
        """Whether another process executes ``run`` now, or will as soon as a worker is free."""
        if self.executor.queued and run.status in (RunStatus.PENDING, RunStatus.RUNNING):
            return True
        return run.is_live()

    def get_run(self, run_id: str) -> RunRecord:
        return self.store.get_run(run_id)

    def result(self, run_id: str) -> AgentResult:
        """The run's result as the type its agent declares (``CitedAnswer`` with ``Citation``
        objects, ``Report``, ``BuildResult``, ...), runs stored by earlier versions too."""
        return read_result(self.store.get_run(run_id), self.registry)

    def frames(self, run_id: str, *, after_seq: int = 0) -> list[Frame]:
        self.store.get_run(run_id)
        return self.store.read_frames(run_id, after_seq=after_seq)
