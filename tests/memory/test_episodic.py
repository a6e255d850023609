"""Episodic memory: reflections persisted per agent type and user, found again for similar actions."""

from __future__ import annotations

import logging
import re
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from kforge.errors import ValidationError
from kforge.llm.types import ToolCall
from kforge.memory.episodic import EpisodicMemory, ReflectionRecord, action_similarity, call_key
from kforge.store import MemoryStore, SQLiteStore

T0 = datetime(2025, 1, 1, tzinfo=UTC)


def record(
    n: int, name: str = "search", error_type: str = "not_found", **arguments: object
) -> ReflectionRecord:
    return ReflectionRecord(
        id=f"r{n}",
        error_type=error_type,
        failed_action=ToolCall(name, dict(arguments)),
        error=f"error {n}",
        analysis=f"analysis {n}",
        suggested_fix=f"fix {n}",
        created_at=T0 + timedelta(minutes=n),
    )


def test_records_round_trip_through_the_store_and_the_frame() -> None:
    memory = EpisodicMemory(MemoryStore(), agent_type="react", user_id="ana")
    original = record(1, query="solar panels", limit=5)
    memory.save(original)
    assert memory.reflections() == [original]
    frame = original.to_frame()
    assert frame.reflection_id == "r1"
    assert frame.failed_action == {
        "name": "search",
        "arguments": {"query": "solar panels", "limit": 5},
        "error": "error 1",
    }
    assert (frame.error_type, frame.analysis, frame.suggested_fix) == (
        "not_found",
        "analysis 1",
        "fix 1",
    )


def test_memory_is_scoped_per_agent_type_and_per_user() -> None:
    store = MemoryStore()
    EpisodicMemory(store, agent_type="react", user_id="ana").save(record(1))
    assert EpisodicMemory(store, agent_type="react", user_id="bob").reflections() == []
    assert EpisodicMemory(store, agent_type="router", user_id="ana").reflections() == []
    assert len(EpisodicMemory(store, agent_type="react", user_id="ana").reflections()) == 1
    # names containing the separator cannot collide with another scope
    assert (
        EpisodicMemory(store, agent_type="a/b", user_id="c").namespace
        != EpisodicMemory(store, agent_type="a", user_id="b/c").namespace
    )


def test_relevant_ranks_by_tool_and_argument_similarity_then_recency() -> None:
    memory = EpisodicMemory(MemoryStore(), agent_type="react")
    memory.save(record(1, query="solar panel efficiency"))
    memory.save(record(2, query="wind turbines"))
    memory.save(record(3, name="fetch_page", url="https://example.org"))
    memory.save(record(4, query="solar panel efficiency"))
    found = memory.relevant(ToolCall("search", {"query": "solar panel efficiency"}))
    assert [r.id for r in found] == ["r4", "r1", "r2"]
    assert memory.relevant(ToolCall("fetch_page", {}), limit=5) == [memory.reflections()[2]]
    assert memory.relevant(ToolCall("calculator", {"x": 1})) == []


def test_action_similarity() -> None:
    a = ToolCall("search", {"query": "solar panel efficiency", "limit": 5})
    assert action_similarity(a, a) == 1.0
    assert action_similarity(a, ToolCall("fetch", a.arguments)) == 0.0
    partly = action_similarity(a, ToolCall("search", {"query": "solar panel cost", "limit": 5}))
    assert 0.5 < partly < 1.0
    assert action_similarity(a, ToolCall("search", {"other": 1})) == 0.5
    assert action_similarity(ToolCall("now"), ToolCall("now")) == 1.0
    assert call_key(ToolCall("s", {"b": 1, "a": 2})) == call_key(ToolCall("s", {"a": 2, "b": 1}))


def test_error_counts_and_repeated_errors() -> None:
    memory = EpisodicMemory(MemoryStore(), agent_type="react")
    assert not memory.is_repeated("timeout")
    memory.save(record(1, error_type="timeout"))
    memory.save(record(2, error_type="timeout"))
    memory.save(record(3, error_type="not_found"))
    assert memory.error_counts() == {"timeout": 2, "not_found": 1}
    assert memory.is_repeated("timeout") and not memory.is_repeated("rate_limited")


def test_saving_the_same_id_twice_keeps_one_copy_and_old_ones_are_evicted() -> None:
    memory = EpisodicMemory(MemoryStore(), agent_type="react", max_reflections=3)
    for n in range(5):
        memory.save(record(n))
    memory.save(record(4))
    assert [r.id for r in memory.reflections()] == ["r2", "r3", "r4"]


def test_mark_applied_and_clear() -> None:
    memory = EpisodicMemory(MemoryStore(), agent_type="react")
    memory.save(record(1))
    assert memory.mark_applied("r1").applied
    assert memory.reflections()[0].applied
    with pytest.raises(ValidationError, match="no reflection with id 'nope'"):
        memory.mark_applied("nope")
    memory.clear()
    assert memory.reflections() == []


def test_unreadable_documents_are_skipped_and_logged(caplog: pytest.LogCaptureFixture) -> None:
    store = MemoryStore()
    memory = EpisodicMemory(store, agent_type="react")
    memory.save(record(1))
    store.put_docs(memory.namespace, {"bad": {"id": "bad", "analysis": 3}})
    memory.save(record(2))
    guess = {**store.get_docs(memory.namespace, ["r2"])["r2"], "kind": "guess"}
    store.put_docs(memory.namespace, {"r2": guess})
    with caplog.at_level(logging.WARNING):
        assert [r.id for r in memory.reflections()] == ["r1"]
    assert "skipping document bad: reflection record is malformed" in caplog.text
    assert "Invalid enum value 'guess' - at `$.kind`" in caplog.text
    with pytest.raises(
        ValidationError, match=re.escape("malformed: Expected `str`, got `int` - at `$.analysis`")
    ):
        memory.mark_applied("bad")


def test_reflections_survive_reopening_the_database(tmp_path: Path) -> None:
    path = tmp_path / "kforge.db"
    store = SQLiteStore(path)
    EpisodicMemory(store, agent_type="react", user_id="ana").save(record(1, query="x"))
    store.close()
    reopened = SQLiteStore(path)
    try:
        memory = EpisodicMemory(reopened, agent_type="react", user_id="ana")
        assert memory.relevant(ToolCall("search", {"query": "x"})) == [record(1, query="x")]
    finally:
        reopened.close()


def test_invalid_settings_are_refused() -> None:
    with pytest.raises(ValidationError, match="agent_type must name the agent"):
        EpisodicMemory(MemoryStore(), agent_type="")
    with pytest.raises(ValidationError, match="max_reflections must be at least 1"):
        EpisodicMemory(MemoryStore(), agent_type="a", max_reflections=0)


def test_a_reflection_saved_by_an_earlier_version_still_reads() -> None:
    store = MemoryStore()
    memory = EpisodicMemory(store, agent_type="react")
    earlier = {  # as saved before records were written by their fields' types
        "id": "old",
        "error_type": "LookupError",
        "failed_action": {"name": "lookup", "arguments": {"country": "Frankreich"}},
        "error": "not found",
        "analysis": "the name is German",
        "suggested_fix": "use the English name",
        "kind": "tool",
        "created_at": "2026-11-20T10:00:00.123456+00:00",
        "repeated": True,
        "applied": False,
        "run_id": "r0",
    }
    store.put_docs(memory.namespace, {"old": earlier})
    [found] = memory.reflections()
    assert found.failed_action == ToolCall("lookup", {"country": "Frankreich"})
    assert found.created_at == datetime(2026, 11, 20, 10, 0, 0, 123456, tzinfo=UTC)
    assert found.repeated and found.run_id == "r0"
    assert memory.mark_applied("old").applied
