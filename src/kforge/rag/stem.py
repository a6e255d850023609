"""English stemming for lexical search: the Porter algorithm as published, by PyStemmer, with the
irregular past forms of common verbs read as their verb ("sent" as "send")."""

from __future__ import annotations

import Stemmer

__all__ = ["porter_stem"]

# PyStemmer keeps its own cache of recent words; a larger one holds a corpus's vocabulary.
_PORTER = Stemmer.Stemmer("porter", 200_000)


_IRREGULAR = {
    form: base
    for base, forms in {
        "arise": "arose arisen",
        "begin": "began begun",
        "blow": "blew blown",
        "break": "broke broken",
        "bring": "brought",
        "build": "built",
        "buy": "bought",
        "catch": "caught",
        "choose": "chose chosen",
        "deal": "dealt",
        "draw": "drew drawn",
        "drive": "drove driven",
        "fly": "flew flown",
        "forbid": "forbade forbidden",
        "forget": "forgot forgotten",
        "freeze": "froze frozen",
        "get": "got gotten",
        "give": "gave given",
        "go": "went gone",
        "grow": "grew grown",
        "hide": "hid hidden",
        "hold": "held",
        "keep": "kept",
        "know": "knew known",
        "lead": "led",
        "lose": "lost",
        "make": "made",
        "mean": "meant",
        "meet": "met",
        "overwrite": "overwrote overwritten",
        "override": "overrode overridden",
        "pay": "paid",
        "rebuild": "rebuilt",
        "rewrite": "rewrote rewritten",
        "run": "ran",
        "say": "said",
        "see": "seen",
        "seek": "sought",
        "sell": "sold",
        "send": "sent",
        "show": "shown",
        "shrink": "shrank shrunk",
        "speak": "spoke spoken",
        "spend": "spent",
        "spin": "spun",
        "stick": "stuck",
        "take": "took taken",
        "teach": "taught",
        "tell": "told",
        "think": "thought",
        "throw": "threw thrown",
        "understand": "understood",
        "write": "wrote written",
    }.items()
    for form in forms.split()
}
"""Irregular past forms read as their verb ("sent" as "send"), so that "How are headers sent?"
meets "... will always send response headers ..."; forms that are as often other words
("found", "left", "bound", "saw", "lay") are not among them."""


def porter_stem(word: str) -> str:
    """The Porter stem of a lower-case word (of its verb for an irregular past form: "sent" as
    "send"); a one-letter word is kept (it would stem to "")."""
    if len(word) < 2:
        return word
    stem: str = _PORTER.stemWord(_IRREGULAR.get(word, word))
    return stem
