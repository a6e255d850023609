"""The Executor seam: a queue of one's own receives each stretch, and whoever takes it from the
queue executes it with ``Runtime.execute_stretch`` over the same store."""

from __future__ import annotations

from pathlib import Path

import pytest

from kforge.errors import InvalidRunStateError
from kforge.llm.testing.scripted import ScriptedModel
from kforge.runtime import Runtime
from kforge.runtime.executor import Executor, LocalExecutor
from kforge.store import RunStatus, SQLiteStore
from tests.engine.sample_agents import make_registry


class ListQueue:
    """A queue kept in a list, as a Celery or cloud-queue executor would keep its messages."""

    def __init__(self) -> None:
        self.items: list[tuple[str, int]] = []
        self.closed = False

    @property
    def queued(self) -> bool:
        return True

    def enqueue(self, run_id: str, after_seq: int) -> None:
        if (run_id, after_seq) not in self.items:
            self.items.append((run_id, after_seq))

    def close(self) -> None:
        self.closed = True


async def test_a_queued_executor_gets_each_stretch_and_a_worker_executes_it(
    tmp_path: Path,
) -> None:
    queue = ListQueue()
    assert isinstance(queue, Executor)
    client = Runtime(SQLiteStore(tmp_path / "k.db"), model="test", executor=queue)
    worker = Runtime(
        SQLiteStore(tmp_path / "k.db"),
        model=ScriptedModel([{"items": ["a"]}, {"verdict": "ok"}]),
        registry=make_registry(),
    )
    client.registry = worker.registry
    run_id = await client.start("test.draft", {"topic": "t"})
    assert queue.items == [(run_id, 1)]
    assert client.get_run(run_id).status == RunStatus.PENDING
    assert not client.is_active(run_id)

    assert await worker.execute_stretch(run_id) == RunStatus.AWAITING_USER
    # the answer commits where it is given; the stretch that takes it goes to the queue
    await client.resume(run_id, "approve")
    assert client.get_run(run_id).status == RunStatus.PENDING
    after = client.get_run(run_id).last_seq
    assert queue.items[-1] == (run_id, after)
    assert await worker.execute_stretch(run_id) == RunStatus.COMPLETED
    await client.aclose()
    await worker.aclose()
    assert queue.closed


async def test_the_local_executor_queues_nothing(tmp_path: Path) -> None:
    rt = Runtime(tmp_path / "k.db", executor=LocalExecutor())
    assert not rt.queued
    with pytest.raises(InvalidRunStateError, match="the local executor queues nothing"):
        rt.executor.enqueue("r", 1)
    await rt.aclose()
