"""The runner's baseline after a restore: shared with the agent, never wrong because of it."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kforge.engine.agent import StepOutcome
from kforge.engine.registry import AgentRegistry
from kforge.engine.run_context import RunContext
from kforge.engine.runner import load_state
from kforge.engine.state import Baseline, diff_state, rebuild_state
from kforge.llm.testing.scripted import ScriptedModel
from kforge.runtime import Runtime
from kforge.store import MemoryStore, RunStatus
from kforge.store.sqlite import SQLiteStore
from tests.test_frames import json_objects


class InPlaceAgent:
    """Keeps the restored state object itself and mutates it in place every step.

    It asks a question at step 2, so its state is restored from a snapshot in the middle.
    """

    agent_type = "test.in_place"

    def __init__(self, args: dict[str, Any]) -> None:
        self.mode: str = args.get("mode", "mutate")
        self.state: dict[str, Any] = {"items": [{"n": 0}], "meta": {"steps": 0}}
        self.restored: dict[str, Any] | None = None
        self.restored_copy: Any = None

    async def step(self, ctx: RunContext) -> StepOutcome:
        steps = self.state["meta"]["steps"]
        if steps == 2:
            await ctx.ask("go on?", options=("yes", "no"))
        if self.mode == "mutate":
            self.state["items"][0]["n"] += 1  # in place, inside an object from the snapshot
            self.state["items"].append({"n": steps})
        else:  # "replace": leave restored objects alone, build new ones
            self.state = {
                "items": [*self.state["items"], {"n": steps}],
                "meta": dict(self.state["meta"]),
            }
        self.state["meta"]["steps"] = steps + 1
        done = steps + 1 >= 5
        return StepOutcome(done, {"state": self.state} if done else None)

    def get_state(self) -> dict[str, Any]:
        return self.state

    def restore_state(self, state: dict[str, Any]) -> None:
        self.state = state
        self.restored = state
        self.restored_copy = repr(state)

    def partial_result(self) -> dict[str, Any]:
        return {}


def _registry() -> AgentRegistry:
    registry = AgentRegistry()
    registry.register(InPlaceAgent.agent_type, InPlaceAgent)
    return registry


async def _pause_then_finish(store: Any, mode: str) -> tuple[Runtime, str]:
    first = Runtime(store, model=ScriptedModel([]), registry=_registry())
    run_id = await first.start(InPlaceAgent.agent_type, {"mode": mode})
    assert (await first.wait(run_id)).status == RunStatus.AWAITING_USER
    second = Runtime(store, model=ScriptedModel([]), registry=_registry())
    await second.resume(run_id, "yes")
    assert (await second.wait(run_id)).status == RunStatus.COMPLETED
    return second, run_id


def _state_from_deltas_only(store: Any, run_id: str) -> dict[str, Any]:
    return rebuild_state({}, (s.delta for s in store.read_steps(run_id, after_step=-1)))


@pytest.mark.parametrize("mode", ["mutate", "replace"])
async def test_in_place_changes_to_restored_objects_are_recorded(tmp_path: Any, mode: str) -> None:
    store = SQLiteStore(tmp_path / "runs.db")
    runtime, run_id = await _pause_then_finish(store, mode)
    run = runtime.get_run(run_id)
    final = run.result["state"] if run.result else None
    rebuilt = _state_from_deltas_only(store, run_id)
    assert rebuilt["agent"] == final
    expected_first = 5 if mode == "mutate" else 0
    assert rebuilt["agent"]["items"][0] == {"n": expected_first}
    assert [i["n"] for i in rebuilt["agent"]["items"][1:]] == [0, 1, 2, 3, 4]
    snapshot_state, _, _ = load_state(store, run_id)
    assert snapshot_state["agent"] == final
    steps = store.read_steps(run_id, after_step=-1)
    for k in range(1, 6):  # every step's delta holds that step's changes, not a later one's
        state = rebuild_state({}, (s.delta for s in steps[: k + 1]))["agent"]
        assert state["meta"]["steps"] == k
        assert [i["n"] for i in state["items"][1:]] == list(range(k))
        assert state["items"][0]["n"] == (k if mode == "mutate" else 0)


async def test_the_runner_never_changes_objects_the_agent_was_given() -> None:
    store = MemoryStore()
    registry = _registry()
    first = Runtime(store, model=ScriptedModel([]), registry=registry)
    run_id = await first.start(InPlaceAgent.agent_type, {"mode": "replace"})
    await first.wait(run_id)
    captured: list[InPlaceAgent] = []

    class Capturing(InPlaceAgent):
        def restore_state(self, state: dict[str, Any]) -> None:
            super().restore_state(state)
            captured.append(self)

    registry.register(InPlaceAgent.agent_type, Capturing, replace=True)
    second = Runtime(store, model=ScriptedModel([]), registry=registry)
    await second.resume(run_id, "yes")
    assert (await second.wait(run_id)).status == RunStatus.COMPLETED
    agent = captured[0]
    assert repr(agent.restored) == agent.restored_copy


@settings(max_examples=150, deadline=None)
@given(json_objects, json_objects, st.booleans())
def test_baseline_is_the_committed_state_whatever_happened_to_shared_objects(
    old: dict[str, Any], new: dict[str, Any], mutate: bool
) -> None:
    import copy

    committed = copy.deepcopy(old)
    baseline = Baseline(old, shared=True)
    if mutate:  # the agent overwrites the shared object in place
        old.clear()
        old.update(copy.deepcopy(new))
        old["__touched__"] = True
    assert baseline.trusted() == committed
    delta = diff_state(baseline.trusted(), new)
    after = baseline.advance(delta)
    assert after == new
    assert not baseline.shared
    new["__later__"] = 1  # the agent keeps changing its objects: the baseline does not follow
    assert "__later__" not in baseline.state


def test_unshared_baseline_is_used_as_is() -> None:
    state = {"a": [1]}
    baseline = Baseline(state)
    assert baseline.trusted() is state
    assert baseline.advance([["a", ["a"], [2]]]) == {"a": [1, 2]}


def test_stored_text_in_another_encoding_is_still_the_truth() -> None:
    import json

    state = {"agent": {"big": 1e16, "s": "é"}, "runtime": {}}
    legacy = json.dumps(state)  # the stdlib writes 1e+16 and \\u00e9: not what orjson writes
    baseline = Baseline(json.loads(legacy), shared=True, text=legacy)
    assert baseline.trusted() == state
    assert not baseline.shared  # the mismatch was settled by decoding the stored text


class CountingStore(MemoryStore):
    def __init__(self) -> None:
        super().__init__()
        self.step_reads = 0

    def read_steps(self, run_id: str, **kwargs: Any) -> Any:
        self.step_reads += 1
        return super().read_steps(run_id, **kwargs)


async def test_resume_reads_no_deltas_after_a_snapshot_of_the_last_step() -> None:
    from kforge.engine.runner import restore_point

    store = CountingStore()
    runtime = Runtime(store, model=ScriptedModel([]), registry=_registry())
    run_id = await runtime.start(InPlaceAgent.agent_type, {"mode": "replace"})
    run = await runtime.wait(run_id)
    assert run.status == RunStatus.AWAITING_USER
    store.step_reads = 0
    point = restore_point(store, run_id, last_step=run.iteration)
    assert store.step_reads == 0
    assert point.step == run.iteration
    full = restore_point(store, run_id)  # without the hint the deltas are read, same state
    assert store.step_reads == 1
    assert full.state == point.state
    assert (await runtime.resume(run_id, "yes")) == run_id
    assert (await runtime.wait(run_id)).status == RunStatus.COMPLETED


def test_a_diff_settles_an_objects_leaves_where_it_meets_them(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Every step diffs the runtime's numbers (elapsed time, usage): a leaf of an object is
    compared where the object is walked, as the walk of a leaf would compare it (same type and
    equal, else set), without a call of its own; only containers are walked into."""
    from kforge.engine import state

    walked: list[Any] = []
    walk = state._diff

    def counting(old: Any, new: Any, *rest: Any) -> None:
        walked.append(new)
        walk(old, new, *rest)

    monkeypatch.setattr(state, "_diff", counting)
    old = {"runtime": {"elapsed_s": 1.0, "usage": {"input": 1, "output": 2}}, "n": 1, "s": "a"}
    new = {"runtime": {"elapsed_s": 2.0, "usage": {"input": 1, "output": 3}}, "n": 1.0, "s": "a"}
    assert diff_state(old, new) == [
        ["s", ["runtime", "elapsed_s"], 2.0],
        ["s", ["runtime", "usage", "output"], 3],
        ["s", ["n"], 1.0],  # equal, but of another type: set, as before
    ]
    assert walked == [new, new["runtime"], new["runtime"]["usage"]]
    assert diff_state({"a": {"b": 1}}, {"a": 2}) == [["s", ["a"], 2]]
    assert diff_state({"a": 1}, {"a": {"b": 1}}) == [["s", ["a"], {"b": 1}]]
