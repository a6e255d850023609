"""Stored frame bodies read back as frames: today's, and those older versions wrote."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from kforge.frames import (
    CheckpointKind,
    DataEvent,
    Observation,
    PhaseCheckpoint,
    ToolCallFrame,
    ToolResultFrame,
    frame_body_json,
    frame_from_body,
    stamped,
)

WHEN = datetime(2025, 3, 1, 9, 30, tzinfo=UTC)


def test_a_body_reads_back_as_its_frame_with_run_id_and_seq() -> None:
    frame = stamped(
        PhaseCheckpoint(
            checkpoint_id="c1",
            phase="plan",
            kind=CheckpointKind.BLOCKING,
            message="approve?",
            payload={"n": 2**70, "tree": [1, {"a": None}]},
            created_at=WHEN,
        ),
        "run-1",
        7,
    )
    body = frame_body_json(frame)
    assert '"run_id"' not in body and '"seq"' not in body
    assert frame_from_body(frame.type, body, "run-1", 7) == frame
    assert frame_from_body(frame.type, body.encode(), "run-1", 7) == frame


def test_a_data_event_reads_back_under_its_own_name() -> None:
    frame = stamped(DataEvent(name="source.found", payload={"url": "a.md"}), "r", 2)
    assert frame_from_body("data.source.found", frame_body_json(frame), "r", 2) == frame


def test_bodies_older_versions_wrote_still_read() -> None:
    # every field written, run id and seq inside, stdlib spacing, a NaN literal (before orjson)
    full = (
        '{"id": "f1", "run_id": "old", "seq": 99, "created_at": "2025-03-01T09:30:00+00:00", '
        '"tool_name": "search", "call_id": "c1", "success": true, "summary": "ok", '
        '"error": "", "result": {"score": NaN}, "execution_time_ms": 3, "cached": false}'
    )
    frame = frame_from_body("tool.result", full, "r", 4)
    assert isinstance(frame, ToolResultFrame)
    assert (frame.run_id, frame.seq, frame.created_at) == ("r", 4, WHEN)
    assert frame.execution_time_ms == 3.0 and frame.result["score"] != frame.result["score"]
    # an observation that still names the result frame it judged
    old = '{"id": "o1", "created_at": "2025-03-01T09:30:00Z", "content": "fine", "tool_result_frame_id": "x"}'
    observation = frame_from_body("agent.observation", old, "r", 5)
    assert observation == Observation(
        id="o1", run_id="r", seq=5, created_at=WHEN, content="fine", call_id=""
    )
    # the old tool-call vocabulary
    start = '{"id": "s1", "created_at": "2025-03-01T09:30:00+00:00", "tool_name": "add", "call_id": "c2", "arguments": {"a": 1}}'
    call = frame_from_body("tool.start", start, "r", 6)
    assert isinstance(call, ToolCallFrame)
    assert (call.tool_name, call.call_id, call.arguments, call.seq) == ("add", "c2", {"a": 1}, 6)


def test_a_body_that_does_not_fit_names_the_field() -> None:
    with pytest.raises(ValueError, match="kind"):
        frame_from_body(
            "phase.checkpoint",
            '{"id": "x", "created_at": "2025-03-01T09:30:00+00:00", "checkpoint_id": "c", '
            '"phase": "p", "kind": "sometimes", "message": "m"}',
            "r",
            1,
        )
    with pytest.raises(ValueError, match="message"):
        frame_from_body("agent.thinking", '{"id": "x"}', "r", 1)
    with pytest.raises(ValueError, match="unknown frame type"):
        frame_from_body("no.such.type", "{}", "r", 1)


def test_a_frame_body_is_made_by_code_written_for_its_class() -> None:
    """Every emit encodes a body: each class's is straight-line code reading its fields as
    attributes (no loop over field names with getattr), which writes the same body."""
    from kforge import jsoncodec
    from kforge.frames import ModelCall, frame_body_json
    from kforge.frames.codec import _body_of
    from kforge.frames.vocabulary import _REGISTRY

    for cls in _REGISTRY.values():
        code = _body_of(cls).__code__
        assert "getattr" not in code.co_names and code.co_filename == "<string>", cls
    frame = ModelCall(model="m", response={"text": "hi"}, purpose="loop", prompt_base=0)
    body = jsoncodec.loads(frame_body_json(frame))
    # prompt_base and prompt_delta are at their plain defaults (0, None): left out
    assert set(body) == {"id", "created_at", "model", "response", "purpose"}
    assert body["purpose"] == "loop"
