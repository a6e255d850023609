"""What a "what happens when ...?" question asks for: what follows, as a manual says it ("If
the timeout is reached, ... the request is dropped and a 503 error is returned")."""

from __future__ import annotations

import re
from collections.abc import Collection

from kforge.rag.terms import unit_terms

__all__ = ["asks_what_happens", "states_consequence"]

_WHAT_HAPPENS = re.compile(
    r"\bwhat\s+(?:happens|will\s+happen|would\s+happen|occurs|does\s+\S+\s+do)\s+"
    r"(?:to\s+.{1,60}?\s+)?(?:if|when|once|after|whenever)\b"
    r"|\bwhat\s+(?:happens|will\s+happen|would\s+happen)\s+to\b",
    re.IGNORECASE,
)
_CONDITION = re.compile(r"^(?:If|When|Once|Whenever|As soon as|After|Should)\b([^,;]{3,})[,;]")
_OUTCOME = re.compile(
    r"\b(?:is|are|will be|gets|get|was|were)\s+(?:then\s+|\w+ly\s+)?"
    r"(?:dropped|returned|closed|rejected|discarded|aborted|killed|terminated|retried|ignored|"
    r"raised|sent|lost|removed|deleted|cancell?ed|stopped|reset|blocked|refused|truncated|"
    r"overwritten|skipped|thrown|logged|emitted|released|evicted|expired|redispatched)\b",
    re.IGNORECASE,
)


def asks_what_happens(question: str) -> bool:
    """True for "what happens if/when ...?" and "what happens to X ...?"."""
    return _WHAT_HAPPENS.search(question) is not None


def states_consequence(text: str, terms: Collection[str]) -> bool:
    """True when ``text`` says what follows a condition the question's ``terms`` speak of
    ("If the timeout is reached, ...", not "If unspecified, ...") or what is done to
    something ("... is dropped", "is returned")."""
    condition = _CONDITION.match(text)
    if condition is not None and unit_terms(condition.group(1)) & set(terms):
        return True
    return _OUTCOME.search(text) is not None
