"""A step's result, typed end to end: an agent returns its declared result type in its
``StepOutcome``, the engine keeps it in the run's record as JSON, and the runtime reads it
back as the same value, in this process or another."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, ClassVar

from kforge.agents.results import AgentResult, UntypedResult
from kforge.engine.agent import StepAgent, StepOutcome, record_result
from kforge.engine.limits import RunLimits
from kforge.engine.registry import AgentRegistry
from kforge.engine.run_context import RunContext
from kforge.frames import Complete, ErrorFrame, LimitReached
from kforge.llm.testing.scripted import ScriptedModel
from kforge.runtime import Runtime
from kforge.store import RunStatus
from tests.engine.sample_agents import OneStepAgent

AT = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)


@dataclass(frozen=True, slots=True, kw_only=True)
class Tally(AgentResult):
    TEXT_FIELD: ClassVar[str] = "note"
    note: str = ""
    values: tuple[int, ...] = ()
    at: datetime | None = None


class Counting:
    """Counts one value a step until it has ``steps`` of them; its result is a ``Tally``."""

    agent_type = "test.counting"
    result_type: ClassVar[type[AgentResult]] = Tally

    def __init__(self, args: dict[str, Any] | None = None) -> None:
        self.steps = int((args or {}).get("steps", 2))
        self.values: list[int] = []

    async def step(self, ctx: RunContext) -> StepOutcome[Tally]:
        self.values.append(len(self.values) + 1)
        if len(self.values) >= self.steps:
            return StepOutcome(True, self.partial_result(), "counted")
        return StepOutcome()

    def get_state(self) -> dict[str, Any]:
        return {"values": list(self.values), "steps": self.steps}

    def restore_state(self, state: dict[str, Any]) -> None:
        self.values, self.steps = list(state["values"]), int(state["steps"])

    def partial_result(self) -> Tally:
        return Tally(note=f"{len(self.values)} counted", values=tuple(self.values), at=AT)


class NotJson(OneStepAgent):
    agent_type = "test.not_json"

    async def step(self, ctx: RunContext) -> StepOutcome[object]:
        return StepOutcome(True, {1, 2}, "a set")


def runtime(db: Path | None = None) -> Runtime:
    registry = AgentRegistry()
    registry.register(Counting.agent_type, Counting)
    registry.register(NotJson.agent_type, NotJson)
    return Runtime(db, model=ScriptedModel(), registry=registry)


def test_an_agent_with_a_typed_result_is_a_step_agent() -> None:
    assert isinstance(Counting(), StepAgent)
    assert record_result(None) == {} and record_result({"a": (1,)}) == {"a": (1,)}


async def test_a_typed_result_is_stored_as_json_and_read_back_as_the_same_value(
    tmp_path: Path,
) -> None:
    rt = runtime(tmp_path / "runs.db")
    run = await rt.run(Counting.agent_type, {"steps": 3})
    assert run.status == RunStatus.COMPLETED, run.error
    built = Tally(note="3 counted", values=(1, 2, 3), at=AT)
    stored = {"note": "3 counted", "values": [1, 2, 3], "at": "2026-01-02T03:04:05Z"}
    assert run.result == stored == built.stored()
    (complete,) = [f for f in rt.frames(run.id) if isinstance(f, Complete)]
    assert complete.result == stored and complete.summary == "counted"
    assert rt.result(run.id) == built
    await rt.aclose()
    # another process reads the same record as the same value
    other = runtime(tmp_path / "runs.db")
    assert other.result(run.id) == built
    await other.aclose()


async def test_a_limit_keeps_the_typed_partial_result() -> None:
    rt = runtime()
    run = await rt.run(Counting.agent_type, {"steps": 5}, limits=RunLimits(max_steps=2))
    assert run.status == RunStatus.PAUSED and run.pause_reason == "limit:max_steps"
    partial = {"note": "2 counted", "values": [1, 2], "at": "2026-01-02T03:04:05Z"}
    assert run.result == partial
    (limit,) = [f for f in rt.frames(run.id) if isinstance(f, LimitReached)]
    assert limit.partial_result == partial
    assert rt.result(run.id) == Tally(note="2 counted", values=(1, 2), at=AT)
    await rt.aclose()


async def test_a_result_that_is_neither_a_dataclass_nor_a_dict_fails_the_run_saying_so() -> None:
    rt = runtime()
    run = await rt.run(NotJson.agent_type)
    assert run.status == RunStatus.FAILED
    assert "must be a dataclass (the agent's result_type) or a dict" in (run.error or "")
    assert "not set" in (run.error or "")
    assert [f for f in rt.frames(run.id) if isinstance(f, ErrorFrame)]
    assert isinstance(rt.result(run.id), UntypedResult)
    await rt.aclose()
