"""The ReAct loop inside a phase of a phase-graph agent: its state travels in the agent's mode
data, so a question asked mid-loop suspends the run and the loop continues after the answer."""

from __future__ import annotations

import enum
from typing import Any

from kforge.agents.loop import ReactLoop
from kforge.agents.loop.config import LoopConfig
from kforge.engine.agent import ForgeAgent
from kforge.engine.phases import PhaseGraph, PhaseTransition
from kforge.engine.run_context import RunContext
from kforge.frames import PhaseChanged
from kforge.llm.testing.scripted import ScriptedModel
from kforge.runtime import AgentRegistry, Runtime
from kforge.store.base import RunStatus
from kforge.store.memory import MemoryStore
from kforge.tools import ToolRegistry
from tests.agents.helpers import lookup_capital, of_type


class P(enum.Enum):
    FIND = "find"
    REPORT = "report"
    COMPLETE = "complete"


class CapitalReport(ForgeAgent):
    """FIND runs a ReAct loop (one iteration per step); REPORT writes the loop's answer down."""

    agent_type = "test.capital_report"
    graph = PhaseGraph(
        P,
        [
            PhaseTransition(P.FIND, P.REPORT, "answer_found"),
            PhaseTransition(P.REPORT, P.COMPLETE, "reported"),
        ],
        initial=P.FIND,
        complete=P.COMPLETE,
    )

    def __init__(self, args: dict[str, Any] | None = None) -> None:
        super().__init__(args)
        self.loop = ReactLoop(
            str(self.args.get("goal", "")), LoopConfig(max_steps=4), check=self.check
        )
        self.report = ""

    @staticmethod
    def check(answer: str) -> str | None:
        return None if any(ch.isupper() for ch in answer) else "name the city with a capital"

    async def execute_phase(self, phase: enum.Enum, ctx: RunContext) -> bool:
        if phase == P.FIND:
            return await self.loop.step(ctx, ToolRegistry([lookup_capital]))
        self.report = f"Report: {self.loop.answer}"
        return True

    def evaluate_condition(self, transition: PhaseTransition) -> bool:
        return {"answer_found": self.loop.finished, "reported": bool(self.report)}[
            transition.condition
        ]

    def initial_prompt(self, phase: enum.Enum) -> str:
        return ""

    def get_mode_data(self) -> dict[str, Any]:
        return {"loop": self.loop.to_dict(), "report": self.report}

    def restore_mode_data(self, data: dict[str, Any]) -> None:
        self.loop = ReactLoop.restore(data["loop"], check=self.check)
        self.report = data["report"]

    def result(self) -> dict[str, Any]:
        return {"report": self.report, **self.loop.result().stored()}


async def test_the_loop_runs_inside_a_phase_and_survives_a_suspension() -> None:
    model = ScriptedModel(
        [
            {"thought": "Which country?", "action": "ask_user", "question": "Which country?"},
            {
                "thought": "Look it up",
                "action": "tool_call",
                "tool": "lookup_capital",
                "arguments": {"country": "Kenya"},
            },
            {"observation": "Nairobi.", "goal_achieved": False},
            {"thought": "done", "action": "respond", "answer": "nairobi"},  # fails the check
            {
                "error_type": "check_failed",
                "analysis": "Lower case.",
                "suggested_fix": "Capitalise.",
            },
            {"thought": "done", "action": "respond", "answer": "Nairobi"},
        ]
    )
    registry = AgentRegistry()
    registry.register(CapitalReport.agent_type, CapitalReport)
    rt = Runtime(MemoryStore(), model=model, registry=registry)
    run = await rt.run(CapitalReport.agent_type, {"goal": "Name a capital city"})
    assert run.status == RunStatus.AWAITING_USER
    await rt.resume(run.id, "Kenya")  # a new agent object, rebuilt from the saved state
    done = await rt.wait(run.id)
    assert done.status == RunStatus.COMPLETED, done.error
    assert (done.result or {})["report"] == "Report: Nairobi"
    phases = [f.to_phase for f in of_type(rt.frames(run.id), PhaseChanged)]
    assert phases == ["find", "report", "complete"]
    model.assert_consumed()
