"""The react agent end to end with the scripted model: Reflexion across runs, bad model output,
repeated failures, asking the user, native tool calls, limits and the tool-call contract's tests."""

from __future__ import annotations

import itertools
import json
from datetime import UTC, datetime, timedelta
from typing import Any

from kforge.agents.loop.prompts import ObservationReply
from kforge.agents.react import ReactAgent, trajectory_of
from kforge.frames import (
    AgentAction,
    AgentControl,
    AgentResponse,
    Compaction,
    ErrorFrame,
    ModelCall,
    Observation,
    Plan,
    Reflection,
    ToolCallFrame,
    ToolResultFrame,
)
from kforge.llm.structured import schema_for
from kforge.llm.testing.function import CallInfo, FunctionModel
from kforge.llm.testing.scripted import ScriptedModel
from kforge.llm.types import Message, ModelResponse, ToolCall
from kforge.memory.compaction import COMPACTION_PROMPT
from kforge.memory.episodic import EpisodicMemory, ReflectionRecord
from kforge.memory.window import approximate_tokens
from kforge.store.base import RunStatus
from kforge.store.memory import MemoryStore
from kforge.tools import tool
from tests.agents.helpers import failures, of_type, prompt_text, rebuilt_prompts, runtime

GOAL = "What is the capital of France?"


def call(country: str, thought: str = "I need the capital") -> dict[str, Any]:
    return {
        "thought": thought,
        "action": "tool_call",
        "tool": "lookup_capital",
        "arguments": {"country": country},
    }


def reflection(analysis: str, fix: str, error_type: str = "not_found") -> dict[str, str]:
    return {"error_type": error_type, "analysis": analysis, "suggested_fix": fix}


def observed(text: str, achieved: bool) -> dict[str, Any]:
    return {"observation": text, "goal_achieved": achieved}


async def test_a_failed_call_is_reflected_on_and_the_lesson_fixes_the_retry_and_a_later_run() -> (
    None
):
    store = MemoryStore()
    analysis = "The tool only knows English country names; 'Frankreich' is German."
    fix = "Call lookup_capital with country='France'."
    model = ScriptedModel(
        [
            call("Frankreich"),
            reflection(analysis, fix),
            call("France", "Use the English name as the reflection says"),
            observed("The result names Paris.", True),
            "Paris is the capital of France.",
        ]
    )
    rt = runtime(model, store=store)
    run = await rt.run("react", {"goal": GOAL})
    assert run.status == RunStatus.COMPLETED, run.error
    assert run.result is not None
    assert run.result["answer"] == "Paris is the capital of France."
    assert run.result["goal_achieved"] is True
    model.assert_consumed()

    frames = rt.frames(run.id)
    [stored] = of_type(frames, Reflection)
    assert (stored.error_type, stored.analysis) == ("not_found", analysis)
    # the retry's decision prompt carries the lesson (call 3 is the second decision)
    assert analysis in prompt_text(model.calls[2].messages)
    assert fix in prompt_text(model.calls[2].messages)
    results = of_type(frames, ToolResultFrame)
    assert [r.success for r in results] == [False, True]

    memory = EpisodicMemory(store, agent_type="react")
    assert [r.id for r in memory.reflections()] == [stored.reflection_id]

    # A later run, same agent and user: its very first decision already sees the lesson.
    later = ScriptedModel(
        [call("France"), observed("Paris.", True), "Paris is the capital of France."]
    )
    rt2 = runtime(later, store=store)
    run2 = await rt2.run("react", {"goal": "Which city is the capital of France?"})
    assert run2.status == RunStatus.COMPLETED
    first_prompt = prompt_text(later.calls[0].messages)
    assert analysis in first_prompt and fix in first_prompt
    later.assert_consumed()

    # Another user does not see it: reflections are scoped per user.
    other = ScriptedModel([call("France"), observed("Paris.", True), "Paris."])
    run3 = await runtime(other, store=store).run("react", {"goal": GOAL, "user_id": "someone"})
    assert run3.status == RunStatus.COMPLETED
    assert analysis not in prompt_text(other.calls[0].messages)


async def test_the_first_prompt_shows_the_lesson_most_like_the_goal_before_newer_ones() -> None:
    store = MemoryStore()
    memory = EpisodicMemory(store, agent_type="react")
    start = datetime(2024, 1, 1, tzinfo=UTC)
    for days, country in enumerate(["Frankreich", "Atlantis", "Lemuria"]):
        memory.save(
            ReflectionRecord(
                id=f"r{days}",
                error_type="not_found",
                failed_action=ToolCall("lookup_capital", {"country": country}),
                error=f"country '{country}' not found",
                analysis=f"lesson about {country}",
                suggested_fix="Use the English name.",
                created_at=start + timedelta(days=days),
            )
        )
    model = ScriptedModel([call("France"), observed("Paris.", True), "Paris."])
    run = await runtime(model, store=store).run("react", {"goal": "Capital of Frankreich?"})
    assert run.status == RunStatus.COMPLETED
    first_prompt = prompt_text(model.calls[0].messages)
    assert "lesson about Frankreich" in first_prompt  # the oldest, but about this very country
    assert "lesson about Lemuria" in first_prompt  # then the newest
    assert "lesson about Atlantis" not in first_prompt


async def test_malformed_decisions_get_an_error_frame_and_a_bounded_retry() -> None:
    model = ScriptedModel(
        [
            ModelResponse(text="I think the answer is Paris but let me"),  # not JSON
            ModelResponse(parsed={"thought": "hm", "action": "dance"}),  # unknown action
            {"thought": "I know this", "action": "respond", "answer": "Paris."},
        ]
    )
    rt = runtime(model)
    run = await rt.run("react", {"goal": GOAL})
    assert run.status == RunStatus.COMPLETED
    errors = of_type(rt.frames(run.id), ErrorFrame)
    assert [e.error_type for e in errors] == ["invalid_decision", "invalid_decision"]
    assert "not JSON" in errors[0].message and "'action' must be one of" in errors[1].message
    assert "could not be used" in prompt_text(model.calls[2].messages)
    assert run.result is not None and run.result["answer"] == "Paris."


async def test_malformed_decisions_stop_after_max_retries_with_a_partial_answer() -> None:
    bad = ModelResponse(text="{not json")
    model = ScriptedModel([bad, bad, "I could not decide."])
    rt = runtime(model)
    run = await rt.run("react", {"goal": GOAL, "max_retries": 2})
    assert run.status == RunStatus.COMPLETED
    assert run.result is not None
    assert run.result["stop_reason"] == "max_retries" and run.result["goal_achieved"] is False
    assert len(of_type(rt.frames(run.id), ErrorFrame)) == 2
    model.assert_consumed()


async def test_unknown_tool_and_invalid_arguments_are_failed_calls_not_crashes() -> None:
    model = ScriptedModel(
        [
            ModelResponse(
                parsed={"thought": "t", "action": "tool_call", "tool": "teleport", "arguments": {}}
            ),
            reflection("There is no teleport tool.", "Use lookup_capital.", "wrong_tool"),
            ModelResponse(
                parsed={
                    "thought": "t",
                    "action": "tool_call",
                    "tool": "lookup_capital",
                    "arguments": {"country": 7},
                }
            ),
            reflection("country must be text.", "Pass a string.", "invalid_arguments"),
            call("France"),
            observed("Paris", True),
            "Paris.",
        ]
    )
    rt = runtime(model)
    run = await rt.run("react", {"goal": GOAL})
    assert run.status == RunStatus.COMPLETED
    frames = rt.frames(run.id)
    errors = failures(frames)
    assert "unknown tool 'teleport'" in errors[0].error
    assert "lookup_capital" in errors[0].error  # names the tools that exist
    assert "country" in errors[1].error
    assert len(of_type(frames, Reflection)) == 2
    model.assert_consumed()


async def test_an_identical_failed_call_is_not_repeated_an_alternative_runs_instead() -> None:
    model = ScriptedModel(
        [
            call("Frankreich"),
            reflection("German name.", "Use English."),
            call("Frankreich", "try again"),  # the same failing call
            {"name": "lookup_capital", "arguments": {"country": "France"}, "reasoning": "English"},
            observed("Paris", True),
            "Paris.",
        ]
    )
    rt = runtime(model)
    run = await rt.run("react", {"goal": GOAL})
    assert run.status == RunStatus.COMPLETED
    calls = of_type(rt.frames(run.id), ToolCallFrame)
    assert [c.arguments for c in calls] == [{"country": "Frankreich"}, {"country": "France"}]
    assert calls[1].reasoning  # the alternative's reason is on its call
    model.assert_consumed()


async def test_repeated_error_types_bring_a_suggested_alternative_into_the_next_decision() -> None:
    model = ScriptedModel(
        [
            call("Frankreich"),
            reflection("German name.", "Use English."),
            call("Francia"),
            reflection("Spanish name.", "Use English."),  # not_found again: repeated
            {"name": "lookup_capital", "arguments": {"country": "France"}, "reasoning": "English"},
            call("France"),
            observed("Paris", True),
            "Paris.",
        ]
    )
    rt = runtime(model)
    run = await rt.run("react", {"goal": GOAL})
    assert run.status == RunStatus.COMPLETED
    reflections = of_type(rt.frames(run.id), Reflection)
    assert [r.repeated for r in reflections] == [False, True]
    decision_prompt = prompt_text(model.calls[5].messages)
    assert (
        'Suggested alternative after a repeated failure: lookup_capital({"country": "France"})'
        in (decision_prompt)
    )
    model.assert_consumed()


async def test_a_tool_that_keeps_failing_is_retired_after_max_retries() -> None:
    model = ScriptedModel(
        [
            call("Atlantis"),
            reflection("No such country.", "Check the name."),
            call("Lemuria"),
            reflection("No such country either.", "Check the name."),  # repeated: not_found
            {"name": "lookup_capital", "arguments": {"country": "Mu"}, "reasoning": "another"},
            {"thought": "No tool left", "action": "respond", "answer": "Unknown."},
        ]
    )
    rt = runtime(model)
    run = await rt.run("react", {"goal": "Capital of Atlantis?", "max_retries": 2})
    assert run.status == RunStatus.COMPLETED
    frames = rt.frames(run.id)
    assert len(failures(frames)) == 2  # never a third attempt
    thoughts = " ".join(f.message for f in frames if f.type == "agent.thinking")
    assert "lookup_capital failed 2 times; it is no longer offered" in thoughts
    last_prompt = prompt_text(model.calls[-1].messages)
    assert "No longer available after repeated failures: lookup_capital" in last_prompt
    assert "Suggested alternative" not in last_prompt  # never suggests a retired tool
    assert model.calls[-1].output_schema is not None
    assert "lookup_capital" not in str(model.calls[-1].output_schema)
    model.assert_consumed()


async def test_asking_the_user_waits_and_the_answer_reaches_the_next_decision() -> None:
    model = ScriptedModel(
        [
            {"thought": "Which country?", "action": "ask_user", "question": "Which country?"},
            call("Japan"),
            observed("Tokyo", True),
            "Tokyo.",
        ]
    )
    rt = runtime(model)
    run = await rt.run("react", {"goal": "What is the capital?"})
    assert run.status == RunStatus.AWAITING_USER
    assert (run.pending_interaction or {}).get("prompt") == "Which country?"
    await rt.resume(run.id, "Japan")
    done = await rt.wait(run.id)
    assert done.status == RunStatus.COMPLETED
    assert "The user answered: Japan" in prompt_text(model.calls[1].messages)
    model.assert_consumed()  # the question's decision was not asked again on resume


async def test_native_tool_calls_and_a_plain_text_answer() -> None:
    model = ScriptedModel(
        [
            ModelResponse(
                text="Look it up.", tool_calls=(ToolCall("lookup_capital", {"country": "Kenya"}),)
            ),
            observed("Nairobi", True),
            "Nairobi is the capital of Kenya.",
        ]
    )
    rt = runtime(model)
    run = await rt.run("react", {"goal": "Capital of Kenya?", "decision_mode": "native"})
    assert run.status == RunStatus.COMPLETED
    assert [t.name for t in model.calls[0].tools] == ["lookup_capital", "word_count", "ask_user"]
    assert model.calls[0].output_schema is None
    [plan] = of_type(rt.frames(run.id), Plan)
    assert plan.reasoning == "Look it up." and plan.next_action == AgentAction.TOOL_CALL


async def test_an_empty_answer_fails_its_check_and_is_retried() -> None:
    model = ScriptedModel(
        [
            {"thought": "done", "action": "respond", "answer": "  "},
            {"error_type": "check_failed", "analysis": "Empty.", "suggested_fix": "Write it."},
            {"thought": "done", "action": "respond", "answer": "Paris."},
        ]
    )
    rt = runtime(model)
    run = await rt.run("react", {"goal": GOAL})
    assert run.result is not None and run.result["answer"] == "Paris."
    [obs] = of_type(rt.frames(run.id), Observation)
    assert "failed its check: the answer is empty" in obs.content


async def test_time_limit_wraps_up_with_a_partial_answer() -> None:
    model = ScriptedModel(
        [{"thought": "Let me think", "action": "plan"}, "Partial: nothing found yet."]
    )
    rt = runtime(model)
    run = await rt.run("react", {"goal": GOAL, "max_time_s": 1e-9})
    assert run.result is not None and run.result["stop_reason"] == "max_time"
    [control] = of_type(rt.frames(run.id), AgentControl)
    assert control.timeout_reached and not control.should_continue


# -- the tool-call contract --------------------------------------------------------------------


async def test_agent_loop_is_explainable_from_frames() -> None:
    model = ScriptedModel(
        [
            call("Frankreich"),
            reflection("German.", "English."),
            call("France"),
            observed("Paris", True),
            "Paris.",
        ]
    )
    rt = runtime(model)
    run = await rt.run("react", {"goal": GOAL})
    frames = rt.frames(run.id)
    types = {type(f).__name__ for f in frames}
    assert {"Plan", "ToolCallFrame", "ToolResultFrame", "Observation", "AgentResponse"} <= types
    assert run.result is not None and run.result["tools_called"]
    for frame in frames:
        assert frame.id and frame.created_at and frame.seq > 0
    # The whole story can be told from the frames: decisions, calls, outcomes, the lesson.
    log = trajectory_of(frames, optimal_steps=1)
    kinds = [e.type for e in log.entries]
    assert kinds.count("tool_call") == 2 and kinds.count("tool_result") == 2
    assert "reflection" in kinds and kinds[-1] == "synthesis"
    metrics = log.metrics
    assert metrics.total_steps == 2 and metrics.efficiency == 0.5 and metrics.error_count == 1
    assert '"metrics"' in log.to_json()
    assert run.result["metrics"]["total_steps"] == 2


async def test_agent_loop_is_bounded() -> None:
    thinking = {"thought": "need more info", "action": "plan"}
    model = ScriptedModel([thinking, thinking, thinking, "Best effort: unknown."])
    rt = runtime(model)
    run = await rt.run("react", {"goal": "Impossible task", "max_steps": 3})
    assert run.status == RunStatus.COMPLETED
    frames = rt.frames(run.id)
    assert run.result is not None and run.result["iterations"] <= 3
    response = of_type(frames, AgentResponse)[-1]
    controls = of_type(frames, AgentControl)
    assert controls[-1].max_iterations_reached and not response.goal_achieved
    assert run.result["stop_reason"] == "max_steps"
    assert len(of_type(frames, Plan)) == 3
    model.assert_consumed()


def test_bad_args_are_refused_with_clear_messages() -> None:
    import pytest

    from kforge.errors import ValidationError

    with pytest.raises(ValidationError, match="needs a non-empty 'goal'"):
        ReactAgent({})
    with pytest.raises(ValidationError, match="'max_steps' must be a positive integer"):
        ReactAgent({"goal": "g", "max_steps": 0})
    with pytest.raises(ValidationError, match="'decision_mode' must be"):
        ReactAgent({"goal": "g", "decision_mode": "telepathy"})


async def test_compaction_keeps_every_prompt_sent_under_eighty_percent_of_the_window() -> None:
    """What is sent counts (system prompt, tool descriptions, request, context), it is checked
    before each model call, and a summary as long as the model may write does not bring the
    next compaction back at once."""
    window = 1500

    @tool(read_only=True)
    def read_page(page: int) -> str:
        """Read one page of the report.

        Args:
            page: The page number, from 1.
        """
        return f"Page {page}: " + "lorem ipsum " * (200 if page == 1 else 40)

    sent: list[int] = []

    def reply(messages: list[Message], info: CallInfo) -> Any:
        schema = info.output_schema
        if messages[0].content == COMPACTION_PROMPT:
            assert info.settings is not None and info.settings.max_tokens is not None
            return "s" * (4 * info.settings.max_tokens)  # as long as it may be
        if schema == schema_for(ObservationReply):
            return observed("Page read.", False)
        described = json.dumps(schema if schema else [t.to_dict() for t in info.tools])
        sent.append(
            sum(approximate_tokens(m.content) for m in messages) + approximate_tokens(described)
        )
        if schema is None:
            return "The report is about lorem ipsum."
        return call_page(len(sent))

    def call_page(page: int) -> dict[str, Any]:
        return {
            "thought": "Read it",
            "action": "tool_call",
            "tool": "read_page",
            "arguments": {"page": page},
        }

    rt = runtime(FunctionModel(reply), read_page)
    run = await rt.run(
        "react",
        {
            "goal": "Summarise the report.",
            "max_steps": 12,
            "context_tokens": window,
            "allow_ask": False,
        },
    )
    assert run.status == RunStatus.COMPLETED, run.error
    assert len(sent) == 13  # twelve decisions and the synthesis
    assert max(sent) <= window * 0.8, sent
    frames = rt.frames(run.id)
    compactions = of_type(frames, Compaction)
    assert compactions
    calls = [f for f in of_type(frames, ModelCall) if f.purpose.startswith("react.")]
    for earlier, later in itertools.pairwise(compactions):
        between = [c for c in calls if earlier.seq < c.seq < later.seq]
        assert len([c for c in between if c.purpose == "react.decide"]) >= 2


async def test_a_resumed_step_compacts_only_where_its_first_execution_did() -> None:
    """Lessons learnt while a run waits make its re-executed step's prompt longer; the step
    still replays what it recorded instead of compacting on the way, and the prompt of each
    call is rebuilt from what was recorded (not from what the re-executed step sends)."""
    store = MemoryStore()
    decisions: list[str] = []
    sent: list[list[Message]] = []

    def reply(messages: list[Message], info: CallInfo) -> Any:
        sent.append(list(messages))
        if messages[0].content == COMPACTION_PROMPT:
            return "Earlier: the user was asked which report."
        if info.output_schema is None:
            return "The annual report is about growth."
        decisions.append(prompt_text(messages))
        if len(decisions) == 1:
            return {"thought": "Unclear", "action": "ask_user", "question": "Which report?"}
        return {"thought": "Known", "action": "respond", "answer": "It is about growth."}

    rt = runtime(FunctionModel(reply), store=store)
    args = {"goal": "Summarise the report.", "context_tokens": 1500, "allow_ask": True}
    run = await rt.run("react", args)
    assert run.status == RunStatus.AWAITING_USER
    memory = EpisodicMemory(store, agent_type="react")
    for n in range(2):
        memory.save(
            ReflectionRecord(
                id=f"long{n}",
                error_type="not_found",
                failed_action=ToolCall("lookup_capital", {"country": f"Country {n}"}),
                error="not found",
                analysis="A long lesson. " * 150,
                suggested_fix="Check the name.",
            )
        )
    await rt.resume(run.id, "The annual one.")
    run = await rt.wait(run.id)
    assert run.status == RunStatus.COMPLETED, run.error
    assert len(decisions) == 2
    assert of_type(rt.frames(run.id), Compaction)  # the live step after it compacted
    assert rebuilt_prompts(store, run.id)[0] == sent
    bases = [c.prompt_base for c in of_type(rt.frames(run.id), ModelCall)]
    assert bases[0] == 0 and bases[-1] != 0  # the live call is based on the replayed one
