"""Agentic retrieval: search, grade, rewrite when most results miss, else give up.

The loop: search the query; grade each hit; if at least ``relevance_threshold`` of the hits
are relevant, stop. Otherwise rewrite the query (at most ``max_rewrites`` times) and search
again. When every attempt is used, the relevant hits found along the way are kept; if there
are none, the result says to fall back to a model-only answer and carries the disclaimer.
If grading itself fails for every hit of an attempt, the hits are returned ungraded as
``unverified_results`` with a disclaimer: a failing grader must not hide what was found.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

from kforge.llm.types import ModelSettings
from kforge.rag.complete import CompleteFn
from kforge.rag.focus import Focus
from kforge.rag.grading import GradedResult, grade_results
from kforge.rag.rewrite import fallback_rewrite, rewrite_query
from kforge.rag.types import Citation, SearchHit

__all__ = [
    "UNGRADED_DISCLAIMER",
    "RAGAttempt",
    "RAGConfig",
    "RAGResult",
    "SearchFn",
    "StatusCallback",
    "agentic_search",
    "fallback_disclaimer",
]

SearchFn = Callable[[str, int], "Sequence[SearchHit] | Awaitable[Sequence[SearchHit]]"]
"""``search(query, k)``, e.g. ``corpus.search``; may be async (e.g. a journaled tool call)."""
StatusCallback = Callable[[str, dict[str, Any]], None]
"""``on_status(event, details)`` with events ``search``, ``graded``, ``rewrite``, ``fallback``."""


@dataclass(frozen=True, slots=True)
class RAGConfig:
    max_rewrites: int = 2
    relevance_threshold: float = 0.5
    """Stop rewriting once at least this share of the hits is relevant."""
    k: int = 5
    """Hits retrieved and graded per attempt."""
    search_attempts: int = 2
    """Tries per search call before the search counts as failed (seed: retry once)."""
    grade_settings: ModelSettings | None = None
    rewrite_settings: ModelSettings | None = None
    lexical: bool = False
    """Grade by the question's key terms and rewrite without the model (for small models)."""

    def __post_init__(self) -> None:
        if self.max_rewrites < 0:
            raise ValueError(f"max_rewrites must be >= 0 (got {self.max_rewrites})")
        if not 0.0 <= self.relevance_threshold <= 1.0:
            raise ValueError(
                f"relevance_threshold must be between 0 and 1 (got {self.relevance_threshold})"
            )
        if self.k < 1:
            raise ValueError(f"k must be at least 1 (got {self.k})")
        if self.search_attempts < 1:
            raise ValueError(f"search_attempts must be at least 1 (got {self.search_attempts})")


@dataclass(frozen=True, slots=True)
class RAGAttempt:
    """One search of the loop and the grades of what it found."""

    query: str
    graded: tuple[GradedResult, ...]
    error: str = ""
    """Why the search failed, when it did."""

    @property
    def relevant_share(self) -> float:
        return sum(g.relevant for g in self.graded) / len(self.graded) if self.graded else 0.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "query": self.query,
            "graded": [g.to_dict() for g in self.graded],
            "error": self.error,
        }


@dataclass(frozen=True, slots=True)
class RAGResult:
    query: str
    relevant_results: tuple[GradedResult, ...]
    """Hits graded relevant, from every attempt, without repeats: the only citable sources."""
    query_history: tuple[str, ...]
    """The original query, then each rewrite."""
    attempts: tuple[RAGAttempt, ...] = ()
    fallback_used: bool = False
    """True when nothing relevant was found: answer from the model alone, with the disclaimer."""
    disclaimer: str | None = None
    unverified_results: tuple[SearchHit, ...] = ()
    """Hits that could not be graded because grading failed; usable, never cited."""

    @property
    def rewrites(self) -> int:
        return len(self.query_history) - 1

    def citations(self) -> list[Citation]:
        """Numbered citations ``[1]..[n]`` of the relevant results, in order."""
        return [Citation.from_chunk(i, g.hit.chunk) for i, g in enumerate(self.relevant_results, 1)]

    def to_dict(self) -> dict[str, Any]:
        return {
            "query": self.query,
            "relevant_results": [g.to_dict() for g in self.relevant_results],
            "query_history": list(self.query_history),
            "attempts": [a.to_dict() for a in self.attempts],
            "fallback_used": self.fallback_used,
            "disclaimer": self.disclaimer,
            "unverified_results": [h.to_dict() for h in self.unverified_results],
        }


UNGRADED_DISCLAIMER = (
    "The passages below could not be checked for relevance ({error}); the answer may rest on "
    "passages that do not support it, so they are listed as unverified rather than cited."
)


def fallback_disclaimer(queries: Sequence[str], reason: str = "") -> str:
    tried = "; ".join(f"'{q}'" for q in queries)
    why = reason or f"no relevant passage was found in the documents (searched: {tried})"
    return (
        f"Not grounded in your documents: {why}. This answer comes from the model alone and "
        "cites no sources; verify it before relying on it."
    )


async def _search(
    search: SearchFn, query: str, k: int, attempts: int
) -> tuple[list[SearchHit], str]:
    error = ""
    for _ in range(attempts):
        try:
            found = search(query, k)
            if inspect.isawaitable(found):
                found = await found
            return list(found)[:k], ""
        except Exception as exc:  # a failing search backend is worked around, not fatal
            error = f"{type(exc).__name__}: {exc}"
    return [], error


async def agentic_search(
    query: str,
    search: SearchFn,
    complete: CompleteFn,
    *,
    context: str = "",
    config: RAGConfig | None = None,
    on_status: StatusCallback | None = None,
    focus: Focus | None = None,
) -> RAGResult:
    """Search with grading and query rewriting; see the module docstring for the loop.
    ``focus`` is the question's focus in the corpus searched (``kforge.rag.focus``, e.g.
    ``question_focus(query, CorpusStatistics.of(corpus))``); without it the question's terms
    weigh alike and only each passage's share of them is checked."""
    config = config or RAGConfig()
    notify = on_status or (lambda event, details: None)
    history = [query]
    attempts: list[RAGAttempt] = []
    relevant: dict[str, GradedResult] = {}
    current = query
    search_error = ""
    for attempt in range(config.max_rewrites + 1):
        hits, search_error = await _search(search, current, config.k, config.search_attempts)
        notify(
            "search",
            {"query": current, "attempt": attempt, "hits": len(hits), "error": search_error},
        )
        if search_error:
            attempts.append(RAGAttempt(current, (), search_error))
            break
        # graded against the question itself: a rewrite finds passages, it does not redefine
        # what is relevant
        graded = await grade_results(
            query,
            hits,
            complete,
            context=context,
            settings=config.grade_settings,
            lexical=config.lexical,
            focus=focus,
        )
        attempts.append(RAGAttempt(current, tuple(graded)))
        if graded and not any(g.graded for g in graded) and not relevant:
            notify("fallback", {"queries": list(history), "reason": "grading failed"})
            return RAGResult(
                query,
                (),
                tuple(history),
                tuple(attempts),
                False,
                UNGRADED_DISCLAIMER.format(error=graded[0].reasoning),
                tuple(hits),
            )
        for g in graded:
            if g.relevant and g.hit.chunk.id not in relevant:
                relevant[g.hit.chunk.id] = g
        share = attempts[-1].relevant_share
        notify(
            "graded",
            {"query": current, "relevant": sum(g.relevant for g in graded), "total": len(graded)},
        )
        if graded and share >= config.relevance_threshold:
            break
        if attempt == config.max_rewrites:
            break
        if config.lexical:
            rewritten = fallback_rewrite(query, history)
        else:
            rewritten = await rewrite_query(
                query, graded, complete, tried=history, settings=config.rewrite_settings
            )
        notify("rewrite", {"from": current, "to": rewritten, "attempt": attempt + 1})
        history.append(rewritten)
        current = rewritten
    if relevant:
        return RAGResult(query, tuple(relevant.values()), tuple(history), tuple(attempts))
    reason = f"the document search failed ({search_error})" if search_error else ""
    disclaimer = fallback_disclaimer(history, reason)
    notify("fallback", {"queries": list(history), "reason": reason or "no relevant passages"})
    return RAGResult(query, (), tuple(history), tuple(attempts), True, disclaimer)
