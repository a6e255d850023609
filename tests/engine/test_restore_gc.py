"""A resume builds its history of messages without the cyclic collector walking it as young
objects, and leaves the collector as it found it."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from kforge.engine import restore
from kforge.llm.types import Message, ToolCall
from kforge.store.base import Snapshot
from kforge.store.conformance import new_run
from kforge.store.sqlite import SQLiteStore

HISTORY = [Message.user("add one, many times")] + [
    message
    for i in range(600)
    for message in (
        Message.assistant("", (ToolCall("add", {"a": i, "b": 1}, f"call_{i}"),)),
        Message.tool(str(i + 1), f"call_{i}", "add"),
    )
]


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SQLiteStore]:
    store = SQLiteStore(tmp_path / "runs.db")
    store.create_run(new_run())
    state = {
        "agent": {"messages": HISTORY, "tool_calls": 600},
        "runtime": {restore.APPEND_ONLY: [{"path": ["agent", "messages"], "items": "messages"}]},
    }
    store.commit("r1", [], snapshot=Snapshot(1, 0, state))
    yield store
    store.close()


def _restored(store: SQLiteStore) -> tuple[restore.RestorePoint, list[int]]:
    """The restore point a resume reads, and the generations collected while it was read."""
    snapshot = store.get_run_with_snapshot("r1")[1]
    collected: list[int] = []

    def noted(phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            collected.append(info["generation"])

    gc.collect()
    gc.callbacks.append(noted)
    try:
        point = restore.restore_point(store, "r1", last_step=1, snapshot=snapshot, messages=True)
    finally:
        gc.callbacks.remove(noted)
    return point, collected


def test_a_restored_history_is_not_walked_as_young_objects(store: SQLiteStore) -> None:
    # 1,201 messages and their calls are thousands of objects: made as usual, collections of
    # young objects would walk them several times over before they settle
    point, collected = _restored(store)
    assert point.state["agent"]["messages"] == HISTORY
    assert collected == []
    assert gc.isenabled() and gc.get_freeze_count() == 0
    assert gc.get_count()[0] < 100  # what the resume made is counted as old, not young
    # the history is still the collector's (in its oldest generation), not kept out of it
    assert all(gc.is_tracked(m) for m in point.state["agent"]["messages"][:3])


def test_the_collector_is_left_alone_when_off_or_when_the_application_froze_objects(
    store: SQLiteStore,
) -> None:
    gc.disable()
    try:
        point, _ = _restored(store)
        assert not gc.isenabled() and point.state["agent"]["messages"] == HISTORY
    finally:
        gc.enable()
    del point
    kept = [object() for _ in range(10)]
    gc.freeze()  # an application's own: a preforked server keeps its objects out of it
    try:
        frozen = gc.get_freeze_count()
        point, _ = _restored(store)
        # what the application froze stays frozen (objects may only have died meanwhile)
        assert 0 < gc.get_freeze_count() <= frozen and gc.isenabled()
        assert point.state["agent"]["messages"] == HISTORY
    finally:
        gc.unfreeze()
    del kept
