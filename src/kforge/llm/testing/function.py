"""A model whose replies come from a Python function: for tests that need logic, not a queue."""

from __future__ import annotations

import inspect
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from kforge import jsoncodec
from kforge.errors import ModelOutputError
from kforge.llm.base import CompletionStreamer
from kforge.llm.estimate import estimate_messages_tokens, estimate_text_tokens
from kforge.llm.structured import schema_errors
from kforge.llm.types import (
    Message,
    ModelResponse,
    ModelSettings,
    StreamEvent,
    ToolCall,
    ToolSpec,
    Usage,
)

__all__ = ["CallInfo", "FunctionModel", "FunctionReply"]

FunctionReply = (
    ModelResponse | str | ToolCall | tuple[ToolCall, ...] | list[ToolCall] | dict[str, Any]
)
"""What the function may return: a full response, text, tool call(s), or a structured value."""


@dataclass(frozen=True, slots=True)
class CallInfo:
    """What the function is told about the call besides the messages."""

    tools: tuple[ToolSpec, ...]
    output_schema: dict[str, Any] | None
    settings: ModelSettings | None
    call_number: int
    """1 for the first call to this model, then 2, 3, ..."""


ReplyFunction = Callable[[list[Message], CallInfo], FunctionReply | Awaitable[FunctionReply]]
StreamFunction = Callable[[list[Message], CallInfo], AsyncIterator[str] | Iterable[str]]


class FunctionModel(CompletionStreamer):
    """Runs ``function(messages, info)`` for each call.

    ``stream_function``, when given, yields the text deltas of streamed calls; otherwise a
    stream is the completed reply cut into words.
    """

    def __init__(
        self,
        function: ReplyFunction,
        *,
        stream_function: StreamFunction | None = None,
        name: str | None = None,
    ) -> None:
        self._function = function
        self._stream_function = stream_function
        self._name = name or f"function:{getattr(function, '__name__', 'model')}"
        self.call_count = 0

    @property
    def name(self) -> str:
        return self._name

    def _info(
        self,
        tools: Sequence[ToolSpec],
        output_schema: dict[str, Any] | None,
        settings: ModelSettings | None,
    ) -> CallInfo:
        self.call_count += 1
        return CallInfo(tuple(tools), output_schema, settings, self.call_count)

    async def complete(
        self,
        messages: Sequence[Message],
        settings: ModelSettings | None = None,
        *,
        tools: Sequence[ToolSpec] = (),
        output_schema: dict[str, Any] | None = None,
    ) -> ModelResponse:
        info = self._info(tools, output_schema, settings)
        reply = self._function(list(messages), info)
        if inspect.isawaitable(reply):
            reply = await reply
        return self._response(reply, messages, output_schema)

    async def stream(
        self,
        messages: Sequence[Message],
        settings: ModelSettings | None = None,
        *,
        tools: Sequence[ToolSpec] = (),
        output_schema: dict[str, Any] | None = None,
    ) -> AsyncIterator[StreamEvent]:
        if self._stream_function is None:
            whole = super().stream(messages, settings, tools=tools, output_schema=output_schema)
            async for event in whole:
                yield event
            return
        info = self._info(tools, output_schema, settings)
        produced = self._stream_function(list(messages), info)
        parts: list[str] = []
        if isinstance(produced, AsyncIterator):
            async for delta in produced:
                parts.append(delta)
                yield StreamEvent(delta=delta)
        else:
            for delta in produced:
                parts.append(delta)
                yield StreamEvent(delta=delta)
        yield StreamEvent(response=self._response("".join(parts), messages, output_schema))

    def _response(
        self,
        reply: FunctionReply,
        messages: Sequence[Message],
        output_schema: dict[str, Any] | None,
    ) -> ModelResponse:
        if isinstance(reply, ModelResponse):
            response = reply
        elif isinstance(reply, ToolCall):
            response = ModelResponse(tool_calls=(reply,), finish_reason="tool_calls")
        elif isinstance(reply, (tuple, list)):
            response = ModelResponse(tool_calls=tuple(reply), finish_reason="tool_calls")
        elif isinstance(reply, dict):
            response = ModelResponse(text=jsoncodec.dumps(reply, spaced=True), parsed=reply)
        else:
            response = ModelResponse(text=reply)
        if output_schema is not None and not response.tool_calls:
            parsed = response.parsed
            if parsed is None:
                try:
                    parsed = jsoncodec.loads(response.text)
                except jsoncodec.JSONDecodeError as exc:
                    raise ModelOutputError(
                        f"{self._name}: structured output was requested but the function "
                        f"returned text that is not JSON: {response.text[:200]!r}"
                    ) from exc
            problems = schema_errors(parsed, output_schema)
            if problems:
                raise ModelOutputError(
                    f"{self._name}: the function's output does not match the schema "
                    + "; ".join(problems)
                )
            response = ModelResponse(
                text=response.text or jsoncodec.dumps(parsed, spaced=True),
                tool_calls=response.tool_calls,
                parsed=parsed,
                usage=response.usage,
                model=response.model,
                finish_reason=response.finish_reason,
            )
        usage = response.usage
        if usage == Usage():
            out = estimate_text_tokens(response.text) + sum(
                estimate_text_tokens(jsoncodec.dumps(c.arguments, spaced=True))
                for c in response.tool_calls
            )
            usage = Usage(estimate_messages_tokens(messages), out)
        return ModelResponse(
            text=response.text,
            tool_calls=response.tool_calls,
            parsed=response.parsed,
            usage=usage,
            model=response.model or self._name,
            finish_reason=response.finish_reason,
        )
