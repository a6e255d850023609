"""Grade search results one by one: relevant or not, with a confidence and a reason.

``confidence`` is how likely the passage is to be relevant, so a verdict and its confidence
never disagree: ``relevant`` comes with 0.5 or more, ``not_relevant`` with less. The model says
how sure it is of its verdict; its verdict is checked against the question's key terms: a
passage holding (nearly) all of them is not graded away, and a verdict the model is unsure of
is settled by those terms. ``grade_lexically``
grades by the key terms alone, for models too small to grade (no model call).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from kforge.llm.structured import complete_structured
from kforge.llm.types import Message, ModelSettings
from kforge.prompts import prompt_text
from kforge.rag.analyze import analyze
from kforge.rag.complete import CompleteFn, is_recoverable
from kforge.rag.textcheck import key_terms
from kforge.rag.types import SearchHit

__all__ = [
    "Grade",
    "GradedResult",
    "Relevance",
    "grade_all_lexically",
    "grade_lexically",
    "grade_result",
    "grade_results",
    "term_coverage",
]

Relevance = Literal["relevant", "not_relevant"]


class Grade(BaseModel):
    """The model's verdict on one passage."""

    model_config = ConfigDict(extra="forbid")

    relevance: Relevance
    confidence: float = Field(ge=0, le=1)
    """How sure the model is of its verdict."""
    reasoning: str = Field(max_length=200)


_SYSTEM = prompt_text("RESULT_GRADING")
_PASSAGE_CHARS = 1500
_SETTINGS = ModelSettings(temperature=0.0, max_tokens=160)


@dataclass(frozen=True, slots=True)
class GradedResult:
    """A search hit with the model's verdict on it."""

    hit: SearchHit
    relevance: Relevance
    confidence: float
    reasoning: str
    graded: bool = True
    """False when the model could not grade it; the result then counts as not relevant."""

    @property
    def relevant(self) -> bool:
        return self.relevance == "relevant"

    def to_dict(self) -> dict[str, Any]:
        return {
            "hit": self.hit.to_dict(),
            "relevance": self.relevance,
            "confidence": self.confidence,
            "reasoning": self.reasoning,
            "graded": self.graded,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> GradedResult:
        return cls(
            hit=SearchHit.from_dict(data["hit"]),
            relevance="relevant" if data["relevance"] == "relevant" else "not_relevant",
            confidence=float(data["confidence"]),
            reasoning=data.get("reasoning", ""),
            graded=bool(data.get("graded", True)),
        )


def _prompt(query: str, hit: SearchHit, context: str) -> list[Message]:
    chunk = hit.chunk
    text = chunk.text if len(chunk.text) <= _PASSAGE_CHARS else chunk.text[:_PASSAGE_CHARS] + " …"
    parts = [f"Question: {query}"]
    if context:
        parts.append(f"Background: {context}")
    parts.append(f"Passage from {chunk.file} ({chunk.location}):\n<passage>\n{text}\n</passage>")
    return [Message.system(_SYSTEM), Message.user("\n\n".join(parts))]


_CONTAINS_ANSWER = 0.75
"""A passage holding this share of the question's key terms is relevant, whatever the model says."""
_LEXICAL_RELEVANT = 0.5
_LEXICAL_FLOOR = 0.25


def term_coverage(query: str, hit: SearchHit) -> tuple[float, list[str]]:
    """The share of ``query``'s key terms the passage (with its title and heading) holds, and
    the terms it holds."""
    terms = key_terms(query)
    if not terms:
        return 0.0, []
    chunk = hit.chunk
    present = set(analyze(f"{chunk.title} {chunk.heading} {chunk.text}"))
    held = [t for t in terms if t in present]
    return len(held) / len(terms), held


def grade_lexically(query: str, hit: SearchHit, *, best_share: float = 1.0) -> GradedResult:
    """Relevant when the passage (with its title and heading) holds a good share of the
    question's key terms: half of them, or half as many as the best passage found holds (a
    long question's words spread over the passages that answer it), and at least a quarter;
    or when its section heading holds two of them."""
    share, held = term_coverage(query, hit)
    section = hit.chunk.heading.split(" > ")[-1] if " > " in hit.chunk.heading else ""
    about = set(analyze(section)) & set(key_terms(query))
    need = max(_LEXICAL_FLOOR, min(_LEXICAL_RELEVANT, best_share / 2))
    # a section headed by the question's words is about it, whatever words its text uses
    relevant = (bool(held) and share >= need) or len(about) >= 2
    confidence = 0.5 + share / 2 if relevant else share / 2
    reason = f"holds {len(held)} of the question's key terms" + (
        f" ({', '.join(held)})" if held else ""
    )
    return GradedResult(hit, "relevant" if relevant else "not_relevant", confidence, reason)


def grade_all_lexically(query: str, hits: Sequence[SearchHit]) -> list[GradedResult]:
    """``grade_lexically`` for every hit, each measured against the best of them."""
    best = max((term_coverage(query, h)[0] for h in hits), default=1.0)
    return [grade_lexically(query, h, best_share=best) for h in hits]


def _settled(
    query: str, hit: SearchHit, relevance: Relevance, certainty: float, reason: str
) -> GradedResult:
    """The model's verdict, and how sure it is of it, as a consistent grade.

    A verdict the model is less than half sure of is no verdict: the question's key terms
    decide. A passage holding (nearly) all of them is relevant whatever the model said.
    """
    share, held = term_coverage(query, hit)
    enough = len(held) >= min(2, len(key_terms(query)))
    if relevance == "not_relevant" and share >= _CONTAINS_ANSWER and enough:
        return GradedResult(
            hit,
            "relevant",
            max(0.5, share * 0.9),
            f"holds the question's key terms ({', '.join(held)}); the model said: {reason}",
        )
    if certainty < 0.5:
        relevance = "relevant" if share >= _LEXICAL_RELEVANT and enough else "not_relevant"
        reason = f"{reason} (unsure; decided by the key terms it holds: {len(held)})"
        certainty = 0.5
    confidence = certainty if relevance == "relevant" else 1 - certainty
    confidence = max(confidence, 0.5) if relevance == "relevant" else min(confidence, 0.49)
    return GradedResult(hit, relevance, round(confidence, 4), reason)


async def grade_result(
    query: str,
    hit: SearchHit,
    complete: CompleteFn,
    *,
    context: str = "",
    settings: ModelSettings | None = None,
    attempts: int = 2,
) -> GradedResult:
    """Grade one hit. A model failure is retried, then recorded as an ungraded, not-relevant result."""
    last_error: BaseException | None = None
    for _ in range(max(1, attempts)):
        try:
            grade = await complete_structured(
                complete,
                _prompt(query, hit, context),
                Grade,
                settings or _SETTINGS,
                attempts=1,
                what="grading a search result",
            )
        except Exception as exc:
            if not is_recoverable(exc):
                raise
            last_error = exc
            continue
        confidence = min(1.0, max(0.0, grade.confidence))
        return _settled(query, hit, grade.relevance, confidence, grade.reasoning.strip())
    return GradedResult(
        hit, "not_relevant", 0.0, f"could not be graded: {last_error}", graded=False
    )


async def grade_results(
    query: str,
    hits: Sequence[SearchHit],
    complete: CompleteFn,
    *,
    context: str = "",
    settings: ModelSettings | None = None,
    lexical: bool = False,
) -> list[GradedResult]:
    """Grade every hit, in order, one model call each (none when ``lexical``): exactly one
    grade per hit."""
    if lexical:
        return grade_all_lexically(query, hits)
    return [
        await grade_result(query, hit, complete, context=context, settings=settings) for hit in hits
    ]
