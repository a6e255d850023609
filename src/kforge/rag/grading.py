"""Grade search results one by one: relevant or not, with a confidence and a reason.

``confidence`` is how likely the passage is to be relevant, so a verdict and its confidence
never disagree: ``relevant`` comes with 0.5 or more, ``not_relevant`` with less. The model says
how sure it is of its verdict; its verdict is checked against the question's focus
(``kforge.rag.focus``): a passage holding little of it is not relevant, one holding (nearly)
all of it is not graded away, a verdict the model is unsure of is settled by it, and no passage
is relevant unless the relevant ones together hold it. ``grade_all_lexically`` grades by the
focus alone, for models too small to grade (no model call).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from kforge.llm.structured import complete_structured
from kforge.llm.types import Message, ModelSettings
from kforge.prompts import prompt_text
from kforge.rag.complete import CompleteFn, is_recoverable
from kforge.rag.focus import FOCUS_SHARE, PASSAGE_SHARE, Focus, passage_text, question_focus
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
"""A passage holding this share of the question's focus is relevant, whatever the model says."""


def _focus(query: str, focus: Focus | None) -> Focus:
    return focus if focus is not None else question_focus(query)


def term_coverage(
    query: str, hit: SearchHit, *, focus: Focus | None = None
) -> tuple[float, list[str]]:
    """The share of ``query``'s focus the passage (with its title and heading) holds, by
    weight, and the focus terms it holds."""
    held = _focus(query, focus).held(passage_text(hit.chunk))
    return _focus(query, focus).weight_of(held), [t.text for t in held]


def _lexical(hit: SearchHit, share: float, held: list[str], relevant: bool) -> GradedResult:
    confidence = 0.5 + share / 2 if relevant else min(share / 2, 0.49)
    reason = f"holds {len(held)} of the question's focus terms" + (
        f" ({', '.join(held)})" if held else ""
    )
    return GradedResult(hit, "relevant" if relevant else "not_relevant", confidence, reason)


def grade_lexically(
    query: str, hit: SearchHit, *, best_share: float = 1.0, focus: Focus | None = None
) -> GradedResult:
    """Relevant when the passage holds a good share of the question's focus: a quarter of it
    and half as much as the best passage found (``best_share``) holds; see
    ``kforge.rag.focus``. Alone (``best_share`` 1), that is half of the focus."""
    share, held = term_coverage(query, hit, focus=focus)
    need = max(PASSAGE_SHARE, best_share / 2)
    return _lexical(hit, share, held, bool(held) and share >= need - 1e-9)


def grade_all_lexically(
    query: str, hits: Sequence[SearchHit], *, focus: Focus | None = None
) -> list[GradedResult]:
    """Every hit graded by the question's focus, each measured against the best of them; none
    is relevant unless one of them, or two joined ones, hold the focus."""
    focus = _focus(query, focus)
    verdicts = focus.relevant([h.chunk for h in hits])
    graded = []
    for hit, relevant in zip(hits, verdicts, strict=True):
        share, held = term_coverage(query, hit, focus=focus)
        graded.append(_lexical(hit, share, held, relevant))
    return graded


def _settled(
    focus: Focus, hit: SearchHit, relevance: Relevance, certainty: float, reason: str
) -> GradedResult:
    """The model's verdict, and how sure it is of it, as a consistent grade.

    A passage that holds little of the question's focus is not relevant whatever the model
    said; one holding (nearly) all of it is relevant. A verdict the model is less than half
    sure of is no verdict: the focus decides.
    """
    held = focus.held(passage_text(hit.chunk))
    share = focus.weight_of(held)
    names = ", ".join(t.text for t in held)
    if focus.terms and relevance == "relevant" and share < PASSAGE_SHARE - 1e-9:
        lacks = focus.describe(focus.missing(passage_text(hit.chunk)))
        return GradedResult(
            hit,
            "not_relevant",
            min(0.49, share),
            f"lacks the question's focus ({lacks}); the model said: {reason}",
        )
    if relevance == "not_relevant" and share >= _CONTAINS_ANSWER:
        return GradedResult(
            hit,
            "relevant",
            max(0.5, share * 0.9),
            f"holds the question's focus ({names}); the model said: {reason}",
        )
    if certainty < 0.5:
        relevance = "relevant" if share >= FOCUS_SHARE else "not_relevant"
        reason = f"{reason} (unsure; decided by the focus terms it holds: {len(held)})"
        certainty = 0.5
    confidence = certainty if relevance == "relevant" else 1 - certainty
    confidence = max(confidence, 0.5) if relevance == "relevant" else min(confidence, 0.49)
    return GradedResult(hit, relevance, round(confidence, 4), reason)


def _together(focus: Focus, graded: list[GradedResult]) -> list[GradedResult]:
    """The grades, with every relevant one withdrawn when together they do not hold the
    focus (one passage alone, or two joined ones)."""
    relevant = [g.hit.chunk for g in graded if g.relevant]
    if not focus.terms or not relevant or focus.holds_any(relevant):
        return graded
    return [
        replace(
            g,
            relevance="not_relevant",
            confidence=min(g.confidence, 0.49),
            reasoning=f"the passages found do not hold the question's focus together; {g.reasoning}",
        )
        if g.relevant
        else g
        for g in graded
    ]


async def grade_result(
    query: str,
    hit: SearchHit,
    complete: CompleteFn,
    *,
    context: str = "",
    settings: ModelSettings | None = None,
    attempts: int = 2,
    focus: Focus | None = None,
) -> GradedResult:
    """Grade one hit, checked against the question's focus (``focus``, else the question's own
    terms weighed alike). A model failure is retried, then recorded as an ungraded,
    not-relevant result."""
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
        return _settled(
            _focus(query, focus), hit, grade.relevance, confidence, grade.reasoning.strip()
        )
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
    focus: Focus | None = None,
) -> list[GradedResult]:
    """Grade every hit, in order, one model call each (none when ``lexical``): exactly one
    grade per hit. ``focus`` is the question's focus in the corpus searched (see
    ``kforge.rag.focus``); without it the question's terms weigh alike."""
    focus = _focus(query, focus)
    if lexical:
        return grade_all_lexically(query, hits, focus=focus)
    graded = [
        await grade_result(query, hit, complete, context=context, settings=settings, focus=focus)
        for hit in hits
    ]
    return _together(focus, graded)
