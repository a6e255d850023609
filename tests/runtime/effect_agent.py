"""An agent with a side effect per step, for the multi-worker tests: importing this module
registers ``test.effects`` (``kforge worker --import tests.runtime.effect_agent``),
``test.parent``, which starts one ``test.effects`` child and waits for it, and ``test.tree``, a
tree agent whose subagents hold before their main execution until the file named by
``KFORGE_TEST_GATE`` exists.

Each step calls ``record_effect``, a tool that is neither read-only nor idempotent: it appends
``RUN_ID STEP`` to the file named by ``KFORGE_TEST_EFFECTS``. A re-executed step must never call
it again (its call frame commits before it acts), so a duplicated line is a repeated effect.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

from kforge.agents.builtin import register_agent
from kforge.agents.tree import TreeAgent
from kforge.engine.agent import StepOutcome
from kforge.engine.run_context import RunContext
from kforge.frames import new_id
from kforge.tools.decorator import tool
from kforge.tools.execution import execute_tool


@tool(requires_approval=False)
def record_effect(run_id: str, step: int) -> str:
    """Append one line saying which step of which run acted.

    Args:
        run_id: the run
        step: its step number
    """
    with open(os.environ["KFORGE_TEST_EFFECTS"], "a", encoding="utf-8") as out:
        out.write(f"{run_id} {step}\n")
    return "recorded"


class EffectAgent:
    agent_type = "test.effects"

    def __init__(self, args: dict[str, Any] | None = None) -> None:
        args = args or {}
        self.steps = int(args.get("steps", 5))
        self.pause_s = float(args.get("pause_s", 0.0))
        self.ask_at = int(args.get("ask_at", 0))
        """The step that first asks a person whether to go on (0: none)."""
        self.done: list[str] = []

    async def step(self, ctx: RunContext) -> StepOutcome:
        number = len(self.done) + 1
        if number == self.ask_at:
            answer = await ctx.ask("Go on?", kind="approval", options=("approve", "reject"))
            if answer.get("action") != "approve":
                return StepOutcome(True, {"steps": list(self.done), "stopped": True}, "stopped")
        result = await execute_tool(ctx, record_effect, {"run_id": ctx.run_id, "step": number})
        self.done.append("error" if result.is_error else "ok")
        await asyncio.sleep(self.pause_s)  # a step that takes a while, so kills land mid-run
        if len(self.done) >= self.steps:
            return StepOutcome(True, {"steps": list(self.done)}, "done")
        return StepOutcome()

    def get_state(self) -> dict[str, Any]:
        return {
            "steps": self.steps,
            "pause_s": self.pause_s,
            "ask_at": self.ask_at,
            "done": list(self.done),
        }

    def restore_state(self, state: dict[str, Any]) -> None:
        self.steps, self.pause_s = int(state["steps"]), float(state["pause_s"])
        self.ask_at = int(state["ask_at"])
        self.done = list(state["done"])

    def partial_result(self) -> dict[str, Any]:
        return {"steps": list(self.done)}


register_agent(EffectAgent.agent_type, EffectAgent, replace=True)


class ParentAgent:
    """One step: start a child (its id recorded first, so a re-executed step starts it once)
    and wait for it, parked if the child runs elsewhere."""

    agent_type = "test.parent"

    def __init__(self, args: dict[str, Any] | None = None) -> None:
        self.child_steps = int((args or {}).get("child_steps", 2))

    async def step(self, ctx: RunContext) -> StepOutcome:
        agents: Any = ctx.services.agents
        chosen = await ctx.step("test.child", lambda: {"id": new_id()})
        child = await agents.start("test.effects", {"steps": self.child_steps}, run_id=chosen["id"])
        run = await agents.settle(child, park=True)
        return StepOutcome(True, {"child": child, "status": run.status.value}, "done")

    def get_state(self) -> dict[str, Any]:
        return {"child_steps": self.child_steps}

    def restore_state(self, state: dict[str, Any]) -> None:
        self.child_steps = int(state["child_steps"])

    def partial_result(self) -> dict[str, Any]:
        return {}


register_agent(ParentAgent.agent_type, ParentAgent, replace=True)


class GatedTree(TreeAgent):
    agent_type = "test.tree"

    async def step(self, ctx: RunContext) -> StepOutcome:
        if self.params.depth > 0 and self.state.stage == "execute":
            gate = Path(os.environ["KFORGE_TEST_GATE"])
            while not gate.exists():  # another process opens it
                await asyncio.sleep(0.02)
        return await super().step(ctx)


register_agent(GatedTree.agent_type, GatedTree, replace=True)
