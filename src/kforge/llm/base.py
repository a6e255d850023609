"""The Model protocol: the one seam between agents and every language model."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import AsyncIterator, Awaitable, Sequence
from typing import Any, Protocol, runtime_checkable

from kforge.llm.config import AnswerStyle
from kforge.llm.types import (
    Message,
    ModelResponse,
    ModelSettings,
    StreamEvent,
    ToolSpec,
    word_deltas,
)

__all__ = ["CompleteFn", "CompletionStreamer", "Model", "StyledModel", "answer_style"]


class CompleteFn(Protocol):
    """A model call shaped like ``Model.complete``: a model's own, or ``RunContext.complete``
    (which journals it). Capabilities that call a model take one of these."""

    def __call__(
        self,
        messages: Sequence[Message],
        settings: ModelSettings | None = None,
        *,
        tools: Sequence[ToolSpec] = (),
        output_schema: dict[str, Any] | None = None,
    ) -> Awaitable[ModelResponse]: ...


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


class CompletionStreamer(ABC):
    """For models that answer all at once: ``stream`` completes, then yields the reply word by
    word and the full response last (the test models use it)."""

    @abstractmethod
    async def complete(
        self,
        messages: Sequence[Message],
        settings: ModelSettings | None = None,
        *,
        tools: Sequence[ToolSpec] = (),
        output_schema: dict[str, Any] | None = None,
    ) -> ModelResponse: ...

    async def stream(
        self,
        messages: Sequence[Message],
        settings: ModelSettings | None = None,
        *,
        tools: Sequence[ToolSpec] = (),
        output_schema: dict[str, Any] | None = None,
    ) -> AsyncIterator[StreamEvent]:
        response = await self.complete(messages, settings, tools=tools, output_schema=output_schema)
        for event in word_deltas(response):
            yield event


@runtime_checkable
class StyledModel(Protocol):
    """A model that says how agents should write answers from documents with it (the local
    and OpenAI-compatible models, from their provider's ``answer`` setting). A model that
    does not declare it writes its own answers."""

    @property
    def answer_style(self) -> AnswerStyle:
        """``extractive`` (quote the documents) or ``generative`` (the model writes, and its
        text is checked)."""
        ...


def answer_style(model: Model) -> AnswerStyle:
    """How agents should write answers from documents with ``model`` (see ``StyledModel``)."""
    if isinstance(model, StyledModel) and model.answer_style == "extractive":
        return "extractive"
    return "generative"
