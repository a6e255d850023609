"""Answers over a logging library's manual and a simulation library's (Sphinx), asked the way
a user asks: a dotted name of the standard library kept whole though its code markup is gone
("typing.Any"), and "forget to pass" or "without setting anything" read as asking for the
default."""

from __future__ import annotations

from kforge.rag.idioms import plain_words
from kforge.rag.question import read_question
from kforge.rag.stdlib_names import defines
from kforge.rag.textcheck import split_sentences


def test_a_name_the_standard_library_defines_is_no_sentence_end() -> None:
    # the page wrote <code>typing.Any</code>; its text has no mark of the code left
    text = (
        "structlog.get_logger() is typed as returning typing.Any so you can use your own "
        "type annotation. You can subclass logging.Formatter to add fields."
    )
    assert split_sentences(text) == [
        "structlog.get_logger() is typed as returning typing.Any so you can use your own "
        "type annotation.",
        "You can subclass logging.Formatter to add fields.",
    ]
    assert defines("decimal", "Decimal")  # "from _decimal import *"
    assert defines("time", "monotonic")  # built in: imported to list its names
    assert not defines("time", "Furthermore")
    # prose run together after a word that names a module too is still two sentences
    assert split_sentences("It expanded over time.Furthermore, a subclone grew.") == [
        "It expanded over time.",
        "Furthermore, a subclone grew.",
    ]
    assert split_sentences("the first transcription start site.The second family") == [
        "the first transcription start site.",
        "The second family",
    ]


def test_forgetting_to_pass_a_value_or_setting_nothing_asks_for_the_default() -> None:
    for question in (
        "If I create a Resource and forget to pass a capacity, how many processes can use it?",
        "Without setting anything, how long does one unit of simulation time take?",
        "If I forget to set the timeout, how long does it wait?",
    ):
        assert "by default" in plain_words(question), question
        assert "default" in read_question(question).terms, question
    assert plain_words("I forgot my password") == "I forgot my password"
