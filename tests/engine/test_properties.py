"""Hypothesis properties of the engine: transition order, bounded execution, a status frame
for every phase transition, state round trips and state deltas."""

from __future__ import annotations

import asyncio
import enum
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from kforge.engine.limits import RunLimits
from kforge.engine.phases import PhaseTransition, evaluate_transitions
from kforge.engine.runner import load_state
from kforge.engine.state import apply_delta, diff_state
from kforge.frames import AgentStatus, LimitReached, PhaseChanged
from kforge.llm.testing.scripted import ScriptedModel
from kforge.runtime import Runtime
from kforge.store import MemoryStore, RunStatus
from tests.engine.sample_agents import DraftAgent, make_registry
from tests.test_frames import json_objects


class P(enum.Enum):
    A = "a"
    B = "b"
    C = "c"
    D = "d"


transition_specs = st.lists(
    st.tuples(st.sampled_from(list(P)), st.booleans(), st.integers(-3, 3), st.booleans()),
    min_size=0,
    max_size=8,
)


@settings(max_examples=200)
@given(transition_specs)
def test_backward_first_then_priority_then_first_match(
    specs: list[tuple[P, bool, int, bool]],
) -> None:
    transitions = [
        PhaseTransition(P.A, target, f"c{i}", is_backward=back, priority=prio)
        for i, (target, back, prio, _) in enumerate(specs)
    ]
    matches = {f"c{i}": ok for i, (*_, ok) in enumerate(specs)}
    chosen = evaluate_transitions(transitions, P.A, lambda t: matches[t.condition])
    matching = [t for t in transitions if matches[t.condition]]
    if not matching:
        assert chosen is None
        return
    assert chosen is not None
    best = max((int(t.is_backward), t.priority) for t in matching)
    assert (int(chosen.is_backward), chosen.priority) == best
    # among equals, the first defined wins
    first = next(t for t in matching if (int(t.is_backward), t.priority) == best)
    assert chosen is first


def test_transitions_from_other_phases_are_ignored() -> None:
    t = PhaseTransition(P.B, P.C, "x")
    assert evaluate_transitions([t], P.A, lambda _: True) is None


@settings(max_examples=60, deadline=None)
@given(target=st.integers(1, 12), max_steps=st.integers(1, 10))
def test_bounded_execution(target: int, max_steps: int) -> None:
    async def scenario() -> None:
        model = ScriptedModel([str(i) for i in range(1, min(target, max_steps) + 1)])
        rt = Runtime(
            MemoryStore(),
            model=model,
            registry=make_registry(),
            limits=RunLimits(max_steps=max_steps),
        )
        run = await rt.run("test.counter", {"target": target})
        assert run.iteration <= max_steps
        assert len(model.calls) <= max_steps
        frames = rt.frames(run.id)
        if target <= max_steps:
            assert run.status == RunStatus.COMPLETED
        else:
            assert run.status == RunStatus.PAUSED
            assert run.pause_reason == "limit:max_steps"
            limit = [f for f in frames if isinstance(f, LimitReached)]
            assert len(limit) == 1 and limit[0].limit == "max_steps"
            assert limit[0].partial_result == {"values": list(range(1, max_steps + 1))}
        model.assert_consumed()

    asyncio.run(scenario())


@settings(max_examples=40, deadline=None)
@given(st.lists(st.booleans(), min_size=1, max_size=4))
def test_every_phase_transition_emits_a_phase_changed_frame(reviews: list[bool]) -> None:
    """``reviews``: the review verdicts in order (False = needs more, go back)."""
    replies: list[Any] = []
    for ok in reviews:
        replies += [{"items": [f"i{len(replies)}"]}, {"verdict": "ok" if ok else "more"}]
        if ok:
            break

    async def scenario() -> None:
        model = ScriptedModel(replies)
        rt = Runtime(
            MemoryStore(),
            model=model,
            registry=make_registry(),
            limits=RunLimits(max_phase_visits=10),
        )
        run = await rt.run("test.draft", {"topic": "t"})
        while run.status == RunStatus.AWAITING_USER:
            await rt.resume(run.id, "approve")
            run = await rt.wait(run.id)
        frames = rt.frames(run.id)
        changes = [f for f in frames if isinstance(f, PhaseChanged)]
        state, _, _ = load_state(rt.store, run.id)
        history = state["agent"]["transition_history"]
        assert len(history) >= 1
        assert [(c.from_phase, c.to_phase) for c in changes[1:]] == [
            (h["from_phase"], h["to_phase"]) for h in history
        ]
        assert [c.is_backward for c in changes[1:]] == [h["is_backward"] for h in history]
        assert [c.reason for c in changes[1:]] == [h["reason"] for h in history]
        assert (run.status == RunStatus.COMPLETED) == any(reviews)

    asyncio.run(scenario())


phase_contexts = st.fixed_dictionaries(
    {
        "items": st.lists(st.text(max_size=10), max_size=5),
        "visits": st.dictionaries(
            st.sampled_from(["draft", "review", "publish"]), st.integers(1, 5)
        ),
        "trigger": st.one_of(st.none(), st.text(max_size=10)),
        "verdict": st.sampled_from(["", "ok", "more"]),
        "phase": st.sampled_from(["draft", "review", "publish", "complete"]),
        "stage": st.sampled_from(["start", "execute", "checkpoint"]),
        "prompts": st.lists(st.text(max_size=20), max_size=3),
    }
)


@settings(max_examples=200)
@given(phase_contexts)
def test_get_state_restore_state_round_trip(data: dict[str, Any]) -> None:
    agent = DraftAgent({"topic": "t"})
    agent.ctx_data.items = data["items"]
    agent.ctx_data.phase_visits = data["visits"]
    agent.ctx_data.backward_trigger = data["trigger"]
    agent.ctx_data.verdict = data["verdict"]
    agent.current_phase = agent.graph.phase(data["phase"])
    agent.stage = data["stage"]
    agent.prompts = data["prompts"]
    state = agent.get_state()
    clone = DraftAgent()
    clone.restore_state(state)
    assert clone.get_state() == state


@settings(max_examples=300)
@given(json_objects, json_objects)
def test_state_delta_turns_old_into_new(old: dict[str, Any], new: dict[str, Any]) -> None:
    import copy

    delta = diff_state(old, new)
    assert apply_delta(copy.deepcopy(old), delta) == new


def test_appending_to_a_list_stores_only_the_new_items() -> None:
    old = {"items": list(range(1000))}
    new = {"items": [*range(1000), 1000]}
    assert diff_state(old, new) == [["a", ["items"], [1000]]]


def test_agent_status_frame_exists_for_loop_phases() -> None:
    frame = AgentStatus(phase="thinking", step_number=1, max_steps=5)
    assert frame.type == "agent.status"
