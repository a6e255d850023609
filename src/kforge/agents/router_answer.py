"""The router's answer: numbered passages in the prompt, ``[n]`` citations checked against them.

Only passages graded relevant are numbered, so every citation names a relevant passage (seed 001
Property 9); a marker that names no passage is removed from the answer.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from kforge.agents.router_schema import GENERATE_SYSTEM
from kforge.llm.types import Message
from kforge.rag.types import Chunk, Citation

__all__ = ["FALLBACK_NOTE", "answer_messages", "attach_citations"]

FALLBACK_NOTE = (
    "Note: no relevant passages were found in the documents, so this answer comes from the "
    "model's general knowledge and may be wrong."
)

_MARKER = re.compile(r"[ \t]?\[(\d{1,3})\]")
_PASSAGE_CHARS = 900


def answer_messages(question: str, history: str, passages: Sequence[Chunk]) -> list[Message]:
    parts = [history] if history else []
    if passages:
        numbered = []
        for number, chunk in enumerate(passages, 1):
            text = " ".join(chunk.text.split())
            if len(text) > _PASSAGE_CHARS:
                text = text[: _PASSAGE_CHARS - 1] + "…"
            numbered.append(f"[{number}] ({chunk.file}, {chunk.location})\n{text}")
        parts.append("Passages:\n" + "\n\n".join(numbered))
    else:
        parts.append("No passages: answer from general knowledge, briefly.")
    parts.append(f"Question: {question}")
    return [Message.system(GENERATE_SYSTEM), Message.user("\n\n".join(parts))]


def attach_citations(answer: str, passages: Sequence[Chunk]) -> tuple[str, list[Citation]]:
    """The answer without markers that name no passage, and the citations it makes (in order of
    first use). An answer that cites nothing lists every passage it was given as its sources."""
    cited: list[int] = []

    def keep(match: re.Match[str]) -> str:
        number = int(match.group(1))
        if 1 <= number <= len(passages):
            if number not in cited:
                cited.append(number)
            return match.group(0)
        return ""

    cleaned = _MARKER.sub(keep, answer).strip()
    numbers = cited or list(range(1, len(passages) + 1))
    return cleaned, [Citation.from_chunk(n, passages[n - 1]) for n in numbers]
