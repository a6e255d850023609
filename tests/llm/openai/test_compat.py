"""The OpenAI-compatible provider against a real HTTP server: tools, structured output, streaming."""

from __future__ import annotations

import json

import pytest

from kforge.errors import ModelOutputError
from kforge.llm import get_model
from kforge.llm.types import Message, ModelSettings, ToolCall, ToolSpec, Usage
from tests.llm.conftest import SleepRecorder, make_model
from tests.llm.fake_openai import FakeOpenAI, Reply, chunk, completion, tool_call

SEARCH = ToolSpec(
    name="search",
    description="Search the web.",
    input_schema={
        "type": "object",
        "properties": {"query": {"type": "string"}, "limit": {"type": "integer"}},
        "required": ["query"],
    },
)
GRADE = {
    "type": "object",
    "properties": {
        "relevance": {"enum": ["relevant", "not_relevant"]},
        "confidence": {"type": "number", "minimum": 0, "maximum": 1},
    },
    "required": ["relevance", "confidence"],
}


async def test_text_completion_sends_settings_and_reads_usage(server: FakeOpenAI) -> None:
    server.push(completion("Hello there.", usage=(12, 3)))
    model = get_model("compat:fake-model", base_url=server.base_url, api_key="sk-test")
    response = await model.complete(
        [Message.system("Be brief."), Message.user("Hi")],
        ModelSettings(temperature=0.1, max_tokens=50, stop=("END",), seed=7),
    )
    assert response.text == "Hello there."
    assert response.usage == Usage(12, 3)
    assert response.model == "compat:fake-model"
    body = server.requests[0]
    assert body["model"] == "fake-model"
    assert body["messages"] == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Hi"},
    ]
    assert (body["temperature"], body["max_tokens"], body["stop"], body["seed"]) == (
        0.1,
        50,
        ["END"],
        7,
    )
    assert server.headers[0]["authorization"] == "Bearer sk-test"


async def test_native_tool_calls_round_trip(server: FakeOpenAI) -> None:
    server.push(
        completion(None, tool_calls=[tool_call("search", {"query": "vit", "limit": 3}, "call_9")]),
        completion("ViT is a vision transformer."),
    )
    model = make_model(server)
    first = await model.complete([Message.user("What is ViT?")], tools=[SEARCH])
    assert first.tool_calls == (ToolCall("search", {"query": "vit", "limit": 3}, "call_9"),)
    assert first.finish_reason == "tool_calls"
    assert server.requests[0]["tools"][0]["function"]["name"] == "search"
    assert server.requests[0]["tools"][0]["function"]["parameters"] == SEARCH.input_schema

    history = [
        Message.user("What is ViT?"),
        Message.assistant("", first.tool_calls),
        Message.tool("ViT splits images into patches.", "call_9", name="search"),
    ]
    second = await model.complete(history, tools=[SEARCH])
    assert second.text == "ViT is a vision transformer."
    wire = server.requests[1]["messages"]
    assert wire[1]["tool_calls"][0]["id"] == "call_9"
    assert json.loads(wire[1]["tool_calls"][0]["function"]["arguments"]) == {
        "query": "vit",
        "limit": 3,
    }
    assert wire[2] == {
        "role": "tool",
        "tool_call_id": "call_9",
        "content": "ViT splits images into patches.",
    }


async def test_structured_output_uses_json_schema_response_format(server: FakeOpenAI) -> None:
    server.push(completion('{"relevance": "relevant", "confidence": 0.9}'))
    response = await make_model(server).complete([Message.user("grade")], output_schema=GRADE)
    assert response.parsed == {"relevance": "relevant", "confidence": 0.9}
    fmt = server.requests[0]["response_format"]
    assert fmt["type"] == "json_schema"
    assert fmt["json_schema"]["schema"] == GRADE


async def test_structured_output_is_repaired_when_it_breaks_the_schema(server: FakeOpenAI) -> None:
    server.push(
        completion('{"relevance": "maybe", "confidence": 2}', usage=(10, 5)),
        completion('{"relevance": "not_relevant", "confidence": 0.2}', usage=(30, 6)),
    )
    response = await make_model(server).complete([Message.user("grade")], output_schema=GRADE)
    assert response.parsed == {"relevance": "not_relevant", "confidence": 0.2}
    assert response.usage == Usage(40, 11, 2)
    repair = server.requests[1]["messages"][-1]
    assert repair["role"] == "user"
    assert "relevance" in repair["content"] and "not valid" in repair["content"]


async def test_structured_output_gives_up_after_bounded_repairs(server: FakeOpenAI) -> None:
    server.push(*[completion("not json at all") for _ in range(3)])
    with pytest.raises(ModelOutputError, match="not JSON") as info:
        await make_model(server, repair_attempts=2).complete(
            [Message.user("grade")], output_schema=GRADE
        )
    assert "2 repair attempts" in str(info.value)
    assert len(server.requests) == 3


async def test_endpoint_without_json_schema_falls_back_to_prompted_json(server: FakeOpenAI) -> None:
    server.push(
        Reply(
            status=400, body={"error": {"message": "response_format json_schema is not supported"}}
        ),
        completion('Sure! ```json\n{"relevance": "relevant", "confidence": 1}\n```'),
    )
    model = make_model(server)
    response = await model.complete([Message.user("grade")], output_schema=GRADE)
    assert response.parsed == {"relevance": "relevant", "confidence": 1}
    assert model.json_schema is False
    retry = server.requests[1]
    assert "response_format" not in retry
    assert retry["messages"][0]["role"] == "system"
    assert '"relevance"' in retry["messages"][0]["content"]


async def test_prompted_tools_are_parsed_from_text(server: FakeOpenAI) -> None:
    server.push(completion('{"tool": "search", "arguments": {"query": "diffusion"}}'))
    model = make_model(server, native_tools=False)
    history = [
        Message.user("first"),
        Message.assistant("", (ToolCall("search", {"query": "a"}, "c1"),)),
        Message.tool("result a", "c1"),
    ]
    response = await model.complete(history, tools=[SEARCH])
    assert [(c.name, c.arguments) for c in response.tool_calls] == [
        ("search", {"query": "diffusion"})
    ]
    body = server.requests[0]
    assert "tools" not in body
    assert "search" in body["messages"][0]["content"]
    assert all(m["role"] in ("system", "user", "assistant") for m in body["messages"])
    assert "Result of tool 'search'" in body["messages"][-1]["content"]


async def test_prompted_tool_call_to_an_unknown_tool_is_repaired(server: FakeOpenAI) -> None:
    server.push(
        completion('{"tool": "browse", "arguments": {}}'),
        completion('{"tool": "search", "arguments": {"query": "x"}}'),
    )
    response = await make_model(server, native_tools=False).complete(
        [Message.user("go")], tools=[SEARCH]
    )
    assert response.tool_calls[0].name == "search"
    assert "no tool named 'browse'" in server.requests[1]["messages"][-1]["content"]


async def test_malformed_native_tool_arguments_are_repaired(server: FakeOpenAI) -> None:
    server.push(
        completion(None, tool_calls=[tool_call("search", '{"query": "vit"')]),
        completion(None, tool_calls=[tool_call("search", {"query": "vit"})]),
    )
    response = await make_model(server).complete([Message.user("go")], tools=[SEARCH])
    assert response.tool_calls[0].arguments == {"query": "vit"}
    assert "not a JSON object" in server.requests[1]["messages"][-1]["content"]


async def test_streaming_yields_deltas_then_the_full_response(server: FakeOpenAI) -> None:
    server.push(
        Reply(
            sse=[
                chunk("Hel"),
                chunk("lo"),
                chunk(" world", finish_reason="stop"),
                chunk(usage=(9, 3)),
            ]
        )
    )
    events = [e async for e in make_model(server).stream([Message.user("hi")])]
    assert [e.delta for e in events[:-1]] == ["Hel", "lo", " world"]
    final = events[-1].response
    assert final is not None
    assert final.text == "Hello world"
    assert final.usage == Usage(9, 3)
    assert server.requests[0]["stream"] is True
    assert server.requests[0]["stream_options"] == {"include_usage": True}


async def test_streaming_assembles_tool_call_fragments(server: FakeOpenAI) -> None:
    first = {
        "index": 0,
        "id": "call_1",
        "type": "function",
        "function": {"name": "search", "arguments": '{"que'},
    }
    second = {"index": 0, "function": {"arguments": 'ry": "vit"}'}}
    server.push(
        Reply(
            sse=[chunk(tool_calls=[first]), chunk(tool_calls=[second], finish_reason="tool_calls")]
        )
    )
    events = [e async for e in make_model(server).stream([Message.user("go")], tools=[SEARCH])]
    final = events[-1].response
    assert final is not None
    assert final.tool_calls == (ToolCall("search", {"query": "vit"}, "call_1"),)
    assert final.usage.input_tokens > 0  # estimated: this stream reported no usage


async def test_streamed_structured_output_is_validated(server: FakeOpenAI) -> None:
    server.push(Reply(sse=[chunk('{"relevance": '), chunk('"relevant", "confidence": 0.5}')]))
    events = [
        e async for e in make_model(server).stream([Message.user("grade")], output_schema=GRADE)
    ]
    final = events[-1].response
    assert final is not None and final.parsed == {"relevance": "relevant", "confidence": 0.5}


async def test_sleep_recorder_is_unused_on_success(
    server: FakeOpenAI, sleeps: SleepRecorder
) -> None:
    server.push(completion("ok"))
    await make_model(server, sleeps).complete([Message.user("x")])
    assert sleeps.delays == []
