"""A strict scripted model: a queue of responses that fails loudly when called more or less."""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from kforge import jsoncodec
from kforge.errors import ScriptedModelError
from kforge.llm.base import CompletionStreamer
from kforge.llm.types import (
    Message,
    ModelResponse,
    ModelSettings,
    ToolCall,
    ToolSpec,
    Usage,
)

__all__ = ["ScriptedCall", "ScriptedModel", "ScriptedReply"]

ScriptedReply = ModelResponse | str | dict[str, Any] | list[Any] | ToolCall | tuple[ToolCall, ...]
"""A queued reply: full response, plain text, a structured value, or tool call(s)."""


@dataclass(frozen=True, slots=True)
class ScriptedCall:
    messages: tuple[Message, ...]
    settings: ModelSettings | None
    tools: tuple[ToolSpec, ...]
    output_schema: dict[str, Any] | None


def _estimate_tokens(text: str) -> int:
    return _estimate_chars(len(text))


def _estimate_chars(chars: int) -> int:
    return max(1, chars // 4) if chars else 0


class ScriptedModel(CompletionStreamer):
    """Answers each call with the next queued reply, in order.

    Calling it with an empty queue raises ``ScriptedModelError``; ``assert_consumed`` raises
    when replies are left over. Used as a context manager it checks both on exit.
    """

    def __init__(
        self, replies: Iterable[ScriptedReply] = (), *, name: str = "test:scripted"
    ) -> None:
        self._queue: deque[ScriptedReply] = deque(replies)
        self._name = name
        self.calls: list[ScriptedCall] = []
        self._sized: tuple[tuple[Message, ...], int] = ((), 0)
        """The last prompt and how many characters its messages' contents hold."""

    @property
    def name(self) -> str:
        return self._name

    @property
    def remaining(self) -> int:
        return len(self._queue)

    def push(self, *replies: ScriptedReply) -> None:
        self._queue.extend(replies)

    def assert_consumed(self) -> None:
        if self._queue:
            raise ScriptedModelError(
                f"scripted model: {len(self._queue)} queued repl"
                f"{'y was' if len(self._queue) == 1 else 'ies were'} never requested; "
                f"next: {self._queue[0]!r:.200}"
            )

    def __enter__(self) -> ScriptedModel:
        return self

    def __exit__(self, exc_type: object, exc: object, tb: object) -> None:
        if exc_type is None:
            self.assert_consumed()

    async def complete(
        self,
        messages: Sequence[Message],
        settings: ModelSettings | None = None,
        *,
        tools: Sequence[ToolSpec] = (),
        output_schema: dict[str, Any] | None = None,
    ) -> ModelResponse:
        # a list's slice is a plain list, which becomes a tuple at C speed (a list subclass,
        # such as an agent's AppendOnlyList history, is read item by item)
        prompt = tuple(messages[:] if isinstance(messages, list) else messages)
        call = ScriptedCall(prompt, settings, tuple(tools), output_schema)
        self.calls.append(call)
        if not self._queue:
            last = messages[-1].content if messages else ""
            raise ScriptedModelError(
                f"scripted model: unexpected call #{len(self.calls)} (queue is empty); "
                f"last message: {last!r:.200}"
            )
        reply = self._queue.popleft()
        response = self._to_response(reply, output_schema)
        if response.usage == Usage():
            usage = Usage(
                _estimate_chars(self._prompt_chars(prompt)), _estimate_tokens(response.text)
            )
            response = ModelResponse(
                text=response.text,
                tool_calls=response.tool_calls,
                parsed=response.parsed,
                usage=usage,
                model=response.model or self._name,
                finish_reason=response.finish_reason,
            )
        return response

    def _prompt_chars(self, prompt: tuple[Message, ...]) -> int:
        """The length of the prompt's contents joined: counted for the messages that follow
        the last prompt's when this one begins with it (a conversation sent again with a
        turn more, whose earlier messages need no second count), else for all of them."""
        last, chars = self._sized
        size = len(last)
        if size and len(prompt) >= size and prompt[:size] == last:
            chars += sum([len(m.content) for m in prompt[size:]])
        else:
            chars = sum([len(m.content) for m in prompt])
        self._sized = (prompt, chars)
        return chars

    def _to_response(
        self, reply: ScriptedReply, output_schema: dict[str, Any] | None
    ) -> ModelResponse:
        if isinstance(reply, ModelResponse):
            return reply
        if isinstance(reply, ToolCall):
            return ModelResponse(tool_calls=(reply,), finish_reason="tool_calls")
        if isinstance(reply, tuple):
            return ModelResponse(tool_calls=reply, finish_reason="tool_calls")
        if isinstance(reply, str):
            if output_schema is not None:
                try:
                    parsed = jsoncodec.loads(reply)
                except jsoncodec.JSONDecodeError as exc:
                    raise ScriptedModelError(
                        f"scripted model: call #{len(self.calls)} asked for structured output "
                        f"but the queued reply is not JSON: {reply!r:.200}"
                    ) from exc
                self._check_schema(parsed, output_schema)
                return ModelResponse(text=reply, parsed=parsed)
            return ModelResponse(text=reply)
        if output_schema is None:
            raise ScriptedModelError(
                f"scripted model: call #{len(self.calls)} asked for text but the queued reply "
                f"is structured: {reply!r:.200}"
            )
        self._check_schema(reply, output_schema)
        return ModelResponse(text=jsoncodec.dumps(reply, spaced=True), parsed=reply)

    def _check_schema(self, value: Any, schema: dict[str, Any]) -> None:
        import jsonschema

        errors = sorted(
            jsonschema.Draft202012Validator(schema).iter_errors(value), key=lambda e: list(e.path)
        )
        if errors:
            err = errors[0]
            path = "/".join(str(p) for p in err.path) or "(root)"
            raise ScriptedModelError(
                f"scripted model: queued reply for call #{len(self.calls)} does not match the "
                f"requested schema at {path}: {err.message}"
            )
