"""Reading a learner's answers without a model: the knowledge state their calibration answers
show, and whether a check answer uses what the explanation said. Used with small models, whose
own judgement of an answer cannot be trusted, and wherever a model's reply is unusable."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from kforge.rag.analyze import tokenize
from kforge.rag.stem import porter_stem
from kforge.rag.textcheck import key_terms

__all__ = ["assess_answers", "grade_answer", "is_unsure"]

_UNSURE = re.compile(
    r"\b(don'?t know|do not know|no idea|not sure|unsure|dunno|no clue|never heard|nothing|"
    r"new to (it|this|me)|beginner|no experience)\b|^\s*(idk|\?+|-|none|no)\s*[.!]?\s*$",
    re.IGNORECASE,
)
MATCHED_TERMS = 2
"""Key terms of the explanation a check answer must use to count as understood."""


def is_unsure(answer: str) -> bool:
    """The learner says they do not know (or gives no answer)."""
    return not answer.strip() or bool(_UNSURE.search(answer))


def assess_answers(
    concepts: Sequence[str], questions: Sequence[dict[str, Any]], previous: dict[str, Any]
) -> dict[str, Any]:
    """The knowledge state the answers show: a concept the learner explains in a few words of
    their own is ``partial`` (never ``known`` on words alone), one they say they do not know is
    ``unknown``; the goal is their answer to the goal question. ``previous`` (the state so far)
    keeps what the answers do not speak to."""
    known = list(previous.get("known", []))
    partial = list(previous.get("partial", []))
    unknown = list(previous.get("unknown", []))
    background = " ".join(
        str(q.get("answer") or "") for q in questions if q["purpose"] == "background"
    )
    beginner = is_unsure(background) if background else False
    for concept in concepts:
        answers = [
            str(q.get("answer") or "")
            for q in questions
            if q.get("concept", "").lower() == concept.lower() and q.get("answer") is not None
        ]
        if not answers:
            level = "unknown" if beginner else _level_of(concept, known, partial, unknown)
        elif all(is_unsure(a) for a in answers) or max(len(a.split()) for a in answers) < 4:
            level = "unknown"
        else:
            level = "partial"
        for bucket in (known, partial, unknown):
            if concept in bucket:
                bucket.remove(concept)
        {"known": known, "partial": partial, "unknown": unknown}[level].append(concept)
    goals = [str(q.get("answer") or "") for q in questions if q["purpose"] == "goal"]
    goal = next((g for g in reversed(goals) if g.strip() and not is_unsure(g)), "")
    return {
        "known": known,
        "partial": partial,
        "unknown": unknown,
        "misconceptions": list(previous.get("misconceptions", [])),
        "goal": " ".join(goal.split()) or previous.get("goal", ""),
    }


def _level_of(concept: str, known: list[str], partial: list[str], unknown: list[str]) -> str:
    if concept in known:
        return "known"
    return "partial" if concept in partial else "unknown"


def grade_answer(answer: str, explanation: str, question: str) -> tuple[bool, str]:
    """Whether ``answer`` uses at least two key ideas of ``explanation`` (the words of the
    question alone do not count), with feedback naming them."""
    if is_unsure(answer):
        return False, "No answer yet: " + _ideas(explanation, set(), question)
    asked = set(key_terms(question))
    taught = set(key_terms(explanation)) - asked
    used = set(key_terms(answer)) & taught
    if len(used) >= MATCHED_TERMS:
        return True, f"Your answer uses the key ideas: {', '.join(_words(explanation, used))}."
    return False, "Your answer misses what the explanation says: " + _ideas(
        explanation, used, question
    )


def _ideas(explanation: str, used: set[str], question: str) -> str:
    missing = set(key_terms(explanation)) - used - set(key_terms(question))
    words = _words(explanation, missing)[:5]
    return f"look again at {', '.join(words)}." if words else "read the explanation again."


def _words(text: str, stems: set[str]) -> list[str]:
    """The words of ``text`` whose stems are in ``stems``, in order, once each."""
    out: list[str] = []
    seen: set[str] = set()
    for token in tokenize(text):
        stem = porter_stem(token)
        if stem in stems and stem not in seen:
            seen.add(stem)
            out.append(token)
    return out
