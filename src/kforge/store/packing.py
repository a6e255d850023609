"""Compact record bodies for stores that keep bytes: frames and step deltas as deflated JSON.

A frame body or a step delta is a few hundred bytes of JSON, most of it the same keys and
shapes in every record. Deflate with a preset dictionary of those keys and shapes stores it in
about a third of the space (a dictionary is what makes deflate work on inputs this short).

A packed body starts with a format byte: ``0x01`` is raw deflate with :data:`_DICTIONARY_1`.
JSON text starts with ``{`` or ``[``, so text stored before packing existed (or stored as it is
because packing would not make it smaller) reads back unchanged. The dictionary of a format is
fixed forever: a better one gets a new format byte, and readers keep the old ones.
"""

from __future__ import annotations

import zlib

__all__ = ["pack", "unpack"]

_FORMAT_1 = b"\x01"
_WINDOW_BITS = 12
"""A 4 KB window: the dictionary and a typical body fit in it, and copying the primed
compressor for each body stays cheap."""

_DICTIONARY_1 = (
    b'"action":"","analysis":"","answer":{},"checkpoint_id":"","current_tool":"","detail":"",'
    b'"entries_compacted":0,"error_type":"","failed_action":"","from_phase":"","goal":"",'
    b'"goal_achieved":false,"interaction_id":"","is_backward":false,"iterations_used":0,'
    b'"kind":"question","limit":"max_tokens","max_iterations":0,"max_iterations_reached":false,'
    b'"max_steps":0,"maximum":0,"message":"","next_action":"","observations":[],"options":[],'
    b'"partial":false,"partial_result":{},"payload":{},"phase":"","prompt":"","reason":"",'
    b'"reasoning_trace":[],"recoverable":true,"reflection_id":"","repeated":false,'
    b'"requires_approval":false,"response_text":"","should_continue":true,"step_number":0,'
    b'"suggested_fix":"","target_run_id":"","timeout_reached":false,"to_phase":"",'
    b'"tokens_after":0,"tokens_before":0,"tools_called":[],"value":0,"visit":0,'
    b'"from_status":"running","to_status":"awaiting_user","reason":"","name":"","payload":{'
    b'"text":"","sources":[],"chunk_id":"","score":0.0,"title":"","url":"",'
    b'{"role":"system","content":"'
    b'{"role":"user","content":"'
    b'"reasoning":"","iteration":0,"plan_frame_id":null,"read_only":false,'
    b'"success":false,"error":"","cached":false,'
    b'"cost_usd":null,"run_cost_usd":null,"run_input_tokens":0,"run_output_tokens":0,'
    b'["d",["runtime","interventions"]],["s",["runtime","cost_usd"],0.0],'
    b'["s",["runtime","usage","output_tokens"],0],'
    b'["s",["agent","state"],{}],["a",["agent","history"],[{"role":"user","content":""}]],'
    b'"response":{"text":"","tool_calls":[],"parsed":null,"usage":{"input_tokens":0,'
    b'"output_tokens":0,"requests":1},"model":"","finish_reason":"stop"},"purpose":"",'
    b'"duration_ms":0.0,'
    b'"result":{"content":[{"type":"text","text":""}],"is_error":false,'
    b'"structured_content":{"result":0}},"execution_time_ms":0.0,'
    b'{"role":"tool","content":"","tool_call_id":"call_","name":""}'
    b'{"role":"assistant","content":"","tool_calls":[{"name":"","arguments":{},"id":"call_"}]}'
    b'[["a",["agent","messages"],[{"role":"assistant","content":"","tool_calls":[{"name":"",'
    b'"arguments":{},"id":"call_"}]},{"role":"tool","content":"","tool_call_id":"call_",'
    b'"name":""}]],["s",["agent","tool_calls"],0],["s",["runtime","elapsed_s"],0.0],'
    b'["s",["runtime","usage","input_tokens"],0],["s",["runtime","usage","requests"],0]]'
    b'{"id":"","created_at":"2026-01-01T00:00:00.000000+00:00","model":"","input_tokens":0,'
    b'"output_tokens":0,"tool_name":"","call_id":"","arguments":{},"summary":"",'
    b'"finish_reason":"tool_calls"},"purpose":"loop",'
)

_LEVEL = 2
"""The deflate level of bodies under ``_FAST_FROM``: a step's bodies (200 to 600 bytes) pack
in 63 k instructions each at level 2 against 78 k at level 6, 3 % larger (most of a body is
the dictionary's keys, which every level finds). The same format: reading does not depend on
the level, so bodies packed at any level read back."""
_PRIMED = zlib.compressobj(
    _LEVEL, zlib.DEFLATED, -_WINDOW_BITS, 2, zlib.Z_DEFAULT_STRATEGY, _DICTIONARY_1
)
_PRIMED_FAST = zlib.compressobj(
    1, zlib.DEFLATED, -_WINDOW_BITS, 2, zlib.Z_DEFAULT_STRATEGY, _DICTIONARY_1
)
_FAST_FROM = 4096
"""Bodies of this many bytes or more are deflated at the fastest level: the first model call
of a stretch may hold its whole conversation (18 KB for a resumed 200-step run whose agent keeps
its history as plain state), which level 6 packs in three times the time of level 1 for a
body 13 % smaller. The same format: reading
does not depend on the level."""


def pack(text: str) -> bytes:
    """``text`` (JSON) as stored bytes: packed when that is smaller, else its UTF-8 as it is."""
    raw = text.encode("utf-8")
    compressor = (_PRIMED if len(raw) < _FAST_FROM else _PRIMED_FAST).copy()
    packed = _FORMAT_1 + compressor.compress(raw) + compressor.flush()
    return packed if len(packed) < len(raw) else raw


def unpack(data: bytes | memoryview | str) -> bytes | str:
    """The JSON a stored body holds (UTF-8 bytes, or the text itself when stored as text);
    ``ValueError`` when a packed body is damaged."""
    if isinstance(data, str):
        return data
    data = bytes(data)
    if data[:1] != _FORMAT_1:
        return data
    inflater = zlib.decompressobj(-_WINDOW_BITS, _DICTIONARY_1)
    try:
        text = inflater.decompress(data[1:]) + inflater.flush()
    except zlib.error as exc:
        raise ValueError(f"packed record is damaged ({exc})") from None
    if not inflater.eof:
        raise ValueError("packed record is cut short")
    return text
