"""Answer a question from graded passages with ``[n]`` citations, or from the model alone.

Only passages graded relevant are ever cited. When agentic search found nothing relevant, the
answer is the model's own and carries the fallback disclaimer.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from kforge.llm.types import Message, ModelResponse, ModelSettings
from kforge.prompts import prompt_text
from kforge.rag.agentic import (
    RAGConfig,
    RAGResult,
    SearchFn,
    StatusCallback,
    agentic_search,
    fallback_disclaimer,
)
from kforge.rag.complete import CompleteFn
from kforge.rag.grounded import AnswerStyle, write_answer
from kforge.rag.textcheck import cut_loop
from kforge.rag.types import Chunk, Citation

__all__ = ["RAGAnswer", "answer_from_result", "answer_question"]

_GROUNDED_SYSTEM = prompt_text("GROUNDED_ANSWER")
_MODEL_ONLY_SYSTEM = prompt_text("MODEL_ONLY_ANSWER")
_SETTINGS = ModelSettings(temperature=0.0, max_tokens=400)
_SOURCE_CHARS = 1200
_MARKER = re.compile(r"\[(\d+(?:\s*,\s*\d+)*)\]")


@dataclass(frozen=True, slots=True)
class RAGAnswer:
    question: str
    text: str
    """The answer; ``[n]`` markers refer to ``citations`` by number."""
    citations: tuple[Citation, ...]
    fallback_used: bool
    disclaimer: str | None
    retrieval: RAGResult
    short_answer: str = ""
    """The direct answer the text opens with; empty for a model-only or unverified answer."""

    def to_markdown(self) -> str:
        parts = [self.text.strip()]
        if self.disclaimer:
            parts.append(f"> {self.disclaimer}")
        if self.citations:
            parts.append("Sources:\n" + "\n".join(f"- {c.label}" for c in self.citations))
        unverified = self.retrieval.unverified_results
        if unverified:
            parts.append(
                "Unverified passages:\n"
                + "\n".join(f"- {h.chunk.file} ({h.chunk.location})" for h in unverified)
            )
        return "\n\n".join(parts)

    def to_dict(self) -> dict[str, Any]:
        return {
            "question": self.question,
            "text": self.text,
            "citations": [c.to_dict() for c in self.citations],
            "fallback_used": self.fallback_used,
            "disclaimer": self.disclaimer,
            "retrieval": self.retrieval.to_dict(),
            "short_answer": self.short_answer,
        }


def _tidy(text: str) -> str:
    """Close the gaps that removed markers leave before punctuation."""
    return re.sub(r"[ \t]+([.,;:!?])", r"\1", text).strip()


def _numbered(chunks: Sequence[Chunk]) -> str:
    blocks = []
    for i, chunk in enumerate(chunks, 1):
        text = chunk.text if len(chunk.text) <= _SOURCE_CHARS else chunk.text[:_SOURCE_CHARS] + " …"
        blocks.append(f"[{i}] {chunk.file} ({chunk.heading or chunk.title})\n{text}")
    return "\n\n".join(blocks)


async def answer_from_result(
    question: str,
    result: RAGResult,
    complete: CompleteFn,
    *,
    instructions: str = "",
    max_sources: int = 5,
    settings: ModelSettings | None = None,
    style: AnswerStyle = "generative",
) -> RAGAnswer:
    """Write the answer for an agentic-search result: from relevant passages through
    ``kforge.rag.grounded.write_answer`` (checked generation, or the passages' own sentences
    with ``style="extractive"``); from unverified passages or none, the model's text with its
    loop cut and no citation."""
    settings = settings or _SETTINGS
    extra = f"\n\n{instructions}" if instructions else ""
    relevant = [g.hit.chunk for g in result.relevant_results[:max_sources]]
    unverified = [h.chunk for h in result.unverified_results[:max_sources]]
    if relevant or unverified:
        sources = relevant or unverified
        messages = [
            Message.system(_GROUNDED_SYSTEM + extra),
            Message.user(f"Sources:\n\n{_numbered(sources)}\n\nQuestion: {question}"),
        ]
        if relevant:
            # the one answering path: checked generation, else the passages' own sentences
            async def write(prompt: list[Message], s: ModelSettings) -> ModelResponse:
                return await complete(prompt, replace(s, max_tokens=settings.max_tokens))

            written = await write_answer(
                question, relevant, write, style=style, system=_GROUNDED_SYSTEM + extra
            )
            return RAGAnswer(
                question,
                written.text,
                written.citations,
                False,
                result.disclaimer,
                result,
                written.short_answer,
            )
        response = await complete(messages, settings)
        text = _tidy(_MARKER.sub("", cut_loop(response.text)[0]))
        return RAGAnswer(question, text, (), False, result.disclaimer, result)
    messages = [
        Message.system(_MODEL_ONLY_SYSTEM + extra),
        Message.user(f"Question: {question}"),
    ]
    response = await complete(messages, settings)
    text = _tidy(_MARKER.sub("", cut_loop(response.text)[0]))
    disclaimer = result.disclaimer or fallback_disclaimer(result.query_history)
    return RAGAnswer(question, text, (), True, disclaimer, result)


async def answer_question(
    question: str,
    search: SearchFn,
    complete: CompleteFn,
    *,
    context: str = "",
    config: RAGConfig | None = None,
    instructions: str = "",
    answer_settings: ModelSettings | None = None,
    on_status: StatusCallback | None = None,
) -> RAGAnswer:
    """Agentic search for ``question``, then a cited answer (or a model-only one, disclaimed).

    ``instructions`` are added to the answering prompt (e.g. "reply with a short phrase").
    """
    result = await agentic_search(
        question, search, complete, context=context, config=config, on_status=on_status
    )
    return await answer_from_result(
        question, result, complete, instructions=instructions, settings=answer_settings
    )
