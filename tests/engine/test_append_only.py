"""Lists declared append-only: they refuse changes in place, and the runner's deltas of them hold
what was appended, found without comparing what was committed before."""

from __future__ import annotations

import copy
import pickle
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from kforge import AppendOnlyList
from kforge.engine.agent import StepOutcome
from kforge.engine.append_only import FrozenDict, FrozenList
from kforge.engine.registry import AgentRegistry
from kforge.engine.restore import RestorePoint, restored_baseline
from kforge.engine.run_context import RunContext
from kforge.engine.state import Baseline, Grown, diff_state, rebuild_state
from kforge.errors import AppendOnlyError
from kforge.frames import ErrorFrame
from kforge.jsoncodec import dumps, loads
from kforge.llm.testing.scripted import ScriptedModel
from kforge.runtime import Runtime
from kforge.store import MemoryStore, RunStatus
from tests.engine.sample_agents import HistoryAgent
from tests.test_frames import json_objects, json_values

MESSAGE = {"role": "assistant", "tool_calls": [{"name": "add", "arguments": {"a": 1}}]}


def test_items_are_frozen_and_changes_in_place_are_refused_with_what_to_do() -> None:
    log = AppendOnlyList([{"role": "user", "content": "hi"}])
    log.append(MESSAGE)
    log += [[1, 2]]
    log.extend(["three"])
    attempts = [
        lambda: log.__setitem__(0, {}),
        lambda: log.__delitem__(0),
        lambda: log.insert(0, {}),
        lambda: log.pop(),
        lambda: log.clear(),
        lambda: log.sort(),
        lambda: log[0].__setitem__("content", "bye"),
        lambda: log[0].update(content="bye"),
        lambda: log[0].pop("content"),
        lambda: log[1]["tool_calls"].append({}),
        lambda: log[1]["tool_calls"][0]["arguments"].__setitem__("a", 2),
        lambda: log[2].__setitem__(0, 5),
    ]
    for attempt in attempts:
        with pytest.raises(AppendOnlyError, match="append"):
            attempt()
    assert log == [{"role": "user", "content": "hi"}, MESSAGE, [1, 2], "three"]
    assert dumps(log) == dumps(loads(dumps(log)))  # written as the plain JSON it equals


def test_what_json_cannot_hold_is_refused_when_appended() -> None:
    log = AppendOnlyList()
    with pytest.raises(TypeError, match="to_dict"):
        log.append(object())
    assert log == []


def test_copies_share_frozen_items_and_a_deep_copy_of_an_item_may_change() -> None:
    log = AppendOnlyList([MESSAGE])
    assert copy.deepcopy(log)[0] is log[0]
    editable = copy.deepcopy(log[0])
    editable["tool_calls"][0]["arguments"]["a"] = 2  # a plain copy, the item stays as it was
    assert log[0] == MESSAGE
    again = pickle.loads(pickle.dumps(log))
    assert type(again) is AppendOnlyList and again == log
    with pytest.raises(AppendOnlyError):
        again[0]["role"] = "user"


def _committed(state: dict[str, Any], deltas: list[str]) -> dict[str, Any]:
    """The state the stored deltas (their JSON, written when committed) rebuild."""
    return rebuild_state({}, [loads(d) for d in deltas])


actions = st.lists(
    st.one_of(
        st.tuples(st.just("append"), st.lists(json_values, max_size=3)),
        st.tuples(st.just("replace"), st.integers(0, 4), st.lists(json_values, max_size=2)),
        st.tuples(st.just("plain"), st.lists(json_values, max_size=3)),
        st.tuples(st.just("move"), st.sampled_from(["log", "other"])),
        st.tuples(
            st.just("swap"),
        ),
        st.tuples(
            st.just("twice"),
        ),
        st.tuples(st.just("uncommitted"), st.lists(json_values, min_size=1, max_size=2)),
        st.tuples(st.just("set"), json_objects),
        st.tuples(st.just("resume"), st.lists(json_values, max_size=2)),
        st.tuples(
            st.just("restore"),
            st.lists(json_values, max_size=2),
            st.lists(st.lists(st.sampled_from(["log", "other", "extra", 0, 1]), max_size=2)),
        ),
    ),
    max_size=12,
)


@settings(max_examples=400, deadline=None)
@given(st.lists(json_values, max_size=4), st.lists(json_values, max_size=4), actions)
@example(  # a plain list in place of a synced one, changed inside at the same length
    start=[None, None],
    other=[],
    steps=[
        ("replace", 2, [None, None]),
        ("swap",),
        ("append", [None]),
        ("plain", [None, None, []]),
        ("swap",),
        ("swap",),
        ("swap",),
    ],
)
def test_deltas_of_an_append_only_list_rebuild_every_committed_state(
    start: list[Any], other: list[Any], steps: list[tuple[Any, ...]]
) -> None:
    """For any steps (appends, a new list in its place, a plain list, the list moved to
    another key, swapped with another one, held under two keys, a step whose delta was not
    committed, other keys changed, a restore from the committed state), the deltas the runner
    would store rebuild the state exactly, and a step that only appended stores only what it
    appended."""
    state: dict[str, Any] = {"log": AppendOnlyList(start), "other": 0}
    spare: Any = AppendOnlyList(other)
    deltas = [dumps(diff_state({}, state))]
    baseline = Baseline(_committed(state, deltas))
    key = "log"
    for action in steps:
        kind = action[0]
        if kind == "append":
            state[key].extend(action[1])
        elif kind == "replace":
            state[key] = AppendOnlyList([*list(state[key])[: action[1]], *action[2]])
        elif kind == "plain":
            state[key] = [*copy.deepcopy(list(state[key])), *action[1]]
        elif kind == "move":
            state[key], state[action[1]] = 0, state[key]
            key = action[1]
        elif kind == "set":
            state["extra"] = action[1]
        elif kind == "swap":
            spare, state[key] = state[key], spare
        elif kind == "twice":
            state["log" if key == "other" else "other"] = state[key]
        elif kind == "uncommitted":  # a step whose commit failed: its delta is never applied
            if type(state[key]) is AppendOnlyList:
                state[key].extend(action[1])
                diff_state(baseline.trusted(), state, grown=[], synced=baseline.synced)
        elif kind == "restore":  # as a resume restores: the record names append-only lists
            marks = [[key] for key in ("log", "other") if type(state[key]) is AppendOnlyList]
            state["runtime"] = {"append_only": [*marks, *action[2]]}
            deltas.append(dumps([["s", ["runtime"], state["runtime"]]]))
            restored = _committed(state, deltas)
            baseline = restored_baseline(RestorePoint(restored, 0, 0, dumps(restored)))
            for mark in marks:  # what they name reaches the agent frozen, equal to the record
                assert type(restored[mark[0]]) is AppendOnlyList
                assert restored[mark[0]] == state[mark[0]]
            state = {k: v for k, v in restored.items() if k != "runtime"}
            state["runtime"] = copy.deepcopy(baseline.state["runtime"])
            if type(state[key]) is AppendOnlyList:
                state[key] = AppendOnlyList(state[key])
                state[key].extend(action[1])
        else:  # restored from the record: the agent wraps the list it is given
            restored = _committed(state, deltas)
            text = dumps(restored)
            baseline = Baseline(restored, shared=True, text=text)
            state = dict(restored)
            if isinstance(restored[key], list):
                state[key] = AppendOnlyList(restored[key])
                state[key].extend(action[1])  # the first step of the new stretch
        before = len(baseline.trusted().get(key) or []) if kind == "append" else None
        grown: list[Grown] = []
        delta = diff_state(baseline.trusted(), state, grown=grown, synced=baseline.synced)
        deltas.append(dumps(delta))
        baseline.advance(delta, grown)
        assert loads(dumps(baseline.state)) == loads(dumps(state))
        assert _committed(state, deltas) == loads(dumps(state))
        if kind == "append" and type(state[key]) is AppendOnlyList and before is not None:
            added = list(state[key])[before:]
            holders = [k for k in ("log", "other") if state[k] is state[key]]
            assert delta == ([["a", [k], added] for k in holders] if added else [])


def test_a_synced_list_is_not_compared_again() -> None:
    log = AppendOnlyList([{"n": 0}])
    baseline = Baseline({})
    for n in range(1, 4):
        grown: list[Grown] = []
        delta = diff_state(baseline.trusted(), {"log": log}, grown=grown, synced=baseline.synced)
        baseline.advance(delta, grown)
        log.append({"n": n})
    # what the baseline holds is what was committed: had the diff compared it, it would
    # find the difference planted here and write the list again
    committed = baseline.state["log"]
    list.__setitem__(committed, 0, {"n": "planted"})
    assert diff_state(baseline.trusted(), {"log": log}, synced=baseline.synced) == [
        ["a", ["log"], [{"n": 3}]]
    ]


def _step(baseline: Baseline, state: dict[str, Any]) -> list[list[Any]]:
    grown: list[Grown] = []
    delta = diff_state(baseline.trusted(), state, grown=grown, synced=baseline.synced)
    baseline.advance(delta, grown)
    return delta


def test_a_synced_list_changed_since_by_another_delta_is_compared_again() -> None:
    log = AppendOnlyList([{"n": 0}])
    baseline = Baseline({})
    _step(baseline, {"log": log})
    # a plain list in its place for one step: its delta appends to the same baseline list
    assert _step(baseline, {"log": [{"n": 0}, {"n": "plain"}]}) == [
        ["a", ["log"], [{"n": "plain"}]]
    ]
    log.append({"n": 1})
    assert _step(baseline, {"log": log}) == [["s", ["log"], [{"n": 0}, {"n": 1}]]]
    assert baseline.state == {"log": [{"n": 0}, {"n": 1}]}


def test_a_list_not_synced_is_compared() -> None:
    log = AppendOnlyList([{"n": 0}, {"n": 1}])
    assert diff_state({"log": [{"n": 0}]}, {"log": log}) == [["a", ["log"], [{"n": 1}]]]
    assert diff_state({"log": [{"n": 5}]}, {"log": log}) == [["s", ["log"], list(log)]]
    assert diff_state({"log": [{"n": 0}, {"n": 1}, {"n": 2}]}, {"log": log}) == [
        ["s", ["log"], list(log)]
    ]


def _registry() -> AgentRegistry:
    registry = AgentRegistry()
    registry.register(HistoryAgent.agent_type, HistoryAgent)
    return registry


async def test_a_run_that_edits_its_append_only_history_in_place_fails_saying_so() -> None:
    store = MemoryStore()
    runtime = Runtime(store, model=ScriptedModel(["1", "2"]), registry=_registry())
    run = await runtime.run(HistoryAgent.agent_type, {"target": 5, "edit_at": 3})
    assert run.status == RunStatus.FAILED
    assert run.error is not None and "AppendOnlyError" in run.error
    errors = [f for f in store.read_frames(run.id) if isinstance(f, ErrorFrame)]
    assert "append a changed copy" in errors[-1].message
    # the two committed steps are intact, the first message as it was
    state = rebuild_state({}, (s.delta for s in store.read_steps(run.id, after_step=-1)))
    assert [m["content"] for m in state["agent"]["history"]] == [
        "count",
        "1",
        "noted 1",
        "2",
        "noted 2",
    ]


class PausingHistoryAgent:
    """Appends a message a step, asks a person at step ``ask_at``; notes what each
    ``restore_state`` receives."""

    agent_type = "test.pausing_history"
    restored: list[Any] = []

    def __init__(self, args: dict[str, Any]) -> None:
        self.ask_at = int(args["ask_at"])
        self.history = AppendOnlyList([{"role": "user", "content": "count"}])

    async def step(self, ctx: RunContext) -> StepOutcome:
        number = len(self.history)
        if number == self.ask_at:
            answer = await ctx.ask("go on?")
            self.history.append({"role": "user", "content": str(answer.get("text", answer))})
        self.history.append({"role": "tool", "content": str(number), "calls": [{"n": number}]})
        return StepOutcome(len(self.history) >= self.ask_at + 3, {"n": len(self.history)})

    def get_state(self) -> dict[str, Any]:
        return {"ask_at": self.ask_at, "history": self.history}

    def restore_state(self, state: dict[str, Any]) -> None:
        PausingHistoryAgent.restored.append(state["history"])
        self.ask_at, self.history = state["ask_at"], AppendOnlyList(state["history"])

    def partial_result(self) -> dict[str, Any]:
        return {}


async def test_a_resumed_run_gets_its_append_only_history_back_frozen_and_commits_only_what_it_appends() -> (
    None
):
    registry = AgentRegistry()
    registry.register(PausingHistoryAgent.agent_type, PausingHistoryAgent)
    store = MemoryStore()
    runtime = Runtime(store, model=ScriptedModel([]), registry=registry)
    run = await runtime.run(PausingHistoryAgent.agent_type, {"ask_at": 4})
    assert run.status == RunStatus.AWAITING_USER
    PausingHistoryAgent.restored.clear()
    resumed = Runtime(store, model=ScriptedModel([]), registry=registry)
    await resumed.resume(run.id, "yes")
    run = await resumed.wait(run.id)
    assert run.status == RunStatus.COMPLETED, run.error
    given = PausingHistoryAgent.restored[0]
    # restore_state is handed the list as it was declared, its items frozen once, by the runtime
    assert type(given) is AppendOnlyList
    assert all(type(item) is FrozenDict for item in given)
    assert type(given[-1]["calls"]) is FrozenList
    with pytest.raises(AppendOnlyError):
        given[1]["content"] = "edited"
    steps = store.read_steps(run.id, after_step=-1)
    # the resumed steps store what they appended, nothing of the restored history
    assert [op[0] for op in steps[-1].delta if op[1] == ["agent", "history"]] == ["a"]
    state = rebuild_state({}, (s.delta for s in steps))
    contents = [m["content"] for m in state["agent"]["history"]]
    assert contents == ["count", "1", "2", "3", "yes", "4", "6"]
