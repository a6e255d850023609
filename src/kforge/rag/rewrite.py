"""Rewrite a search query that found mostly irrelevant passages; the rewrite always differs."""

from __future__ import annotations

import re
from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict, Field

from kforge.llm.structured import complete_structured
from kforge.llm.types import Message, ModelSettings
from kforge.prompts import prompt_text
from kforge.rag.analyze import STOPWORDS, tokenize
from kforge.rag.complete import CompleteFn, is_recoverable
from kforge.rag.focus import question_focus
from kforge.rag.grading import GradedResult

__all__ = ["Rewrite", "fallback_rewrite", "focus_query", "normalize_query", "rewrite_query"]


class Rewrite(BaseModel):
    """The model's new search query."""

    model_config = ConfigDict(extra="forbid")

    query: str = Field(min_length=1, max_length=300)


_SYSTEM = prompt_text("QUERY_REWRITE")
_SETTINGS = ModelSettings(temperature=0.0, max_tokens=80)
_BROADENERS = ("overview", "explained", "background", "examples", "definition")


def normalize_query(query: str) -> str:
    """Lower case, words only: two queries that normalize alike search alike."""
    return " ".join(tokenize(query))


def _is_new(candidate: str, tried: Sequence[str]) -> bool:
    norm = normalize_query(candidate)
    return bool(norm) and all(norm != normalize_query(t) for t in tried)


def focus_query(question: str) -> str:
    """The question's focus terms in its order (identifiers whole): ``fs.link`` for "What does
    fs.link() do?"."""
    return " ".join(t.text for t in question_focus(question).terms)


def fallback_rewrite(original: str, tried: Sequence[str]) -> str:
    """A rewrite made without a model: the question's focus terms, then its keywords, then fewer
    keywords, then a broadening word.

    Always returns a query that differs from every query in ``tried``.
    """
    words = [w for w in tokenize(original) if w not in STOPWORDS]
    candidates = [focus_query(original), " ".join(words)]
    candidates += [" ".join(words[:n]) for n in range(len(words) - 1, 1, -1)]
    base = " ".join(words) or original.strip() or "overview"
    candidates += [f"{base} {extra}" for extra in _BROADENERS]
    for candidate in candidates:
        if _is_new(candidate, tried):
            return candidate
    n = 2
    while not _is_new(f"{base} {n}", tried):
        n += 1
    return f"{base} {n}"


def _prompt(original: str, graded: Sequence[GradedResult], tried: Sequence[str]) -> list[Message]:
    lines = [f"Original question: {original}", "Queries already tried (do not repeat them):"]
    lines += [f"- {q}" for q in tried]
    misses = [g for g in graded if not g.relevant][:5]
    if misses:
        lines.append("Passages it found, and why they did not help:")
        for g in misses:
            heading = g.hit.chunk.heading or g.hit.chunk.title
            lines.append(f"- {g.hit.chunk.file} ({heading}): {g.reasoning[:200]}")
    return [Message.system(_SYSTEM), Message.user("\n".join(lines))]


async def rewrite_query(
    original: str,
    graded: Sequence[GradedResult],
    complete: CompleteFn,
    *,
    tried: Sequence[str] = (),
    settings: ModelSettings | None = None,
) -> str:
    """A new query for ``original`` that differs from it and from every query in ``tried``.

    When the model fails, or repeats a query already tried, a keyword rewrite is used instead.
    """
    history = [original, *[t for t in tried if t != original]]
    try:
        rewrite = await complete_structured(
            complete,
            _prompt(original, graded, history),
            Rewrite,
            settings or _SETTINGS,
            attempts=1,
            what="rewriting a search query",
        )
    except Exception as exc:
        if not is_recoverable(exc):
            raise
        return fallback_rewrite(original, history)
    candidate = re.sub(r"\s+", " ", rewrite.query).strip().strip('"')
    return candidate if _is_new(candidate, history) else fallback_rewrite(original, history)
