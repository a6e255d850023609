"""The Model protocol: the one seam between agents and every language model."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from typing import Any, Protocol, runtime_checkable

from kforge.llm.types import Message, ModelResponse, ModelSettings, StreamEvent, ToolSpec

__all__ = ["Model"]


@runtime_checkable
class Model(Protocol):
    """A language model.

    ``complete`` returns text, native tool calls, or (when ``output_schema`` is given) a JSON
    value in ``parsed`` that validates against that schema. ``stream`` yields text deltas and
    ends with one event carrying the full response.
    """

    @property
    def name(self) -> str:
        """``provider:model``, e.g. ``local:smollm2`` or ``openai:gpt-4o-mini``."""
        ...

    async def complete(
        self,
        messages: Sequence[Message],
        settings: ModelSettings | None = None,
        *,
        tools: Sequence[ToolSpec] = (),
        output_schema: dict[str, Any] | None = None,
    ) -> ModelResponse: ...

    def stream(
        self,
        messages: Sequence[Message],
        settings: ModelSettings | None = None,
        *,
        tools: Sequence[ToolSpec] = (),
        output_schema: dict[str, Any] | None = None,
    ) -> AsyncIterator[StreamEvent]: ...
