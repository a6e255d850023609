"""A research question broken into the parts it names, and the rules a category name obeys.

The parts come from the question's own words: its clauses ("what is X, how is it configured
and what are its limits"), a range ("from X to Y"), two items compared or a list of three or
more. Each part is asked as a question of its own under a category named from its words, so
no name is invented. A category proposed later must name something the question or the
documents speak of, and must not be a case, slug or join variant of one the tree has.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from kforge.agents.common.naming import topic_name
from kforge.agents.common.writing import question_from_title

__all__ = [
    "Part",
    "question_from_heading",
    "question_parts",
]

_QW = (
    r"what|how|why|when|where|which|who|whose|whom|is|are|was|were|can|could|does|do|did|"
    r"should|would|will|may|might"
)
_CLAUSE_BREAK = re.compile(
    rf"\s*(?:[;?]|,\s*(?:and|or|but)?|\s(?:and|or|but))\s+(?=(?:{_QW})\b)", re.IGNORECASE
)
_AUX = frozenset(
    re.findall(
        r"\w+", "is are was were do does did can could should would will may might must has have"
    )
)
_LEAD = frozenset(["i", "you", "we", "one", "a", "an", "the"])
_DEFINITION = re.compile(r"^(?:what|which|who)\s+(?:is|are|was|were)\s+(.+)$", re.IGNORECASE)
_PASSIVE = re.compile(r"^how\s+(?:is|are|was|were)\s+(.+?)\s+([a-z]+ed)$", re.IGNORECASE)
_OBJECT = re.compile(
    r"^what\s+(?:does|do|did|can|should)\s+(\S+(?:\s+\S+){0,2})\s+[a-z]+$", re.IGNORECASE
)
_RANGE = re.compile(r"\bfrom\s+(.+?)\s+to\s+(.+)$", re.IGNORECASE)
_PAIR = re.compile(
    r"\b(?:between|compare|comparing)\s+(.+?)\s+(?:and|with|to)\s+(.+)$"
    r"|^(?:.*?\b)?(\S+(?:\s+\S+){0,3}?)\s+(?:vs\.?|versus)\s+(.+)$"
    r"|^how\s+(?:do|does)\s+(.+?)\s+and\s+(.+?)\s+(?:differ|compare)\b",
    re.IGNORECASE,
)
MAX_PARTS = 5


@dataclass(frozen=True, slots=True, kw_only=True)
class Part:
    """One sub-question the user's question asks, with the category it goes under."""

    question: str
    category: str
    """Named from the question's own words (every content word occurs in the question)."""


def question_parts(question: str) -> list[Part]:
    """The sub-questions ``question`` is made of, in its order (the question itself when it
    has a single part)."""
    text = " ".join(question.split()).strip()
    clauses = [c.strip(" ,;?") for c in _CLAUSE_BREAK.split(text.rstrip("?"))]
    clauses = [c for c in clauses if len(c.split()) >= 2]
    if not clauses:
        return []
    subject = _subject(clauses[0])
    parts: list[Part] = []
    for clause in clauses:
        if subject and len(clauses) > 1:
            clause = _resolve_pronouns(clause, subject)
        for sub in _items(clause) or [clause]:
            asked = _as_question(sub)
            if asked and all(p.question.lower() != asked.lower() for p in parts):
                parts.append(Part(question=asked, category=_category(sub)))
    return parts[:MAX_PARTS]


def _subject(clause: str) -> str:
    """What a defining clause is about ("what is a worker thread" -> "a worker thread")."""
    match = _DEFINITION.match(clause)
    return match.group(1).strip() if match else ""


def _resolve_pronouns(clause: str, subject: str) -> str:
    """A later part asks about the first part's subject in full: "its limits" -> "the limits
    of X", "is it configured" -> "is X configured"."""
    clause = re.sub(
        r"\b(?:its|their)\s+([\w-]+)", lambda m: f"the {m.group(1)} of {subject}", clause
    )
    return re.sub(r"\b(?:it|they|them)\b", subject, clause)


def _items(clause: str) -> list[str]:
    """A clause that names a range, a pair or a list, as one clause per item (after the clause
    itself, which asks how they relate)."""
    words = clause.split()
    match = _RANGE.search(clause)
    if match and len(words) >= 4:
        return [clause, *(_definition(x) for x in match.groups())]
    match = _PAIR.search(clause)
    if match:
        x, y = (g for g in match.groups() if g)
        return [clause, _definition(x), _definition(y)]
    return _listed(clause)


def _listed(clause: str) -> list[str]:
    """ "How do A, B and C handle errors" -> the clause once per item; the items are as long
    as the ones between the commas."""
    pieces = re.split(r",\s+", clause)
    if len(pieces) < 2:
        return []
    oxford = re.match(r"(?:and|or)\s+(.+)$", pieces[-1])
    if oxford:
        middle, final = pieces[1:-1], oxford.group(1)
    else:
        split = re.split(r"\s+(?:and|or)\s+", pieces[-1], maxsplit=1)
        if len(split) < 2:
            return []
        middle, final = [*pieces[1:-1], split[0]], split[1]
    size = max(len(m.split()) for m in middle) if middle else 0
    if not middle or size > 4 or len(pieces[0].split()) < size:
        return []
    head, tail = pieces[0].split(), final.split()
    items = [" ".join(head[-size:]), *middle, " ".join(tail[:size])]
    return [" ".join([*head[:-size], item, *tail[size:]]) for item in items]


def _definition(item: str) -> str:
    item = item.strip(" ,.?")
    last = item.split()[-1].lower() if item.split() else ""
    plural = last.endswith("s") and not last.endswith(("ss", "is", "us")) and last.isalpha()
    return f"what {'are' if plural else 'is'} {item}"


def _as_question(clause: str) -> str:
    clause = " ".join(clause.split()).strip(" ,;.?")
    if len(clause.split()) < 2:
        return ""
    return clause[0].upper() + clause[1:] + "?"


def _category(clause: str) -> str:
    """A category name made of the clause's own words: X for "what is X" and "what does X
    verb", "Verbing X" for "how is X verbed", else the clause without its question words."""
    clause = " ".join(clause.split()).strip(" ,;.?")
    match = _DEFINITION.match(clause) or _OBJECT.match(clause)
    if match:
        name = match.group(1)
    elif (passive := _PASSIVE.match(clause)) is not None:
        noun, verb = passive.groups()
        name = f"{verb[:-2]}ing {noun}"  # terminated -> terminating, stopped -> stopping
    else:
        words = clause.split()
        while words and (words[0].lower() in _AUX or re.fullmatch(_QW, words[0].lower())):
            words.pop(0)
        while len(words) > 1 and words[0].lower() in _LEAD:
            words.pop(0)
        name = " ".join(words)
    name = re.sub(r"^(?:the|a|an)\s+", "", name, flags=re.IGNORECASE)
    name = topic_name(name) or name
    first = name.split()[0] if name.split() else ""
    return name[:1].upper() + name[1:] if first.isalpha() and first.islower() else name


def question_from_heading(heading: str) -> str:
    """A plain question about a passage's heading (its last level)."""
    return question_from_title(heading.split(" > ")[-1])
