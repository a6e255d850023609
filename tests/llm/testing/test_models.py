"""Test models: the schema-driven TestModel (property-tested on random schemas) and FunctionModel."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kforge.errors import ModelOutputError
from kforge.llm import FunctionModel, TestModel, get_model
from kforge.llm.local.schema_values import UnsatisfiableSchemaError, valid_value
from kforge.llm.structured import schema_errors
from kforge.llm.testing.function import CallInfo
from kforge.llm.types import Message, ModelResponse, ToolCall, ToolSpec

PATTERNS = [
    r"^[a-z]{3,6}$",
    r"^\d{4}-\d{2}$",
    r"^(yes|no)$",
    r"[A-Z][a-z]+",
    r"^v\d+\.\d+(\.\d+)?$",
]
FORMATS = ["date", "date-time", "email", "uri", "uuid", "ipv4"]


def _leaf() -> st.SearchStrategy[dict[str, Any]]:
    def string(lo: int, span: int, choice: int) -> dict[str, Any]:
        if choice == 0:
            return {"type": "string", "minLength": lo, "maxLength": lo + span}
        if choice == 1:
            return {"type": "string", "pattern": PATTERNS[span % len(PATTERNS)]}
        return {"type": "string", "format": FORMATS[span % len(FORMATS)]}

    def number(kind: str, lo: int, span: int, exclusive: bool, step: int) -> dict[str, Any]:
        schema: dict[str, Any] = {"type": kind}
        if exclusive:
            schema |= {"exclusiveMinimum": lo, "exclusiveMaximum": lo + span + 2}
        else:
            schema |= {"minimum": lo, "maximum": lo + span}
        if step and kind == "integer":
            schema["multipleOf"] = step
            schema["maximum" if not exclusive else "exclusiveMaximum"] = lo + span + 3 * step
        return schema

    return st.one_of(
        st.builds(string, st.integers(0, 5), st.integers(0, 20), st.integers(0, 2)),
        st.builds(
            number,
            st.sampled_from(["integer", "number"]),
            st.integers(-50, 50),
            st.integers(0, 100),
            st.booleans(),
            st.integers(0, 5),
        ),
        st.just({"type": "boolean"}),
        st.just({"type": "null"}),
        st.lists(
            st.one_of(st.text(max_size=5), st.integers()), min_size=1, max_size=4, unique=True
        ).map(lambda v: {"enum": v}),
        st.just({"const": "fixed"}),
        st.just({}),
    )


def _extend(children: st.SearchStrategy[dict[str, Any]]) -> st.SearchStrategy[dict[str, Any]]:
    def obj(
        props: dict[str, dict[str, Any]], required_mask: list[bool], closed: bool
    ) -> dict[str, Any]:
        names = list(props)
        required = [n for n, keep in zip(names, required_mask, strict=False) if keep]
        schema: dict[str, Any] = {"type": "object", "properties": props, "required": required}
        if closed:
            schema["additionalProperties"] = False
        return schema

    def arr(items: dict[str, Any], lo: int, span: int) -> dict[str, Any]:
        return {"type": "array", "items": items, "minItems": lo, "maxItems": lo + span}

    return st.one_of(
        st.builds(
            obj,
            st.dictionaries(
                st.from_regex(r"[a-z][a-z_]{0,6}", fullmatch=True), children, max_size=4
            ),
            st.lists(st.booleans(), max_size=4),
            st.booleans(),
        ),
        st.builds(arr, children, st.integers(0, 3), st.integers(0, 3)),
        st.lists(children, min_size=1, max_size=3).map(lambda options: {"anyOf": options}),
        children.map(
            lambda c: (
                {"type": ["null", c["type"]]} | {k: v for k, v in c.items() if k != "type"}
                if isinstance(c.get("type"), str)
                else c
            )
        ),
    )


SCHEMAS = st.recursive(_leaf(), _extend, max_leaves=12)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(SCHEMAS, st.integers(0, 1000))
def test_generated_values_validate_for_any_schema(schema: dict[str, Any], seed: int) -> None:
    value = valid_value(schema, seed=seed)
    assert schema_errors(value, schema) == []


def test_refs_and_pydantic_schemas_are_supported() -> None:
    from pydantic import BaseModel, Field

    class Step(BaseModel):
        title: str = Field(min_length=2, max_length=30)
        minutes: int = Field(ge=1, le=90)

    class Plan(BaseModel):
        goal: str
        steps: list[Step] = Field(min_length=1, max_length=4)
        owner: Step | None = None

    schema = Plan.model_json_schema()
    for seed in range(20):
        Plan.model_validate(valid_value(schema, seed=seed))


def test_unsatisfiable_schema_is_reported() -> None:
    with pytest.raises(UnsatisfiableSchemaError, match="could not generate"):
        valid_value({"type": "integer", "minimum": 5, "maximum": 1})


async def test_test_model_calls_every_tool_with_valid_arguments_then_answers() -> None:
    tools = [
        ToolSpec(
            "plane_create_task",
            "Create a task",
            {
                "type": "object",
                "properties": {
                    "title": {"type": "string", "minLength": 1},
                    "priority": {"enum": ["urgent", "high", "medium", "low", "none"]},
                    "due": {"type": "string", "format": "date"},
                },
                "required": ["title", "priority"],
                "additionalProperties": False,
            },
        ),
        ToolSpec("noop", "Does nothing", {"type": "object", "properties": {}}),
    ]
    model = TestModel(seed=3)
    first = await model.complete([Message.user("plan it")], tools=tools)
    assert [c.name for c in first.tool_calls] == ["plane_create_task", "noop"]
    for call, tool in zip(first.tool_calls, tools, strict=True):
        assert schema_errors(call.arguments, tool.input_schema) == []
    history = [
        Message.user("plan it"),
        Message.assistant("", first.tool_calls),
        *[Message.tool(f"ok {c.name}", c.id) for c in first.tool_calls],
    ]
    second = await model.complete(history, tools=tools)
    assert second.tool_calls == ()
    assert second.text == '{"plane_create_task": "ok plane_create_task", "noop": "ok noop"}'
    grade = {
        "type": "object",
        "properties": {"score": {"type": "integer", "minimum": 1, "maximum": 5}},
        "required": ["score"],
    }
    structured = await model.complete([Message.user("grade")], output_schema=grade)
    assert schema_errors(structured.parsed, grade) == []
    assert len(model.calls) == 3


async def test_test_model_is_reachable_by_name_and_streams() -> None:
    model = get_model("test")
    assert isinstance(model, TestModel) and model.name == "test:model"
    events = [e async for e in TestModel(text="one two three").stream([Message.user("x")])]
    assert [e.delta for e in events[:-1]] == ["one", " two", " three"]
    assert events[-1].response is not None and events[-1].response.text == "one two three"


async def test_function_model_runs_sync_and_async_functions() -> None:
    def reply(messages: list[Message], info: CallInfo) -> str | ToolCall:
        if info.tools and info.call_number == 1:
            return ToolCall("search", {"q": messages[-1].content}, "c1")
        return f"answer #{info.call_number}"

    model = FunctionModel(reply)
    search = ToolSpec("search", "s", {"type": "object"})
    first = await model.complete([Message.user("vit")], tools=[search])
    assert first.tool_calls == (ToolCall("search", {"q": "vit"}, "c1"),)
    assert (await model.complete([Message.user("vit")])).text == "answer #2"
    assert model.name == "function:reply"

    async def structured(messages: list[Message], info: CallInfo) -> dict[str, Any]:
        return {"ok": True}

    parsed = await FunctionModel(structured).complete(
        [], output_schema={"type": "object", "properties": {"ok": {"type": "boolean"}}}
    )
    assert parsed.parsed == {"ok": True} and parsed.usage.output_tokens > 0


async def test_function_model_checks_structured_output_and_streams_deltas() -> None:
    model = FunctionModel(lambda m, i: '{"score": 9}')
    with pytest.raises(ModelOutputError, match="score"):
        await model.complete(
            [], output_schema={"type": "object", "properties": {"score": {"maximum": 5}}}
        )

    def deltas(messages: list[Message], info: CallInfo) -> list[str]:
        return ["Hel", "lo"]

    streamer = FunctionModel(lambda m, i: ModelResponse(text="unused"), stream_function=deltas)
    events = [e async for e in streamer.stream([Message.user("x")])]
    assert [e.delta for e in events[:-1]] == ["Hel", "lo"]
    assert events[-1].response is not None and events[-1].response.text == "Hello"
