"""A method asked about by its class (``dict.setdefault``) where the manual lists it bare under
the class's heading, beside an entry of the same method on another class."""

from __future__ import annotations

from kforge.rag.candidates import entry_names
from kforge.rag.compose import compose_extractive
from kforge.rag.focus import passage_text, question_focus
from kforge.rag.short_answer import short_answer
from kforge.rag.units import passage_units
from tests.rag.helpers import page_chunk

QUESTION = "What does dict.setdefault return?"

MORSEL = page_chunk(
    0,
    "Morsel.update(values): Update the values in the Morsel dictionary with the values in the "
    "dictionary values.\n\n"
    "Changed in version 3.5: return a Morsel object instead of a dict.\n\n"
    "Morsel.setdefault(key, value=None): Raise an error if key is not a valid RFC 2109 "
    "attribute, otherwise behave the same as dict.setdefault().",
    "http.cookies — HTTP state management",
    "http.cookies — HTTP state management > Morsel Objects",
)
DICT = page_chunk(
    1,
    "setdefault(key[, default]): If key is in the dictionary, return its value. If not, insert "
    "key with a value of default and return default. default defaults to None.\n\n"
    "update([other]): Update the dictionary with the key/value pairs from other, overwriting "
    "existing keys. Return None.",
    "Built-in Types",
    "Built-in Types > Mapping Types — dict",
)


def test_a_bare_entry_under_its_class_heading_holds_the_qualified_name() -> None:
    focus = question_focus(QUESTION)
    assert any(t.text == "dict.setdefault" for t in focus.held(passage_text(DICT)))
    # the entry alone, without the heading that names its class, is no entry of dict's
    assert not any(t.text == "dict.setdefault" for t in focus.held(DICT.text))


def test_the_asked_class_entry_answers_not_the_same_method_of_another_class() -> None:
    segments = compose_extractive(QUESTION, [MORSEL, DICT])
    best = min(segments, key=lambda s: s.rank)
    assert best.text.startswith("setdefault(key[, default]): If key is in the dictionary")
    line = short_answer(QUESTION, segments, [MORSEL, DICT])
    assert line is not None
    assert line.answer == "return its value"
    assert line.source == 1


def test_a_version_note_belongs_to_the_entry_above_it() -> None:
    units = passage_units(MORSEL.text)
    entries = dict(zip((u.text for u in units), entry_names(MORSEL.text, units), strict=True))
    # "return a Morsel object instead of a dict" is said of Morsel.update, not of dict's method
    assert entries["Changed in version 3.5: return a Morsel object instead of a dict."] == (
        "Morsel.update"
    )
    # and a bare signature names its entry too: the sentences after it continue it
    dict_units = passage_units(DICT.text)
    assert "setdefault" in entry_names(DICT.text, dict_units)
