"""``RunContext.complete(..., output_type=...)``: the one way an agent reads a structured reply."""

from __future__ import annotations

from typing import Literal

import pytest
from pydantic import BaseModel, Field

from kforge.engine.run_context import RunContext
from kforge.errors import ModelOutputError
from kforge.frames import Frame, ModelCall
from kforge.llm.structured import schema_for
from kforge.llm.testing.scripted import ScriptedModel
from kforge.llm.types import Message, ModelResponse
from tests.step_context import step_context


class Verdict(BaseModel):
    verdict: Literal["yes", "no"]
    confidence: float = Field(ge=0, le=1)


def context(
    model: ScriptedModel, log: list[Frame], journal: list[Frame] | None = None
) -> RunContext:
    return step_context(model, log, agent_type="test", journal=journal or [])


async def test_the_reply_is_validated_into_the_type_and_the_model_is_held_to_its_schema() -> None:
    model = ScriptedModel([{"verdict": "yes", "confidence": 0.9}])
    log: list[Frame] = []
    verdict = await context(model, log).complete(
        [Message.user("is it?")], output_type=Verdict, purpose="judge"
    )
    assert verdict == Verdict(verdict="yes", confidence=0.9)
    assert model.calls[0].output_schema == schema_for(Verdict)
    assert [type(f).__name__ for f in log] == ["ModelCall", "UsageFrame"]


async def test_json_in_the_text_is_read_when_the_provider_did_not_parse_it() -> None:
    text = 'Sure: ```json\n{"verdict": "no", "confidence": 0.2}\n```'
    model = ScriptedModel([ModelResponse(text=text)])
    verdict = await context(model, []).complete([Message.user("?")], output_type=Verdict)
    assert verdict.verdict == "no"


async def test_a_reply_that_does_not_fit_raises_after_it_is_recorded() -> None:
    model = ScriptedModel([ModelResponse(text="I think so")])
    log: list[Frame] = []
    with pytest.raises(ModelOutputError, match="judge: structured output is not JSON"):
        await context(model, log).complete(
            [Message.user("?")], output_type=Verdict, purpose="judge"
        )
    assert any(isinstance(f, ModelCall) for f in log)


async def test_a_re_executed_step_reads_the_recorded_reply_without_calling_the_model() -> None:
    log: list[Frame] = []
    first = await context(ScriptedModel([{"verdict": "no", "confidence": 0.4}]), log).complete(
        [Message.user("?")], output_type=Verdict
    )
    again = await context(ScriptedModel([]), [], journal=log).complete(
        [Message.user("?")], output_type=Verdict
    )
    assert again == first
