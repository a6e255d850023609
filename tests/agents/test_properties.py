"""The ReAct loop's properties, for any sequence of model decisions and tool outcomes.

A ``FunctionModel`` plays the model: hypothesis draws what it decides at each step (a tool call
that succeeds or fails, a plan, an answer, an empty answer, malformed output), how it judges
results, what it reflects and which alternatives it proposes; tool outputs are long enough to
force compaction of small context windows.

Property 1 bounded execution · 2 reasoning before action · 3 observation after action ·
6 reflection storage · 10 compaction reduces tokens · 11 grounding preservation ·
13 trajectory logging completeness · 17 status update emission.
"""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kforge.agents.loop.prompts import ObservationReply
from kforge.frames import (
    AgentAction,
    AgentResponse,
    AgentStatus,
    Compaction,
    ErrorFrame,
    Frame,
    ModelCall,
    Observation,
    Plan,
    Reflection,
    ToolCallFrame,
    ToolResultFrame,
)
from kforge.llm.structured import schema_for
from kforge.llm.testing.function import CallInfo, FunctionModel
from kforge.llm.types import Message, ModelResponse, ToolCall
from kforge.memory.compaction import COMPACTION_PROMPT
from kforge.memory.episodic import EpisodicMemory
from kforge.memory.reflexion import ERROR_TYPES, ReflectionReply
from kforge.memory.trajectory import TrajectoryLog
from kforge.store.base import RunStatus
from kforge.store.memory import MemoryStore
from kforge.tools import tool
from tests.agents.helpers import failures, of_type, runtime

GOAL = "Find the capital of France and report it."
COUNTRIES = ["France", "Japan", "Atlantis", "Lemuria"]  # the last two always fail

Step = tuple[str, str]

decisions = st.sampled_from(
    [
        ("call", "France"),
        ("call", "Japan"),
        ("call", "Atlantis"),
        ("call", "Lemuria"),
        ("call", "Atlantis"),
        ("plan", ""),
        ("respond", "Paris."),
        ("respond", ""),
        ("malformed", ""),
    ]
)
"""Failing calls are drawn more often than the rest, so that retries and reflections pile up."""


@dataclass
class Scenario:
    max_steps: int
    max_retries: int
    decisions: list[Step]
    verdicts: list[bool]
    alternatives: list[str | None]
    error_types: list[str]
    padding: int
    context_tokens: int | None
    summary_words: int


@st.composite
def scenarios(draw: st.DrawFn) -> Scenario:
    return Scenario(
        max_steps=draw(st.integers(1, 6)),
        max_retries=draw(st.integers(1, 4)),
        decisions=draw(st.lists(decisions, max_size=8)),
        verdicts=draw(st.lists(st.sampled_from([False, False, True]), max_size=8)),
        alternatives=draw(st.lists(st.one_of(st.none(), st.sampled_from(COUNTRIES)), max_size=4)),
        error_types=draw(st.lists(st.sampled_from(ERROR_TYPES), min_size=1, max_size=2)),
        padding=draw(st.integers(0, 4000)),
        context_tokens=draw(st.one_of(st.none(), st.integers(150, 900))),
        summary_words=draw(st.integers(1, 400)),
    )


@st.composite
def crowded_scenarios(draw: st.DrawFn) -> Scenario:
    """Scenarios whose first result fills most of a small window, so compaction must happen."""
    scenario = draw(scenarios())
    scenario.max_steps = max(2, scenario.max_steps)
    scenario.decisions.insert(0, ("call", "France"))
    scenario.verdicts.insert(0, False)
    scenario.padding = draw(st.integers(2400, 4000))
    scenario.context_tokens = draw(st.integers(150, 600))
    return scenario


@dataclass
class Outcome:
    frames: list[Frame]
    store: MemoryStore
    status: RunStatus
    result: dict[str, Any]
    decision_prompts: list[str] = field(default_factory=list)


def play(scenario: Scenario) -> Outcome:
    todo = list(scenario.decisions)
    verdicts = list(scenario.verdicts)
    alternatives = list(scenario.alternatives)
    prompts: list[str] = []
    reflections = 0

    @tool(read_only=True)
    def lookup_capital(country: str) -> str:
        """Look up the capital of a country.

        Args:
            country: The country's English name.
        """
        capitals = {"France": "Paris", "Japan": "Tokyo"}
        if country not in capitals:
            raise LookupError(f"country '{country}' not found")
        return f"The capital of {country} is {capitals[country]}. " + "Background. " * (
            scenario.padding // 12
        )

    def reply(messages: list[Message], info: CallInfo) -> Any:
        nonlocal reflections
        schema = info.output_schema
        text = "\n".join(m.content for m in messages)
        if schema is not None and "anyOf" in schema:
            kind, value = todo.pop(0) if todo else ("respond", "Paris.")
            retired = kind == "call" and "lookup_capital" not in json.dumps(schema)
            if kind == "malformed" or retired:
                # the model layer refuses these (not JSON / not in the schema): no model.call
                return ModelResponse(text="{'thought': not json")
            prompts.append(text)  # one per recorded react.decide call
            if kind == "call":
                return {
                    "thought": f"Look up {value}.",
                    "action": "tool_call",
                    "tool": "lookup_capital",
                    "arguments": {"country": value},
                }
            if kind == "plan":
                return {"thought": "Think about which country to check.", "action": "plan"}
            return {"thought": "I can answer.", "action": "respond", "answer": value}
        if schema == schema_for(ObservationReply):
            achieved = verdicts.pop(0) if verdicts else False
            return {"observation": "The result was checked.", "goal_achieved": achieved}
        if schema == schema_for(ReflectionReply):
            reflections += 1
            kind = scenario.error_types[reflections % len(scenario.error_types)]
            return {
                "error_type": kind,
                "analysis": f"analysis number {reflections}",
                "suggested_fix": f"fix number {reflections}",
            }
        if schema is not None:  # an alternative action
            country = alternatives.pop(0) if alternatives else None
            if country is None or "lookup_capital" not in json.dumps(schema):
                return ModelResponse(text="no idea")
            return {
                "name": "lookup_capital",
                "arguments": {"country": country},
                "reasoning": "a different country",
            }
        if messages[0].content == COMPACTION_PROMPT:
            return " ".join(["summary"] * scenario.summary_words)
        return "The capital of France is Paris."

    async def go() -> Outcome:
        store = MemoryStore()
        rt = runtime(FunctionModel(reply), lookup_capital, store=store)
        args: dict[str, Any] = {
            "goal": GOAL,
            "max_steps": scenario.max_steps,
            "max_retries": scenario.max_retries,
            "allow_ask": False,
        }
        if scenario.context_tokens is not None:
            args["context_tokens"] = scenario.context_tokens
        run = await rt.run("react", args)
        return Outcome(rt.frames(run.id), store, run.status, run.result or {}, prompts)

    return asyncio.run(go())


PROPERTY = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@PROPERTY
@given(scenarios())
def test_property_1_bounded_execution(scenario: Scenario) -> None:
    out = play(scenario)
    assert out.status == RunStatus.COMPLETED
    assert len(of_type(out.frames, Plan)) <= scenario.max_steps
    assert out.result["iterations"] <= scenario.max_steps
    failed_attempts = Counter(f.tool_name for f in failures(out.frames))
    assert all(n <= scenario.max_retries for n in failed_attempts.values())
    bad_decisions = [
        e
        for e in of_type(out.frames, ErrorFrame)
        if e.error_type in ("invalid_decision", "retired_tool")
    ]
    assert len(bad_decisions) <= scenario.max_retries
    assert len(of_type(out.frames, AgentResponse)) == 1


@PROPERTY
@given(scenarios())
def test_property_2_reasoning_before_action(scenario: Scenario) -> None:
    out = play(scenario)
    by_id = {f.id: f for f in out.frames}
    for call in of_type(out.frames, ToolCallFrame):
        plan = by_id[call.plan_frame_id or ""]
        assert isinstance(plan, Plan) and plan.seq < call.seq
        assert plan.next_action == AgentAction.TOOL_CALL and plan.reasoning.strip()


@PROPERTY
@given(scenarios())
def test_property_3_observation_after_action(scenario: Scenario) -> None:
    out = play(scenario)
    observations = of_type(out.frames, Observation)
    for result in of_type(out.frames, ToolResultFrame):
        assert any(o.call_id == result.call_id and o.seq > result.seq for o in observations)


@PROPERTY
@given(scenarios())
def test_property_6_reflections_are_stored_and_reach_the_next_attempt(scenario: Scenario) -> None:
    out = play(scenario)
    memory = EpisodicMemory(out.store, agent_type="react")
    stored = {r.id for r in memory.reflections()}
    decides = [f for f in of_type(out.frames, ModelCall) if f.purpose == "react.decide"]
    for reflection in of_type(out.frames, Reflection):
        assert reflection.reflection_id in stored
        action = ToolCall(reflection.failed_action["name"], reflection.failed_action["arguments"])
        assert reflection.reflection_id in {r.id for r in memory.relevant(action, limit=1000)}
        later = [i for i, d in enumerate(decides) if d.seq > reflection.seq]
        if later:
            assert reflection.analysis in out.decision_prompts[later[0]]


@PROPERTY
@given(crowded_scenarios())
def test_property_10_and_11_compaction_shrinks_and_keeps_the_grounding(scenario: Scenario) -> None:
    out = play(scenario)
    decides = [f for f in of_type(out.frames, ModelCall) if f.purpose == "react.decide"]
    compactions = of_type(out.frames, Compaction)
    assert compactions  # past 80 % of the window after the first result
    for compaction in compactions:
        assert compaction.tokens_after * 5 <= compaction.tokens_before * 4
        after = [i for i, d in enumerate(decides) if d.seq > compaction.seq]
        if after:
            prompt = out.decision_prompts[after[0]]
            assert "<grounding>" in prompt and f"Current goal: {GOAL}" in prompt


@PROPERTY
@given(scenarios())
def test_property_13_trajectory_log_is_complete(scenario: Scenario) -> None:
    out = play(scenario)
    log = TrajectoryLog.from_frames(out.frames)
    kinds = Counter(e.type for e in log.entries)
    assert kinds["thought"] >= len(of_type(out.frames, Plan))
    assert kinds["tool_call"] == len(of_type(out.frames, ToolCallFrame))
    assert kinds["tool_result"] == len(of_type(out.frames, ToolResultFrame))
    assert kinds["observation"] == len(of_type(out.frames, Observation))
    assert kinds["reflection"] == len(of_type(out.frames, Reflection))
    assert kinds["synthesis"] == 1 and log.status == "completed"
    steps = [e.step_number for e in log.entries]
    assert all(s >= 1 for s in steps) and steps == sorted(steps)
    assert all(e.timestamp is not None for e in log.entries)


EXPECTED_PHASE = {
    ToolCallFrame: "executing",
    Observation: "analyzing",
    Reflection: "reflecting",
    AgentResponse: "synthesizing",
}


@PROPERTY
@given(scenarios())
def test_property_17_every_phase_change_emits_a_status(scenario: Scenario) -> None:
    out = play(scenario)
    latest: AgentStatus | None = None
    for frame in out.frames:
        if isinstance(frame, AgentStatus):
            latest = frame
            continue
        expected = EXPECTED_PHASE.get(type(frame))
        if isinstance(frame, ModelCall) and frame.purpose == "react.decide":
            expected = "thinking"
        if expected is not None:
            assert latest is not None and latest.phase == expected, (frame.type, latest)
