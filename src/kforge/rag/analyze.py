"""Text analysis for lexical search: tokenize, drop English stopwords, Porter-stem."""

from __future__ import annotations

import re
import unicodedata
from collections import Counter

from kforge.rag.stem import porter_stem

__all__ = ["ANALYZER_VERSION", "STOPWORDS", "analyze", "term_frequencies", "tokenize"]

ANALYZER_VERSION = "porter-snowball-lucene33-v3"
"""Changes whenever ``analyze`` would produce different terms; stored indexes are rebuilt then."""

STOPWORDS = frozenset(
    [
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "but",
        "by",
        "for",
        "if",
        "in",
        "into",
        "is",
        "it",
        "no",
        "not",
        "of",
        "on",
        "or",
        "such",
        "that",
        "the",
        "their",
        "then",
        "there",
        "these",
        "they",
        "this",
        "to",
        "was",
        "will",
        "with",
    ]
)
"""Lucene's English stopword set, the one behind the published BM25 baselines."""

_WORD = re.compile(r"[^\W_]+")
_POSSESSIVE = re.compile("['\u2019]s\\b")


def _fold(text: str) -> str:
    """Lower-case and strip accents, so ``Naïve`` and ``naive`` match."""
    text = text.lower()
    if text.isascii():
        return text
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch))


def tokenize(text: str) -> list[str]:
    """Split ``text`` into lower-case runs of letters and digits, dropping possessive 's."""
    return _WORD.findall(_POSSESSIVE.sub("", _fold(text)))


def analyze(text: str) -> list[str]:
    """The index terms of ``text``: tokens without stopwords, Porter-stemmed, in order."""
    return [porter_stem(t) for t in tokenize(text) if t not in STOPWORDS]


def term_frequencies(text: str) -> dict[str, int]:
    """How often each index term occurs in ``text``."""
    return dict(Counter(analyze(text)))
