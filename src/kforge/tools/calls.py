"""Tool calls as text, for models without native tool calling.

``serialize_tool_call`` writes ``<tool_call>{"name": ..., "arguments": {...}}</tool_call>``;
``parse_tool_calls`` reads that, fenced JSON, bare JSON objects, OpenAI-style function objects
and Python call syntax (``name(a=1, b="x")``).
"""

from __future__ import annotations

import ast
import json
import re
from dataclasses import dataclass, field
from typing import Any

from kforge.llm.types import ToolCall

__all__ = ["ParsedToolCall", "parse_tool_call", "parse_tool_calls", "serialize_tool_call"]

_TAGGED = re.compile(r"<tool_call>\s*(.*?)\s*(?:</tool_call>|\Z)", re.DOTALL)
_FENCED = re.compile(r"```(?:json|tool_call|tool)?\s*\n(.*?)```", re.DOTALL)
_PY_CALL = re.compile(r"^\s*\[?\s*([A-Za-z_][\w.\-]*)\s*\((.*)\)\s*\]?\s*$", re.DOTALL)
_NAME_KEYS = ("name", "tool", "tool_name", "function")
_ARG_KEYS = ("arguments", "parameters", "args", "input", "tool_input")
_REASON_KEYS = ("reasoning", "thought", "reason")


@dataclass(frozen=True, slots=True)
class ParsedToolCall:
    name: str
    arguments: dict[str, Any] = field(default_factory=dict)
    reasoning: str = ""
    """Why the model chose this tool, when it said so."""

    def to_call(self, call_id: str = "") -> ToolCall:
        return ToolCall(name=self.name, arguments=self.arguments, id=call_id)


def serialize_tool_call(call: ParsedToolCall | ToolCall, reasoning: str = "") -> str:
    """The text form ``parse_tool_call`` reads back unchanged."""
    why = call.reasoning if isinstance(call, ParsedToolCall) and not reasoning else reasoning
    body: dict[str, Any] = {"name": call.name, "arguments": call.arguments}
    if why:
        body["reasoning"] = why
    # "<" escaped so that no string inside can close the tag early.
    encoded = json.dumps(body, ensure_ascii=False).replace("<", "\\u003c")
    return f"<tool_call>\n{encoded}\n</tool_call>"


def parse_tool_call(text: str) -> ParsedToolCall | None:
    """The first tool call in ``text``, or None when there is none."""
    calls = parse_tool_calls(text)
    return calls[0] if calls else None


def parse_tool_calls(text: str) -> list[ParsedToolCall]:
    """Every tool call in ``text``, in order."""
    tagged = [m for m in _TAGGED.finditer(text)]
    if tagged:
        preamble = text[: tagged[0].start()].strip()
        found = [c for m in tagged for c in _from_fragment(m.group(1), preamble)]
        if found:
            return found
    for match in _FENCED.finditer(text):
        found = _from_fragment(match.group(1), text[: match.start()].strip())
        if found:
            return found
    found = _json_objects(text)
    if found:
        return found
    return _python_calls(text)


def _from_fragment(fragment: str, preamble: str) -> list[ParsedToolCall]:
    try:
        value = json.loads(fragment)
    except json.JSONDecodeError:
        return _json_objects(fragment, preamble) or _python_calls(fragment, preamble)
    items = value if isinstance(value, list) else [value]
    calls = [_from_object(item, preamble) for item in items]
    return [c for c in calls if c is not None]


def _json_objects(text: str, preamble: str | None = None) -> list[ParsedToolCall]:
    decoder = json.JSONDecoder()
    calls: list[ParsedToolCall] = []
    pos = text.find("{")
    while pos != -1:
        try:
            value, end = decoder.raw_decode(text, pos)
        except json.JSONDecodeError:
            pos = text.find("{", pos + 1)
            continue
        call = _from_object(value, preamble if preamble is not None else text[:pos].strip())
        if call is not None:
            calls.append(call)
            pos = text.find("{", end)
        else:
            pos = text.find("{", pos + 1)
    return calls


def _from_object(value: Any, preamble: str) -> ParsedToolCall | None:
    if not isinstance(value, dict):
        return None
    name: Any = None
    for key in _NAME_KEYS:
        candidate = value.get(key)
        if isinstance(candidate, dict):  # OpenAI: {"function": {"name": ..., "arguments": "..."}}
            return _from_object(candidate, preamble)
        if isinstance(candidate, str) and candidate:
            name = candidate
            break
    if name is None:
        return None
    arguments: Any = {}
    for key in _ARG_KEYS:
        if key in value:
            arguments = value[key]
            break
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments) if arguments.strip() else {}
        except json.JSONDecodeError:
            return None
    if not isinstance(arguments, dict):
        return None
    reasoning = next((value[k] for k in _REASON_KEYS if isinstance(value.get(k), str)), None)
    return ParsedToolCall(name, arguments, reasoning if reasoning is not None else _clean(preamble))


def _python_calls(text: str, preamble: str = "") -> list[ParsedToolCall]:
    calls: list[ParsedToolCall] = []
    for line in text.strip().splitlines() or [text]:
        match = _PY_CALL.match(line)
        if not match:
            continue
        try:
            node = ast.parse(f"f({match.group(2)})", mode="eval").body
        except SyntaxError:
            continue
        if not isinstance(node, ast.Call) or node.args:
            continue
        try:
            arguments = {
                kw.arg: ast.literal_eval(kw.value) for kw in node.keywords if kw.arg is not None
            }
        except (ValueError, SyntaxError):
            continue
        calls.append(ParsedToolCall(match.group(1), arguments, _clean(preamble)))
    return calls


def _clean(preamble: str) -> str:
    text = re.sub(r"^(thought|reasoning)\s*:\s*", "", preamble.strip(), flags=re.IGNORECASE)
    return text.strip()
