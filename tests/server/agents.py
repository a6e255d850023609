"""A test agent whose pace the test sets: each step waits for a permit, then emits frames."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

from kforge.engine.agent import StepOutcome
from kforge.engine.run_context import RunContext
from kforge.frames import DataEvent
from kforge.llm.types import Message

GATES: dict[str, threading.Semaphore] = {}
"""Permits per gate name; a run started with ``{"gate": NAME}`` takes one before each step."""


class PacedAgent:
    """``steps`` steps of ``per_step`` ``data.tick`` frames; asks a question after step
    ``ask_at`` (0: never) and returns the answer in its result."""

    agent_type = "test.paced"

    def __init__(self, args: dict[str, Any] | None = None) -> None:
        self.args = dict(args or {})
        self.steps = int(self.args.get("steps", 3))
        self.per_step = int(self.args.get("per_step", 2))
        self.ask_at = int(self.args.get("ask_at", 0))
        self.done = 0
        self.answer: dict[str, Any] | None = None

    async def step(self, ctx: RunContext) -> StepOutcome:
        if self.ask_at and self.done == self.ask_at and self.answer is None:
            self.answer = await ctx.ask(
                "Go on?", kind="checkpoint", options=("approve", "reject"), payload={"n": 1}
            )
            return StepOutcome()
        gate = GATES.get(str(self.args.get("gate", "")))
        if gate is not None:
            await asyncio.to_thread(gate.acquire)
        if self.args.get("say"):
            await ctx.complete([Message.user(str(self.args["say"]))], stream=True, purpose="say")
        for i in range(self.per_step):
            payload = {"step": self.done, "i": i, "pad": "x" * int(self.args.get("pad", 0))}
            ctx.emit(DataEvent(name="tick", payload=payload))
        self.done += 1
        finished = self.done >= self.steps
        return StepOutcome(
            done=finished, result={"ticks": self.done * self.per_step, "answer": self.answer}
        )

    def get_state(self) -> dict[str, Any]:
        return {"done": self.done, "answer": self.answer}

    def restore_state(self, state: dict[str, Any]) -> None:
        self.done = int(state.get("done", 0))
        self.answer = state.get("answer")

    def partial_result(self) -> dict[str, Any]:
        return {"ticks": self.done * self.per_step}
