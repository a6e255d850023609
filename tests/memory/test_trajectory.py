"""Trajectory log: complete entries with timestamps and step numbers, and metrics."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kforge.errors import ValidationError
from kforge.frames import (
    AgentAction,
    AgentResponse,
    AgentStatus,
    AgentThinking,
    Complete,
    ErrorFrame,
    Frame,
    LimitReached,
    ModelCall,
    Observation,
    PhaseChanged,
    Plan,
    Reflection,
    StatusChanged,
    ToolCallFrame,
    ToolResultFrame,
    UsageFrame,
    frame_from_dict,
)
from kforge.llm.types import ModelResponse, Usage
from kforge.memory.trajectory import TrajectoryLog

T0 = datetime(2025, 3, 1, 12, 0, tzinfo=UTC)


def stamp(frames: list[Frame], run_id: str = "run-7") -> list[Frame]:
    """Give frames a run id, seqs from 1 and one second between them, as a stored run has."""
    return [
        replace(f, run_id=run_id, seq=i + 1, created_at=T0 + timedelta(seconds=i))
        for i, f in enumerate(frames)
    ]


def usage(inp: int, out: int) -> list[Frame]:
    response = ModelResponse(text="x", usage=Usage(inp, out))
    return [
        ModelCall(model="test:scripted", response=response.to_dict()),
        UsageFrame(model="test:scripted", input_tokens=inp, output_tokens=out),
    ]


def test_a_run_with_a_failure_a_reflection_and_a_retry() -> None:
    frames = stamp(
        [
            *usage(100, 20),
            Plan(
                goal="find panel efficiency",
                reasoning="search for it",
                next_action=AgentAction.TOOL_CALL,
            ),
            ToolCallFrame(tool_name="search", call_id="c1", arguments={"q": "panels", "limit": 9}),
            ToolResultFrame(
                tool_name="search",
                call_id="c1",
                success=False,
                summary="limit must be <= 3",
                error="limit must be <= 3",
            ),
            Reflection(
                reflection_id="r1",
                error_type="invalid_arguments",
                failed_action={"name": "search"},
                analysis="limit too high",
                suggested_fix="use 3",
            ),
            *usage(150, 30),
            Plan(goal="find panel efficiency", reasoning="retry with limit 3"),
            ToolCallFrame(tool_name="search", call_id="c2", arguments={"q": "panels", "limit": 3}),
            ToolResultFrame(
                tool_name="search", call_id="c2", success=True, summary="21 % efficiency"
            ),
            Observation(content="the result answers the goal", goal_achieved=True),
            AgentResponse(response_text="About 21 %.", tools_called=("search",)),
            StatusChanged(from_status="running", to_status="completed"),
        ]
    )
    log = TrajectoryLog.from_frames(frames, optimal_steps=1)
    assert [(e.step_number, e.type) for e in log.entries] == [
        (1, "thought"),
        (1, "tool_call"),
        (1, "tool_result"),
        (1, "reflection"),
        (2, "thought"),
        (2, "tool_call"),
        (2, "tool_result"),
        (2, "observation"),
        (2, "synthesis"),
    ]
    assert log.request_id == "run-7" and log.goal == "find panel efficiency"
    assert log.status == "completed"
    assert log.entries[1].content == 'search({"limit": 9, "q": "panels"})'
    assert log.entries[2].content == "limit must be <= 3"
    assert log.entries[3].metadata["error_type"] == "invalid_arguments"
    m = log.metrics
    assert (m.total_steps, m.optimal_steps, m.efficiency) == (2, 1, 0.5)
    assert (m.input_tokens, m.output_tokens, m.total_tokens) == (250, 50, 300)
    assert m.error_count == 1
    assert m.duration_s == len(frames) - 1
    exported = json.loads(log.to_json())
    assert exported["metrics"]["total_tokens"] == {"input": 250, "output": 50}
    assert exported["entries"][0]["timestamp"] == frames[2].created_at.isoformat()
    assert [e["seq"] for e in exported["entries"]] == [e.seq for e in log.entries]


def test_calls_written_in_the_old_vocabulary_are_logged_once_each() -> None:
    old = [
        {"type": "tool.start", "tool_name": "fetch", "call_id": "c1", "arguments": {"url": "x"}},
        {
            "type": "tool.success",
            "tool_name": "fetch",
            "call_id": "c1",
            "result_summary": "200 OK",
            "execution_time_ms": 12.5,
        },
        {"type": "tool.start", "tool_name": "fetch", "call_id": "c2", "arguments": {"url": "y"}},
        {"type": "tool.error", "tool_name": "fetch", "call_id": "c2", "error": "404"},
    ]
    frames = stamp(
        [
            *(frame_from_dict(data) for data in old),
            LimitReached(limit="max_steps", value=2, maximum=2),
        ]
    )
    log = TrajectoryLog.from_frames(frames)
    assert [(e.step_number, e.type) for e in log.entries] == [
        (1, "tool_call"),
        (1, "tool_result"),
        (2, "tool_call"),
        (2, "tool_result"),
        (2, "error"),
    ]
    assert log.entries[1].metadata == {
        "tool_name": "fetch",
        "success": True,
        "execution_time_ms": 12.5,
    }
    assert log.entries[4].content == "limit 'max_steps' reached: 2 of 2"
    assert log.status == "terminated"
    assert log.metrics.error_count == 2
    assert log.metrics.efficiency is None


def test_tokens_come_from_model_calls_when_no_usage_frames_were_recorded() -> None:
    response = ModelResponse(usage=Usage(7, 3)).to_dict()
    log = TrajectoryLog.from_frames(
        stamp([ModelCall(model="m", response=response), ModelCall(model="m", response=response)])
    )
    assert (log.metrics.input_tokens, log.metrics.output_tokens) == (14, 6)
    assert log.entries == [] and log.total_steps == 0


def test_logging_steps_directly() -> None:
    log = TrajectoryLog("req-1", "goal", optimal_steps=2)
    first = log.log_step("thought", "plan", metadata={"k": 1})
    log.log_step("tool_call", "calc(1+1)")
    log.log_step("tool_result", "2")
    log.log_step("thought", "done?")
    assert first.step_number == 1 and first.frame_id == "" and first.metadata == {"k": 1}
    assert log.total_steps == 2 and log.metrics.efficiency == 1.0
    assert log.calculate_efficiency(1) == 0.5
    with pytest.raises(ValidationError, match="entry type must be one of"):
        log.log_step("musing", "hmm")  # type: ignore[arg-type]
    with pytest.raises(ValidationError, match="optimal_steps must be at least 1"):
        TrajectoryLog(optimal_steps=0)


# -- the log is complete -----------------------------------------------------------------------

short = st.text(max_size=20)
tool_names = st.sampled_from(["search", "fetch", "calc"])
logged_frames: list[st.SearchStrategy[Frame]] = [
    st.builds(Plan, goal=short, reasoning=short),
    st.builds(AgentThinking, message=short),
    st.builds(
        ToolCallFrame,
        tool_name=tool_names,
        call_id=short,
        arguments=st.dictionaries(st.sampled_from("abc"), st.integers(), max_size=2),
    ),
    st.builds(
        ToolResultFrame,
        tool_name=tool_names,
        call_id=short,
        success=st.booleans(),
        summary=short,
        error=short,
    ),
    st.builds(Observation, content=short, goal_achieved=st.booleans()),
    st.builds(
        Reflection,
        reflection_id=short,
        error_type=short,
        failed_action=st.just({}),
        analysis=short,
        suggested_fix=short,
    ),
    st.builds(ErrorFrame, error_type=short, message=short),
    st.builds(AgentResponse, response_text=short),
]
silent_frames: list[st.SearchStrategy[Frame]] = [
    st.builds(
        UsageFrame, model=short, input_tokens=st.integers(0, 999), output_tokens=st.integers(0, 999)
    ),
    st.builds(AgentStatus, phase=st.sampled_from(["thinking", "executing", "analyzing"])),
    st.builds(PhaseChanged, from_phase=st.none(), to_phase=short),
    st.builds(StatusChanged, from_status=st.none(), to_status=short),
    st.builds(Complete, summary=short, partial=st.booleans()),
]
ENTRY_TYPE = {
    Plan: "thought",
    AgentThinking: "thought",
    ToolCallFrame: "tool_call",
    ToolResultFrame: "tool_result",
    Observation: "observation",
    Reflection: "reflection",
    ErrorFrame: "error",
    AgentResponse: "synthesis",
}


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.one_of(*logged_frames, *silent_frames), max_size=30),
    st.lists(st.integers(0, 5000), min_size=30, max_size=30),
)
def test_property_trajectory_log_is_complete(frames: list[Frame], gaps_ms: list[int]) -> None:
    """Every thought, tool call, tool result, observation, reflection and error
    frame of a run is in the log exactly once, in order, with its timestamp and a step number;
    step numbers start at 1, never decrease and never skip; every step has at most one tool call;
    tokens and errors add up."""
    at = T0
    timed: list[Frame] = []
    for i, frame in enumerate(frames):
        at += timedelta(milliseconds=gaps_ms[i])
        timed.append(replace(frame, run_id="r", seq=i + 1, created_at=at))
    log = TrajectoryLog.from_frames(timed)
    by_id = {f.id: f for f in timed}

    expected_ids = [f.id for f in timed if type(f) in ENTRY_TYPE]
    assert [e.frame_id for e in log.entries] == expected_ids
    for entry in log.entries:
        frame = by_id[entry.frame_id]
        assert entry.timestamp == frame.created_at and entry.seq == frame.seq
        assert entry.type == ENTRY_TYPE[type(frame)]
    assert [e.seq for e in log.entries] == sorted(e.seq for e in log.entries)
    assert len({e.frame_id for e in log.entries}) == len(log.entries)

    steps = [e.step_number for e in log.entries]
    assert all(b - a in (0, 1) for a, b in zip([1, *steps], steps, strict=False))
    assert (steps[0] == 1) if steps else log.total_steps == 0
    assert log.total_steps == (steps[-1] if steps else 0)
    for n in set(steps):
        assert sum(1 for e in log.entries if e.step_number == n and e.type == "tool_call") <= 1

    usage_frames = [f for f in timed if isinstance(f, UsageFrame)]
    assert log.metrics.input_tokens == sum(f.input_tokens for f in usage_frames)
    assert log.metrics.output_tokens == sum(f.output_tokens for f in usage_frames)
    failures = sum(
        1
        for e in log.entries
        if e.type == "error" or (e.type == "tool_result" and not e.metadata["success"])
    )
    assert log.metrics.error_count == failures
    expected = (timed[-1].created_at - timed[0].created_at).total_seconds() if timed else 0.0
    assert log.metrics.duration_s == expected
    exported: dict[str, Any] = json.loads(log.to_json())
    assert len(exported["entries"]) == len(log.entries)
