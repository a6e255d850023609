"""The short line of a question asking for a name in code: "which environment variable ...",
"what option ...", "which function ...". The answer is an identifier a supporting sentence
gives (``COVERAGE_PROCESS_START``, ``--parallel-mode``), never a word of English around it
("Python"), and never one the question names itself."""

from __future__ import annotations

import re
from collections.abc import Sequence

from kforge.rag.compose import Segment
from kforge.rag.question import (
    CAPITALS,
    Question,
    asked_code_noun,
    identifiers,
    mentions,
    unit_terms,
)
from kforge.rag.short_quote import ShortAnswer

__all__ = ["asked_code_noun", "identifier_line"]

_SHAPES = {
    "environment variable": re.compile(r"\$?[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+|\$?[A-Z]{3,}"),
    "flag": re.compile(r"-{1,2}[A-Za-z]"),
    "switch": re.compile(r"-{1,2}[A-Za-z]"),
    "class": re.compile(r"(?:\w+\.)*_?[A-Z]\w*$"),
}
"""What a name of some kinds looks like; of the other kinds, any identifier."""
_SECTION = re.compile(r"(?<![\w\]])\[[A-Za-z][\w.:*-]*\](?!\()")
"""A configuration file's section: ``[tool.coverage]``, ``[coverage:run]``."""
_NEAR = 80
"""How far around a name the question's words count for it, in characters."""


def identifier_line(question: Question, units: Sequence[Segment]) -> ShortAnswer | None:
    """The identifier of the kind asked that stands nearest the most of the question's words
    in the supporting sentences (ties: the better sentence), or None when they give none."""
    noun = asked_code_noun(question.text)
    shape = _SHAPES.get(noun)
    terms = set(question.terms)
    best: tuple[float, str, int] | None = None
    for unit in units:
        if unit.code:
            continue
        names = _SECTION.findall(unit.text) if noun == "section" else identifiers(unit.text)
        if noun == "environment variable":  # one word in capitals: ``NOXSESSION``, ``EDITOR``
            names += [n for n in CAPITALS.findall(unit.text) if n not in names]
        for name in names:
            bare = name.strip("`")
            if mentions(question.text, bare) or (shape and not shape.match(bare)):
                continue
            at = unit.text.find(name)
            around = unit.text[max(0, at - _NEAR) : at + len(name) + _NEAR]
            value = len(unit_terms(around) & terms) + 0.3 / (1 + unit.rank)
            if best is None or value > best[0]:
                best = (value, bare, unit.source)
    return ShortAnswer(best[1], best[1], best[2]) if best else None
