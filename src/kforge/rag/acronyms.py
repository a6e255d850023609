"""Acronyms a question writes and its documents spell out.

A user writes "Doxygen is GPL. Is the documentation it generates GPL too?"; Doxygen's manual
never writes "GPL", it says "the GNU General Public License". Read as written, the question
names something the documents never name, and the answer is that they do not say. Before a
question is searched, an acronym of capitals (``GPL``, ``TTLs``) that the corpus never names is
read as the phrase the corpus spells it with: words starting with a capital whose initials are
the acronym's letters, in order ("General Public License"; "of", "and", "for" or "the" may
stand between them: "Bureau of Labor Statistics"). The phrase is looked for in the passages a
search for the question finds, where a document that spells it out speaks of the same thing.
An acronym the corpus names, or spells no way, stays as written.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from kforge.rag.analyze import analyze

if TYPE_CHECKING:
    from kforge.rag.corpus import Corpus

__all__ = ["ACRONYM_POOL", "expand_acronyms", "spelled_out"]

ACRONYM_POOL = 40
"""Passages of the question's search read for an acronym's spelled-out phrase."""

_ACRONYM = re.compile(r"(?<![\w.$/-])([A-Z]{2,6})(s?)(?![\w$/-]|\.\w)")
_JOINING = "of|and|for|the|on|in|to|&"


def spelled_out(acronym: str, text: str) -> str | None:
    """The first phrase of ``text`` that ``acronym`` abbreviates: capitalized words whose
    initials are its letters ("General Public License" for ``GPL``), joining words allowed
    between them; None when ``text`` has none."""
    words = [rf"{letter}[a-z][\w-]*" for letter in acronym.upper()]
    pattern = rf"(?:\s+(?:(?:{_JOINING})\s+)?)".join(words)
    found = re.search(rf"(?<![\w-])(?:{pattern})(?![\w-])", text)
    return " ".join(found.group(0).split()) if found else None


def expand_acronyms(corpus: Corpus, question: str) -> str:
    """``question`` with each acronym the corpus never names read as the phrase it spells out
    in the passages a search for the question finds (see the module docstring)."""
    acronyms = {m.group(1) for m in _ACRONYM.finditer(question)}
    if not acronyms or not len(corpus):
        return question
    frequency = corpus.statistics().document_frequency
    unnamed = sorted(a for a in acronyms if not any(map(frequency, analyze(a))))
    if not unnamed:
        return question
    passages = [hit.chunk.text for hit in corpus.search(question, ACRONYM_POOL)]
    for acronym in unnamed:
        phrase = next(filter(None, (spelled_out(acronym, text) for text in passages)), None)
        if phrase is None or not all(frequency(t) for t in analyze(phrase)):
            continue
        written = re.compile(rf"(?<![\w.$/-]){acronym}(?=s?(?![\w$/-]|\.\w))")
        question = written.sub(phrase.replace("\\", r"\\"), question)
    return question
