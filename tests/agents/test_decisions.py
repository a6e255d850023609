"""The agents' one structured call: a reply that breaks its type is asked again, told what was
wrong; a decision made without the model's reply says so in the run; every attempt replays."""

from __future__ import annotations

from pydantic import BaseModel, field_validator

from kforge import MemoryStore, Runtime, ScriptedModel
from kforge.agents.decisions import decide
from kforge.engine.agent import StepOutcome
from kforge.engine.registry import AgentRegistry
from kforge.engine.run_context import RunContext
from kforge.frames import AgentThinking, ModelCall
from kforge.llm.types import Message, ModelSettings
from kforge.store import RunStatus
from tests.engine.sample_agents import OneStepAgent


class Verdict(BaseModel):
    relevance: str
    confidence: float

    @field_validator("relevance")
    @classmethod
    def _known(cls, value: str) -> str:
        # a rule the JSON Schema does not carry: only validation catches it
        if value not in ("relevant", "irrelevant"):
            raise ValueError("relevance must be 'relevant' or 'irrelevant'")
        return value


class DecidingAgent(OneStepAgent):
    """One step: asks for a ``Verdict`` and reports what it got (None: decided without it)."""

    agent_type = "test.deciding"

    async def step(self, ctx: RunContext) -> StepOutcome:
        messages = [Message.user("Is the passage relevant?")]
        verdict = await decide(ctx, messages, ModelSettings(), Verdict, "test.verdict")
        shown = verdict.model_dump() if verdict is not None else None
        return StepOutcome(True, {"verdict": shown}, "decided")


def runtime(model: ScriptedModel) -> Runtime:
    registry = AgentRegistry()
    registry.register(DecidingAgent.agent_type, DecidingAgent)
    return Runtime(MemoryStore(), model=model, registry=registry)


async def test_a_reply_that_breaks_its_type_is_asked_again_with_what_was_wrong() -> None:
    model = ScriptedModel(
        [
            {"relevance": "maybe", "confidence": 0.4},
            {"relevance": "relevant", "confidence": 0.9},
        ]
    )
    rt = runtime(model)
    run = await rt.run("test.deciding")
    assert run.status == RunStatus.COMPLETED, run.error
    assert (run.result or {})["verdict"] == {"relevance": "relevant", "confidence": 0.9}
    model.assert_consumed()
    repair = model.calls[1].messages[-1].content
    assert "relevance" in repair and "maybe" in model.calls[1].messages[-2].content
    calls = [f for f in rt.frames(run.id) if isinstance(f, ModelCall)]
    assert [c.purpose for c in calls] == ["test.verdict", "test.verdict"]
    await rt.aclose()


async def test_a_decision_made_without_the_reply_says_why_in_the_run() -> None:
    model = ScriptedModel(
        [{"relevance": "maybe", "confidence": 1}, {"relevance": "unsure", "confidence": 1}]
    )
    rt = runtime(model)
    run = await rt.run("test.deciding")
    assert run.status == RunStatus.COMPLETED, run.error
    assert (run.result or {})["verdict"] is None
    model.assert_consumed()
    said = [f.message for f in rt.frames(run.id) if isinstance(f, AgentThinking)]
    assert len(said) == 1 and said[0].startswith("test.verdict: going on without")
    assert "not a valid Verdict" in said[0] and "relevant" in said[0]
    await rt.aclose()


async def test_every_attempt_is_replayed_when_the_run_is_forked_and_resumed() -> None:
    model = ScriptedModel(
        [
            {"relevance": "maybe", "confidence": 0.4},
            {"relevance": "irrelevant", "confidence": 0.8},
        ]
    )
    rt = runtime(model)
    run = await rt.run("test.deciding")
    calls = [f for f in rt.frames(run.id) if isinstance(f, ModelCall)]
    # a fork taken after both calls, before the step committed, re-executes the step from them
    fork = await rt.fork(run.id, at_seq=calls[-1].seq)
    await rt.resume(fork)
    forked = await rt.wait(fork)
    assert forked.status == RunStatus.COMPLETED, forked.error
    assert (forked.result or {})["verdict"] == {"relevance": "irrelevant", "confidence": 0.8}
    assert len(model.calls) == 2  # nothing asked of the model again
    await rt.aclose()
