"""Append-only histories of ``Message``s: frozen as they enter, written as their JSON, restored
as messages; and runs recorded while histories held dicts still resume."""

from __future__ import annotations

import copy
import pickle
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from kforge import AppendOnlyList
from kforge.engine import restore
from kforge.engine.agent import StepOutcome
from kforge.engine.append_only import FrozenDict
from kforge.engine.registry import AgentRegistry
from kforge.engine.run_context import RunContext
from kforge.engine.state import diff_state, rebuild_state
from kforge.errors import AppendOnlyError
from kforge.frames import ModelCall
from kforge.jsoncodec import dumps, loads
from kforge.llm.testing.scripted import ScriptedModel, ScriptedReply
from kforge.llm.types import Message, ToolCall
from kforge.runtime import Runtime
from kforge.runtime.history import call_prompt
from kforge.store import RunStatus
from kforge.store.records import checksum
from kforge.store.sqlite import SQLiteStore


def test_messages_are_frozen_as_they_enter_and_written_as_their_json() -> None:
    call = ToolCall("add", {"a": 1, "nested": {"b": [2]}}, "c1")
    log = AppendOnlyList([Message.user("count")])
    log.append(Message.assistant("", (call,)))
    arguments = log[1].tool_calls[0].arguments
    assert type(arguments) is FrozenDict and log[1] == Message.assistant("", (call,))
    with pytest.raises(AppendOnlyError):
        arguments["a"] = 2
    with pytest.raises(AppendOnlyError):
        arguments["nested"]["b"].append(3)
    assert loads(dumps(log)) == [m.to_dict() for m in log]
    assert copy.deepcopy(log)[1] is log[1]
    assert pickle.loads(pickle.dumps(log)) == log
    # a message read from a frozen record that left its arguments out gets frozen ones too
    read = Message.from_dicts([FrozenDict(role="assistant", tool_calls=[{"name": "stop"}])])
    log.extend(read)
    assert type(log[-1].tool_calls[0].arguments) is FrozenDict


def test_a_list_holds_messages_or_json_values_not_both() -> None:
    log = AppendOnlyList([Message.user("count")])
    with pytest.raises(TypeError, match="not both"):
        log.append({"role": "user", "content": "hi"})
    with pytest.raises(TypeError, match="not both"):
        AppendOnlyList([{"role": "user", "content": "hi"}, Message.user("hi")])
    records = AppendOnlyList([{"role": "user", "content": "hi"}])
    with pytest.raises(TypeError, match="to_dict"):
        records += [Message.user("hi")]
    assert len(log) == 1 and len(records) == 1


class MessagesAgent:
    """Each step: one model call with the whole history (an append-only list of messages),
    the tool call it asked for answered by a tool message; asks a person at ``ask_at`` tool
    calls. ``as_dicts``: keeps the history as message dicts instead (how runs were recorded
    before histories could hold messages). Notes what each ``restore_state`` receives."""

    agent_type = "test.messages"
    restored: list[Any] = []

    def __init__(self, args: dict[str, Any]) -> None:
        self.ask_at = int(args["ask_at"])
        self.as_dicts = bool(args.get("as_dicts"))
        first = Message.user("count")
        self.history = AppendOnlyList([first.to_dict() if self.as_dicts else first])
        self.calls = 0

    def _append(self, message: Message) -> None:
        self.history.append(message.to_dict() if self.as_dicts else message)

    async def step(self, ctx: RunContext) -> StepOutcome:
        if self.calls == self.ask_at:
            answer = await ctx.ask("go on?")
            self._append(Message.user(str(answer.get("text", answer))))
        messages = Message.from_dicts(self.history) if self.as_dicts else self.history
        response = await ctx.complete(messages)
        self._append(Message.assistant(response.text, response.tool_calls))
        if not response.tool_calls:
            return StepOutcome(True, {"answer": response.text}, response.text)
        for call in response.tool_calls:
            self._append(Message.tool(str(call.arguments["n"] + 1), call.id, call.name))
            self.calls += 1
        return StepOutcome()

    def get_state(self) -> dict[str, Any]:
        return {"ask_at": self.ask_at, "as_dicts": self.as_dicts, "history": self.history}

    def restore_state(self, state: dict[str, Any]) -> None:
        MessagesAgent.restored.append(state["history"])
        self.ask_at, self.as_dicts = state["ask_at"], state["as_dicts"]
        history = state["history"]
        self.history = (
            AppendOnlyList(history) if self.as_dicts else AppendOnlyList.of_messages(history)
        )
        self.calls = sum(
            1 for m in self.history if (m["role"] if self.as_dicts else m.role) == "tool"
        )

    def partial_result(self) -> dict[str, Any]:
        return {}


def _replies(first: int, last: int) -> list[ScriptedReply]:
    return [ToolCall("add", {"n": n}, f"c{n}") for n in range(first, last)]


async def _paused(path: Path, args: dict[str, Any]) -> tuple[AgentRegistry, str]:
    registry = AgentRegistry()
    registry.register(MessagesAgent.agent_type, MessagesAgent)
    runtime = Runtime(SQLiteStore(path), model=ScriptedModel(_replies(0, 3)), registry=registry)
    run = await runtime.run(MessagesAgent.agent_type, args)
    await runtime.aclose()
    assert run.status == RunStatus.AWAITING_USER, run.error
    return registry, run.id


async def _resumed(path: Path, registry: AgentRegistry, run_id: str, *, as_dicts: bool) -> None:
    MessagesAgent.restored.clear()
    store = SQLiteStore(path)
    runtime = Runtime(store, model=ScriptedModel([*_replies(3, 5), "done"]), registry=registry)
    await runtime.resume(run_id, "yes")
    run = await runtime.wait(run_id)
    assert run.status == RunStatus.COMPLETED, run.error
    steps = store.read_steps(run_id, after_step=-1)
    # the resumed steps store what they appended, nothing of the restored history
    assert [op[0] for op in steps[-1].delta if op[1] == ["agent", "history"]] == ["a"]
    history = rebuild_state({}, (s.delta for s in steps))["agent"]["history"]
    contents = [m["content"] for m in history]
    assert contents == ["count", "", "1", "", "2", "", "3", "yes", "", "4", "", "5", "done"]
    assert history[1]["tool_calls"] == [{"name": "add", "arguments": {"n": 0}, "id": "c0"}]
    # the first call after the resume records copies of the restored history, which rebuild
    calls = [f for f in store.read_frames(run_id) if isinstance(f, ModelCall)]
    resumed = calls[3]
    assert resumed.prompt_state is not None and [0, 7] in list(resumed.prompt_delta or ())
    prompt = call_prompt(store, run_id, resumed.seq)
    assert prompt.recorded and [m.content for m in prompt.messages] == contents[:8]
    await runtime.aclose()


async def test_a_history_of_messages_is_restored_as_messages_and_commits_only_what_it_appends(
    tmp_path: Path,
) -> None:
    path = tmp_path / "runs.db"
    registry, run_id = await _paused(path, {"ask_at": 3})
    await _resumed(path, registry, run_id, as_dicts=False)
    given = MessagesAgent.restored[0]
    assert type(given) is AppendOnlyList and all(type(m) is Message for m in given)
    assert type(given[1].tool_calls[0].arguments) is FrozenDict


@pytest.mark.parametrize("as_dicts", [True, False])
async def test_a_run_recorded_while_histories_held_dicts_still_resumes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, as_dicts: bool
) -> None:
    """Recorded as the code before histories of messages wrote it: dict items, the runtime
    state naming the list by its path only, and from the first step on, never at step 0."""
    path = tmp_path / "runs.db"
    monkeypatch.setattr("kforge.runtime.runtime.initial_delta", lambda state: diff_state({}, state))
    registry, run_id = await _paused(path, {"ask_at": 3, "as_dicts": True})
    monkeypatch.undo()
    store = SQLiteStore(path)
    state = restore.load_state(store, run_id)[0]
    store.close()
    assert state["runtime"][restore.APPEND_ONLY] == [["agent", "history"]]
    if not as_dicts:  # the agent now keeps messages: it reads the recorded dicts as those
        state["agent"]["as_dicts"] = False
        _rewrite_snapshot(path, run_id, state)
    await _resumed(path, registry, run_id, as_dicts=as_dicts)
    given = MessagesAgent.restored[0]
    assert type(given) is AppendOnlyList and all(type(m) is FrozenDict for m in given)


def _rewrite_snapshot(path: Path, run_id: str, state: dict[str, Any]) -> None:
    """The run's snapshot holding ``state`` instead (as an agent's new version would find it)."""
    text = dumps(state)
    with sqlite3.connect(path) as conn:
        conn.execute(
            "UPDATE snapshots SET state = ?, checksum = ? WHERE run_id = ?",
            (text, checksum(text), run_id),
        )
