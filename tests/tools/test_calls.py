"""Tool calls in free text: parse the common shapes, serialize so that parsing gives it back."""

from __future__ import annotations

import pytest

from kforge.llm.types import ToolCall
from kforge.tools import ParsedToolCall, parse_tool_call, parse_tool_calls, serialize_tool_call


def test_round_trip_with_reasoning() -> None:
    call = ParsedToolCall("plane_create_task", {"name": "Fix </tool_call>", "n": [1, None]}, "why")
    assert parse_tool_call(serialize_tool_call(call)) == call


def test_serialize_llm_tool_call() -> None:
    text = serialize_tool_call(ToolCall("f", {"a": 1}), reasoning="because")
    assert parse_tool_call(text) == ParsedToolCall("f", {"a": 1}, "because")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            'Thought: need weather\n```json\n{"name": "weather", "parameters": {"city": "Oslo"}}\n```',
            ParsedToolCall("weather", {"city": "Oslo"}, "need weather"),
        ),
        (
            'I will {"tool": "search", "args": {"q": "x"}}',
            ParsedToolCall("search", {"q": "x"}, "I will"),
        ),
        ('{"function": {"name": "f", "arguments": "{\\"a\\": 1}"}}', ParsedToolCall("f", {"a": 1})),
        ("math.hypot(x=4, y=5)", ParsedToolCall("math.hypot", {"x": 4, "y": 5})),
        ('<tool_call>{"name": "x", "arguments": {}}', ParsedToolCall("x", {})),
    ],
)
def test_parses_common_shapes(text: str, expected: ParsedToolCall) -> None:
    assert parse_tool_call(text) == expected


def test_no_call_in_plain_text_or_json_without_name() -> None:
    assert parse_tool_call("The answer is 42.") is None
    assert parse_tool_call('{"answer": 42}') is None


def test_several_calls() -> None:
    text = (
        serialize_tool_call(ToolCall("a", {})) + "\n" + serialize_tool_call(ToolCall("b", {"x": 1}))
    )
    assert [c.name for c in parse_tool_calls(text)] == ["a", "b"]
    assert parse_tool_calls("f(a=1)\ng(b='x')")[1] == ParsedToolCall("g", {"b": "x"})
