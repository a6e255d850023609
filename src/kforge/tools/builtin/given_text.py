"""Replies about a text a tool is given (``explain_text_with_context``,
``summarize_page_content``), written the way every answer from documents is: the given text is
cut into numbered passages and ``kforge.rag.grounded.write_answer`` asks the model (when it
writes its own answers), cuts a loop, refuses echo, keeps only the sentences the passages
support, and otherwise quotes the text's own sentences."""

from __future__ import annotations

from collections.abc import Collection, Sequence

from kforge.llm.base import Model, answer_style
from kforge.llm.types import Message, ModelResponse, ModelSettings
from kforge.rag.grounded import GroundedAnswer, write_answer
from kforge.rag.textcheck import split_sentences
from kforge.rag.types import Chunk

__all__ = ["GENERATED", "answer_about", "plain_text", "text_passages"]

GENERATED = ("generative", "generative_retry")
"""Paths of a ``GroundedAnswer`` whose text the model wrote and the checks kept."""
_PASSAGE_CHARS = 850
"""Under the length at which ``write_answer`` shortens a passage in its prompt."""


def text_passages(name: str, text: str, *, first_index: int = 0) -> list[Chunk]:
    """``text`` as passages of whole sentences, each short enough to be shown whole."""
    pieces: list[str] = []
    for sentence in split_sentences(" ".join(text.split())):
        if pieces and len(pieces[-1]) + 1 + len(sentence) <= _PASSAGE_CHARS:
            pieces[-1] += " " + sentence
        else:
            pieces.append(sentence)
    chunks, offset = [], 0
    for number, piece in enumerate(pieces, first_index):
        end = offset + len(piece)
        chunk_id, source = f"{name}-{number}", f"given:{name}"
        chunks.append(Chunk(chunk_id, source, name, name, "", None, offset, end, piece, number))
        offset = end + 1
    return chunks


async def answer_about(
    model: Model,
    question: str,
    passages: Sequence[Chunk],
    *,
    system: str,
    instructions: str = "",
    max_sentences: int = 3,
    exclude: Collection[str] = (),
) -> GroundedAnswer:
    """The checked answer to ``question`` from ``passages``; extractive when the model does
    not write its own answers or its reply fails the checks."""

    async def write(prompt: list[Message], settings: ModelSettings) -> ModelResponse:
        return await model.complete(prompt, settings)

    return await write_answer(
        question,
        passages,
        write,
        style=answer_style(model),
        system=system,
        instructions=instructions,
        max_sentences=max_sentences,
        exclude=exclude,
    )


def plain_text(answer: GroundedAnswer, max_sentences: int) -> str:
    """The answer's sentences without citation markers (all its sources are the given text)."""
    return " ".join(segment.text for segment in answer.segments[:max_sentences])
