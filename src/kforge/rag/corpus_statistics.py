"""What a question's focus needs to know of a corpus: how many passages hold each term, and how
much a term it never names says (see ``kforge.rag.focus``)."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from kforge.rag.analyze import analyze

if TYPE_CHECKING:
    from kforge.rag.corpus import Corpus

__all__ = ["COMMON_WORD_CHARS", "OWN_NAME_SHARE", "CorpusStatistics"]

OWN_NAME_SHARE = 0.4
"""A word in this share of a corpus's passages names what the documents are about."""
COMMON_WORD_CHARS = 20_000
"""About how many characters of English text hold one use of a common word."""


@dataclass(frozen=True, slots=True)
class CorpusStatistics:
    """What the focus needs to know of a corpus: its passages' document frequencies."""

    passages: int
    characters: int
    document_frequency: Callable[[str], int]
    """How many passages hold an analyzed term."""

    @classmethod
    def of(cls, corpus: Corpus) -> CorpusStatistics:
        """The statistics of a corpus, read from its search index (one row, then one indexed
        lookup per term asked, each asked once)."""
        index = corpus.statistics()
        cache: dict[str, int] = {}

        def df(term: str) -> int:
            if term not in cache:
                cache[term] = index.document_frequency(term)
            return cache[term]

        return cls(index.passages, index.chars, df)

    @property
    def silence(self) -> float:
        """How likely a common word is to occur somewhere in the corpus: how much its never
        naming a word says (see the module docstring)."""
        return 1.0 - math.exp(-self.characters / COMMON_WORD_CHARS)

    def names_the_corpus(self, text: str) -> bool:
        """True when each word of ``text`` is in ``OWN_NAME_SHARE`` of the passages."""
        terms = analyze(text)
        return bool(terms) and all(
            self.document_frequency(t) >= OWN_NAME_SHARE * self.passages for t in terms
        )

    def idf(self, term: str) -> float:
        n, df = self.passages, self.document_frequency(term)
        idf = math.log(1.0 + (n - df + 0.5) / (df + 0.5))
        return idf * self.silence if df == 0 else idf
