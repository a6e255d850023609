"""Whether a sentence holds the kind of thing a question asks for: a number that counts or
measures for "how many", a command or code for "how do I", "X is ..." for "what is X", a
reason for "why", a date or the condition it happens on for "when", a place or a name for
"where" and "who", the items a comparison names."""

from __future__ import annotations

import re

from kforge.rag.quantities import counted_numbers, value_in_words
from kforge.rag.question import DATE, LOCATION, PROCEDURAL, Question, asked_noun, mentions

__all__ = ["holds_kind"]

_CONDITION_ASKED = re.compile(
    r"(?i)when (?:is|are|does|do|will|should|must|can)\b(?!.*\b(?:released|born|founded)\b)"
)
"""A "when" question in the present, about what happens on a condition ("When is the file
actually opened?"), not about a date ("When was it released?")."""
_CONDITION = re.compile(
    r"\b(?:until|unless|whenever|once|as soon as|only (?:when|if|after)|when|after|before)\b",
    re.IGNORECASE,
)
"""The condition a sentence says something happens on: "not actually opened until the
OpenFile instance is used", "is called when the connection closes"."""

_REASONING = re.compile(
    r"\b(?:because|since|so that|in order to|due to|as a result|therefore|thus|otherwise|"
    r"to (?:avoid|prevent|ensure|allow|make sure|keep)|prevents?|ensures?|allows?|caused? by)\b",
    re.IGNORECASE,
)
_DEFINING = re.compile(
    r"\b(?:is|are|was|were|refers to|means|denotes|represents|describes|contains|returns|"
    r"holds|gives|yields|"
    r"is called|are called|known as|stands for|defined as)\b|^[^:]{1,60}::? ",
    re.IGNORECASE,
)
_PURPOSE_ASKED = re.compile(r"\bfor\s*\?\s*$|\b(?:purpose|point) of\b", re.IGNORECASE)
_PURPOSE = re.compile(
    r"\b(?:helps?|lets?|allows?|enables?|used (?:to|for)|in order to|so that|useful|"
    r"purpose|designed to|intended|makes? it (?:easy|possible)|provides?|serves? to)\b",
    re.IGNORECASE,
)
_PROPER = re.compile(
    r"(?<!^)(?<![.!?] )\b[A-Z][\w'\u2019-]+(?:\s+(?:[A-Z][\w'\u2019-]+|of|de|the|and))*"
)


def holds_kind(text: str, question: Question) -> bool:
    """True when ``text`` holds the kind of thing ``question`` asks for."""
    kind = question.kind
    if kind == "quantity":  # a number that counts or measures, not one that names
        if asked_noun(question.text) in _ADDRESS_NOUNS:  # "which address ... by default"
            return _ADDRESS.search(text) is not None
        # or in words: "By default, the TemplateLookup size is unbounded.", "... tags. Default."
        found = next(counted_numbers(text, question.text), None)
        return found is not None or value_in_words(text, question.terms)
    if kind == "procedure":
        return PROCEDURAL.search(text) is not None or "\n" in text
    if kind == "definition":
        if _PURPOSE_ASKED.search(question.text):  # "what are signals for?": what they let do
            return _PURPOSE.search(text) is not None
        return _DEFINING.search(text) is not None
    if kind == "reason":
        return _REASONING.search(text) is not None
    if kind == "when":
        if _CONDITION_ASKED.match(question.text):  # "when is the file opened?": on what
            return _CONDITION.search(text) is not None or DATE.search(text) is not None
        return DATE.search(text) is not None
    if kind == "where":  # a place, or in documentation a folder or a path
        return _PROPER.search(text) is not None or LOCATION.search(text) is not None
    if kind == "who":
        return _PROPER.search(text) is not None
    if kind in ("choice", "comparison"):
        return sum(any(mentions(text, w) for w in _words_of(o)) for o in question.options) >= 1
    return True


_ADDRESS_NOUNS = frozenset({"address", "host", "hostname", "interface", "ip"})
"""What "which X" asks when X is a network address: an address, not a number."""
_ADDRESS = re.compile(
    r"(?<![\w.])(?:\d{1,3}(?:\.\d{1,3}){3}|localhost|\[?::1?\]?)(?![\w.]\w)", re.I
)
"""A network address: ``127.0.0.1``, ``0.0.0.0``, ``localhost``, ``::1``."""


def _words_of(option: str) -> list[str]:
    return [w for w in re.findall(r"[\w'\u2019-]+", option) if w[0].isupper() or len(w) > 3] or [
        option
    ]
