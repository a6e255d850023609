"""Tool calling through the prompt, for models and endpoints without native tool calls.

The model answers with one JSON decision, either ``{"tool": name, "arguments": {...}}`` or
``{"answer": text}``. The local model is constrained to ``decision_schema``; other endpoints are
told the format and their reply is parsed leniently.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from kforge import jsoncodec
from kforge.llm.types import Message, ToolCall, ToolSpec
from kforge.prompts import prompt_text

__all__ = [
    "ANSWER_MAX_CHARS",
    "decision_schema",
    "flatten_tool_messages",
    "parse_tool_reply",
    "read_tool_call",
    "tool_instructions",
]

ANSWER_MAX_CHARS = 4000
"""Longest direct answer a constrained decision may carry."""


def tool_instructions(tools: Sequence[ToolSpec]) -> str:
    """A system-prompt block that lists the tools and the decision format."""
    lines = []
    for tool in tools:
        params = jsoncodec.dumps(tool.input_schema.get("properties", {}))
        required = tool.input_schema.get("required", [])
        lines.append(f"- {tool.name}: {tool.description.strip()}")
        lines.append(
            f"  arguments: {params}" + (f" required: {', '.join(required)}" if required else "")
        )
    return prompt_text("TOOL_INSTRUCTIONS", tools="\n".join(lines))


def decision_schema(tools: Sequence[ToolSpec]) -> dict[str, Any]:
    """The JSON Schema of one decision: a call of one of ``tools``, or a direct answer."""
    options: list[dict[str, Any]] = [
        {
            "type": "object",
            "properties": {
                "tool": {"const": tool.name},
                "arguments": tool.input_schema or {"type": "object"},
            },
            "required": ["tool", "arguments"],
            "additionalProperties": False,
        }
        for tool in tools
    ]
    options.append(
        {
            "type": "object",
            "properties": {"answer": {"type": "string", "maxLength": ANSWER_MAX_CHARS}},
            "required": ["answer"],
            "additionalProperties": False,
        }
    )
    return {"anyOf": options}


def parse_tool_reply(
    value: Any, *, call_id_prefix: str = "call"
) -> tuple[str, tuple[ToolCall, ...]]:
    """Read a prompted model's JSON reply into ``(answer_text, tool_calls)``: the provider's
    side, before any agent sees it (a ReAct decision is ``kforge.agents.loop.decision``'s,
    which reads tool calls with the same ``read_tool_call``).

    Accepts the documented shapes and the near misses models produce: ``{"name", "arguments"}``,
    ``{"tool_calls": [...]}`` and arguments encoded as a JSON string. Raises ``ValueError``.
    """
    if isinstance(value, dict):
        if "tool_calls" in value and isinstance(value["tool_calls"], list):
            calls = [
                read_tool_call(item, f"{call_id_prefix}_{i}")
                for i, item in enumerate(value["tool_calls"])
            ]
            return str(value.get("answer") or ""), tuple(calls)
        if "tool" in value or "name" in value:
            return "", (read_tool_call(value, f"{call_id_prefix}_0"),)
        if "answer" in value:
            answer = value["answer"]
            return answer if isinstance(answer, str) else jsoncodec.dumps(answer, spaced=True), ()
    raise ValueError(
        'expected {"tool": "<name>", "arguments": {...}} or {"answer": "<text>"}, '
        f"got {jsoncodec.dumps(value, spaced=True)[:200]}"
    )


def read_tool_call(item: Any, call_id: str = "call_0") -> ToolCall:
    """One tool call of a JSON decision: ``{"tool" or "name", "arguments" or "parameters"}``
    or OpenAI's ``{"function": {...}}``, arguments possibly a JSON string. The one reader of
    tool calls written as JSON (by prompted models, and in the ReAct loop's decisions).
    Raises ``ValueError`` saying what is wrong."""
    if not isinstance(item, dict):
        raise ValueError(
            f"a tool call must be an object, got {jsoncodec.dumps(item, spaced=True)[:200]}"
        )
    name = item.get("tool", item.get("name"))
    if isinstance(item.get("function"), dict):
        name = item["function"].get("name", name)
        item = {"arguments": item["function"].get("arguments"), **item}
    if not isinstance(name, str) or not name:
        raise ValueError(
            f"a tool call needs the tool's name, got {jsoncodec.dumps(item, spaced=True)[:200]}"
        )
    arguments = item.get("arguments", item.get("parameters", {}))
    if isinstance(arguments, str):
        arguments = jsoncodec.loads(arguments) if arguments.strip() else {}
    if arguments is None:
        arguments = {}
    if not isinstance(arguments, dict):
        raise ValueError(
            f"arguments of tool '{name}' must be a JSON object, got {jsoncodec.dumps(arguments, spaced=True)[:200]}"
        )
    return ToolCall(name=name, arguments=arguments, id=str(item.get("id") or call_id))


def flatten_tool_messages(messages: Sequence[Message]) -> list[Message]:
    """Rewrite tool calls and tool results as plain assistant and user turns.

    Assistant tool calls become their decision JSON; tool results become user turns naming the
    tool. Consecutive turns of the same role are merged, since many chat templates require
    alternating roles.
    """
    names = {call.id: call.name for m in messages for call in m.tool_calls}
    out: list[Message] = []
    for message in messages:
        if message.role == "assistant" and message.tool_calls:
            parts = [message.content] if message.content else []
            parts += [
                jsoncodec.dumps({"tool": call.name, "arguments": call.arguments}, spaced=True)
                for call in message.tool_calls
            ]
            flat = Message.assistant("\n".join(parts))
        elif message.role == "tool":
            name = message.name or names.get(message.tool_call_id or "", "tool")
            flat = Message.user(f"Result of tool '{name}':\n{message.content}")
        else:
            flat = Message(message.role, message.content)
        if out and out[-1].role == flat.role and flat.role != "system":
            out[-1] = Message(flat.role, f"{out[-1].content}\n\n{flat.content}")
        else:
            out.append(flat)
    return out
