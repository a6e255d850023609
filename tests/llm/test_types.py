"""Messages and tool calls: exact dict round trip and immutability, however they are built."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kforge import jsoncodec
from kforge.errors import AppendOnlyError
from kforge.frozen import FrozenDict, freeze
from kforge.llm.types import (
    Message,
    ModelResponse,
    ToolCall,
    Usage,
    messages_from_json,
    records_of,
)

texts = st.text(max_size=20)
arguments = st.dictionaries(texts, st.none() | st.booleans() | st.integers() | texts, max_size=3)
calls = st.builds(ToolCall, name=texts, arguments=arguments, id=texts)
messages = st.one_of(
    st.builds(Message, role=st.sampled_from(["system", "user"]), content=texts),
    st.builds(Message.assistant, texts, st.lists(calls, max_size=3).map(tuple)),
    st.builds(Message.tool, texts, texts, st.none() | texts),
)


@given(messages)
def test_message_dict_round_trip_is_exact(message: Message) -> None:
    data = message.to_dict()
    again = Message.from_dict(data)
    assert again == message
    if not message.tool_calls:  # tool call arguments are dicts, so only these hash
        assert hash(again) == hash(message)
    assert again.to_dict() == data
    assert type(again) is Message


@given(calls)
def test_tool_call_round_trip_copies_the_arguments(call: ToolCall) -> None:
    data = jsoncodec.to_builtins(call)
    assert data == {"name": call.name, "arguments": call.arguments, "id": call.id}
    again = jsoncodec.convert(data, ToolCall)
    assert again == call
    data["arguments"]["late"] = 1
    assert "late" not in again.arguments


def test_restored_messages_stay_frozen_and_subclasses_are_kept() -> None:
    message = Message.from_dict({"role": "user", "content": "hi"})
    with pytest.raises(dataclasses.FrozenInstanceError):
        message.content = "changed"  # type: ignore[misc]

    @dataclasses.dataclass(frozen=True, slots=True)
    class Tagged(Message):
        pass

    tagged: Any = Tagged.from_dict({"role": "tool", "content": "2", "tool_call_id": "c1"})
    assert type(tagged) is Tagged and tagged.tool_call_id == "c1" and tagged.name is None


def test_missing_role_is_a_clear_key_error() -> None:
    with pytest.raises(KeyError, match="role"):
        Message.from_dict({"content": "no role"})


responses = st.builds(
    ModelResponse,
    text=texts,
    tool_calls=st.lists(calls, max_size=3).map(tuple),
    parsed=st.none() | arguments,
    usage=st.builds(Usage, *(st.integers(0, 10**6) for _ in range(3))),
    model=texts,
    finish_reason=st.sampled_from(["stop", "length", "tool_calls"]),
)


@given(responses)
def test_a_recorded_response_reads_back_as_the_response(response: ModelResponse) -> None:
    text = jsoncodec.dumps(response.to_dict())
    assert jsoncodec.loads(text) == jsoncodec.loads(
        jsoncodec.dumps(jsoncodec.to_builtins(response))
    )
    assert jsoncodec.convert(jsoncodec.loads(text), ModelResponse) == response
    assert jsoncodec.loads_as(text, ModelResponse) == response


@given(messages)
def test_a_message_read_from_a_frozen_record_is_the_same_message_and_shares_its_arguments(
    message: Message,
) -> None:
    record = freeze(message.to_dict())
    again = Message.from_dict(record)
    assert again == message and type(again) is Message
    assert all(type(call) is ToolCall for call in again.tool_calls)
    for call, stored in zip(again.tool_calls, record.get("tool_calls", ()), strict=True):
        assert call.arguments is stored["arguments"]  # frozen: shared, not copied
        with pytest.raises(dataclasses.FrozenInstanceError):
            call.id = "changed"  # type: ignore[misc]
    plain = Message.from_dict(message.to_dict())
    assert all(type(c.arguments) is dict for c in plain.tool_calls)


@given(st.lists(messages, max_size=6))
def test_messages_read_together_are_the_messages_read_one_by_one(batch: list[Message]) -> None:
    records = [freeze(m.to_dict()) for m in batch]
    together = Message.from_dicts(records)
    assert together == [Message.from_dict(r) for r in records] == batch
    assert records_of(together) == [records_of([m])[0] for m in map(Message.from_dict, records)]
    assert all(type(m) is Message for m in together)
    plain = Message.from_dicts(m.to_dict() for m in batch)
    assert plain == batch and records_of(plain) == [None] * len(batch)

    @dataclasses.dataclass(frozen=True, slots=True)
    class Tagged(Message):
        pass

    tagged = Tagged.from_dicts(records)
    assert tagged == [
        Tagged(m.role, m.content, m.tool_calls, m.tool_call_id, m.name) for m in batch
    ]
    assert all(type(m) is Tagged for m in tagged)


@given(st.lists(messages, max_size=6))
def test_messages_read_from_json_equal_those_read_from_its_dicts(history: list[Message]) -> None:
    try:
        data = jsoncodec.dumps(history).encode()
    except ValueError:  # a lone surrogate: no record holds one
        return
    read = messages_from_json(data)
    assert read == Message.from_records(jsoncodec.loads(data)) == history
    assert all(type(c.arguments) is FrozenDict for m in read for c in m.tool_calls)


@pytest.mark.parametrize("data", [b'{"role": "user"}', b'[{"content": "no role"}]', b"[1e400]"])
def test_json_that_is_not_a_list_of_messages_is_refused(data: bytes) -> None:
    with pytest.raises(ValueError, match="not a list of messages"):
        messages_from_json(data)


def test_flat_arguments_read_from_json_are_frozen_by_one_copy(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import kforge.llm.types as types

    walked: list[Any] = []

    def walking(value: Any) -> Any:
        walked.append(value)
        return freeze(value)

    monkeypatch.setattr(types, "freeze_decoded", walking)
    flat = ToolCall("add", {"a": 1, "b": "x", "c": None}, "c1")
    nested = ToolCall("find", {"where": {"in": ["a", "b"]}, "n": 2}, "c2")
    history = [Message.assistant("", (flat, nested)), Message.tool("3", "c1", "add")]
    read = messages_from_json(jsoncodec.dumps(history).encode())
    assert read == history
    assert walked == [nested.arguments]  # only arguments that hold containers are walked
    args = [c.arguments for c in read[0].tool_calls]
    assert all(type(a) is FrozenDict for a in args)
    with pytest.raises(AppendOnlyError):
        args[1]["where"]["in"].append("c")
