"""Pieces of structured output and prompted tools: JSON extraction, validation messages, decisions,
grammars, retry timing rules."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

import pytest
from pydantic import BaseModel, Field, model_validator

from kforge.errors import ModelOutputError
from kforge.llm import FunctionModel, complete_structured, parse_output, schema_for
from kforge.llm.local.grammar import schema_to_gbnf
from kforge.llm.retry import RetryPolicy, parse_retry_after
from kforge.llm.structured import extract_json, schema_errors
from kforge.llm.toolprompt import (
    decision_schema,
    flatten_tool_messages,
    parse_tool_reply,
    tool_instructions,
)
from kforge.llm.types import Message, ToolCall, ToolSpec


class Grade(BaseModel):
    relevance: str = Field(pattern="^(relevant|not_relevant)$")
    confidence: float = Field(ge=0, le=1)


def test_extract_json_finds_the_value_in_chatty_replies() -> None:
    assert extract_json('{"a": 1}') == {"a": 1}
    assert extract_json('Sure!\n```json\n{"a": [1, 2]}\n```\nDone.') == {"a": [1, 2]}
    assert extract_json('The answer is {"a": true} as requested') == {"a": True}
    assert extract_json("[1, 2]") == [1, 2]
    with pytest.raises(ValueError, match="not JSON"):
        extract_json("no json here")
    with pytest.raises(ValueError, match="empty"):
        extract_json("  ")


def test_schema_errors_name_the_path_and_rule() -> None:
    schema = schema_for(Grade)
    assert schema_errors({"relevance": "relevant", "confidence": 0.5}, schema) == []
    problems = schema_errors({"relevance": "maybe", "confidence": 3}, schema)
    assert any(p.startswith("at confidence:") and "3" in p for p in problems)
    assert any(p.startswith("at relevance:") for p in problems)


def test_parse_output_returns_typed_values() -> None:
    assert parse_output(Grade, {"relevance": "relevant", "confidence": 1}) == Grade(
        relevance="relevant", confidence=1
    )
    with pytest.raises(ModelOutputError, match="not a valid Grade: confidence"):
        parse_output(Grade, {"relevance": "relevant", "confidence": 2})


class Verdict(BaseModel):
    relevance: str
    confidence: float

    @model_validator(mode="after")
    def consistent(self) -> Verdict:
        if self.relevance == "relevant" and self.confidence < 0.5:
            raise ValueError("a relevant result needs confidence of at least 0.5")
        return self


async def test_complete_structured_retries_with_the_problem_explained() -> None:
    replies = iter(
        [{"relevance": "relevant", "confidence": 0.1}, {"relevance": "relevant", "confidence": 0.7}]
    )
    seen: list[list[Message]] = []

    def fn(messages: list[Message], info: object) -> dict[str, object]:
        seen.append(messages)
        return next(replies)

    # The JSON Schema cannot express the validator, so only pydantic catches the first reply.
    verdict = await complete_structured(FunctionModel(fn), [Message.user("grade")], Verdict)
    assert verdict == Verdict(relevance="relevant", confidence=0.7)
    assert "confidence of at least 0.5" in seen[1][-1].content


def test_decisions_parse_documented_shapes_and_near_misses() -> None:
    assert parse_tool_reply({"answer": "42"}) == ("42", ())
    text, calls = parse_tool_reply({"tool": "search", "arguments": {"q": "x"}})
    assert text == "" and calls[0].name == "search" and calls[0].arguments == {"q": "x"}
    _, calls = parse_tool_reply({"name": "search", "arguments": '{"q": "y"}'})
    assert calls[0].arguments == {"q": "y"}
    _, calls = parse_tool_reply(
        {"tool_calls": [{"function": {"name": "a", "arguments": "{}"}}, {"tool": "b"}]}
    )
    assert [c.name for c in calls] == ["a", "b"]
    with pytest.raises(ValueError, match="expected"):
        parse_tool_reply(["not", "a", "decision"])


def test_decision_schema_accepts_calls_and_answers_only() -> None:
    tools = [
        ToolSpec(
            "search",
            "Search",
            {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]},
        )
    ]
    schema = decision_schema(tools)
    assert schema_errors({"tool": "search", "arguments": {"q": "x"}}, schema) == []
    assert schema_errors({"answer": "done"}, schema) == []
    assert schema_errors({"tool": "other", "arguments": {}}, schema)
    assert schema_errors({"tool": "search", "arguments": {}}, schema)
    assert "search: Search" in tool_instructions(tools)


def test_flattening_tool_turns_keeps_roles_alternating() -> None:
    call = ToolCall("search", {"q": "x"}, "c1")
    flat = flatten_tool_messages(
        [
            Message.system("sys"),
            Message.user("question"),
            Message.assistant("Let me look.", (call,)),
            Message.tool("result 1", "c1"),
            Message.user("and?"),
        ]
    )
    assert [m.role for m in flat] == ["system", "user", "assistant", "user"]
    assert flat[2].content == 'Let me look.\n{"tool": "search", "arguments": {"q": "x"}}'
    assert flat[3].content == "Result of tool 'search':\nresult 1\n\nand?"


def test_grammars_are_bounded_and_enforce_ranges() -> None:
    grammar = schema_to_gbnf(
        {
            "type": "object",
            "properties": {
                "name": {"type": "string"},
                "rating": {"type": "integer", "minimum": 1, "maximum": 3},
                "share": {"type": "number", "minimum": 0, "maximum": 1},
                "tags": {"type": "array", "items": {"type": "string", "maxLength": 10}},
                "extra": {},
            },
            "required": ["name", "rating", "share", "tags", "extra"],
        }
    )
    assert "char{0,400}" in grammar and "char{0,10}" in grammar
    assert '("1" | "2" | "3") space' in grammar
    assert '("," space tags-item){0,7}' in grammar
    assert "kf-any-2" in grammar
    assert "\\x00-\\x1F" in grammar  # raw control characters are not JSON


def test_llama_cpp_accepts_the_grammars_of_realistic_schemas() -> None:
    from kforge.llm.local import LocalModel

    class Step(BaseModel):
        title: str = Field(max_length=60)
        tool: str | None = None

    class Plan(BaseModel):
        goal: str
        steps: list[Step] = Field(min_length=1, max_length=8)
        confidence: float = Field(ge=0, le=1)

    runtime = LocalModel().runtime
    tools = [
        ToolSpec(
            "t",
            "d",
            {
                "type": "object",
                "properties": {
                    "when": {"type": "string", "format": "date"},
                    "code": {"type": "string", "pattern": "^[A-Z]{3}$"},
                },
            },
        )
    ]
    for schema in (
        schema_for(Plan),
        schema_for(Grade),
        decision_schema(tools),
        {},
        {"type": "array"},
        {"enum": [1, "a", None]},
    ):
        runtime.check_grammar(schema_to_gbnf(schema))


def test_retry_after_forms_and_backoff_bounds() -> None:
    assert parse_retry_after({"Retry-After": "3"}) == 3.0
    assert parse_retry_after({"retry-after-ms": "250"}) == 0.25
    later = datetime.now(UTC) + timedelta(seconds=30)
    waited = parse_retry_after({"Retry-After": format_datetime(later, usegmt=True)})
    assert waited is not None and 25 <= waited <= 30
    assert parse_retry_after({"Retry-After": "soon"}) is None
    assert parse_retry_after({}) is None
    policy = RetryPolicy(base_delay_s=1.0, multiplier=2.0, max_delay_s=5.0, jitter=0.5)
    rng = random.Random(0)
    for attempt, ceiling in [(1, 1.0), (2, 2.0), (3, 4.0), (4, 5.0), (9, 5.0)]:
        delay = policy.backoff(attempt, rng)
        assert ceiling / 2 <= delay <= ceiling


def test_decoder_bounds_reach_the_schema_but_not_the_reader() -> None:
    from typing import Annotated

    from kforge.llm.structured import decoder_bounds

    class Note(BaseModel):
        text: Annotated[str, decoder_bounds(max_length=5)]
        tags: Annotated[list[str], decoder_bounds(min_items=1, max_items=2)]

    schema = schema_for(Note)
    assert schema["properties"]["text"] == {"maxLength": 5, "type": "string"}
    assert schema["properties"]["tags"]["maxItems"] == 2
    assert "title" not in schema
    assert parse_output(Note, {"text": "longer than five", "tags": []}).text == "longer than five"
    with pytest.raises(TypeError, match="decoder_bounds takes"):
        decoder_bounds(maximum=3)


def test_generated_schemas_with_defs_unions_and_consts_become_bounded_grammars() -> None:
    from typing import Literal

    class Leaf(BaseModel):
        kind: Literal["leaf"]
        label: str | None = None

    class Tree(BaseModel):
        leaves: list[Leaf] = Field(max_length=3)

    schema = schema_for(Tree)
    assert "$defs" in schema and "Leaf" in schema["$defs"]
    assert "title" not in schema["$defs"]["Leaf"]
    grammar = schema_to_gbnf(schema)
    assert '"\\"leaf\\""' in grammar  # the const
    assert '("," space leaves-item){0,2}' in grammar  # maxItems through the $ref
    assert "null" in grammar  # the optional label


def test_every_structured_reply_of_the_agents_has_a_grammar_llama_cpp_accepts() -> None:
    from kforge.agents.loop.prompts import ObservationReply
    from kforge.agents.research.prompts import (
        Breakdown,
        CategoryQuestions,
        Discovery,
        Expansion,
        Gaps,
    )
    from kforge.agents.router.prompts import GuardrailVerdict, router_reply
    from kforge.llm.local import LocalModel
    from kforge.memory.reflexion import ReflectionReply, alternative_reply
    from kforge.rag.grading import Grade as GradeReply
    from kforge.rag.rewrite import Rewrite

    runtime = LocalModel().runtime
    for reply in (
        ObservationReply,
        Breakdown,
        CategoryQuestions,
        Discovery,
        Expansion,
        Gaps,
        GuardrailVerdict,
        router_reply(("retrieve", "web_search")),
        ReflectionReply,
        alternative_reply(("search", "fetch")),
        alternative_reply(()),
        GradeReply,
        Rewrite,
    ):
        runtime.check_grammar(schema_to_gbnf(schema_for(reply)))
