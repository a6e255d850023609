"""English stemming for lexical search: the Porter algorithm as published, by PyStemmer."""

from __future__ import annotations

import Stemmer

__all__ = ["porter_stem"]

# PyStemmer keeps its own cache of recent words; a larger one holds a corpus's vocabulary.
_PORTER = Stemmer.Stemmer("porter", 200_000)


def porter_stem(word: str) -> str:
    """The Porter stem of a lower-case word; a one-letter word is kept (it would stem to "")."""
    if len(word) < 2:
        return word
    stem: str = _PORTER.stemWord(word)
    return stem
