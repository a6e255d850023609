"""The ReAct loop keeps its progress in a ``LoopState`` it holds: a loop saved mid-run (by this
or an earlier version) restores and carries on where it stopped."""

from __future__ import annotations

import json
from dataclasses import fields
from pathlib import Path
from typing import Any

from kforge.agents.loop import LoopConfig, LoopState, ReactLoop
from kforge.agents.react import ReactAgent
from kforge.frames import AgentResponse, Frame
from kforge.llm.testing.scripted import ScriptedModel
from kforge.tools import ToolRegistry
from tests.agents.helpers import lookup_capital, prompt_text
from tests.step_context import step_context

SAVED: dict[str, Any] = json.loads(
    (Path(__file__).parent / "data" / "react_loop_saved.json").read_text(encoding="utf-8")
)
"""A loop after two failed calls, two reflections and a suggested alternative, as saved when
``ReactLoop`` still was its own state."""


def test_a_saved_loop_restores_to_the_same_state() -> None:
    loop = ReactLoop.restore(SAVED)
    assert isinstance(loop.state, LoopState)
    # saved again (fields at their class default left out, timestamps ending in Z), it reads
    # back as the same state
    again = ReactLoop.restore(json.loads(json.dumps(loop.to_dict())))
    assert values(again.state) == values(loop.state)
    assert set(loop.to_dict()) <= set(SAVED)
    for name, value in loop.to_dict().items():
        assert value == SAVED[name] or name == "window", name
    state = loop.state
    assert (state.iteration, state.failures, state.user_id) == (2, {"lookup_capital": 2}, "ann")
    assert state.config == LoopConfig(max_steps=5, max_retries=3)
    assert state.window is not None and state.window.grounding.user_preferences == (
        ("units", "metric"),
    )
    assert not loop.finished and loop.answer == ""


def values(state: LoopState) -> dict[str, Any]:
    return {f.name: getattr(state, f.name) for f in fields(LoopState)}


def test_a_new_loop_saves_the_fields_of_the_saved_one() -> None:
    fresh = ReactLoop("g", LoopConfig(max_steps=5)).to_dict()
    assert set(fresh) <= set(SAVED)


async def test_a_restored_loop_carries_on_from_the_saved_step() -> None:
    model = ScriptedModel(
        [
            {
                "thought": "Use the suggestion",
                "action": "tool_call",
                "tool": "lookup_capital",
                "arguments": {"country": "France"},
            },
            {"observation": "The capital is Paris.", "goal_achieved": True},
            "Paris is the capital of France.",
        ]
    )
    committed: list[Frame] = []
    ctx = step_context(model, committed, step=3)
    loop = ReactLoop.restore(SAVED)
    assert await loop.step(ctx, ToolRegistry([lookup_capital])) is True
    frames = committed + ctx.take_pending()
    decision_prompt = prompt_text(model.calls[0].messages)
    assert "Step 3 of 5." in decision_prompt
    assert 'lookup_capital({"country": "France"}) (the English name)' in decision_prompt
    assert loop.state.suggestion is None  # shown once, then cleared
    result = loop.result()
    assert result.answer == "Paris is the capital of France."
    assert result.iterations == 3 and result.goal_achieved is True
    assert result.tools_called == ("lookup_capital",) * 3
    assert any(isinstance(f, AgentResponse) for f in frames)
    model.assert_consumed()


def test_the_react_agent_restores_a_saved_loop() -> None:
    agent = ReactAgent({"goal": SAVED["goal"]})
    agent.restore_state({"args": {"goal": SAVED["goal"]}, "loop": SAVED})
    restored = ReactLoop.restore(agent.get_state()["loop"])
    assert values(restored.state) == values(ReactLoop.restore(SAVED).state)
    partial = agent.partial_result()
    assert partial.iterations == 2 and partial.finished is False
    assert len(partial.reflections) == 2
