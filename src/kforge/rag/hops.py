"""Hops between passages: which passage a title names, and which one an answer goes on to.

A title is matched as a name (as written; a one-word title not as a sentence's first word), so
"path" in a sentence does not bring in the page titled "Path". The answer hops from its leading
passage to one that it (or the question) names when that passage holds question terms the
leading one lacks, or is named beside the question's words ("... and Tyler in The Visit" for a
question about Tyler); of several, the one that does so most.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Sequence

from kforge.rag.candidates import NAME_PREFIX, Candidate
from kforge.rag.question import unit_terms
from kforge.rag.types import Chunk

__all__ = ["hop_to", "mentions_title", "named_passages", "passage_terms"]

_BESIDE = 0.5
"""Weight of the question's words beside a mention, against those the named passage holds."""
_CLAUSE_MARKS = ",;."


def _core_title(title: str) -> str:
    """``title`` without a trailing disambiguation such as "(1945 film)"."""
    return " ".join(re.sub(r"\s*\([^)]*\)\s*$", "", title).split())


def _title_spans(text: str, title: str) -> list[tuple[int, int]]:
    title = _core_title(title)
    if len(title) < 3:
        return []
    pattern = rf"(?<!\w){re.escape(title)}(?!\w)"
    # a title is a name: "Path" names the document, "path" is a word
    flags = 0 if any(ch.isupper() for ch in title) else re.IGNORECASE
    spans = [m.span() for m in re.finditer(pattern, text, flags)]
    if " " not in title:  # a one-word title opening a sentence may be a word ("Path segments")
        spans = [(a, b) for a, b in spans if not _opens_sentence(text, a)]
    return spans


def _opens_sentence(text: str, at: int) -> bool:
    before = text[:at].rstrip(" \t\"'(`*_[")
    return not before or before[-1] in ".!?:#>|\n-"


def mentions_title(text: str, title: str) -> bool:
    """True when ``text`` names the document titled ``title`` (without a trailing
    disambiguation such as "(1945 film)"): as written, and for a one-word title not as the
    first word of a sentence, where a name and a capitalised word look alike."""
    return bool(_title_spans(text, title))


def named_passages(text: str, passages: Sequence[Chunk]) -> list[int]:
    """The passages whose title ``text`` names, other than as part of a longer title it names
    ("Cold Comfort" inside "Operation Cold Comfort" names only the operation)."""
    spans = {i: _title_spans(text, p.title) for i, p in enumerate(passages)}
    longer = [span for found in spans.values() for span in found]
    return [
        i
        for i, found in spans.items()
        if any(
            not any(a <= start and end <= b and (a, b) != (start, end) for a, b in longer)
            for start, end in found
        )
    ]


def hop_to(
    top: Candidate,
    passages: Sequence[Chunk],
    named: Sequence[int],
    query: Sequence[str],
    idf: Callable[[str], float],
    owns: dict[int, list[Candidate]],
) -> int | None:
    """The passage the answer hops to from ``top``'s passage: one that it or the question
    names, that has a usable unit, and that holds question terms the leading passage lacks or
    that it names beside the question's words; of several, the one that does so most. None
    when there is no such passage."""
    lead = top.source
    anchor = passages[lead]
    own_name = _core_title(anchor.title).lower()
    # a namesake of the leading passage ("Revenge (album)" beside "Revenge (song)") is no hop
    linked = [
        i
        for i in dict.fromkeys(named_passages(anchor.text, passages) + list(named))
        if i != lead and owns.get(i) and _core_title(passages[i].title).lower() != own_name
    ]
    lacking = {t for t in query if not t.startswith(NAME_PREFIX)} - passage_terms(anchor)

    def hop_value(i: int) -> float:
        """What the question asks that the leading passage lacks and passage ``i`` holds
        (the actress the question describes, not her film), and the question's words
        beside the leading passage's mention of it."""
        held = sum(idf(t) for t in lacking & passage_terms(passages[i]))
        if not held and _names_everything(passages[i].title, passages):
            return 0.0  # a manual's page titled "SQLite" adds nothing the answer lacks
        mentions_ = _beside(anchor.text, passages[i].title, query)
        return held + _BESIDE * max((sum(map(idf, m)) for m in mentions_), default=0.0)

    values = {i: hop_value(i) for i in linked}
    worth = [i for i in linked if values[i] > 0]
    return max(worth, key=lambda i: values[i]) if worth else None


def _names_everything(title: str, passages: Sequence[Chunk]) -> bool:
    """True when most of ``passages`` (three or more) name ``title``: the product a manual is
    about, which every page names, not a page one passage points to."""
    naming = sum(mentions_title(p.text, title) for p in passages)
    return naming >= 3 and 2 * naming > len(passages)


def _beside(text: str, title: str, query: Collection[str]) -> list[frozenset[str]]:
    """For each mention of ``title`` in ``text``, the ``query`` terms in its clause (other than
    the title's own words): in "Dylan in Paper Planes, and Tyler in The Visit", only "Tyler"
    stands beside "The Visit"."""
    own = unit_terms(title)
    found = []
    for start, end in _title_spans(text, title):
        left = max(text.rfind(mark, 0, start) for mark in _CLAUSE_MARKS) + 1
        ends = [i for i in (text.find(mark, end) for mark in _CLAUSE_MARKS) if i >= 0]
        clause = text[left : min(ends, default=len(text))]
        found.append((unit_terms(clause) - own) & set(query))
    return found


def passage_terms(chunk: Chunk) -> set[str]:
    """The terms of ``chunk``'s title and text."""
    return set(unit_terms(f"{chunk.title} {chunk.text}"))
