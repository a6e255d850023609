"""Answers over a utility library's manual (Sphinx, with a glossary): what an abbreviation
stands for, the front page titled by the library and a tagline, a module's entry that is not
the library's, a glossary entry that only names another, and a sentence a list finishes."""

from __future__ import annotations

from kforge.rag.candidates import Candidate
from kforge.rag.compose import Segment, compose_extractive
from kforge.rag.defining import defined_subject, defines_subject, spelled_beside
from kforge.rag.follow_on import follow_on, runs_into_list
from kforge.rag.idioms import plain_words
from kforge.rag.question import read_question
from kforge.rag.short_answer import short_answer
from kforge.rag.types import SourceDocument
from kforge.rag.units import Unit, points_elsewhere
from tests.rag.helpers import api_pages, asked_over
from tests.rag.helpers import page_chunk as chunk


def test_what_an_abbreviation_stands_for_is_what_it_is() -> None:
    assert plain_words("What does I18N stand for?") == "What is I18N?"
    subject = defined_subject(read_question("What does I18N stand for?"))
    said = "I18N: I18N is an abbreviation for internationalization."
    assert spelled_beside(said, subject) == "internationalization"
    assert spelled_beside("CLI stands for command line interface.", frozenset({"cli"}))
    assert spelled_beside("I18N is an important piece of any program.", subject) is None
    segments = [
        Segment(said, 0, 0),
        Segment("I18N is an important piece of any modern program.", 1, 1),
    ]
    line = short_answer("What does I18N stand for?", segments)
    # a word alone is no line: the clause saying it is
    assert line is not None
    assert line.answer == "I18N is an abbreviation for internationalization", line


def test_the_front_page_titled_by_the_library_and_a_tagline_says_what_it_is() -> None:
    pages = [
        *api_pages("kitchen"),
        SourceDocument(
            "index.html",
            "Kitchen, everything but the sink\n\nWe've all done it. Kitchen aims to pull these "
            "small snippets of code into a few python modules which you can import and use "
            "within your project.",
            "Kitchen, everything but the sink",
        ),
    ]
    files, units, _ = asked_over(pages, "What is Kitchen?")
    assert files[0] == "index.html", files
    assert units[0].startswith("Kitchen aims to pull these small snippets"), units


def test_a_module_entry_is_not_the_librarys() -> None:
    subject = defined_subject(read_question("What is Kitchen?"))
    entry = "Kitchen.i18n Module: This module's documentation has examples of using _()"
    assert defines_subject(entry, subject) == 0.0
    assert defines_subject("Kitchen aims to pull snippets of code together.", subject) == 1.0


def test_a_glossary_entry_naming_another_points_elsewhere() -> None:
    assert points_elsewhere(Unit("code points: code point", "item", 0))
    assert not points_elsewhere(Unit("code point: A number that maps to a character", "item", 1))
    passage = chunk(
        0,
        "Glossary\n\ncode points: code point\n"
        "code point: A number that maps to a particular abstract character.\n",
        "Glossary",
    )
    other = chunk(
        1,
        "Strings\n\nThe reason is that the python2 unicode type represents an abstract "
        "sequence of unicode text known as code points.",
        "Strings",
    )
    question = "What is a code point?"
    segments = compose_extractive(question, [other, passage])
    assert "code points: code point" not in [s.text for s in segments]
    line = short_answer(question, segments, [other, passage])
    # what says X is comes before what names X in passing
    assert line is not None
    assert line.answer == "A number that maps to a particular abstract character", line


def _candidate(text: str, position: int, kind: str = "sentence") -> Candidate:
    return Candidate(text, 0, position, kind, frozenset())


def test_a_sentence_a_list_finishes_brings_the_list() -> None:
    own = [
        _candidate("At the moment kitchen only requires", 0),
        _candidate("python: 2.4 or later", 1),
        _candidate("Kitchen-1.1.0 was the last release to support python-2.3.x.", 2),
    ]
    assert runs_into_list(own[0], own)
    assert follow_on(own[0], own) == [own[1]]
    ended = [_candidate("Kitchen requires python.", 0), own[1]]
    assert not runs_into_list(ended[0], ended)


def test_a_sentence_naming_x_says_more_of_it_than_one_saying_what_else_it_is() -> None:
    segments = [
        Segment("The dodo file is actually re-loaded/executed in a separate process.", 0, 0),
        Segment(
            "A python module/file that defines tasks for doit is called dodo file (that is "
            "something like a Makefile for make).",
            1,
            1,
        ),
    ]
    line = short_answer("What is a dodo file?", segments)
    assert line is not None
    assert line.answer == "A python module/file that defines tasks for doit", line


def test_a_range_is_quoted_whole() -> None:
    question = "How many bytes do non-ASCII characters take in UTF-8?"
    for said, line in (
        ("Characters from other parts of unicode take two to four bytes.", "two to four bytes"),
        ("Such a character takes between 2 and 4 bytes.", "between 2 and 4 bytes"),
        ("Such a character takes 2-4 bytes.", "2-4 bytes"),
        ("Python 3.8 or 4 bytes.", "4 bytes"),  # two values, no range
    ):
        found = short_answer(question, [Segment(said, 0, 0)])
        assert found is not None and found.answer == line, (said, found)
