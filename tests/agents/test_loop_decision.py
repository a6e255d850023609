"""Reading the ReAct loop's decisions: structured, lenient, native; clear errors otherwise."""

from __future__ import annotations

import pytest

from kforge.agents.loop.decision import decision_schema, native_tools, parse_decision
from kforge.errors import ModelOutputError
from kforge.llm.types import ModelResponse, ToolCall, ToolSpec
from tests.agents.helpers import lookup_capital

SPEC = ToolSpec("lookup_capital", "Look up a capital.", lookup_capital.input_schema)


def test_the_schema_constrains_arguments_per_tool_and_puts_the_thought_first() -> None:
    variants = decision_schema([SPEC], allow_ask=False)["anyOf"]
    actions = [v["properties"]["action"]["const"] for v in variants]
    assert actions == ["tool_call", "respond", "plan"]
    assert variants[0]["properties"]["arguments"] == lookup_capital.input_schema
    assert next(iter(variants[0]["properties"])) == "thought"
    assert "ask_user" in str(decision_schema([SPEC]))


def test_a_schema_with_references_is_not_nested_as_is() -> None:
    spec = ToolSpec("t", "d", {"type": "object", "$defs": {"X": {}}, "properties": {}})
    assert decision_schema([spec])["anyOf"][0]["properties"]["arguments"] == {"type": "object"}


def test_structured_and_lenient_replies() -> None:
    fenced = (
        '```json\n{"thought": "t", "action": "tool_call", "tool": "lookup_capital", '
        '"arguments": "{\\"country\\": \\"Japan\\"}"}\n```'
    )
    decision = parse_decision(ModelResponse(text=fenced))
    assert (decision.kind, decision.arguments) == ("tool_call", {"country": "Japan"})
    inferred = parse_decision(ModelResponse(parsed={"thought": "t", "answer": "Tokyo."}))
    assert (inferred.kind, inferred.answer) == ("respond", "Tokyo.")
    asked = parse_decision(ModelResponse(parsed={"question": "Which one?"}))
    assert (asked.kind, asked.question) == ("ask_user", "Which one?")


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ({"thought": "t", "action": "tool_call"}, "needs the tool's name"),
        ({"thought": "t", "action": "tool_call", "tool": "x", "arguments": [1]}, "JSON object"),
        ({"thought": "t", "action": "respond"}, "final answer as text"),
        ({"thought": "", "action": "plan"}, "reasoning in 'thought'"),
        ({"thought": 3, "action": "plan"}, "'thought' must be a string"),
        ([1, 2], "must be a JSON object"),
    ],
)
def test_unusable_decisions_say_what_is_wrong(value: object, message: str) -> None:
    with pytest.raises(ModelOutputError, match=message):
        parse_decision(ModelResponse(parsed=value))


def test_asking_is_refused_when_not_allowed() -> None:
    with pytest.raises(ModelOutputError, match="not allowed"):
        parse_decision(
            ModelResponse(parsed={"thought": "t", "action": "ask_user", "question": "q"}),
            allow_ask=False,
        )


def test_native_replies() -> None:
    assert [t.name for t in native_tools([SPEC])] == ["lookup_capital", "ask_user"]
    assert [t.name for t in native_tools([SPEC], allow_ask=False)] == ["lookup_capital"]
    answer = parse_decision(ModelResponse(text="Tokyo."), native=True)
    assert (answer.kind, answer.answer) == ("respond", "Tokyo.")
    ask = parse_decision(
        ModelResponse(tool_calls=(ToolCall("ask_user", {"question": "Which?"}),)), native=True
    )
    assert ask.kind == "ask_user"
    with pytest.raises(ModelOutputError, match="the reply is empty"):
        parse_decision(ModelResponse(text="  "), native=True)
