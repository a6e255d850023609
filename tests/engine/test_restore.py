"""A resume reads the histories of messages in its snapshot straight into ``Message``s
(``restore.stored_state``), and restores exactly the state the general reader restores."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from kforge import AppendOnlyList
from kforge.engine import restore
from kforge.frozen import FrozenDict, FrozenList
from kforge.jsoncodec import dumps, loads
from kforge.llm.types import Message, ToolCall
from kforge.store.sqlite import SQLiteStore
from tests.engine.test_append_only_messages import MessagesAgent, _paused, _resumed

HISTORY = [
    Message.system("Réponds en français ✓"),
    Message.user('naïve 日本語 \U0001f600 "quoted" \\ back'),
    Message.assistant(
        "calling",
        (
            ToolCall(
                "search", {"q": "é", "filters": {"tags": ["a", {"b": None}], "n": 2**70}}, "c1"
            ),
            ToolCall("stop", {}, "c2"),
        ),
    ),
    Message.tool("ünïcode result", "c1", "search"),
    Message.tool("", "c2"),
    Message("assistant", ""),
]
MESSAGES = {"path": ["agent", "history"], "items": "messages"}


def _state(history: Any, *, entry: Any = MESSAGES) -> dict[str, Any]:
    return {
        "agent": {"history": history, "count": 2**70, "notes": [{"role": "user"}]},
        "runtime": {restore.APPEND_ONLY: [entry], "usage": {"requests": 3}},
    }


def _restored(state: dict[str, Any]) -> dict[str, Any]:
    """``state`` as ``restored_baseline`` leaves it for the agent."""
    restore.restored_baseline(restore.RestorePoint(state, 1, 1))
    return state


def test_a_stored_history_reads_straight_into_the_messages_it_records() -> None:
    data = dumps(_state(AppendOnlyList(HISTORY))).encode()
    typed = restore.stored_state(data)
    assert typed is not None
    history = typed["agent"]["history"]
    assert history == HISTORY and all(type(m) is Message for m in history)
    arguments = history[2].tool_calls[0].arguments
    assert type(arguments) is FrozenDict and type(arguments["filters"]["tags"]) is FrozenList
    assert history[2].tool_calls[1].arguments == {} and history[5].tool_calls == ()
    assert {**typed, "agent": {**typed["agent"], "history": None}} == {
        **loads(data),
        "agent": {**loads(data)["agent"], "history": None},
    }
    assert typed["agent"]["count"] == 2**70
    restored = _restored(typed)
    general = _restored(loads(data))
    assert restored == general and restored["agent"]["history"] == HISTORY
    assert type(restored["agent"]["history"]) is AppendOnlyList


def test_histories_it_does_not_read_as_messages_are_left_to_the_general_reader() -> None:
    records = [m.to_dict() for m in HISTORY]
    odd = [*records[:2], {"role": "assistant", "content": None, "tool_calls": {}}]
    for state in (
        _state(records, entry=["agent", "history"]),  # recorded while histories held dicts
        _state(odd),  # a record only the general reader reads: it reads the whole list
        {**_state(records), "runtime": {restore.APPEND_ONLY: [{**MESSAGES, "path": ["x"]}]}},
    ):
        data = dumps(state).encode()
        typed = restore.stored_state(data)
        assert typed is not None and typed == loads(data)
        assert _restored(typed) == _restored(loads(data))
    assert _restored(_state(odd))["agent"]["history"] == [*HISTORY[:2], Message("assistant")]


@pytest.mark.parametrize("data", [b'{"agent": [1], "runtime": {}}', b"[]", b"{broken"])
def test_a_state_that_does_not_split_into_objects_is_not_read_so(data: bytes) -> None:
    assert restore.stored_state(data) is None


async def test_a_resume_restores_its_history_from_the_snapshot_without_dicts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "runs.db"
    registry, run_id = await _paused(path, {"ask_at": 3})
    store = SQLiteStore(path)
    recorded = restore.load_state(store, run_id)[0]["agent"]["history"]
    store.close()

    def refuse(cls: type[Message], items: Any) -> list[Message]:
        raise AssertionError("the history was read as dicts")

    monkeypatch.setattr(Message, "from_records", classmethod(refuse))
    await _resumed(path, registry, run_id, as_dicts=False)
    given = MessagesAgent.restored[0]
    assert type(given) is AppendOnlyList and [m.to_dict() for m in given] == recorded
    assert type(given[1].tool_calls[0].arguments) is FrozenDict


def test_a_state_of_the_usual_shape_is_read_in_one_pass(monkeypatch: pytest.MonkeyPatch) -> None:
    usual = {
        "agent": {"history": AppendOnlyList(HISTORY), "count": 2**70, "seen": {"a": [1, 2.5]}},
        "runtime": {restore.APPEND_ONLY: [MESSAGES], "usage": {"requests": 3}},
    }
    unusual = [
        _state(AppendOnlyList(HISTORY)),  # a list of dicts with a role that is no history
        {**usual, "agent": {**usual["agent"], "tags": ["x"]}},  # a list of anything else
        {**usual, "other": {"part": 1}},  # a third part
        {"agent": usual["agent"]},  # no runtime state
    ]
    expected = [restore.stored_state(dumps(state).encode()) for state in [usual, *unusual]]

    def refuse(data: Any) -> Any:
        raise AssertionError("the state was split into its fields first")

    monkeypatch.setattr(restore, "_BY_FIELD", refuse)
    data = dumps(usual).encode()
    typed = restore.stored_state(data)
    assert typed is not None and typed == expected[0]
    general = loads(data)
    assert typed["agent"]["history"] == HISTORY
    assert all(type(m) is Message for m in typed["agent"]["history"])
    general["agent"]["history"] = typed["agent"]["history"]
    assert typed == general
    assert _restored(typed) == _restored(loads(data))
    for state in unusual:  # each read in two passes, as before
        with pytest.raises(AssertionError, match="split into its fields"):
            restore.stored_state(dumps(state).encode())
    for state, read in zip(unusual, expected[1:], strict=True):
        assert read is not None and _restored(read) == _restored(loads(dumps(state)))
