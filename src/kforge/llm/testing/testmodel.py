"""A schema-driven fake model: calls every tool with valid arguments, then answers.

For tests and property tests that must exercise tool plumbing without a real model. Arguments
and structured output are generated from the JSON Schemas, so they always validate.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

from kforge import jsoncodec
from kforge.llm.base import CompletionStreamer
from kforge.llm.estimate import estimate_messages_tokens, estimate_text_tokens
from kforge.llm.local.schema_values import valid_value
from kforge.llm.testing.scripted import ScriptedCall
from kforge.llm.types import (
    Message,
    ModelResponse,
    ModelSettings,
    ToolCall,
    ToolSpec,
    Usage,
)

__all__ = ["TestModel"]


class TestModel(CompletionStreamer):
    """Calls tools with generated arguments, then replies with text or generated structured output.

    On a call that offers tools and whose conversation does not end in tool results, it calls
    every tool in ``call_tools`` (all offered tools by default) once. Otherwise it answers:
    ``output`` (or a value generated from the output schema) when a schema is requested, else
    ``text`` (or a JSON summary of the tool results it has seen).
    """

    __test__ = False  # not a pytest test class

    def __init__(
        self,
        *,
        call_tools: Literal["all"] | Sequence[str] = "all",
        text: str | None = None,
        output: Any = None,
        seed: int = 0,
        name: str = "test:model",
    ) -> None:
        self._call_tools = call_tools
        self._text = text
        self._output = output
        self._seed = seed
        self._name = name
        self.calls: list[ScriptedCall] = []

    @property
    def name(self) -> str:
        return self._name

    def _selected(self, tools: Sequence[ToolSpec]) -> list[ToolSpec]:
        if self._call_tools == "all":
            return list(tools)
        wanted = set(self._call_tools)
        return [t for t in tools if t.name in wanted]

    async def complete(
        self,
        messages: Sequence[Message],
        settings: ModelSettings | None = None,
        *,
        tools: Sequence[ToolSpec] = (),
        output_schema: dict[str, Any] | None = None,
    ) -> ModelResponse:
        self.calls.append(ScriptedCall(tuple(messages), settings, tuple(tools), output_schema))
        call_number = len(self.calls)
        answering = bool(messages) and messages[-1].role == "tool"
        selected = self._selected(tools)
        if selected and not answering:
            calls = tuple(
                ToolCall(
                    name=tool.name,
                    arguments=valid_value(
                        tool.input_schema or {"type": "object"},
                        seed=self._seed + call_number * 101 + i,
                    ),
                    id=f"test_call_{call_number}_{i}",
                )
                for i, tool in enumerate(selected)
            )
            out_tokens = sum(
                estimate_text_tokens(jsoncodec.dumps(c.arguments, spaced=True)) for c in calls
            )
            return ModelResponse(
                tool_calls=calls,
                usage=Usage(estimate_messages_tokens(messages), out_tokens),
                model=self._name,
                finish_reason="tool_calls",
            )
        parsed: Any = None
        if output_schema is not None:
            parsed = (
                self._output
                if self._output is not None
                else valid_value(output_schema, seed=self._seed + call_number)
            )
            text = jsoncodec.dumps(parsed, spaced=True)
        elif self._text is not None:
            text = self._text
        else:
            text = self._summary(messages)
        return ModelResponse(
            text=text,
            parsed=parsed,
            usage=Usage(estimate_messages_tokens(messages), estimate_text_tokens(text)),
            model=self._name,
        )

    @staticmethod
    def _summary(messages: Sequence[Message]) -> str:
        names = {c.id: c.name for m in messages for c in m.tool_calls}
        results = {
            m.name or names.get(m.tool_call_id or "", "tool"): m.content
            for m in messages
            if m.role == "tool"
        }
        return jsoncodec.dumps(results, spaced=True) if results else "success (no tool calls)"
