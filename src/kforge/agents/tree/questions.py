"""What the tree agent may ask a person and hand to a subagent.

A question is asked only when it is one (it opens with a question word, or one comes within
its first words and it ends with "?"; a statement is never turned into a question by adding
"?"), when it asks for something the request and the answers so far do not state, and when it
does not restate the request. A subagent's request must not restate its parent's, and must
ask for something the parent's request does not say (or be one of the parts it names). A request
that names its parts ("Compare A with B; explain C; and how to D", a list, several questions)
is split into them when the model's split is unusable or leaves one of them out.
"""

from __future__ import annotations

import re

from kforge.rag.textcheck import key_terms

__all__ = [
    "adds_to",
    "asked_question",
    "covers",
    "explicit_parts",
    "new_terms",
    "restates",
    "same_task",
    "task_text",
]

_WH_WORDS = "what which who whom whose when where why how"
_AUXILIARIES = (
    "do does did is are was were am can could should would will may might shall have has had"
)
_OPENERS = frozenset(f"{_WH_WORDS} {_AUXILIARIES}".split())
"""Words a question opens with."""
_WH = frozenset(_WH_WORDS.split())
"""Question words that may come a few words in ("Roughly how many guests?")."""
_LEAD = frozenset(("and", "but", "so", "also", "then", "or"))
_ITEM = re.compile(r"^\s*(?:[-*•]|\d{1,2}[.)])\s+(.*\S)")
_CONNECTIVE = re.compile(r"^(?:and|also|then|plus|finally|as well as)\s+", re.I)
_TRANSCRIPT = re.compile(r"\b[QA]:")
_MAX_CHARS = 200


def _words(text: str) -> list[str]:
    return re.findall(r"[A-Za-z][A-Za-z'-]*", text)


def asked_question(text: str) -> str:
    """``text`` tidied when it is one question a person can answer, else ""."""
    text = " ".join(str(text).split()).strip(" -*\"'")
    text = re.sub(r"^(\d+[.)]\s*)+", "", text)
    words = [w.lower() for w in _words(text)]
    if len(words) < 3 or len(set(words)) < 3 or len(text) > _MAX_CHARS:
        return ""
    if text.count("?") > 1 or _TRANSCRIPT.search(text) or "?" in text.rstrip("?"):
        return ""
    opening = words[1:] if words[0] in _LEAD else words
    if opening[0] in _OPENERS:
        return text if text.endswith("?") else text.rstrip(".!:;, ") + "?"
    if text.endswith("?") and _WH & set(opening[:4]):
        return text
    return ""


def restates(text: str, request: str) -> bool:
    """True when ``text`` says nothing ``request`` does not, and most of what it says."""
    own, theirs = set(key_terms(text)), set(key_terms(request))
    if not own or not theirs:
        return not own
    return own <= theirs and len(own) * 3 >= len(theirs) * 2


def same_task(one: str, other: str, request: str) -> bool:
    """True when two subquestions of ``request`` add the same to it (or, adding nothing, are
    the same part of it)."""
    given, mine, theirs = set(key_terms(request)), set(key_terms(one)), set(key_terms(other))
    return mine - given == theirs - given and (bool(mine - given) or mine == theirs)


def new_terms(question: str, known: str) -> list[str]:
    """The terms of ``question`` that ``known`` (the request and the answers) does not hold:
    what the question asks for that is not already given."""
    given = set(key_terms(known))
    return [t for t in key_terms(question) if t not in given and not t.isdigit()]


def adds_to(task: str, request: str, parts: list[str]) -> bool:
    """True when ``task`` (a subagent's request) is worth a subagent: it does not restate
    ``request``, and it asks for something the request does not say or is one of the ``parts``
    the request names ("What is the budget?" of a request that gives the budget adds nothing)."""
    if restates(task, request):
        return False
    return bool(new_terms(task, request)) or any(covers([task], [part]) for part in parts)


def covers(tasks: list[str], parts: list[str]) -> bool:
    """True when each of ``parts`` has a task among ``tasks`` that speaks of all of it."""
    terms = [set(key_terms(task)) for task in tasks]
    return all(any(set(key_terms(part)) <= held for held in terms) for part in parts)


def task_text(text: str) -> str:
    """A subagent's request tidied (as written: a task stays a task), or "" when unusable."""
    text = " ".join(str(text).split()).strip(" -*\"'")
    text = re.sub(r"^(\d+[.)]\s*)+", "", text)
    if len(_words(text)) < 2 or not key_terms(text) or len(text) > _MAX_CHARS:
        return ""
    if _TRANSCRIPT.search(text):
        return ""
    return text[0].upper() + text[1:]


def explicit_parts(request: str, limit: int) -> list[str]:
    """The parts ``request`` names itself (list items, ';'-separated parts, or several
    questions), at most ``limit`` (the last holds the rest); [] when it names fewer than two."""
    items = [m.group(1) for m in map(_ITEM.match, request.splitlines()) if m]
    flat = " ".join(request.split())
    parts = items if len(items) >= 2 else re.split(r"\s*;\s*", flat)
    if len(parts) < 2:
        parts = re.findall(r"[^?.!]+\?", flat)
    tidy = [task_text(_CONNECTIVE.sub("", p.strip().rstrip("."))) for p in parts]
    kept = [p for p in tidy if p]
    if len(kept) < 2 or limit < 2:
        return []
    if len(kept) > limit:
        kept = [*kept[: limit - 1], "; ".join(kept[limit - 1 :])]
    return kept
