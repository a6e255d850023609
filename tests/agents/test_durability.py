"""A react run that dies mid-step resumes at that step: recorded model replies and tool results
are replayed, never requested or run again."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import pytest

from kforge.frames import ModelCall, Reflection, ToolCallFrame, ToolResultFrame
from kforge.llm.testing.scripted import ScriptedModel, ScriptedReply
from kforge.llm.types import Message, ModelResponse, ModelSettings, ToolSpec
from kforge.memory.episodic import EpisodicMemory
from kforge.store.base import RunStatus
from kforge.store.memory import MemoryStore
from kforge.tools import FunctionTool, ToolAnnotations, tool
from tests.agents.helpers import Counter, of_type, runtime


class Crash(BaseException):
    """Stands for the process dying: nothing catches it, nothing is marked."""


class DyingModel(ScriptedModel):
    """A scripted model whose process 'dies' when call ``die_on`` arrives."""

    def __init__(self, replies: Iterable[ScriptedReply], *, die_on: int) -> None:
        super().__init__(replies)
        self.die_on = die_on
        self.requests = 0

    async def complete(
        self,
        messages: Sequence[Message],
        settings: ModelSettings | None = None,
        *,
        tools: Sequence[ToolSpec] = (),
        output_schema: dict[str, Any] | None = None,
    ) -> ModelResponse:
        self.requests += 1
        if self.requests == self.die_on:
            raise Crash
        return await super().complete(messages, settings, tools=tools, output_schema=output_schema)


NOTE = {
    "thought": "Keep it",
    "action": "tool_call",
    "tool": "record_note",
    "arguments": {"note": "buy milk"},
}


async def test_kill_after_a_side_effect_then_resume_does_not_run_the_tool_again() -> None:
    store, counter = MemoryStore(), Counter()
    first = DyingModel([NOTE], die_on=2)  # dies when the observation is requested
    rt = runtime(first, counter.tool, store=store)
    run_id = await rt.start("react", {"goal": "Remember to buy milk", "tools": ["record_note"]})
    with pytest.raises(Crash):
        await rt.wait(run_id)
    assert counter.calls == 1
    assert store.get_run(run_id).status == RunStatus.RUNNING  # nobody marked it
    assert len(of_type(store.read_frames(run_id), ToolResultFrame)) == 1  # the result was committed

    second = ScriptedModel([{"observation": "Noted.", "goal_achieved": True}, "Noted: buy milk."])
    rt2 = runtime(second, counter.tool, store=store)
    await rt2.resume(run_id)
    done = await rt2.wait(run_id)
    assert done.status == RunStatus.COMPLETED, done.error
    assert counter.calls == 1  # the recorded call was replayed, not run again
    second.assert_consumed()  # and the recorded decision was not asked again
    frames = store.read_frames(run_id)
    assert len(of_type(frames, ToolCallFrame)) == 1
    assert [f.purpose for f in of_type(frames, ModelCall)] == [
        "react.decide",
        "react.observe",
        "react.synthesize",
    ]
    assert [f.seq for f in frames] == list(range(1, len(frames) + 1))


def dying_tool() -> tuple[FunctionTool, list[str]]:
    """A tool that does its side effect, then the process dies before its result is recorded."""
    done: list[str] = []

    @tool(annotations=ToolAnnotations(destructive_hint=False))
    def record_note(note: str) -> str:
        """Append a note to the notebook.

        Args:
            note: The note to keep.
        """
        done.append(note)
        raise Crash

    return record_note, done


async def test_kill_during_a_side_effect_is_reported_as_outcome_unknown_not_rerun() -> None:
    store = MemoryStore()
    note_tool, done = dying_tool()
    rt = runtime(ScriptedModel([NOTE]), note_tool, store=store)
    run_id = await rt.start("react", {"goal": "Remember to buy milk", "tools": ["record_note"]})
    with pytest.raises(Crash):
        await rt.wait(run_id)
    assert done == ["buy milk"]

    replies = [
        {"error_type": "tool_error", "analysis": "Unknown outcome.", "suggested_fix": "Check."},
        {"thought": "It probably worked", "action": "respond", "answer": "Probably noted."},
    ]
    second = ScriptedModel(replies)
    rt2 = runtime(second, note_tool, store=store)
    await rt2.resume(run_id)
    finished = await rt2.wait(run_id)
    assert finished.status == RunStatus.COMPLETED, finished.error
    assert done == ["buy milk"]  # not run again
    [error] = [f for f in of_type(store.read_frames(run_id), ToolResultFrame) if not f.success]
    assert "whether it took effect is unknown" in error.error
    second.assert_consumed()


def lookup(country: str) -> dict[str, Any]:
    return {
        "thought": f"Try {country}",
        "action": "tool_call",
        "tool": "lookup_capital",
        "arguments": {"country": country},
    }


def lesson(n: int) -> dict[str, str]:
    return {"error_type": "not_found", "analysis": f"lesson {n}", "suggested_fix": "English."}


async def test_kill_after_a_reflection_is_stored_keeps_one_copy_of_it() -> None:
    store = MemoryStore()
    # the second failure repeats an error type, so an alternative is asked for: the process
    # dies right then, after the reflection went to memory
    first = DyingModel([lookup("Atlantis"), lesson(1), lookup("Lemuria"), lesson(2)], die_on=5)
    rt = runtime(first, store=store)
    run_id = await rt.start("react", {"goal": "Capital of France?"})
    with pytest.raises(Crash):
        await rt.wait(run_id)

    second = ScriptedModel(
        [
            {"name": "lookup_capital", "arguments": {"country": "France"}, "reasoning": "r"},
            lookup("France"),
            {"observation": "Paris.", "goal_achieved": True},
            "Paris.",
        ]
    )
    rt2 = runtime(second, store=store)
    await rt2.resume(run_id)
    done = await rt2.wait(run_id)
    assert done.status == RunStatus.COMPLETED, done.error
    second.assert_consumed()
    memory = EpisodicMemory(store, agent_type="react")
    assert sorted(r.analysis for r in memory.reflections()) == ["lesson 1", "lesson 2"]
    frames = store.read_frames(run_id)
    assert [r.analysis for r in of_type(frames, Reflection)] == ["lesson 1", "lesson 2"]
    assert [r.repeated for r in of_type(frames, Reflection)] == [False, True]
