"""Packed record bodies: whatever their size (small ones deflated at level 2, large ones at the
fastest level), they read back as the JSON they were made from, bodies packed at another level
read back too, and text stored before packing reads as is."""

from __future__ import annotations

import zlib

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

from kforge.store.packing import _DICTIONARY_1, pack, unpack

messages = st.lists(
    st.fixed_dictionaries(
        {"role": st.sampled_from(["user", "assistant", "tool"]), "content": st.text(max_size=80)}
    ),
    max_size=400,
)


@given(messages)
def test_a_body_of_any_size_reads_back_as_its_json(history: list[dict[str, str]]) -> None:
    text = orjson.dumps({"purpose": "loop", "prompt_delta": history}).decode()
    stored = pack(text)
    assert unpack(stored) == text.encode()
    assert len(stored) <= len(text.encode())


@pytest.mark.parametrize("repeat", [1, 40, 400])
def test_a_conversation_is_packed_to_a_fraction_of_its_size(repeat: int) -> None:
    history = [
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [{"name": "add", "arguments": {"a": i, "b": 1}, "id": f"call_{i}"}],
        }
        if i % 2
        else {"role": "tool", "content": str(i), "tool_call_id": f"call_{i}", "name": "add"}
        for i in range(repeat)
    ]
    text = orjson.dumps({"prompt_delta": history}).decode()
    stored = pack(text)
    assert stored[:1] == b"\x01" and unpack(stored) == text.encode()
    if repeat >= 40:  # past the size where the fastest level takes over: still small
        assert len(stored) * 5 < len(text)


def test_text_stored_before_packing_reads_back_unchanged() -> None:
    assert unpack('{"a":1}') == '{"a":1}'
    assert unpack(b'{"a":1}') == b'{"a":1}'
    with pytest.raises(ValueError, match=r"damaged|cut short"):
        unpack(pack(orjson.dumps({"x": "y" * 5000}).decode())[:-3])


TOOL_RESULT = (
    '{"id":"212c0564c4614ecebcfa9f0a4e5ddee7","created_at":"2026-11-27T15:12:40.007591+00:00",'
    '"tool_name":"add","call_id":"496808fe1d9e4fd68b7449ffb470d4ac","success":true,"summary":"6",'
    '"result":{"content":[{"type":"text","text":"6"}],"is_error":false,'
    '"structured_content":{"result":6}},"execution_time_ms":0.051}'
)


def deflated(text: str, level: int) -> bytes:
    """``text`` as format 1 at deflate ``level``."""
    compressor = zlib.compressobj(
        level, zlib.DEFLATED, -12, 2, zlib.Z_DEFAULT_STRATEGY, _DICTIONARY_1
    )
    return b"\x01" + compressor.compress(text.encode()) + compressor.flush()


def test_a_steps_body_is_deflated_at_level_2() -> None:
    assert pack(TOOL_RESULT) == deflated(TOOL_RESULT, 2)


@pytest.mark.parametrize("level", [1, 6, 9])
def test_a_body_packed_at_another_level_reads_back(level: int) -> None:
    assert unpack(deflated(TOOL_RESULT, level)) == TOOL_RESULT.encode()
