"""Reading a learner's answers without a model: the knowledge state their calibration answers
show, and whether a check answer uses what the explanation said. Used with small models, whose
own judgement of an answer cannot be trusted, and wherever a model's reply is unusable."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from kforge.agents.common.naming import FUNCTION_WORDS, topic_name
from kforge.agents.understand.prompts import Assessment
from kforge.rag.analyze import STOPWORDS, tokenize
from kforge.rag.stem import porter_stem
from kforge.rag.textcheck import split_sentences

__all__ = ["LEVELS", "assess_answers", "grade_answer", "is_unsure", "merge_assessment"]

LEVELS = ("known", "partial", "unknown")
"""How well the learner knows a concept, best first."""

_UNSURE = re.compile(
    r"\b(don'?t know|do not know|no idea|not sure|unsure|dunno|no clue|never heard|nothing|"
    r"new to (it|this|me)|beginner|no experience)\b|^\s*(idk|\?+|-|none|no)\s*[.!]?\s*$",
    re.IGNORECASE,
)
MATCHED_TERMS = 2
"""Content words of one key fact a check answer must use to count as understood."""
SUPPORTED_SHARE = 0.5
"""The share of a check answer's content words that what the learner read must hold."""


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


def grade_answer(
    answer: str, explanation: str, question: str, passages: Sequence[str] = ()
) -> tuple[bool, str]:
    """Whether ``answer`` states a key fact of what was taught, with feedback naming it.

    The key facts are the explanation's sentences and the sentences of the passages it cites
    (``passages``) that speak of what the question asks. The answer passes when it shares at
    least two content words, beyond the question's own, with one key fact (its wording aside)
    and most of what it says is said there too, so a paraphrase passes and an answer about
    something else does not. Feedback quotes the fact rather than listing words."""
    asked = _terms(question)
    facts = _key_facts(explanation, passages, asked)
    if is_unsure(answer):
        return False, "No answer yet: " + _hint(facts)
    said = _terms(answer) - asked
    if not said:
        return False, "Your answer only repeats the question: " + _hint(facts)
    read = set().union(*(terms for _, terms in facts)) if facts else set()
    best, stated = max(((s, len(said & t)) for s, t in facts), key=lambda f: f[1], default=("", 0))
    supported = len(said & read) / len(said)
    if stated >= MATCHED_TERMS and supported >= SUPPORTED_SHARE:
        return True, f'Right: the documents say "{best}"'
    if stated >= MATCHED_TERMS:
        return False, "Part of your answer is not in what you read: " + _hint(facts)
    return False, "Your answer misses what the explanation says: " + _hint(facts)


def _key_facts(
    explanation: str, passages: Sequence[str], asked: set[str]
) -> list[tuple[str, set[str]]]:
    """The explanation's sentences, then the passages' sentences that share a content word
    with the explanation or the question, each with its content words beyond the question's."""
    facts = [(s, _terms(s) - asked) for s in split_sentences(explanation)]
    topic = asked | _terms(explanation)
    for passage in passages:
        for sentence in split_sentences(passage):
            terms = _terms(sentence)
            if terms & topic and all(sentence != f for f, _ in facts):
                facts.append((sentence, terms - asked))
    return [(s, t) for s, t in facts if t]


def _terms(text: str) -> set[str]:
    return {porter_stem(w) for w in tokenize(text) if w not in FUNCTION_WORDS} - _STOP_STEMS


_STOP_STEMS = frozenset(porter_stem(w) for w in STOPWORDS)


def _hint(facts: list[tuple[str, set[str]]]) -> str:
    return f'read again: "{facts[0][0]}"' if facts else "read the explanation again."


def merge_assessment(state: dict[str, Any], reply: Assessment) -> dict[str, Any]:
    """The model's assessment where it names usable concepts; the answers' reading elsewhere."""
    merged = {level: list(state.get(level, [])) for level in LEVELS}
    for level in LEVELS:
        for name in (n for n in (topic_name(x) for x in getattr(reply, level)) if n):
            for other in LEVELS:
                if name in merged[other]:
                    merged[other].remove(name)
            merged[level].append(name)
    misconceptions = [" ".join(m.split()) for m in reply.misconceptions if len(m.split()) >= 2]
    goal = " ".join(reply.goal.split())
    return {
        **merged,
        "misconceptions": misconceptions or list(state.get("misconceptions", [])),
        "goal": goal if len(goal.split()) >= 3 else state.get("goal", ""),
    }
