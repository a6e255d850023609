"""Agents used by the engine and runtime tests (importable in subprocesses too)."""

from __future__ import annotations

import enum
import os
import signal
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kforge.engine.agent import ForgeAgent, StepOutcome
from kforge.engine.append_only import AppendOnlyList
from kforge.engine.phases import Checkpoint, PhaseContext, PhaseGraph, PhaseTransition
from kforge.engine.registry import AgentRegistry
from kforge.engine.run_context import RunContext
from kforge.frames import AgentThinking, CheckpointKind, DataEvent
from kforge.llm.types import Message

ITEMS_SCHEMA = {
    "type": "object",
    "properties": {"items": {"type": "array", "items": {"type": "string"}}},
    "required": ["items"],
}
VERDICT_SCHEMA = {
    "type": "object",
    "properties": {"verdict": {"enum": ["ok", "more"]}, "detail": {"type": "string"}},
    "required": ["verdict"],
}


class Ph(enum.Enum):
    DRAFT = "draft"
    REVIEW = "review"
    PUBLISH = "publish"
    COMPLETE = "complete"


@dataclass
class DraftContext(PhaseContext):
    items: list[str] = field(default_factory=list)
    verdict: str = ""
    published: bool = False


class DraftAgent(ForgeAgent):
    """DRAFT → REVIEW → PUBLISH → COMPLETE, with REVIEW → DRAFT when the review wants more,
    and a blocking checkpoint after DRAFT."""

    agent_type = "test.draft"
    context_class = DraftContext
    graph = PhaseGraph(
        Ph,
        [
            PhaseTransition(Ph.DRAFT, Ph.REVIEW, "draft_ready"),
            PhaseTransition(Ph.REVIEW, Ph.DRAFT, "needs_more_material", is_backward=True),
            PhaseTransition(Ph.REVIEW, Ph.PUBLISH, "review_passed"),
            PhaseTransition(Ph.PUBLISH, Ph.COMPLETE, "published"),
        ],
        initial=Ph.DRAFT,
        complete=Ph.COMPLETE,
        checkpoints=[Checkpoint(Ph.DRAFT, CheckpointKind.BLOCKING, "Approve the draft items?")],
    )

    def __init__(self, args: dict[str, Any] | None = None) -> None:
        super().__init__(args)
        self.prompts: list[str] = []

    @property
    def ctx_data(self) -> DraftContext:
        assert isinstance(self.phase_context, DraftContext)
        return self.phase_context

    def initial_prompt(self, phase: enum.Enum) -> str:
        return f"First visit to {phase.value}: work on {self.args.get('topic', 'the topic')}."

    def phase_work_summary(self, phase: enum.Enum) -> str:
        return ", ".join(self.ctx_data.items) or "(nothing yet)"

    async def execute_phase(self, phase: enum.Enum, ctx: RunContext) -> bool:
        prompt = self.phase_prompt(phase)
        self.prompts.append(prompt)
        data = self.ctx_data
        if phase == Ph.DRAFT:
            response = await ctx.complete(
                [Message.system(prompt), Message.user(str(self.args.get("topic", "")))],
                output_schema=ITEMS_SCHEMA,
                purpose="draft",
            )
            for item in response.parsed["items"]:
                if item not in data.items:
                    data.items.append(item)
                    ctx.emit(DataEvent(name="item.added", payload={"item": item}))
            return True
        if phase == Ph.REVIEW:
            response = await ctx.complete(
                [Message.system(prompt), Message.user("\n".join(data.items))],
                output_schema=VERDICT_SCHEMA,
                purpose="review",
            )
            data.verdict = response.parsed["verdict"]
            data.backward_trigger_detail = response.parsed.get("detail")
            return True
        if phase == Ph.PUBLISH:
            marker = self.args.get("kill_marker")
            if marker and not Path(marker).exists():
                Path(marker).write_text("killed once")
                os.kill(os.getpid(), signal.SIGKILL)
            ctx.emit(AgentThinking(message=f"publishing {len(data.items)} items"))
            data.published = True
            return True
        return True

    def evaluate_condition(self, transition: PhaseTransition) -> bool:
        data = self.ctx_data
        return {
            "draft_ready": bool(data.items),
            "needs_more_material": data.verdict == "more",
            "review_passed": data.verdict == "ok",
            "published": data.published,
        }[transition.condition]

    def checkpoint_payload(self, checkpoint: Checkpoint) -> dict[str, Any]:
        return {"items": list(self.ctx_data.items)}

    def modify_keys(self, phase: enum.Enum) -> dict[str, str]:
        return {"items": "the draft's items, replacing them: a list of strings"}

    def apply_modifications(self, phase: enum.Enum, modifications: dict[str, Any]) -> None:
        if "items" in modifications:
            self.ctx_data.items = [str(i) for i in modifications["items"]]

    def get_mode_data(self) -> dict[str, Any]:
        return {"prompts": list(self.prompts)}

    def restore_mode_data(self, data: dict[str, Any]) -> None:
        self.prompts = list(data.get("prompts", []))

    def result(self) -> dict[str, Any]:
        return {"items": list(self.ctx_data.items), "published": self.ctx_data.published}

    def summary(self) -> str:
        return f"published {len(self.ctx_data.items)} items"


class OneStepAgent:
    """A one-step agent with no state: subclasses define ``step``."""

    def __init__(self, args: dict[str, Any] | None = None) -> None:
        self.args = dict(args or {})

    def get_state(self) -> dict[str, Any]:
        return {}

    def restore_state(self, state: dict[str, Any]) -> None:
        pass

    def partial_result(self) -> dict[str, Any]:
        return {}


class CounterAgent:
    """A plain step agent: asks the model for a number each step until it has ``target`` of them."""

    agent_type = "test.counter"

    def __init__(self, args: dict[str, Any] | None = None) -> None:
        args = args or {}
        self.target = int(args.get("target", 3))
        self.kill_after = int(args.get("kill_after_value", 0))
        self.kill_marker = str(args.get("kill_marker", ""))
        self.values: list[int] = []

    async def step(self, ctx: RunContext) -> StepOutcome:
        response = await ctx.complete([Message.user(f"number {len(self.values) + 1}")])
        value = int(response.text)
        if value == self.kill_after and self.kill_marker and not Path(self.kill_marker).exists():
            # die after the model call is committed but before the step is
            Path(self.kill_marker).write_text("killed")
            os.kill(os.getpid(), signal.SIGKILL)
        self.values.append(value)
        if len(self.values) >= self.target:
            return StepOutcome(True, {"values": list(self.values)}, "counted")
        return StepOutcome()

    def get_state(self) -> dict[str, Any]:
        return {"target": self.target, "values": list(self.values)}

    def restore_state(self, state: dict[str, Any]) -> None:
        self.target = state["target"]
        self.values = list(state["values"])

    def partial_result(self) -> dict[str, Any]:
        return {"values": list(self.values)}


class JournalingAgent:
    """One step that takes a numbered ticket through ``ctx.step`` (appending a line to the file
    ``ledger``: an effect that must not happen twice), then dies by SIGKILL the first time,
    before the step commits."""

    agent_type = "test.journal"

    def __init__(self, args: dict[str, Any] | None = None) -> None:
        args = args or {}
        self.ledger = str(args.get("ledger", ""))
        self.kill_marker = str(args.get("kill_marker", ""))

    async def step(self, ctx: RunContext) -> StepOutcome:
        def take_ticket(path: str, *, note: str) -> dict[str, Any]:
            with open(path, "a", encoding="utf-8") as out:
                out.write(f"{note} {os.getpid()}\n")
            return {"ticket": Path(path).read_text().count("\n"), "pid": os.getpid()}

        ticket = await ctx.step("test.ticket", take_ticket, self.ledger, note="taken")
        if self.kill_marker and not Path(self.kill_marker).exists():
            Path(self.kill_marker).write_text("killed")
            os.kill(os.getpid(), signal.SIGKILL)
        return StepOutcome(True, {"ticket": ticket}, "taken")

    def get_state(self) -> dict[str, Any]:
        return {"ledger": self.ledger, "kill_marker": self.kill_marker}

    def restore_state(self, state: dict[str, Any]) -> None:
        self.ledger, self.kill_marker = state["ledger"], state["kill_marker"]

    def partial_result(self) -> dict[str, Any]:
        return {}


class HistoryAgent:
    """A conversation loop whose history is declared append-only: each step sends the whole
    history to the model, which answers with a number, and appends the answer and an
    observation of it, until it has ``target`` answers. ``edit_at``: the step that tries to
    change the first message in place instead; ``kill_after_value``: as ``test.counter``."""

    agent_type = "test.history"

    def __init__(self, args: dict[str, Any] | None = None) -> None:
        args = args or {}
        self.target = int(args.get("target", 3))
        self.edit_at = int(args.get("edit_at", 0))
        self.kill_after = int(args.get("kill_after_value", 0))
        self.kill_marker = str(args.get("kill_marker", ""))
        self.history = AppendOnlyList([{"role": "user", "content": "count"}])

    async def step(self, ctx: RunContext) -> StepOutcome:
        number = len(self.history) // 2 + 1
        if number == self.edit_at:
            self.history[0]["content"] = "count twice"
        messages = [Message.from_dict(m) for m in self.history]
        response = await ctx.complete(messages)
        value = int(response.text)
        if value == self.kill_after and self.kill_marker and not Path(self.kill_marker).exists():
            Path(self.kill_marker).write_text("killed")
            os.kill(os.getpid(), signal.SIGKILL)
        self.history.append(Message.assistant(response.text).to_dict())
        self.history += [{"role": "tool", "content": f"noted {value}", "step": number}]
        if number >= self.target:
            return StepOutcome(True, {"history": list(self.history)}, "counted")
        return StepOutcome()

    def get_state(self) -> dict[str, Any]:
        return {"target": self.target, "edit_at": self.edit_at, "history": self.history}

    def restore_state(self, state: dict[str, Any]) -> None:
        self.target, self.edit_at = state["target"], state["edit_at"]
        self.history = AppendOnlyList(state["history"])

    def partial_result(self) -> dict[str, Any]:
        return {"history": list(self.history)}


def make_registry() -> AgentRegistry:
    registry = AgentRegistry()
    registry.register(DraftAgent.agent_type, DraftAgent)
    registry.register(CounterAgent.agent_type, CounterAgent)
    registry.register(JournalingAgent.agent_type, JournalingAgent)
    registry.register(HistoryAgent.agent_type, HistoryAgent)
    return registry
