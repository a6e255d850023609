"""A question's and a unit's terms, comparable with each other, and names spelled from them."""

from __future__ import annotations

import re
from collections.abc import Iterable

from kforge.rag.analyze import STOPWORDS, tokenize
from kforge.rag.stem import porter_stem

__all__ = ["spells_question", "term_of", "unit_terms"]


def term_of(token: str) -> str:
    """The term of a lower-case token: its Porter stem, or the token itself where the stem
    would be one or two letters it is not (``os`` stays ``os``, never ``o``)."""
    stem = porter_stem(token)
    return stem if len(stem) >= 3 or stem == token else token


def unit_terms(text: str) -> frozenset[str]:
    """The terms of a passage's unit, comparable with ``Question.terms``."""
    return frozenset(term_of(t) for t in tokenize(text) if t not in STOPWORDS)


_COMPOUND_NAME = re.compile(r"[A-Za-z][a-z0-9]*(?:_[a-z0-9]+)+")
"""A name joining words with underscores: ``target_include_directories``."""


def spells_question(name: str, terms: Iterable[str]) -> bool:
    """True for a name joined from words the question asks with (``terms``, as
    ``Question.terms``): ``target_include_directories`` for "How do I add an include directory
    to a target?", ``request_timeout`` for "What is the default request timeout?"."""
    bare = name.strip().strip("`").removesuffix("()")
    if not _COMPOUND_NAME.fullmatch(bare):
        return False
    return unit_terms(bare.replace("_", " ")) <= set(terms)
