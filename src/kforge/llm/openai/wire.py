"""The OpenAI chat-completions wire format: requests from kforge values, responses into them."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from kforge import jsoncodec
from kforge.errors import ModelResponseError
from kforge.llm.types import Message, ModelSettings, ToolCall, ToolSpec, Usage

__all__ = [
    "BadToolArguments",
    "StreamAccumulator",
    "WireReply",
    "parse_completion",
    "request_params",
    "to_wire_messages",
    "tool_to_wire",
]


class BadToolArguments(Exception):
    """A native tool call whose arguments are not a JSON object (the model may repair it)."""

    def __init__(self, name: str, raw: str, reason: str) -> None:
        super().__init__(
            f"arguments of tool '{name}' are not a JSON object ({reason}): {raw[:200]!r}"
        )
        self.name = name
        self.raw = raw


@dataclass(slots=True)
class WireReply:
    """One decoded chat completion."""

    text: str = ""
    tool_calls: list[ToolCall] = field(default_factory=list)
    bad_arguments: list[BadToolArguments] = field(default_factory=list)
    finish_reason: str = "stop"
    usage: Usage | None = None
    model: str = ""


def to_wire_messages(messages: Sequence[Message]) -> list[dict[str, Any]]:
    wire: list[dict[str, Any]] = []
    for m in messages:
        if m.role == "tool":
            wire.append(
                {"role": "tool", "tool_call_id": m.tool_call_id or "", "content": m.content}
            )
        elif m.role == "assistant" and m.tool_calls:
            wire.append(
                {
                    "role": "assistant",
                    "content": m.content or None,
                    "tool_calls": [
                        {
                            "id": c.id or f"call_{i}",
                            "type": "function",
                            "function": {
                                "name": c.name,
                                "arguments": jsoncodec.dumps(c.arguments, spaced=True),
                            },
                        }
                        for i, c in enumerate(m.tool_calls)
                    ],
                }
            )
        else:
            item: dict[str, Any] = {"role": m.role, "content": m.content}
            if m.name is not None and m.role == "user":
                item["name"] = m.name
            wire.append(item)
    return wire


def tool_to_wire(tool: ToolSpec) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {
            "name": tool.name,
            "description": tool.description,
            "parameters": tool.input_schema or {"type": "object", "properties": {}},
        },
    }


def request_params(model_id: str, settings: ModelSettings | None) -> dict[str, Any]:
    params: dict[str, Any] = {"model": model_id}
    if settings is None:
        return params
    if settings.temperature is not None:
        params["temperature"] = settings.temperature
    if settings.max_tokens is not None:
        params["max_tokens"] = settings.max_tokens
    if settings.top_p is not None:
        params["top_p"] = settings.top_p
    if settings.stop:
        params["stop"] = list(settings.stop)
    if settings.seed is not None:
        params["seed"] = settings.seed
    if settings.repetition_penalty is not None and settings.repetition_penalty != 1.0:
        params["frequency_penalty"] = max(-2.0, min(2.0, settings.repetition_penalty - 1.0))
    return params


def _arguments(name: str, raw: Any) -> dict[str, Any] | BadToolArguments:
    if isinstance(raw, dict):
        return raw
    if raw is None or (isinstance(raw, str) and not raw.strip()):
        return {}
    if not isinstance(raw, str):
        return BadToolArguments(
            name, jsoncodec.dumps(raw, spaced=True), "not a string or an object"
        )
    try:
        value = jsoncodec.loads(raw)
    except jsoncodec.JSONDecodeError as exc:
        return BadToolArguments(name, raw, exc.msg)
    if not isinstance(value, dict):
        return BadToolArguments(name, raw, "not an object")
    return value


def _usage(data: Any) -> Usage | None:
    if not isinstance(data, dict):
        return None
    prompt = data.get("prompt_tokens", data.get("input_tokens"))
    completion = data.get("completion_tokens", data.get("output_tokens"))
    if not isinstance(prompt, int) or not isinstance(completion, int):
        return None
    return Usage(prompt, completion)


def _add_call(reply: WireReply, call_id: str, name: str, raw_arguments: Any) -> None:
    args = _arguments(name, raw_arguments)
    if isinstance(args, BadToolArguments):
        reply.bad_arguments.append(args)
    else:
        reply.tool_calls.append(ToolCall(name=name, arguments=args, id=call_id))


def parse_completion(data: Any, *, endpoint: str) -> WireReply:
    """Decode a chat-completion body; raises ``ModelResponseError`` for anything malformed."""
    if not isinstance(data, dict):
        raise ModelResponseError(
            f"{endpoint} answered with {type(data).__name__} instead of a chat-completion JSON "
            f"object: {str(data)[:200]!r}; check that the base URL points at an "
            "OpenAI-compatible API (it usually ends in /v1)"
        )
    choices = data.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        raise ModelResponseError(
            f"{endpoint} returned a completion without choices: {jsoncodec.dumps(data, spaced=True)[:200]}"
        )
    choice = choices[0]
    message = choice.get("message")
    if not isinstance(message, dict):
        raise ModelResponseError(
            f"{endpoint} returned a choice without a message: {jsoncodec.dumps(choice, spaced=True)[:200]}"
        )
    reply = WireReply(
        text=message.get("content") or "",
        finish_reason=str(choice.get("finish_reason") or "stop"),
        usage=_usage(data.get("usage")),
        model=str(data.get("model") or ""),
    )
    for i, call in enumerate(message.get("tool_calls") or []):
        function = call.get("function") if isinstance(call, dict) else None
        if not isinstance(function, dict) or not isinstance(function.get("name"), str):
            raise ModelResponseError(
                f"{endpoint} returned a malformed tool call: {jsoncodec.dumps(call, spaced=True)[:200]}"
            )
        _add_call(
            reply, str(call.get("id") or f"call_{i}"), function["name"], function.get("arguments")
        )
    return reply


@dataclass(slots=True)
class _PartialCall:
    id: str = ""
    name: str = ""
    arguments: str = ""


class StreamAccumulator:
    """Folds streamed chat-completion chunks into one reply."""

    def __init__(self, endpoint: str) -> None:
        self._endpoint = endpoint
        self._text: list[str] = []
        self._calls: dict[int, _PartialCall] = {}
        self._finish = "stop"
        self._usage: Usage | None = None
        self._model = ""

    def feed(self, chunk: Any) -> str:
        """Take one chunk; return its text delta (possibly empty)."""
        if not isinstance(chunk, dict):
            raise ModelResponseError(
                f"{self._endpoint} streamed a malformed chunk: {str(chunk)[:200]!r}"
            )
        self._model = str(chunk.get("model") or self._model)
        usage = _usage(chunk.get("usage"))
        if usage is not None:
            self._usage = usage
        delta_text = ""
        for choice in chunk.get("choices") or []:
            if not isinstance(choice, dict) or choice.get("index", 0) != 0:
                continue
            if choice.get("finish_reason"):
                self._finish = str(choice["finish_reason"])
            delta = choice.get("delta") or {}
            content = delta.get("content")
            if isinstance(content, str) and content:
                self._text.append(content)
                delta_text += content
            for call in delta.get("tool_calls") or []:
                partial = self._calls.setdefault(int(call.get("index", 0)), _PartialCall())
                partial.id = call.get("id") or partial.id
                function = call.get("function") or {}
                partial.name += function.get("name") or ""
                args = function.get("arguments")
                if isinstance(args, str):
                    partial.arguments += args
                elif isinstance(args, dict):
                    partial.arguments = jsoncodec.dumps(args, spaced=True)
        return delta_text

    def result(self) -> WireReply:
        reply = WireReply(
            text="".join(self._text),
            finish_reason=self._finish,
            usage=self._usage,
            model=self._model,
        )
        for index in sorted(self._calls):
            partial = self._calls[index]
            if not partial.name:
                raise ModelResponseError(f"{self._endpoint} streamed a tool call without a name")
            _add_call(reply, partial.id or f"call_{index}", partial.name, partial.arguments)
        return reply
